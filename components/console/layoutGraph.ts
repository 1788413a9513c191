'use client';

import type { ElkNode } from 'elkjs/lib/elk-api';
import type { MeshGraph } from '@/lib/console/meshGraph';
import { graphHash } from '@/lib/console/meshGraph';

export const NODE_WIDTH = 184;
export const NODE_HEIGHT = 60;

export type Positions = Record<string, { x: number; y: number }>;

let worker: Worker | undefined;
let nextId = 1;
const pending = new Map<number, { resolve: (g: ElkNode) => void; reject: (e: Error) => void }>();
const cache = new Map<string, Promise<Positions>>();

function getWorker(): Worker {
  if (worker) return worker;
  worker = new Worker(new URL('./elk.worker.ts', import.meta.url), { type: 'module' });
  worker.onmessage = (e: MessageEvent<{ id: number; graph?: ElkNode; error?: string }>) => {
    const p = pending.get(e.data.id);
    if (!p) return;
    pending.delete(e.data.id);
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

/** Node positions for the graph, laid out by ELK off the main thread and cached by graph hash. */
export function layoutGraph(graph: Pick<MeshGraph, 'nodes' | 'edges'>): {
  hash: string;
  positions: Promise<Positions>;
} {
  const hash = graphHash(graph);
  let positions = cache.get(hash);
  if (!positions) {
    const elkGraph: ElkNode = {
      id: 'root',
      layoutOptions: {
        'elk.algorithm': 'layered',
        'elk.direction': 'RIGHT',
        'elk.layered.spacing.nodeNodeBetweenLayers': '56',
        'elk.spacing.nodeNode': '20',
        'elk.layered.nodePlacement.strategy': 'BRANDES_KOEPF',
      },
      children: graph.nodes.map((n) => ({ id: n.id, width: NODE_WIDTH, height: NODE_HEIGHT })),
      edges: graph.edges.map((e) => ({ id: e.id, sources: [e.source], targets: [e.target] })),
    };
    const id = nextId++;
    positions = new Promise<ElkNode>((resolve, reject) => {
      pending.set(id, { resolve, reject });
      getWorker().postMessage({ id, graph: elkGraph });
    }).then((laid) => {
      const out: Positions = {};
      for (const c of laid.children ?? []) out[c.id] = { x: c.x ?? 0, y: c.y ?? 0 };
      return out;
    });
    positions.catch(() => cache.delete(hash));
    if (cache.size > 50) cache.delete(cache.keys().next().value!);
    cache.set(hash, positions);
  }
  return { hash, positions };
}
