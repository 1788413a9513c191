'use client';

import type { ElkNode } from 'elkjs/lib/elk-api';
import {
  ELK_WARM_UP,
  elkGraphOf,
  type LayoutInput,
  type Positions,
  positionsOf,
  SERVER_LAYOUT_MIN_NODES,
  unpackPositions,
} from '@/lib/console/elkLayout';
import { graphHash } from '@/lib/console/meshGraph';
import { loadLayout, saveLayout } from './layoutStore';

export { GROUP_HEIGHT, GROUP_WIDTH, NODE_HEIGHT, NODE_WIDTH } from '@/lib/console/elkLayout';
export type { LayoutInput, Positions } from '@/lib/console/elkLayout';

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
      detail: { nodes: p.nodes, elkMs: e.data.ms, source: 'browser' },
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
 * Starts the layout worker and runs ELK once on a small made-up graph (ELK_WARM_UP), so the draft's
 * first layout does not pay for loading and compiling ELK. Call it while the draft loads; later calls
 * do nothing.
 */
export function warmLayout(): void {
  if (warmed || typeof Worker === 'undefined') return;
  warmed = true;
  const id = nextId++;
  pending.set(id, { resolve: () => {}, reject: () => {}, start: performance.now(), nodes: 0, warm: true });
  getWorker().postMessage({ id, graph: elkGraphOf(ELK_WARM_UP) });
}

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
    const nodes = graph.nodes.length;
    // A large graph's first view is usually laid out on the server already (DraftLayouts): asked
    // there first, ELK runs here only when the server does not have it.
    positions = (nodes >= SERVER_LAYOUT_MIN_NODES ? fromServer(hash, nodes) : Promise.resolve(undefined))
      .then((found) => found ?? runElk(graph))
      .then((out) => {
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

function runElk(graph: LayoutInput): Promise<Positions> {
  const id = nextId++;
  return new Promise<ElkNode>((resolve, reject) => {
    pending.set(id, { resolve, reject, start: performance.now(), nodes: graph.nodes.length });
    getWorker().postMessage({ id, graph: elkGraphOf(graph) });
  }).then(positionsOf);
}

/** The server's layout of this graph (GET /api/layouts/<hash>), or undefined if it has none. */
async function fromServer(hash: string, nodes: number): Promise<Positions | undefined> {
  const start = performance.now();
  try {
    const res = await fetch(`/api/layouts/${hash}`, { headers: { accept: 'application/json' } });
    if (!res.ok) return undefined;
    const body = (await res.json()) as { positions?: unknown };
    const positions = unpackPositions(body.positions);
    if (positions)
      performance.measure('meshdeck:layout', {
        start,
        end: performance.now(),
        detail: { nodes, source: 'server' },
      });
    return positions;
  } catch {
    // No server, or it failed: this browser lays the graph out itself.
    return undefined;
  }
}
