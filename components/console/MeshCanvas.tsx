'use client';

import {
  applyNodeChanges,
  Background,
  type Connection,
  Controls,
  type Edge,
  type EdgeChange,
  type EdgeSelectionChange,
  MarkerType,
  type NodeChange,
  Panel,
  ReactFlow,
  ReactFlowProvider,
  useReactFlow,
  useStore,
} from '@xyflow/react';
import { memo, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { DraftDoc } from '@/lib/console/draftDoc';
import type { FieldPath } from '@/lib/console/fieldPath';
import {
  type Box,
  GROUP_ABOVE,
  groupedView,
  groupGraph,
  type Grouping,
  groupSubgraph,
  placeExpanded,
  type ViewEdge,
} from '@/lib/console/groupGraph';
import { overviewLayoutInput } from '@/lib/console/elkLayout';
import { firstViewPicture } from '@/lib/console/firstViewPicture';
import { type GraphEdge, graphHash, type MeshGraph, shareById, shareGraph } from '@/lib/console/meshGraph';
import { pathThrough } from '@/lib/console/pathThrough';
import { canPlaceIncrementally, placeNewNodes } from '@/lib/console/placeNewNodes';
import { type GraphTraffic, viewTraffic } from '@/lib/console/graphTraffic';
import { formatRps, type LoadCell, loadFailing, loadLabel } from '@/lib/console/grpcLoad';
import type { MeshLiveState } from '@/server/controlPlane/liveState';
import {
  GROUP_HEIGHT,
  GROUP_WIDTH,
  layoutGraph,
  NODE_HEIGHT,
  NODE_WIDTH,
  type Positions,
  warmLayout,
} from './layoutGraph';
import {
  FAR_ZOOM,
  GroupFrameNode,
  type GroupFrameFlowNode,
  type MeshFlowNode,
  MeshGroupNode,
  type MeshGroupFlowNode,
  MeshNode,
} from './MeshNode';
import { CanvasMiniMap, type MiniMapBox } from './CanvasMiniMap';
import { removeEarlyPicture } from './earlyPicture';
import { FlowGraphSync } from './FlowGraphSync';
import { loadLayout, saveLayout } from './layoutStore';
import { savePicture } from './pictureStore';
import { FAR_CANVAS_MIN_NODES, useFarCanvas } from './farCanvas';
import { nodeLive } from './nodeLive';
import type { NodeLive } from './MeshNode';

const DELETE_KEYS = ['Delete', 'Backspace'];
const PRO_OPTIONS = { hideAttribution: false };
const CANVAS_STYLE = { contain: 'strict' } as const;

const nodeTypes = { mesh: MeshNode, meshGroup: MeshGroupNode, groupFrame: GroupFrameNode };

type CanvasNode = MeshFlowNode | MeshGroupFlowNode | GroupFrameFlowNode;

/** Space around an expanded group's members inside its frame, and the frame's title row. */
const FRAME_PAD = 16;
const FRAME_HEADER = 34;

interface Laid {
  hash: string;
  positions: Positions;
  frames: Record<string, Box>;
  /** Which full layout this is; the viewport is fitted when it changes, not on every placed node. */
  fit: string;
}

/** Nodes mounted per task while a large graph's first view is staged (see useFarCanvas). */
const MOUNT_CHUNK = 200;

/** The staged first view of a large graph: nodes from `limit` on are hidden; once per canvas. */
interface Stage {
  phase: 'idle' | 'on' | 'done';
  limit: number;
}

/**
 * The flat view's positions. Once every node has a place, a structural edit only places the new nodes
 * (lib/console/placeNewNodes.ts): a full layout moves every node (and ELK's cost seconds at 1,000
 * nodes). `full` asks for a full layout of the whole graph (ELK, or layeredLayout.ts from 300 nodes):
 * the first view, Tidy up, or an edit that added more nodes than there were.
 */
interface FlatState {
  placed: Laid | undefined;
  full: boolean;
}

export interface MeshCanvasProps {
  graph: MeshGraph;
  layout: DraftDoc['layout'];
  live: MeshLiveState | null | undefined;
  /** The live sessions on this graph, while the traffic overlay is on. */
  traffic?: GraphTraffic;
  /** Turns the traffic overlay on and off (absent: no live state to show, no button). */
  onToggleTraffic?(): void;
  selectedId: string | undefined;
  focus: { nodeId: string; seq: number } | undefined;
  theme: 'dark' | 'light';
  onSelect(id: string | undefined): void;
  /** Nodes moved; `null` takes a node's position out of the draft (Tidy up). */
  onMove(positions: Record<string, { x: number; y: number } | null>): void;
  onConnect(source: string, target: string, chain?: 'ingress' | 'egress'): void;
  onDelete(ids: string[]): void;
  /** The references of the selected edges are to go (Delete/Backspace on a selected edge). */
  onDeleteEdges?(refs: { key: string; path: FieldPath }[]): void;
  /**
   * The saved draft this graph shows (its id and revision), when it shows one: a large flat view's
   * picture is then kept for the next load (pictureStore.ts).
   */
  pictureOf?: { draftId: string; revision: number };
}

/**
 * The mesh graph on a React Flow canvas; React Flow only renders, the graph and layout come from
 * outside. Memoized: it re-renders only when its props change (the console's handlers are stable).
 */
export const MeshCanvas = memo(function MeshCanvas(props: MeshCanvasProps) {
  return (
    <ReactFlowProvider>
      <Canvas {...props} />
    </ReactFlowProvider>
  );
});

function Canvas(props: MeshCanvasProps) {
  const { layout, live, traffic, onToggleTraffic, selectedId, focus, theme, onSelect, onDeleteEdges } = props;
  // Each compile sends a whole new graph; nodes and edges that did not change keep their objects, so
  // React Flow and the memoized node components redraw only what an edit touched.
  const [graphs, setGraphs] = useState({ given: props.graph, graph: props.graph });
  let current = graphs;
  if (graphs.given !== props.graph) {
    current = { given: props.graph, graph: shareGraph(graphs.graph, props.graph) };
    setGraphs(current);
  }
  const { graph } = current;
  // The handlers React Flow holds stay the same functions (a changed handler is a store update that
  // every node's selector sees); they call the latest props.
  const latest = useRef({ ...props, groupOf: undefined as Grouping['groupOf'] | undefined });

  const rf = useReactFlow();
  // At far zoom edges are drawn plain (app/globals.css): a dash, an arrow or a marching ant is under
  // a pixel there, and painting them cost a third of a pan frame on a 1,000-node mesh.
  const far = useStore((s) => s.transform[2] < FAR_ZOOM);
  const wrapper = useRef<HTMLDivElement | null>(null);
  const [stage, setStage] = useState<Stage>({ phase: 'idle', limit: 0 });
  const [staging, setStaging] = useState(false);
  const { canvas: farCanvas, onMoveStart, onMoveEnd } = useFarCanvas(wrapper, staging);
  // The layout workers load (ELK's compiled) while the draft loads, not on the first real layout.
  useEffect(warmLayout, []);
  const [auto, setAuto] = useState<Laid | undefined>();
  const [layoutError, setLayoutError] = useState<{ hash: string; message: string } | undefined>();
  const fitted = useRef<string | undefined>(undefined);

  // Large meshes start grouped; the panel on the canvas switches either way.
  const [groupMode, setGroupMode] = useState<'auto' | 'on' | 'off'>('auto');
  const grouped = groupMode === 'on' || (groupMode === 'auto' && graph.nodes.length > GROUP_ABOVE);
  const grouping = useMemo(() => (grouped ? groupGraph(graph) : undefined), [graph, grouped]);
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(() => new Set());
  // The selected node's group opens with it (a deep link, a diagnostic picked in the list).
  // Keyed by content, so a click that opens nothing new keeps the layout (and the flat view's) as is.
  const openKey = useMemo(() => {
    const g = selectedId ? grouping?.groupOf[selectedId] : undefined;
    const known = new Set(grouping?.groups.map((x) => x.id));
    const out = new Set([...expanded].filter((id) => known.has(id)));
    if (g) out.add(g);
    return [...out].sort().join('\n');
  }, [expanded, grouping, selectedId]);
  const open = useMemo(() => new Set(openKey ? openKey.split('\n') : []), [openKey]);
  useEffect(() => {
    latest.current = { ...props, groupOf: grouping?.groupOf };
  });
  const view = useMemo(
    () => (grouping ? groupedView(graph, grouping, open) : undefined),
    [graph, grouping, open],
  );
  // The live sessions and RPCs a collapsed group stands in for: on the group, and on the edges drawn to it.
  const groupFlows = useMemo(
    () =>
      traffic && view && grouping && (traffic.sessions.length > 0 || traffic.load.clusters.length > 0)
        ? viewTraffic(traffic, graph, view, grouping.groupOf)
        : undefined,
    [traffic, view, grouping, graph],
  );

  // The flat view keeps every node where it is and places new ones next to their neighbours; a layout runs
  // over the whole graph only when asked to (see FlatState).
  const [flat, setFlat] = useState<FlatState>({ placed: undefined, full: false });
  const flatHash = useMemo(() => (grouping ? '' : graphHash(graph)), [graph, grouping]);
  let flatNow = flat;
  if (!grouping && !flat.full && flat.placed?.hash !== flatHash) {
    flatNow = placeFlat(graph, flatHash, flat, layout);
    setFlat(flatNow);
  }
  // The flat view as shown, kept for a reload (layoutStore's `shown` shelf): without it a reload after
  // an edit laid the whole graph out again, every node somewhere else, and ELK cost seconds at 1,000
  // nodes. Written when the page is idle, once the positions have stopped changing.
  const flatPlaced = grouping ? undefined : flatNow.placed;
  const pictureDraft = props.pictureOf?.draftId;
  const pictureRevision = props.pictureOf?.revision;
  useEffect(() => {
    if (!flatPlaced || flatPlaced.hash !== flatHash || Object.keys(flatPlaced.positions).length === 0) return;
    const timer = setTimeout(() => {
      saveLayout(flatPlaced.hash, flatPlaced.positions, undefined, 'shown');
      if (pictureDraft === undefined || pictureRevision === undefined) return;
      if (graph.nodes.length < FAR_CANVAS_MIN_NODES) return;
      // Where the nodes are shown: a position of the draft's own wins, as on the canvas.
      const shown: Positions = { ...flatPlaced.positions };
      for (const n of graph.nodes) if (layout[n.id]) shown[n.id] = layout[n.id]!;
      savePicture(pictureDraft, pictureRevision, firstViewPicture(graph, graph, shown, flatPlaced.hash));
    }, 500);
    return () => clearTimeout(timer);
  }, [flatPlaced, flatHash, graph, layout, pictureDraft, pictureRevision]);
  const elk = useMemo(
    () => (grouping ? groupedLayout(graph, grouping, open) : flatNow.full ? flatLayout(graph) : undefined),
    [graph, grouping, open, flatNow.full],
  );
  const hash = grouping ? elk!.hash : flatHash;
  const shownLaid = grouping ? auto : flatNow.placed;
  const failed = layoutError?.hash === hash ? layoutError.message : undefined;
  const busy = shownLaid?.hash !== hash && !failed;

  useEffect(() => {
    if (!elk) return;
    let cancelled = false;
    const { hash, positions } = elk;
    positions.then(
      (p) => {
        if (cancelled) return;
        if (grouping) {
          // The same layout again (an edit that moved nothing) keeps the object, so nothing re-renders.
          setAuto((a) => (a?.hash === hash ? a : { hash, fit: hash, ...p }));
          return;
        }
        setFlat({ placed: { hash, fit: `${hash}:${Date.now()}`, ...p }, full: false });
      },
      (e: Error) => {
        if (!cancelled) setLayoutError({ hash, message: e.message });
      },
    );
    return () => {
      cancelled = true;
    };
  }, [elk, grouping]);

  // Nodes whose draft positions Tidy up took out: the fit waits until the canvas has them gone.
  const clearing = useRef<string[]>([]);
  const tidyUp = useCallback(() => {
    // The draft's own positions would win over the new layout: they go at once, as one undoable
    // change, so the layout is fitted to the canvas with every node at its new place.
    const { layout: manual, onMove } = latest.current;
    const ids = Object.keys(manual);
    if (ids.length > 0) onMove(Object.fromEntries(ids.map((id) => [id, null])));
    clearing.current = ids;
    setFlat((f) => ({ ...f, full: true }));
  }, []);

  const collapse = useCallback(
    (id: string) => {
      setExpanded((s) => new Set([...s].filter((x) => x !== id)));
      // A selected member would keep its group open.
      if (selectedId && grouping?.groupOf[selectedId] === id) onSelect(undefined);
    },
    [grouping, selectedId, onSelect],
  );

  // A large graph's first view is drawn on the far canvas, and its nodes are mounted a chunk per task
  // once they have their places (useFarCanvas): once per canvas, so later edits render as usual.
  const placedNow = shownLaid?.hash === hash;
  // Collapsed groups first, then mesh nodes: the order they are mounted in.
  const meshCount = view ? view.collapsed.length + view.nodes.length : graph.nodes.length;
  if (stage.phase === 'idle' && meshCount >= FAR_CANVAS_MIN_NODES) setStage({ phase: 'on', limit: 0 });
  useEffect(() => {
    if (stage.phase !== 'on' || !placedNow) return;
    // After the next frame, so the canvas shows the graph before the first chunk's long task.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const frame = requestAnimationFrame(() => {
      timer = setTimeout(() =>
        setStage((st) =>
          st.phase !== 'on'
            ? st
            : st.limit + MOUNT_CHUNK >= meshCount
              ? { phase: 'done', limit: Infinity }
              : { phase: 'on', limit: st.limit + MOUNT_CHUNK },
        ),
      );
    });
    return () => {
      cancelAnimationFrame(frame);
      clearTimeout(timer);
    };
  }, [stage, placedNow, meshCount]);
  // The page's early picture (earlyPicture.ts) goes once this canvas shows the graph: useFarCanvas
  // takes it away with its first staged frame; this is for a graph shown without staging.
  const shownPlaced = placedNow && meshCount > 0 && stage.phase !== 'on';
  useEffect(() => {
    if (shownPlaced) removeEarlyPicture();
  }, [shownPlaced]);
  const stagedFrom = stage.phase === 'on' ? (placedNow ? stage.limit : 0) : Infinity;
  // The canvas takes over once there is something placed to draw (not while the layout runs).
  if (staging !== (stage.phase === 'on' && placedNow)) setStaging(!staging);

  const built = useMemo((): CanvasNode[] => {
    const autoPos = shownLaid?.positions ?? {};
    const liveOf = new Map<string, NodeLive>();
    const unlisted = traffic?.unavailable.length
      ? new Set(traffic.unavailable.map((u) => u.proxy))
      : undefined;
    if (live)
      for (const n of view ? view.nodes : graph.nodes) {
        const l = nodeLive(
          n,
          live,
          n.proxyId && unlisted?.has(n.proxyId) ? 'n/a' : traffic?.nodes[n.id],
          traffic?.load.nodes[n.id],
        );
        if (l) liveOf.set(n.id, l);
      }
    // A large graph's nodes waiting for their first layout are drawn as plain boxes (a third of a full
    // node's elements, no text to lay out): the column they wait in is gone once the layout answers.
    const plainWhileWaiting = graph.nodes.length >= FAR_CANVAS_MIN_NODES;
    const meshNode = (
      n: MeshGraph['nodes'][number],
      i: number,
      manual: boolean,
      mountOrder = i,
    ): MeshFlowNode => {
      // Manual positions (the draft's layout) win over the layout's; new nodes wait in a column meanwhile.
      const placed = (manual ? layout[n.id] : undefined) ?? autoPos[n.id];
      if (mountOrder >= stagedFrom)
        return {
          id: n.id,
          type: 'mesh',
          position: placed ?? { x: 0, y: 0 },
          // Only a placed node is drawn while staged: one still waiting for its layout has no place yet.
          data: placed ? { node: n, staged: true } : { node: n },
          width: NODE_WIDTH,
          height: NODE_HEIGHT,
          measured: { width: NODE_WIDTH, height: NODE_HEIGHT },
          hidden: true,
          selected: n.id === selectedId,
          zIndex: 1,
        };
      return {
        id: n.id,
        type: 'mesh',
        position: placed ?? { x: -NODE_WIDTH * 1.5, y: i * (NODE_HEIGHT + 16) },
        data:
          !placed && plainWhileWaiting
            ? { node: n, waiting: true }
            : liveOf.has(n.id)
              ? { node: n, live: liveOf.get(n.id) }
              : { node: n },
        width: NODE_WIDTH,
        height: NODE_HEIGHT,
        // Nodes have a fixed size. Without `measured`, React Flow drops a rebuilt node's handle bounds
        // until it measures the node again, and a connection started meanwhile (say, just after a live
        // update rebuilt the nodes) is dropped at once.
        measured: { width: NODE_WIDTH, height: NODE_HEIGHT },
        selected: n.id === selectedId,
        deletable: !!n.object && !n.generated && n.kind !== 'Proxy',
        zIndex: 1,
      };
    };
    if (!view) return graph.nodes.map((n, i) => meshNode(n, i, true));
    const frames = shownLaid?.frames ?? {};
    const out: CanvasNode[] = [];
    // Frames first: they are drawn behind their members.
    for (const g of view.expanded) {
      const f = frames[g.id];
      if (!f) continue;
      out.push({
        id: g.id,
        type: 'groupFrame',
        position: { x: f.x, y: f.y },
        data: { group: g, onCollapse: collapse },
        width: f.width,
        height: f.height,
        measured: { width: f.width, height: f.height },
        selectable: false,
        draggable: false,
        connectable: false,
        deletable: false,
        focusable: false,
        style: { pointerEvents: 'none' },
        zIndex: 0,
      });
    }
    view.collapsed.forEach((g, i) => {
      const staged = i >= stagedFrom;
      out.push({
        id: g.id,
        type: 'meshGroup',
        position: autoPos[g.id] ?? { x: -GROUP_WIDTH * 1.5, y: i * (GROUP_HEIGHT + 16) },
        data: {
          group: g,
          ...(staged && autoPos[g.id] ? { staged: true } : {}),
          ...(groupFlows?.groups[g.id] ? { sessions: groupFlows.groups[g.id] } : {}),
          ...(groupFlows?.groupLoad[g.id] ? { load: groupFlows.groupLoad[g.id] } : {}),
        },
        width: GROUP_WIDTH,
        height: GROUP_HEIGHT,
        measured: { width: GROUP_WIDTH, height: GROUP_HEIGHT },
        ...(staged ? { hidden: true } : {}),
        selectable: false,
        connectable: false,
        deletable: false,
        zIndex: 1,
      });
    });
    // In the grouped view positions come from the group layouts; the draft's layout is the flat view's.
    const first = view.collapsed.length;
    view.nodes.forEach((n, i) => out.push(meshNode(n, i, false, first + i)));
    return out;
  }, [graph, view, shownLaid, layout, live, traffic, groupFlows, selectedId, collapse, stagedFrom]);

  // Local node state takes drags between renders; a new graph, layout or overlay replaces it. Nodes
  // equal to the ones shown before keep their objects: React Flow then keeps its internal node and the
  // memoized node component does not render (the cost of an edit on a large mesh was every node).
  const [nodes, setNodes] = useState<CanvasNode[]>(built);
  const [shown, setShown] = useState({ built, stable: built });
  if (shown.built !== built) {
    const stable = shareById(shown.stable, built);
    setShown({ built, stable });
    setNodes(stable);
  }

  // The minimap draws on one canvas: React Flow's mounted a component per node, each a store subscriber.
  const miniBoxes = useMemo(() => minimapBoxes(nodes), [nodes]);

  const [selectedEdge, setSelectedEdge] = useState<string | undefined>();
  const builtEdges = useMemo(() => {
    let list = view ? view.edges.map(toViewEdge) : graph.edges.map(toFlowEdge);
    const flows = traffic?.edges;
    const pairs = groupFlows?.pairs;
    if (flows && traffic.sessions.length > 0)
      list = list.map((e) => {
        const n =
          flows[e.id] ??
          (pairs && e.data?.kind === 'aggregate' ? pairs[`${e.source}->${e.target}`] : undefined);
        return n ? trafficEdge(e, n) : e;
      });
    const rpcs = traffic?.load.edges;
    const pairRpcs = groupFlows?.pairLoad;
    if (rpcs && traffic.load.clusters.length > 0)
      list = list.map((e) => {
        const cell =
          rpcs[e.id] ??
          (pairRpcs && e.data?.kind === 'aggregate' ? pairRpcs[`${e.source}->${e.target}`] : undefined);
        return cell ? loadEdge(e, cell) : e;
      });
    return selectedEdge ? list.map((e) => (e.id === selectedEdge ? { ...e, selected: true } : e)) : list;
  }, [graph, view, selectedEdge, traffic, groupFlows]);
  const traceCss = useMemo(
    () => (selectedId ? traceStyle(graph, selectedId, built, builtEdges, grouping?.groupOf) : ''),
    [graph, selectedId, built, builtEdges, grouping],
  );
  const [shownEdges, setShownEdges] = useState({ built: builtEdges, stable: builtEdges });
  let edges = shownEdges.stable;
  if (shownEdges.built !== builtEdges) {
    edges = shareById(shownEdges.stable, builtEdges);
    setShownEdges({ built: builtEdges, stable: edges });
  }

  // The viewport follows the layout: a requested node is centred once it has its final place;
  // otherwise a new full layout is fitted to the canvas (nodes placed after an edit leave it be).
  const pendingFocus = useRef<string | undefined>(undefined);
  useEffect(() => {
    if (focus) pendingFocus.current = focus.nodeId;
  }, [focus]);
  useEffect(() => {
    const laid = shownLaid;
    if (!laid || laid.hash !== hash || graph.nodes.length === 0) return;
    if (clearing.current.some((c) => layout[c])) return;
    clearing.current = [];
    const id = pendingFocus.current;
    const frame = id ? laid.frames[id] : undefined;
    const pos = id ? (frame ?? (grouping ? undefined : layout[id]) ?? laid.positions[id]) : undefined;
    requestAnimationFrame(() => {
      if (id && pos) {
        pendingFocus.current = undefined;
        const w = frame?.width ?? NODE_WIDTH;
        const h = frame?.height ?? NODE_HEIGHT;
        void rf.setCenter(pos.x + w / 2, pos.y + h / 2, {
          zoom: Math.max(Math.min(rf.getZoom(), 1), frame ? 0.6 : 0.9),
          duration: 300,
        });
      } else if (fitted.current !== laid.fit) {
        // Staged nodes are hidden until mounted, and they count.
        void rf.fitView({ padding: 0.08, maxZoom: 1, includeHiddenNodes: true });
      }
      fitted.current = laid.fit;
    });
    // Only a new layout or a new focus request moves the viewport, not drags or overlays.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [shownLaid, focus, layout]);

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

  const onNodesChange = useCallback((changes: NodeChange<CanvasNode>[]) => {
    // Selection and deletion go through the console's own state and commands.
    const local = changes.filter((c) => c.type === 'position' || c.type === 'dimensions');
    if (local.length > 0) setNodes((ns) => applyNodeChanges(local, ns));
  }, []);

  // Edge selection (a click, or Enter on a focused edge) is the canvas's own state: one edge at a
  // time, and no node with it, so Delete never takes a node along.
  const onEdgesChange = useCallback(
    (changes: EdgeChange[]) => {
      const picked = changes.find((c): c is EdgeSelectionChange => c.type === 'select' && c.selected);
      if (picked) {
        setSelectedEdge(picked.id);
        onSelect(undefined);
      } else if (changes.some((c) => c.type === 'select' && !c.selected && c.id === selectedEdge))
        setSelectedEdge(undefined);
    },
    [onSelect, selectedEdge],
  );

  // Delete/Backspace on a selected edge removes its reference. Handled here rather than through React
  // Flow's delete key: after Ctrl+Z its key tracking missed the next Backspace (e2e/console-large.spec.ts).
  useEffect(() => {
    const edge = edges.find((e) => e.id === selectedEdge);
    const ref = (edge?.data as { ref?: { key: string; path: FieldPath } } | undefined)?.ref;
    if (!ref || !onDeleteEdges) return;
    const onKey = (e: KeyboardEvent) => {
      if ((e.key !== 'Delete' && e.key !== 'Backspace') || e.ctrlKey || e.metaKey || e.altKey) return;
      const t = e.target as HTMLElement | null;
      if (t?.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(t?.tagName ?? '')) return;
      e.preventDefault();
      setSelectedEdge(undefined);
      onDeleteEdges([ref]);
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [edges, selectedEdge, onDeleteEdges]);

  const handlers = useMemo(
    () => ({
      onNodeClick: (_: unknown, n: CanvasNode) => {
        setSelectedEdge(undefined);
        if (n.type === 'meshGroup') {
          pendingFocus.current = n.id;
          setExpanded((s) => new Set([...s, n.id]));
        } else if (n.type === 'mesh') latest.current.onSelect(n.id);
      },
      onPaneClick: () => {
        setSelectedEdge(undefined);
        latest.current.onSelect(undefined);
      },
      onNodeDragStop: (_: unknown, _n: CanvasNode, dragged: CanvasNode[]) => {
        // The grouped view's positions are its own; the draft keeps the flat view's.
        if (latest.current.groupOf) return;
        latest.current.onMove(
          Object.fromEntries(dragged.map((d) => [d.id, { x: d.position.x, y: d.position.y }])),
        );
      },
      onConnect: (c: Connection) =>
        latest.current.onConnect(
          c.source,
          c.target,
          modifiers.current.alt ? 'egress' : modifiers.current.shift ? 'ingress' : undefined,
        ),
      onBeforeDelete: async ({ nodes: gone }: { nodes: CanvasNode[]; edges: Edge[] }) => {
        // A selected edge is deleted by the key handler above, not here.
        const objects = gone.filter((n) => n.type === 'mesh');
        if (objects.length > 0) latest.current.onDelete(objects.map((n) => n.id));
        return false;
      },
    }),
    [],
  );

  const shownCount = view ? view.nodes.length + view.collapsed.length : graph.nodes.length;
  return (
    // Its own layout and paint root: the side panel and the diagnostics change on every keystroke and
    // every compile, and without containment each of those frames laid out the page down into every
    // node of a large mesh. The canvas takes its size from the grid (inset 0), never from its content.
    <div
      ref={wrapper}
      className={far ? 'canvas canvas--far' : 'canvas'}
      data-testid="canvas"
      style={CANVAS_STYLE}
    >
      <ReactFlow<CanvasNode, Edge>
        nodeTypes={nodeTypes}
        colorMode={theme}
        onNodesChange={onNodesChange}
        onNodeClick={handlers.onNodeClick}
        onEdgesChange={onEdgesChange}
        onPaneClick={handlers.onPaneClick}
        onNodeDragStop={handlers.onNodeDragStop}
        onConnect={handlers.onConnect}
        onBeforeDelete={handlers.onBeforeDelete}
        onMoveStart={onMoveStart}
        onMoveEnd={onMoveEnd}
        deleteKeyCode={DELETE_KEYS}
        minZoom={0.02}
        maxZoom={2}
        proOptions={PRO_OPTIONS}
      >
        <FlowGraphSync nodes={nodes} edges={edges} />
        {/* At far zoom the dots are a grey haze that every pan frame repainted over the whole pane. */}
        {far ? null : <Background gap={24} />}
        <canvas ref={farCanvas} className="canvas__far" aria-hidden="true" />
        {traceCss ? <style data-testid="trace-style">{traceCss}</style> : null}
        <Controls showInteractive={false} />
        <CanvasMiniMap boxes={miniBoxes} theme={theme} />
        {graph.nodes.length > 0 ? (
          <Panel position="top-right" className="canvas__grouping-panel">
            <div className="canvas__grouping" data-testid="grouping-panel">
              <span data-testid="group-summary" className="canvas__count">
                {view
                  ? `${graph.nodes.length.toLocaleString('en')} nodes in ${grouping!.groups.length.toLocaleString('en')} group${grouping!.groups.length === 1 ? '' : 's'}`
                  : `${graph.nodes.length.toLocaleString('en')} nodes`}
              </span>{' '}
              <button
                type="button"
                data-testid="group-toggle"
                aria-pressed={grouped}
                title={
                  grouped
                    ? 'Show every node (slow on large meshes)'
                    : 'Fold the graph by namespace (and by service in a large namespace)'
                }
                onClick={() => setGroupMode(grouped ? 'off' : 'on')}
              >
                {grouped ? 'Show all nodes' : 'Group by namespace'}
              </button>
              {onToggleTraffic ? (
                <button
                  type="button"
                  data-testid="traffic-toggle"
                  aria-pressed={!!traffic}
                  title={trafficTitle(traffic)}
                  onClick={onToggleTraffic}
                >
                  {traffic ? trafficButtonText(traffic) : '⇄ Traffic'}
                </button>
              ) : null}
              {grouped ? null : (
                <button
                  type="button"
                  data-testid="relayout"
                  title="Lay out every node again; nodes you moved lose their places (undo brings them back)"
                  disabled={busy}
                  onClick={tidyUp}
                >
                  Tidy up
                </button>
              )}
            </div>
          </Panel>
        ) : null}
      </ReactFlow>
      {graph.nodes.length === 0 ? (
        <div className="canvas__empty" data-testid="canvas-empty">
          <p>The draft has no mesh objects yet.</p>
          <p>Add one from the palette, paste YAML with Import, or load an example.</p>
        </div>
      ) : null}
      <div className="canvas__status" role="status" aria-live="polite">
        {failed ? `Layout failed: ${failed}` : busy ? `Laying out ${shownCount} nodes…` : ''}
      </div>
    </div>
  );
}

/** An attribute selector list for these React Flow ids (quotes and backslashes escaped). */
function idSelectors(ids: Iterable<string>): string {
  return [...ids].map((id) => `[data-id="${id.replace(/["\\]/g, '\\$&')}"]`).join(',');
}

/**
 * The style that dims what is not on the paths through the selected node (lib/console/pathThrough.ts):
 * the other nodes' text and kind colours, the other edges' strokes. Colours, not opacity: a translucent
 * node is a layer of its own to paint, hundreds of them on a large mesh. In the grouped view a collapsed
 * group stays bright when one of its members is on a path. Empty when everything shown is on one.
 */
function traceStyle(
  graph: MeshGraph,
  selectedId: string,
  shownNodes: readonly CanvasNode[],
  shownEdges: readonly Edge[],
  groupOf: Record<string, string> | undefined,
): string {
  const trace = pathThrough(graph, selectedId);
  if (!trace) return '';
  const dimmable = shownNodes.filter((n) => n.type === 'mesh' || n.type === 'meshGroup');
  const shown = new Set(dimmable.map((n) => n.id));
  const keep = new Set<string>();
  for (const id of trace.nodes) {
    const at = shown.has(id) ? id : groupOf?.[id];
    if (at !== undefined && shown.has(at)) keep.add(at);
  }
  if (keep.size === 0 || keep.size >= shown.size) return '';
  const edges = shownEdges.filter((e) => keep.has(e.source) && keep.has(e.target)).map((e) => e.id);
  const nodes = idSelectors(keep);
  return [
    `.canvas :is(.react-flow__node-mesh, .react-flow__node-meshGroup):not(:is(${nodes})) .mesh-node {`,
    '  --text: var(--text-muted); --kind-vs: var(--border); --kind-route: var(--border);',
    '  --kind-target: var(--border); --kind-service: var(--border); --kind-proxy: var(--border);',
    '}',
    `.canvas .react-flow__edge${edges.length ? `:not(:is(${idSelectors(edges)}))` : ''} .react-flow__edge-path { stroke-opacity: 0.2; }`,
  ].join('\n');
}

/**
 * The flat view after a structural edit: nodes that had a place (the draft's, else the last layout's)
 * keep it, new ones are placed next to their neighbours, removed ones drop out. Too few placed nodes
 * (the first view of a draft without positions, a big import) asks for a full layout instead.
 */
function placeFlat(graph: MeshGraph, hash: string, flat: FlatState, manual: DraftDoc['layout']): FlatState {
  if (graph.nodes.length === 0)
    return { placed: { hash, positions: {}, frames: {}, fit: hash }, full: false };
  // Where nodes are shown (the draft's position wins) for placing around them; the kept positions
  // prefer the layout's, so undoing a drag still takes a node back there.
  const known: Positions = {};
  const kept: Positions = {};
  const had = flat.placed?.positions ?? {};
  for (const n of graph.nodes) {
    const p = manual[n.id] ?? had[n.id];
    if (p) known[n.id] = p;
    const k = had[n.id] ?? manual[n.id];
    if (k) kept[n.id] = k;
  }
  // One node gone and one new: a rename (or a re-typed reference), which keeps its place.
  const fresh = graph.nodes.filter((n) => !known[n.id]);
  if (fresh.length === 1) {
    const present = new Set(graph.nodes.map((n) => n.id));
    const gone = Object.keys(had).filter((id) => !present.has(id));
    if (gone.length === 1) known[fresh[0]!.id] = kept[fresh[0]!.id] = had[gone[0]!]!;
  }
  if (!canPlaceIncrementally(graph.nodes, known)) {
    // A first view (a reload, another draft): as this browser last showed this graph, if it did.
    const shown = loadLayout(hash, undefined, 'shown');
    if (shown && graph.nodes.every((n) => shown[n.id]))
      return { placed: { hash, positions: shown, frames: {}, fit: hash }, full: false };
    return { ...flat, full: true };
  }
  const placed = placeNewNodes({
    nodes: graph.nodes,
    edges: graph.edges,
    known,
    size: { width: NODE_WIDTH, height: NODE_HEIGHT },
  });
  return {
    placed: { hash, positions: { ...kept, ...placed }, frames: {}, fit: flat.placed?.fit ?? hash },
    full: false,
  };
}

function flatLayout(graph: MeshGraph): { hash: string; positions: Promise<Omit<Laid, 'hash' | 'fit'>> } {
  const { hash, positions } = layoutGraph(graph);
  return { hash, positions: positions.then((p) => ({ positions: p, frames: {} })) };
}

/**
 * The grouped view's layout: the overview (every group collapsed) and each expanded group's members
 * on their own, each cached by its graph hash, then the expanded groups grown in place.
 */
function groupedLayout(
  graph: MeshGraph,
  grouping: Grouping,
  open: ReadonlySet<string>,
): { hash: string; positions: Promise<Omit<Laid, 'hash' | 'fit'>> } {
  // The same input as the server's first-view layout (lib/console/elkLayout.ts), so its layout is found.
  const main = layoutGraph(overviewLayoutInput(graph, grouping));
  const subs = [...open].sort().map((id) => ({ id, ...layoutGraph(groupSubgraph(graph, grouping, id)) }));
  const isGroup = new Set(grouping.groups.map((g) => g.id));
  const hash = [main.hash, ...subs.map((s) => `${s.id}:${s.hash}`)].join('|');
  const positions = Promise.all([main.positions, ...subs.map((s) => s.positions)]).then(
    ([overviewPos, ...local]) => {
      const grow = subs.map((s, i) => {
        const ps = Object.values(local[i]!);
        const minX = Math.min(...ps.map((p) => p.x));
        const minY = Math.min(...ps.map((p) => p.y));
        const maxX = Math.max(...ps.map((p) => p.x + NODE_WIDTH));
        const maxY = Math.max(...ps.map((p) => p.y + NODE_HEIGHT));
        return {
          id: s.id,
          width: maxX - minX + 2 * FRAME_PAD,
          height: maxY - minY + FRAME_PAD + FRAME_HEADER,
          minX,
          minY,
        };
      });
      const placed = placeExpanded(
        overviewPos!,
        (id) =>
          isGroup.has(id)
            ? { width: GROUP_WIDTH, height: GROUP_HEIGHT }
            : { width: NODE_WIDTH, height: NODE_HEIGHT },
        grow,
      );
      grow.forEach((g, i) => {
        const frame = placed.frames[g.id];
        if (!frame) return;
        for (const [id, p] of Object.entries(local[i]!))
          placed.positions[id] = {
            x: frame.x + FRAME_PAD + p.x - g.minX,
            y: frame.y + FRAME_HEADER + p.y - g.minY,
          };
      });
      return placed;
    },
  );
  return { hash, positions };
}

/** What the minimap draws of each shown node: its box, kind and marks. */
function minimapBoxes(nodes: readonly CanvasNode[]): MiniMapBox[] {
  const out: MiniMapBox[] = [];
  for (const n of nodes) {
    // A staged node (placed, waiting to be mounted) is shown on the far canvas, so here too.
    if (n.hidden && !(n.data as { staged?: boolean }).staged) continue;
    const width = n.measured?.width ?? n.width ?? NODE_WIDTH;
    const height = n.measured?.height ?? n.height ?? NODE_HEIGHT;
    const box = { id: n.id, x: n.position.x, y: n.position.y, width, height };
    if (n.type === 'mesh') {
      const g = n.data.node;
      out.push({ ...box, kind: g.kind, error: !!g.invalid || g.counts.error > 0, selected: !!n.selected });
    } else out.push({ ...box, kind: 'group' });
  }
  return out;
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

function toViewEdge(e: ViewEdge): Edge {
  if (e.edge) return toFlowEdge(e.edge);
  return {
    id: e.id,
    source: e.source,
    target: e.target,
    label: e.count > 1 ? `×${e.count}` : undefined,
    className: 'edge-aggregate',
    selectable: false,
    deletable: false,
    data: { kind: 'aggregate', count: e.count },
    ariaLabel: `${e.count} reference${e.count === 1 ? '' : 's'}`,
  };
}

/** Edges traffic runs along are drawn over the nodes (zIndex 1), so their counts can be read whole. */
const TRAFFIC_EDGE_Z = 2;

/** An edge live sessions run along: drawn as a flow, with their count. */
function trafficEdge(e: Edge, sessions: number): Edge {
  const count = `⇄ ${sessions}`;
  return {
    ...e,
    className: `${e.className ?? ''} edge-traffic`,
    animated: true,
    // Above the nodes (zIndex 1): a count is wider than the gap between two layers, and under the
    // nodes both of its ends were hidden ("RPC/s · 1" of "⇄ 9.9 RPC/s · 100%").
    zIndex: TRAFFIC_EDGE_Z,
    label: e.label ? `${String(e.label)} · ${count}` : count,
    data: { ...e.data, sessions },
    ariaLabel: `${e.ariaLabel ?? ''}, ${sessions} live session${sessions === 1 ? '' : 's'}`,
  };
}

/** An edge gRPC clients' RPCs run along: drawn as a flow with RPC/s and success, red when RPCs fail. */
function loadEdge(e: Edge, load: LoadCell): Edge {
  const text = `⇄ ${loadLabel(load)}`;
  const failing = loadFailing(load);
  return {
    ...e,
    className: `${e.className ?? ''} edge-traffic${failing ? ' edge-traffic--failing' : ''}`,
    animated: true,
    zIndex: TRAFFIC_EDGE_Z,
    label: e.label ? `${String(e.label)} · ${text}` : text,
    data: { ...e.data, rps: load.rps },
    ariaLabel: `${e.ariaLabel ?? ''}, ${loadLabel(load)}`,
  };
}

/** The traffic button while on: the sessions, and the gRPC clients' RPCs once one reports. */
function trafficButtonText(traffic: GraphTraffic): string {
  const n = traffic.sessions.length;
  const sessions = `${n} session${n === 1 ? '' : 's'}`;
  if (traffic.load.reporting.length === 0) return `⇄ ${sessions}`;
  return n > 0 ? `⇄ ${sessions} · ${formatRps(traffic.load.rps)}` : `⇄ ${formatRps(traffic.load.rps)}`;
}

/** What the traffic button's tooltip says: where the sessions come from and what is missing. */
function trafficTitle(traffic: GraphTraffic | undefined): string {
  if (!traffic) return "Show the proxies' live sessions and the gRPC clients' RPCs on the graph (T)";
  const { load } = traffic;
  const gone = load.clusters.filter((c) => c.missing === 'cluster');
  return [
    "Live sessions from each l7mp proxy's session list, read every 2 s (l7mp counts no bytes). Click (or T) to hide.",
    load.clients.length > 0
      ? "RPCs per second and success over the last 10 s from the gRPC clients' own load reports (every 2 s)."
      : '',
    load.clients.length > load.reporting.length
      ? `No load reports yet from ${load.clients.filter((c) => !load.reporting.includes(c)).join(', ')}`
      : '',
    ...gone.map((c) => `${c.proxy}: cluster ${c.cluster} is not in this draft (${formatRps(c.load.rps)})`),
    ...traffic.unavailable.map((u) => `${u.proxy}: sessions unavailable: ${u.reason}`),
    traffic.unplaced > 0
      ? `${traffic.unplaced} session${traffic.unplaced === 1 ? ' runs' : 's run'} on listeners this draft does not have`
      : '',
  ]
    .filter(Boolean)
    .join('\n');
}

/** Each graph edge's React Flow edge: an unchanged edge keeps its object from one compile to the next. */
const flowEdges = new WeakMap<GraphEdge, Edge>();

function toFlowEdge(e: GraphEdge): Edge {
  let f = flowEdges.get(e);
  if (!f) flowEdges.set(e, (f = makeFlowEdge(e)));
  return f;
}

function makeFlowEdge(e: GraphEdge): Edge {
  return {
    id: e.id,
    source: e.source,
    target: e.target,
    label: e.label,
    className: EDGE_CLASS[e.kind],
    markerEnd: { type: MarkerType.ArrowClosed, width: 16, height: 16 },
    animated: e.kind === 'ingress' || e.kind === 'egress',
    // An edge that stands for a written reference can be selected and deleted (the reference goes).
    selectable: !!e.ref,
    deletable: !!e.ref,
    data: { kind: e.kind, ref: e.ref },
    ariaLabel: `${e.kind}${e.label ? ` ${e.label}` : ''}`,
  };
}
