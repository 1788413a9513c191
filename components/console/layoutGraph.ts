'use client';

import type { ElkNode } from 'elkjs/lib/elk-api';
import { graphHash } from '@/lib/console/meshGraph';
import { loadLayout, saveLayout } from './layoutStore';

export const NODE_WIDTH = 184;
export const NODE_HEIGHT = 60;
/** A collapsed group on the canvas. */
export const GROUP_WIDTH = 220;
export const GROUP_HEIGHT = 76;

/** What the layout needs of a graph: node ids (with a size unless the node's default) and edges. */
export interface LayoutInput {
  nodes: readonly { id: string; width?: number; height?: number }[];
  edges: readonly { id: string; source: string; target: string; kind: string }[];
}

export type Positions = Record<string, { x: number; y: number }>;

let worker: Worker | undefined;
let nextId = 1;
const pending = new Map<
  number,
  { resolve: (g: ElkNode) => void; reject: (e: Error) => void; start: number; nodes: number; warm?: boolean }
>();
const cache = new Map<string, Promise<Positions>>();

function getWorker(): Worker {
  if (worker) return worker;
  worker = new Worker(new URL('./elk.worker.ts', import.meta.url), { type: 'module' });
  worker.onmessage = (e: MessageEvent<{ id: number; graph?: ElkNode; error?: string; ms?: number }>) => {
    const p = pending.get(e.data.id);
    if (!p) return;
    pending.delete(e.data.id);
    if (p.warm) return p.resolve(e.data.graph ?? { id: 'root' });
    // User Timing entries for bench/ui.ts and DevTools: request -> answer, and ELK's own time inside.
    performance.measure('meshdeck:layout', {
      start: p.start,
      end: performance.now(),
      detail: { nodes: p.nodes, elkMs: e.data.ms },
    });
    if (e.data.graph) p.resolve(e.data.graph);
    else p.reject(new Error(`layout failed: ${e.data.error ?? 'unknown error'}`));
  };
  worker.onerror = (e) => {
    for (const p of pending.values()) p.reject(new Error(`the layout worker failed: ${e.message}`));
    pending.clear();
    worker = undefined;
  };
  return worker;
}

let warmed = false;

/**
 * Starts the layout worker and runs ELK once on a small made-up graph, so the draft's first layout
 * does not pay for loading and compiling ELK (a cold 1,000-node layout took 4.5-7 s, a warm one 1.4-2 s:
 * bench/ui.ts). Call it while the draft loads; later calls do nothing.
 */
export function warmLayout(): void {
  if (warmed || typeof Worker === 'undefined') return;
  warmed = true;
  // Three layers of 24 with a few crossings: enough for ELK's layered phases to run and get compiled.
  const nodes: ElkNode[] = [];
  const edges: ElkNode['edges'] = [];
  for (let i = 0; i < 72; i++) nodes.push({ id: `w${i}`, width: NODE_WIDTH, height: NODE_HEIGHT });
  for (let i = 0; i < 48; i++) {
    edges.push({ id: `a${i}`, sources: [`w${i}`], targets: [`w${24 + ((i * 7) % 48)}`] });
    if (i < 24) edges.push({ id: `b${i}`, sources: [`w${24 + i}`], targets: [`w${48 + ((i * 5) % 24)}`] });
  }
  const id = nextId++;
  pending.set(id, { resolve: () => {}, reject: () => {}, start: performance.now(), nodes: 0, warm: true });
  getWorker().postMessage({
    id,
    graph: { id: 'root', layoutOptions: LAYOUT_OPTIONS, children: nodes, edges },
  });
}

const LAYOUT_OPTIONS: Record<string, string> = {
  'elk.algorithm': 'layered',
  'elk.direction': 'RIGHT',
  'elk.layered.spacing.nodeNodeBetweenLayers': '56',
  'elk.spacing.nodeNode': '20',
  // SIMPLE placement: the same layers and about the same drawing as BRANDES_KOEPF (Example 1 looks
  // alike), 15-35 % less ELK time (elkjs in Node after a warm-up, 1,000 nodes: 780-1,040 -> 640-860 ms;
  // 500: 505-840 -> 270-410 ms).
  'elk.layered.nodePlacement.strategy': 'SIMPLE',
  // ELK's defaults (thoroughness 7, greedy switch, orthogonal routing) took 5-7 s at 1,000 nodes and
  // minutes at 5,000 (bench/ui.ts). React Flow draws its own edges, so ELK's routes are unused:
  // polyline routing and one crossing-minimisation sweep keep the layout and cost ~1 s at 1,000.
  'elk.layered.thoroughness': '1',
  'elk.layered.crossingMinimization.greedySwitch.type': 'OFF',
  'elk.edgeRouting': 'POLYLINE',
};

/**
 * Node positions for the graph, laid out by ELK off the main thread and cached by graph hash: in memory,
 * and in the browser's storage across reloads (layoutStore.ts).
 */
export function layoutGraph(graph: LayoutInput): {
  hash: string;
  positions: Promise<Positions>;
} {
  const hash = graphHash(graph);
  // Server prerendering has no Worker and nothing to lay out: the browser lays the graph out on hydration.
  if (typeof Worker === 'undefined') return { hash, positions: new Promise<Positions>(() => {}) };
  let positions = cache.get(hash);
  if (!positions) {
    // Laid out before in this browser (a reload, another tab): no ELK run at all.
    const stored = loadLayout(hash);
    if (stored) positions = Promise.resolve(stored);
  }
  if (!positions) {
    const elkGraph: ElkNode = {
      id: 'root',
      layoutOptions: LAYOUT_OPTIONS,
      children: graph.nodes.map((n) => ({
        id: n.id,
        width: n.width ?? NODE_WIDTH,
        height: n.height ?? NODE_HEIGHT,
      })),
      edges: graph.edges.map((e) => ({ id: e.id, sources: [e.source], targets: [e.target] })),
    };
    const id = nextId++;
    positions = new Promise<ElkNode>((resolve, reject) => {
      pending.set(id, { resolve, reject, start: performance.now(), nodes: graph.nodes.length });
      getWorker().postMessage({ id, graph: elkGraph });
    }).then((laid) => {
      const out: Positions = {};
      // Whole pixels: crisp node borders, and the same places after a reload (layoutStore keeps integers).
      for (const c of laid.children ?? []) out[c.id] = { x: Math.round(c.x ?? 0), y: Math.round(c.y ?? 0) };
      saveLayout(hash, out);
      return out;
    });
    positions.catch(() => cache.delete(hash));
  }
  if (!cache.has(hash)) {
    if (cache.size > 50) cache.delete(cache.keys().next().value!);
    cache.set(hash, positions);
  }
  return { hash, positions };
}
