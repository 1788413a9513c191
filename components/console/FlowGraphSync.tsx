'use client';

import { type Edge, type Node, useStoreApi } from '@xyflow/react';
import { adoptUserNodes, updateConnectionLookup } from '@xyflow/system';
import { useLayoutEffect, useRef } from 'react';

/**
 * Puts the canvas's nodes and edges into React Flow's store in one store update. Given as the
 * `nodes` and `edges` props, React Flow sets them one after the other, and every store update runs
 * the selector of every node, edge and minimap node (about 8 ms per update on a 500-node mesh): an
 * edit that changes both paid twice (issue 5, P8). This does what React Flow 12.12's `setNodes` and
 * `setEdges` do (`@xyflow/system`'s adoptUserNodes and updateConnectionLookup), then one `setState`;
 * while React Flow waits to fit the view to measured nodes it leaves the work to React Flow's own
 * setters, whose fit this would skip. Render it as a child of <ReactFlow> given no `nodes`/`edges`.
 */
export function FlowGraphSync<N extends Node, E extends Edge>({ nodes, edges }: { nodes: N[]; edges: E[] }) {
  const store = useStoreApi<N, E>();
  const last = useRef<{ nodes?: N[]; edges?: E[] }>({});
  useLayoutEffect(() => {
    const newNodes = last.current.nodes !== nodes;
    const newEdges = last.current.edges !== edges;
    if (!newNodes && !newEdges) return;
    last.current = { nodes, edges };
    const s = store.getState();
    if (s.fitViewQueued) {
      if (newNodes) s.setNodes(nodes);
      if (newEdges) s.setEdges(edges);
      return;
    }
    let patch: Partial<typeof s> = {};
    if (newNodes) {
      const { nodesInitialized, hasSelectedNodes } = adoptUserNodes(nodes, s.nodeLookup, s.parentLookup, {
        nodeOrigin: s.nodeOrigin,
        nodeExtent: s.nodeExtent,
        elevateNodesOnSelect: s.elevateNodesOnSelect,
        checkEquality: true,
        zIndexMode: s.zIndexMode,
      });
      patch = { nodes, nodesInitialized, nodesSelectionActive: s.nodesSelectionActive && hasSelectedNodes };
    }
    if (newEdges) {
      updateConnectionLookup(s.connectionLookup, s.edgeLookup, edges);
      patch.edges = edges;
    }
    store.setState(patch);
  }, [store, nodes, edges]);
  return null;
}
