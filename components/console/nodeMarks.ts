'use client';

import { createContext, useCallback, useContext, useSyncExternalStore } from 'react';
import type { GraphNode } from '@/lib/console/meshGraph';
import { jsonEqual } from '@/lib/util/jsonEqual';

/** What a node's marker shows: its diagnostics and their counts by severity. */
export type NodeMarks = Pick<GraphNode, 'counts' | 'diagnostics'>;

/**
 * The latest compile's markers per graph node, ahead of the canvas (goal P8: edit -> markers). The
 * canvas renders a new graph after the rest of the console (a deferred render, see ConsoleApp): a
 * large mesh's canvas is most of a compile's render. Each node subscribes to its own entry, so
 * publishing a compile re-renders only the nodes whose markers changed, in the compile's own render.
 */
export class NodeMarksStore {
  private marks = new Map<string, NodeMarks>();
  private listeners = new Map<string, Set<() => void>>();

  /** The markers of the latest published graph for node `id`, if it has that node. */
  get(id: string): NodeMarks | undefined {
    return this.marks.get(id);
  }

  /** Subscribes to node `id`'s markers; returns the unsubscribe. */
  subscribe(id: string, listener: () => void): () => void {
    let set = this.listeners.get(id);
    if (!set) this.listeners.set(id, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.listeners.delete(id);
    };
  }

  /** Takes a compile's graph nodes; tells the subscribers of each node whose markers changed. */
  publish(nodes: readonly GraphNode[]): void {
    const next = new Map<string, NodeMarks>();
    const changed: string[] = [];
    for (const n of nodes) {
      const was = this.marks.get(n.id);
      // Unchanged nodes keep their objects from compile to compile (compilationDelta.ts).
      if (
        was &&
        (was === n || (jsonEqual(was.counts, n.counts) && jsonEqual(was.diagnostics, n.diagnostics)))
      )
        next.set(n.id, was);
      else {
        next.set(n.id, n);
        changed.push(n.id);
      }
    }
    for (const id of this.marks.keys()) if (!next.has(id)) changed.push(id);
    this.marks = next;
    for (const id of changed) this.listeners.get(id)?.forEach((l) => l());
  }
}

/** The console's markers store; none outside the console (a node then shows its own data's markers). */
export const NodeMarksContext = createContext<NodeMarksStore | undefined>(undefined);

/** `node`'s markers as the latest compile has them, which may be newer than the canvas's node. */
export function useNodeMarks(node: GraphNode): NodeMarks {
  const store = useContext(NodeMarksContext);
  const { id } = node;
  const subscribe = useCallback((l: () => void) => store?.subscribe(id, l) ?? (() => {}), [store, id]);
  return useSyncExternalStore(
    subscribe,
    () => store?.get(id) ?? node,
    () => node,
  );
}
