/**
 * A large draft's first view as a picture: boxes and lines in the places the canvas will give them,
 * made by the server with its layout (server/console/DraftLayouts.ts) and drawn by the console page's
 * inline script (components/console/earlyPicture.ts) before the app's JavaScript has loaded, so the
 * graph shows in about half a second instead of after the app's own compile (P7: about 2 s for 1,000
 * nodes). The app's canvas replaces it as soon as it draws. Pure.
 */
import type { LayoutInput, Positions } from './elkLayout';
import { NODE_HEIGHT, NODE_WIDTH } from './elkLayout';
import type { GraphNode } from './meshGraph';

/** Node styles, by index: the CSS variable of the kind's stripe ('' for a group frame). */
export const PICTURE_NODE_VARS = [
  '--kind-vs',
  '--kind-route',
  '--kind-target',
  '--kind-service',
  '--kind-proxy',
  '--bad',
  '',
] as const;

const NODE_STYLE: Record<GraphNode['kind'] | 'group', number> = {
  VirtualService: 0,
  Route: 1,
  Target: 2,
  Service: 3,
  Proxy: 4,
  Missing: 5,
  group: 6,
};

/** Edge styles, by index: the far-zoom stroke of each edge kind (components/console/farCanvas.ts). */
export const PICTURE_EDGE_VARS = [
  '--text-muted',
  '--kind-vs',
  '--kind-target',
  '--accent-2',
  '--warn',
] as const;

const EDGE_STYLE: Record<string, number> = {
  rule: 1,
  destination: 2,
  split: 2,
  ingress: 3,
  egress: 4,
};

/** Flags of a picture node. */
export const PICTURE_GENERATED = 1;
export const PICTURE_GROUP = 2;

/**
 * Flat number lists, a few bytes per node and edge: `nodes` is x, y, width, height, style (an index
 * into PICTURE_NODE_VARS) and flags per node; `edges` is source, target (node indexes) and style (an
 * index into PICTURE_EDGE_VARS) per edge.
 */
export interface FirstViewPicture {
  /** The graph hash of the layout it was drawn from. */
  hash: string;
  nodes: number[];
  edges: number[];
}

export const PICTURE_NODE_STRIDE = 6;
export const PICTURE_EDGE_STRIDE = 3;

/**
 * The picture of a first view: every node of the layout input that has a position, with its kind
 * from `graph` (an id the graph does not have is a collapsed group: a frame), and every edge between
 * two of them.
 */
export function firstViewPicture(
  graph: Pick<{ nodes: readonly Pick<GraphNode, 'id' | 'kind' | 'generated'>[] }, 'nodes'>,
  input: LayoutInput,
  positions: Positions,
  hash: string,
): FirstViewPicture {
  const kinds = new Map(graph.nodes.map((n) => [n.id, n]));
  const index = new Map<string, number>();
  const nodes: number[] = [];
  for (const n of input.nodes) {
    const p = positions[n.id];
    if (!p) continue;
    const g = kinds.get(n.id);
    // Not a node of the graph: a collapsed group of the overview (its layout input is the bare id).
    const group = !g;
    index.set(n.id, index.size);
    nodes.push(
      p.x,
      p.y,
      n.width ?? NODE_WIDTH,
      n.height ?? NODE_HEIGHT,
      g ? NODE_STYLE[g.kind] : NODE_STYLE.group,
      (g?.generated ? PICTURE_GENERATED : 0) | (group ? PICTURE_GROUP : 0),
    );
  }
  const edges: number[] = [];
  for (const e of input.edges) {
    const s = index.get(e.source);
    const t = index.get(e.target);
    if (s === undefined || t === undefined) continue;
    edges.push(s, t, EDGE_STYLE[e.kind] ?? 0);
  }
  return { hash, nodes, edges };
}

/**
 * The canvas's first fit (fitView, padding 0.08, zoom 0.02-1) of a picture in a pane: [x, y, zoom].
 * Self-contained (no imports, no module constants): the console page's inline script embeds its
 * source (components/console/earlyPicture.ts).
 */
export function pictureFit(
  picture: FirstViewPicture,
  width: number,
  height: number,
): [number, number, number] {
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  const n = picture.nodes;
  // PICTURE_NODE_STRIDE (6) numbers per node.
  for (let i = 0; i + 3 < n.length; i += 6) {
    x0 = Math.min(x0, n[i]!);
    y0 = Math.min(y0, n[i + 1]!);
    x1 = Math.max(x1, n[i]! + n[i + 2]!);
    y1 = Math.max(y1, n[i + 1]! + n[i + 3]!);
  }
  if (!(x1 > x0) || !(y1 > y0)) return [0, 0, 1];
  // xyflow's getViewportForBounds with a numeric padding.
  const px = Math.floor((width - width / 1.08) * 0.5);
  const py = Math.floor((height - height / 1.08) * 0.5);
  const k = Math.min(
    1,
    Math.max(0.02, Math.min((width - 2 * px) / (x1 - x0), (height - 2 * py) / (y1 - y0))),
  );
  return [width / 2 - ((x0 + x1) / 2) * k, height / 2 - ((y0 + y1) / 2) * k, k];
}
