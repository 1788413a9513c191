'use client';

import {
  applyNodeChanges,
  Background,
  Controls,
  type Edge,
  MarkerType,
  MiniMap,
  type NodeChange,
  ReactFlow,
  ReactFlowProvider,
  useReactFlow,
} from '@xyflow/react';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { DraftDoc } from '@/lib/console/draftDoc';
import type { GraphEdge, MeshGraph } from '@/lib/console/meshGraph';
import type { MeshLiveState } from '@/server/controlPlane/liveState';
import { layoutGraph, NODE_HEIGHT, NODE_WIDTH, type Positions } from './layoutGraph';
import { type MeshFlowNode, MeshNode } from './MeshNode';
import { nodeLive } from './nodeLive';

const nodeTypes = { mesh: MeshNode };

export interface MeshCanvasProps {
  graph: MeshGraph;
  layout: DraftDoc['layout'];
  live: MeshLiveState | null | undefined;
  selectedId: string | undefined;
  focus: { nodeId: string; seq: number } | undefined;
  theme: 'dark' | 'light';
  onSelect(id: string | undefined): void;
  onMove(positions: Record<string, { x: number; y: number }>): void;
  onConnect(source: string, target: string, chain?: 'ingress' | 'egress'): void;
  onDelete(ids: string[]): void;
}

/** The mesh graph on a React Flow canvas; React Flow only renders, the graph and layout come from outside. */
export function MeshCanvas(props: MeshCanvasProps) {
  return (
    <ReactFlowProvider>
      <Canvas {...props} />
    </ReactFlowProvider>
  );
}

function Canvas({
  graph,
  layout,
  live,
  selectedId,
  focus,
  theme,
  onSelect,
  onMove,
  onConnect,
  onDelete,
}: MeshCanvasProps) {
  const rf = useReactFlow();
  const [auto, setAuto] = useState<{ hash: string; positions: Positions } | undefined>();
  const [layoutError, setLayoutError] = useState<{ hash: string; message: string } | undefined>();
  const fitted = useRef<string | undefined>(undefined);
  const { hash, positions } = useMemo(() => layoutGraph(graph), [graph]);
  const failed = layoutError?.hash === hash ? layoutError.message : undefined;
  const busy = auto?.hash !== hash && !failed;

  useEffect(() => {
    let cancelled = false;
    positions.then(
      (p) => {
        if (!cancelled) setAuto({ hash, positions: p });
      },
      (e: Error) => {
        if (!cancelled) setLayoutError({ hash, message: e.message });
      },
    );
    return () => {
      cancelled = true;
    };
  }, [hash, positions]);

  const built = useMemo((): MeshFlowNode[] => {
    const autoPos = auto?.positions ?? {};
    return graph.nodes.map((n, i) => ({
      id: n.id,
      type: 'mesh',
      // Manual positions (the draft's layout) win over ELK's; new nodes wait in a column meanwhile.
      position: layout[n.id] ?? autoPos[n.id] ?? { x: -NODE_WIDTH * 1.5, y: i * (NODE_HEIGHT + 16) },
      data: { node: n, live: nodeLive(n, live) },
      width: NODE_WIDTH,
      height: NODE_HEIGHT,
      // Nodes have a fixed size. Without `measured`, React Flow drops a rebuilt node's handle bounds
      // until it measures the node again, and a connection started meanwhile (say, just after a live
      // update rebuilt the nodes) is dropped at once.
      measured: { width: NODE_WIDTH, height: NODE_HEIGHT },
      selected: n.id === selectedId,
      deletable: !!n.object && !n.generated && n.kind !== 'Proxy',
    }));
  }, [graph, auto, layout, live, selectedId]);

  // Local node state takes drags between renders; a new graph, layout or overlay replaces it.
  const [nodes, setNodes] = useState<MeshFlowNode[]>(built);
  const [shown, setShown] = useState(built);
  if (shown !== built) {
    setShown(built);
    setNodes(built);
  }

  const edges = useMemo(() => graph.edges.map(toFlowEdge), [graph]);

  // The viewport follows the layout: a requested node is centred once it has its final place;
  // otherwise a new layout (a structural edit re-lays out everything) is fitted to the canvas.
  const pendingFocus = useRef<string | undefined>(undefined);
  useEffect(() => {
    if (focus) pendingFocus.current = focus.nodeId;
  }, [focus]);
  useEffect(() => {
    if (!auto || auto.hash !== hash || graph.nodes.length === 0) return;
    const id = pendingFocus.current;
    const pos = id ? (layout[id] ?? auto.positions[id]) : undefined;
    requestAnimationFrame(() => {
      if (id && pos) {
        pendingFocus.current = undefined;
        void rf.setCenter(pos.x + NODE_WIDTH / 2, pos.y + NODE_HEIGHT / 2, {
          zoom: Math.max(rf.getZoom(), 0.9),
          duration: 300,
        });
      } else if (fitted.current !== auto.hash) {
        void rf.fitView({ padding: 0.08, maxZoom: 1 });
      }
      fitted.current = auto.hash;
    });
    // Only a new layout or a new focus request moves the viewport, not drags or overlays.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [auto, focus]);

  // Shift while connecting appends to the ingress chain, Alt to the egress chain.
  const modifiers = useRef({ shift: false, alt: false });
  useEffect(() => {
    const track = (e: KeyboardEvent) => (modifiers.current = { shift: e.shiftKey, alt: e.altKey });
    window.addEventListener('keydown', track);
    window.addEventListener('keyup', track);
    return () => {
      window.removeEventListener('keydown', track);
      window.removeEventListener('keyup', track);
    };
  }, []);

  const onNodesChange = useCallback((changes: NodeChange<MeshFlowNode>[]) => {
    // Selection and deletion go through the console's own state and commands.
    const local = changes.filter((c) => c.type === 'position' || c.type === 'dimensions');
    if (local.length > 0) setNodes((ns) => applyNodeChanges(local, ns));
  }, []);

  return (
    <div className="canvas" data-testid="canvas">
      <ReactFlow<MeshFlowNode, Edge>
        nodes={nodes}
        edges={edges}
        nodeTypes={nodeTypes}
        colorMode={theme}
        onNodesChange={onNodesChange}
        onNodeClick={(_, n) => onSelect(n.id)}
        onPaneClick={() => onSelect(undefined)}
        onNodeDragStop={(_, _n, dragged) =>
          onMove(Object.fromEntries(dragged.map((d) => [d.id, { x: d.position.x, y: d.position.y }])))
        }
        onConnect={(c) =>
          onConnect(
            c.source,
            c.target,
            modifiers.current.alt ? 'egress' : modifiers.current.shift ? 'ingress' : undefined,
          )
        }
        onBeforeDelete={async ({ nodes: gone }) => {
          if (gone.length > 0) onDelete(gone.map((n) => n.id));
          return false;
        }}
        deleteKeyCode={['Delete', 'Backspace']}
        minZoom={0.05}
        maxZoom={2}
        proOptions={{ hideAttribution: false }}
      >
        <Background gap={24} />
        <Controls showInteractive={false} />
        <MiniMap pannable zoomable nodeStrokeWidth={3} style={{ width: 150, height: 96 }} />
      </ReactFlow>
      {graph.nodes.length === 0 ? (
        <div className="canvas__empty" data-testid="canvas-empty">
          <p>The draft has no mesh objects yet.</p>
          <p>Add one from the palette, paste YAML with Import, or load an example.</p>
        </div>
      ) : null}
      <div className="canvas__status" role="status" aria-live="polite">
        {failed ? `Layout failed: ${failed}` : busy ? `Laying out ${graph.nodes.length} nodes…` : ''}
      </div>
    </div>
  );
}

const EDGE_CLASS: Record<GraphEdge['kind'], string> = {
  rule: 'edge-rule',
  destination: 'edge-destination',
  ingress: 'edge-ingress',
  egress: 'edge-egress',
  endpoints: 'edge-endpoints',
  selects: 'edge-selects',
  split: 'edge-split',
};

function toFlowEdge(e: GraphEdge): Edge {
  return {
    id: e.id,
    source: e.source,
    target: e.target,
    label: e.label,
    className: EDGE_CLASS[e.kind],
    markerEnd: { type: MarkerType.ArrowClosed, width: 16, height: 16 },
    animated: e.kind === 'ingress' || e.kind === 'egress',
    selectable: false,
    deletable: false,
    data: { kind: e.kind },
    ariaLabel: `${e.kind}${e.label ? ` ${e.label}` : ''}`,
  };
}
