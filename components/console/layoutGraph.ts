'use client';

import {
  ELK_WARM_UP,
  layoutAlgorithmOf,
  type LayoutInput,
  type PackedPositions,
  type Positions,
  unpackPositions,
} from '@/lib/console/elkLayout';
import { graphHash } from '@/lib/console/meshGraph';
import { loadLayout, saveLayout } from './layoutStore';
import { epochNow, type LayoutReply, type LayoutRequest } from './layoutWorkerMessages';

export { GROUP_HEIGHT, GROUP_WIDTH, NODE_HEIGHT, NODE_WIDTH } from '@/lib/console/elkLayout';
export type { LayoutInput, Positions } from '@/lib/console/elkLayout';

type Algorithm = ReturnType<typeof layoutAlgorithmOf>;

const workers: Partial<Record<Algorithm, Worker>> = {};
let nextId = 1;
const pending = new Map<
  number,
  {
    resolve: (p: Positions) => void;
    reject: (e: Error) => void;
    start: number;
    nodes: number;
    algorithm: Algorithm;
    warm?: boolean;
  }
>();
const cache = new Map<string, Promise<Positions>>();

function getWorker(algorithm: Algorithm): Worker {
  const running = workers[algorithm];
  if (running) return running;
  // Each `new URL(..., import.meta.url)` literal is what the bundler makes a worker entry of.
  const worker =
    algorithm === 'elk'
      ? new Worker(new URL('./elk.worker.ts', import.meta.url), { type: 'module' })
      : new Worker(new URL('./layered.worker.ts', import.meta.url), { type: 'module' });
  worker.onmessage = (e: MessageEvent<LayoutReply>) => {
    const p = pending.get(e.data.id);
    if (!p) return;
    pending.delete(e.data.id);
    if (p.warm) return p.resolve({});
    if ('error' in e.data) return p.reject(new Error(`layout failed: ${e.data.error}`));
    // User Timing entries for bench/ui.ts and DevTools: request -> answer, and the algorithm's own time
    // inside (elkMs or layeredMs).
    const { ms, receivedAt, repliedAt } = e.data;
    performance.measure('meshdeck:layout', {
      start: p.start,
      end: performance.now(),
      detail: {
        nodes: p.nodes,
        algorithm,
        [`${algorithm}Ms`]: ms,
        // The trips: asked -> the worker took it (busy, or copying), answered -> this thread took it.
        toWorkerMs: receivedAt - (performance.timeOrigin + p.start),
        fromWorkerMs: epochNow() - repliedAt,
        source: 'browser',
      },
    });
    p.resolve(e.data.positions);
  };
  worker.onerror = (e) => {
    for (const [id, p] of pending)
      if (p.algorithm === algorithm) {
        pending.delete(id);
        p.reject(new Error(`the layout worker failed: ${e.message}`));
      }
    delete workers[algorithm];
  };
  workers[algorithm] = worker;
  return worker;
}

/** Sends `input` to the algorithm's worker; its answer settles the promise. */
function ask(algorithm: Algorithm, input: LayoutInput, warm = false): Promise<Positions> {
  const id = nextId++;
  return new Promise<Positions>((resolve, reject) => {
    pending.set(id, {
      resolve,
      reject,
      start: performance.now(),
      nodes: input.nodes.length,
      algorithm,
      warm,
    });
    getWorker(algorithm).postMessage({ id, input } satisfies LayoutRequest);
  });
}

let warmed = false;

/**
 * Starts the layout workers and runs each once on a small made-up graph (ELK_WARM_UP), so the draft's
 * first layout does not pay for loading and compiling its code (ELK's above all). Call it while the
 * draft loads; later calls do nothing.
 */
export function warmLayout(): void {
  if (warmed || typeof Worker === 'undefined') return;
  warmed = true;
  void ask('layered', ELK_WARM_UP, true).catch(() => undefined);
  void ask('elk', ELK_WARM_UP, true).catch(() => undefined);
}

/**
 * Keeps a layout made elsewhere (the compile worker's, lib/console/firstViewLayout.ts) as this graph
 * hash's, in memory and in the browser's storage, unless one is kept already: the canvas's
 * layoutGraph for that graph then finds it without a trip to a layout worker.
 */
export function keepLayout(hash: string, packed: PackedPositions, ms: number): void {
  if (cache.has(hash)) return;
  const positions = unpackPositions(packed);
  if (!positions) return;
  cache.set(hash, Promise.resolve(positions));
  saveLayout(hash, positions);
  const now = performance.now();
  performance.measure('meshdeck:layout', {
    start: now - ms,
    end: now,
    detail: { nodes: packed[0].length, algorithm: 'layered', layeredMs: ms, source: 'compile' },
  });
}

/**
 * Node positions for the graph, laid out off the main thread (runLayout) and cached by graph hash: in
 * memory, and in the browser's storage across reloads (layoutStore.ts).
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
    // Laid out before in this browser (a reload, another tab): no layout run at all.
    const stored = loadLayout(hash);
    if (stored) positions = Promise.resolve(stored);
  }
  if (!positions) {
    positions = runLayout(graph).then((out) => {
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

/**
 * Runs the layout in a worker: ELK for a small graph, where its drawing is worth its time (under half a
 * second), our layered layout from LAYERED_LAYOUT_MIN_NODES (tens of milliseconds where ELK took 1.2-1.7 s
 * at 1,000 nodes).
 */
function runLayout(graph: LayoutInput): Promise<Positions> {
  // Only what the layout reads crosses to the worker: the canvas's graph nodes carry their objects and
  // diagnostics, and copying those took longer than laying 1,000 nodes out.
  const input: LayoutInput = {
    nodes: graph.nodes.map(({ id, width, height }) =>
      width === undefined && height === undefined ? { id } : { id, width, height },
    ),
    edges: graph.edges.map(({ id, source, target, kind }) => ({ id, source, target, kind })),
  };
  return ask(layoutAlgorithmOf(graph), input);
}
