/**
 * What the canvas asks ELK for, shared by the browser's layout worker (components/console/layoutGraph.ts)
 * and the server, which lays out a large draft's first view before a browser asks for it
 * (server/console/DraftLayouts.ts): the same graph and options give both the same positions, under the
 * same graph hash. Pure; ELK itself runs elsewhere.
 */
import type { ElkNode } from 'elkjs/lib/elk-api';
import type { DraftDoc } from './draftDoc';
import { GROUP_ABOVE, groupGraph, type Grouping, overviewGraph } from './groupGraph';
import type { MeshGraph } from './meshGraph';
import { canPlaceIncrementally } from './placeNewNodes';

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

/**
 * Graphs with at least this many nodes have their first view laid out by the server too, for the
 * picture the page draws before its app has loaded (firstViewPicture.ts); a smaller graph's app draws
 * it soon enough.
 */
export const SERVER_LAYOUT_MIN_NODES = 300;

/**
 * Graphs with at least this many nodes are laid out by our layered layout (layeredLayout.ts), in the
 * browser and on the server: ELK's drawing is the same to the eye there (bench/layout.ts: the same
 * crossings and size) and took 1.2-1.7 s in the browser for 1,000 nodes, where ours takes tens of
 * milliseconds. Smaller graphs keep ELK, under half a second at this size.
 */
export const LAYERED_LAYOUT_MIN_NODES = 300;

/** Which layout a graph gets, the same in the browser and on the server (same input, same places). */
export function layoutAlgorithmOf(input: LayoutInput): 'elk' | 'layered' {
  return input.nodes.length >= LAYERED_LAYOUT_MIN_NODES ? 'layered' : 'elk';
}

/** Positions in transit and in storage: [ids, xs, ys], whole pixels; a third of `{id: {x, y}}`'s size. */
export type PackedPositions = [string[], number[], number[]];

/** Spacing of the layered layouts, ELK's and ours (layeredLayout.ts), in pixels. */
export const LAYOUT_SPACING = { betweenLayers: 56, nodeNode: 20, componentComponent: 20 } as const;

export const LAYOUT_OPTIONS: Readonly<Record<string, string>> = {
  'elk.algorithm': 'layered',
  'elk.direction': 'RIGHT',
  'elk.layered.spacing.nodeNodeBetweenLayers': String(LAYOUT_SPACING.betweenLayers),
  'elk.spacing.nodeNode': String(LAYOUT_SPACING.nodeNode),
  'elk.spacing.componentComponent': String(LAYOUT_SPACING.componentComponent),
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
 * A small graph to run ELK on first, while nothing waits: ELK's code gets compiled on its first graphs,
 * and a cold 1,000-node layout took 4.5-7 s where a warm one took 1.4-2 s (in Chromium). Three layers
 * of 24 with a few crossings: enough for ELK's layered phases to run.
 */
export const ELK_WARM_UP: LayoutInput = (() => {
  const nodes = Array.from({ length: 72 }, (_, i) => ({ id: `w${i}` }));
  const edges: { id: string; source: string; target: string; kind: string }[] = [];
  for (let i = 0; i < 48; i++) {
    edges.push({ id: `a${i}`, source: `w${i}`, target: `w${24 + ((i * 7) % 48)}`, kind: 'warm' });
    if (i < 24)
      edges.push({ id: `b${i}`, source: `w${24 + i}`, target: `w${48 + ((i * 5) % 24)}`, kind: 'warm' });
  }
  return { nodes, edges };
})();

/** The graph as ELK takes it, nodes and edges in the given order (ELK's result depends on it). */
export function elkGraphOf(input: LayoutInput): ElkNode {
  return {
    id: 'root',
    layoutOptions: { ...LAYOUT_OPTIONS },
    children: input.nodes.map((n) => ({
      id: n.id,
      width: n.width ?? NODE_WIDTH,
      height: n.height ?? NODE_HEIGHT,
    })),
    edges: input.edges.map((e) => ({ id: e.id, sources: [e.source], targets: [e.target] })),
  };
}

/** ELK's node places in whole pixels: crisp node borders, and the same places after a reload. */
export function positionsOf(laid: Pick<ElkNode, 'children'>): Positions {
  const out: Positions = {};
  for (const c of laid.children ?? []) out[c.id] = { x: Math.round(c.x ?? 0), y: Math.round(c.y ?? 0) };
  return out;
}

/** The overview of a grouped canvas (every group collapsed) as the layout takes it. */
export function overviewLayoutInput(
  graph: Pick<MeshGraph, 'nodes' | 'edges'>,
  grouping: Grouping = groupGraph(graph),
): LayoutInput {
  const overview = overviewGraph(graph, grouping);
  return {
    nodes: overview.nodes.map((n) =>
      n.group ? { id: n.id, width: GROUP_WIDTH, height: GROUP_HEIGHT } : { id: n.id },
    ),
    edges: overview.edges,
  };
}

/**
 * The graph the canvas runs ELK on when it first shows `graph` with the draft's own positions
 * `manual`: the overview above GROUP_ABOVE nodes (the canvas starts grouped), else the whole graph,
 * unless the draft places enough nodes for the rest to be placed beside them without ELK.
 */
export function firstViewLayoutInput(
  graph: Pick<MeshGraph, 'nodes' | 'edges'>,
  manual: DraftDoc['layout'],
): LayoutInput | undefined {
  if (graph.nodes.length === 0) return undefined;
  if (graph.nodes.length > GROUP_ABOVE) return overviewLayoutInput(graph);
  if (canPlaceIncrementally(graph.nodes, manual)) return undefined;
  return graph;
}

/** Positions packed for JSON (see PackedPositions). */
export function packPositions(positions: Positions): PackedPositions {
  const ids = Object.keys(positions);
  return [ids, ids.map((id) => Math.round(positions[id]!.x)), ids.map((id) => Math.round(positions[id]!.y))];
}

/** Packed positions back, or undefined when `packed` is not a well-formed PackedPositions. */
export function unpackPositions(packed: unknown): Positions | undefined {
  if (!Array.isArray(packed) || packed.length !== 3) return undefined;
  const [ids, xs, ys] = packed as unknown[];
  if (!Array.isArray(ids) || !Array.isArray(xs) || !Array.isArray(ys)) return undefined;
  if (xs.length !== ids.length || ys.length !== ids.length) return undefined;
  const out: Positions = {};
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i];
    const x = xs[i];
    const y = ys[i];
    if (typeof id !== 'string' || typeof x !== 'number' || typeof y !== 'number') return undefined;
    if (!Number.isFinite(x) || !Number.isFinite(y)) return undefined;
    out[id] = { x, y };
  }
  return out;
}
