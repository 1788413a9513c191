'use client';

import { useDeferredValue, useLayoutEffect } from 'react';
import { NEW_VIEW_MIN_NODE_CHANGE } from '@/lib/console/firstViewLayout';
import type { MeshGraph } from '@/lib/console/meshGraph';
import type { NodeMarksStore } from './nodeMarks';

/** The most nodes a compile may add or remove for the canvas to follow it in a deferred render. */
const CANVAS_FOLLOW_MAX_NODES = NEW_VIEW_MIN_NODE_CHANGE;

/**
 * The graph the canvas shows for the console's latest `graph`, whose markers go to `marks` at once.
 * On a large mesh the canvas is most of a compile's render (25 of 33 ms at 500 nodes): it follows in
 * a deferred render, after the rest of the console (the preview, the list, the form) and the nodes'
 * markers have painted (goal P8: edit -> preview and markers). Each new compile interrupts a canvas
 * render still running. A change of many nodes (a draft opening, an import) renders the canvas at
 * once, as before: the first view's timing (P7) was measured and tuned as one render.
 */
export function useCanvasGraph(graph: MeshGraph, marks: NodeMarksStore): MeshGraph {
  const deferred = useDeferredValue(graph);
  // As the compile's render commits: the nodes whose markers changed re-render before the next paint.
  useLayoutEffect(() => marks.publish(graph.nodes), [marks, graph]);
  return Math.abs(graph.nodes.length - deferred.nodes.length) > CANVAS_FOLLOW_MAX_NODES ? graph : deferred;
}
