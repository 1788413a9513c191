/**
 * Large meshes on the canvas (issue 5, P7 at 5,000 nodes): the graph folded into groups, by namespace
 * and, where a namespace alone is too large, by service (the objects that refer to each other). A
 * collapsed group is one node with its counts and worst diagnostic; edges into, out of and between
 * collapsed groups are aggregated with a count. Pure: the canvas lays out and draws what this returns.
 */
import type { Severity } from '../model/diagnostic';
import type { GraphEdge, GraphEdgeKind, GraphNode, GraphNodeKind, MeshGraph } from './meshGraph';

/** Above this many nodes the canvas starts grouped (the user can switch either way). */
export const GROUP_ABOVE = 1500;

export interface GroupOptions {
  /** A namespace with more nodes than this is split into service groups. */
  maxGroupSize?: number;
  /** Up to this many proxies of a namespace stay on the canvas as themselves (they are shared hubs). */
  maxLooseProxies?: number;
}

export interface GraphGroup {
  /** `Group:ns/<ns>`, `Group:<first VirtualService's node id>`, `Group:other/<ns>`, `Group:proxies/<ns>`. */
  id: string;
  namespace: string;
  /** What the group is: a whole namespace, one service, the namespace's loose objects, its proxies. */
  by: 'namespace' | 'service' | 'other' | 'proxies';
  /** The service's name (its first VirtualService, else its first object). */
  service?: string;
  /** Node ids, sorted. */
  members: string[];
  kinds: Partial<Record<GraphNodeKind, number>>;
  diagnostics: Record<Severity, number>;
  /** The worst diagnostic severity inside, if any. */
  worst?: Severity;
}

export interface Grouping {
  groups: GraphGroup[];
  /** Node id -> group id; nodes that are in no group are absent. */
  groupOf: Record<string, string>;
}

/** An edge of the grouped view: a graph edge between two shown nodes, or several folded into one. */
export interface ViewEdge {
  id: string;
  source: string;
  target: string;
  kind: GraphEdgeKind | 'aggregate';
  /** How many graph edges it stands for. */
  count: number;
  /** The graph edge itself when it connects two nodes shown as themselves. */
  edge?: GraphEdge;
}

export interface GroupedView {
  /** Graph nodes shown as themselves: ungrouped ones and members of expanded groups. */
  nodes: GraphNode[];
  /** Collapsed groups. */
  collapsed: GraphGroup[];
  /** Expanded groups (drawn as a frame around their members). */
  expanded: GraphGroup[];
  edges: ViewEdge[];
}

const SEVERITIES: Severity[] = ['error', 'warning', 'info'];

/** Folds the graph into namespace groups, split by service where a namespace has too many nodes. */
export function groupGraph(graph: Pick<MeshGraph, 'nodes' | 'edges'>, opts: GroupOptions = {}): Grouping {
  const maxGroupSize = opts.maxGroupSize ?? 500;
  const maxLooseProxies = opts.maxLooseProxies ?? 20;
  const byNs = new Map<string, GraphNode[]>();
  for (const n of graph.nodes) {
    const list = byNs.get(n.namespace) ?? [];
    list.push(n);
    byNs.set(n.namespace, list);
  }
  const groups: GraphGroup[] = [];
  const groupOf: Record<string, string> = {};
  const add = (g: Omit<GraphGroup, 'kinds' | 'diagnostics' | 'worst'>, members: GraphNode[]) => {
    const group = summarise(g, members);
    groups.push(group);
    for (const id of group.members) groupOf[id] = group.id;
  };
  for (const [ns, nodes] of [...byNs].sort(([a], [b]) => cmp(a, b))) {
    const proxies = nodes.filter((n) => n.kind === 'Proxy');
    const rest = nodes.filter((n) => n.kind !== 'Proxy');
    if (proxies.length > maxLooseProxies)
      add({ id: `Group:proxies/${ns}`, namespace: ns, by: 'proxies', members: [] }, proxies);
    if (rest.length === 0) continue;
    if (rest.length <= maxGroupSize) {
      add({ id: `Group:ns/${ns}`, namespace: ns, by: 'namespace', members: [] }, rest);
      continue;
    }
    const loose: GraphNode[] = [];
    for (const members of components(rest, graph.edges)) {
      if (members.length === 1) {
        loose.push(members[0]!);
        continue;
      }
      const head = serviceHead(members);
      add({ id: `Group:${head.id}`, namespace: ns, by: 'service', service: head.name, members: [] }, members);
    }
    if (loose.length > 1) add({ id: `Group:other/${ns}`, namespace: ns, by: 'other', members: [] }, loose);
  }
  groups.sort((a, b) => cmp(a.id, b.id));
  return { groups, groupOf };
}

/** What the canvas shows for a grouping with some groups expanded. */
export function groupedView(
  graph: Pick<MeshGraph, 'nodes' | 'edges'>,
  grouping: Grouping,
  expanded: ReadonlySet<string>,
): GroupedView {
  const open = (g: string | undefined) => g === undefined || expanded.has(g);
  const nodes = graph.nodes.filter((n) => open(grouping.groupOf[n.id]));
  const edges = foldEdges(graph.edges, (id) => {
    const g = grouping.groupOf[id];
    return g !== undefined && !expanded.has(g) ? g : id;
  });
  return {
    nodes,
    collapsed: grouping.groups.filter((g) => !expanded.has(g.id)),
    expanded: grouping.groups.filter((g) => expanded.has(g.id)),
    edges,
  };
}

/** The groups and ungrouped nodes with every group collapsed: what the overview layout places. */
export function overviewGraph(
  graph: Pick<MeshGraph, 'nodes' | 'edges'>,
  grouping: Grouping,
): { nodes: { id: string; group?: GraphGroup }[]; edges: ViewEdge[] } {
  const loose = graph.nodes.filter((n) => grouping.groupOf[n.id] === undefined).map((n) => ({ id: n.id }));
  const groups = grouping.groups.map((g) => ({ id: g.id, group: g }));
  return {
    nodes: [...groups, ...loose],
    edges: foldEdges(graph.edges, (id) => grouping.groupOf[id] ?? id),
  };
}

/** The graph edges among one group's members (its own layout). */
export function groupSubgraph(
  graph: Pick<MeshGraph, 'nodes' | 'edges'>,
  grouping: Grouping,
  groupId: string,
): Pick<MeshGraph, 'nodes' | 'edges'> {
  const inside = (id: string) => grouping.groupOf[id] === groupId;
  return {
    nodes: graph.nodes.filter((n) => inside(n.id)),
    edges: graph.edges.filter((e) => inside(e.source) && inside(e.target)),
  };
}

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * Places expanded groups into the overview layout without re-laying it out: each expanded group's
 * box grows from its collapsed size to fit its own layout, and whatever lies to its right moves right
 * and whatever lies below moves down by the growth. That shift is monotone in x and in y, so boxes that
 * did not overlap still do not. Returns every overview item's new top-left and each group's frame.
 */
export function placeExpanded(
  overview: Readonly<Record<string, { x: number; y: number }>>,
  sizes: (id: string) => { width: number; height: number },
  grow: readonly { id: string; width: number; height: number }[],
): { positions: Record<string, { x: number; y: number }>; frames: Record<string, Box> } {
  const positions: Record<string, { x: number; y: number }> = {};
  for (const [id, p] of Object.entries(overview)) positions[id] = { x: p.x, y: p.y };
  const frames: Record<string, Box> = {};
  for (const g of [...grow].sort((a, b) => cmp(a.id, b.id))) {
    const at = positions[g.id];
    if (!at) continue;
    const size = sizes(g.id);
    const right = at.x + size.width;
    const below = at.y + size.height;
    const dw = Math.max(0, g.width - size.width);
    const dh = Math.max(0, g.height - size.height);
    for (const [id, p] of Object.entries(positions)) {
      if (id === g.id) continue;
      if (p.x >= right) p.x += dw;
      if (p.y >= below) p.y += dh;
    }
    frames[g.id] = {
      x: at.x,
      y: at.y,
      width: Math.max(g.width, size.width),
      height: Math.max(g.height, size.height),
    };
  }
  // A frame stored earlier moved with the shifts of later ones.
  for (const id of Object.keys(frames))
    frames[id] = { ...frames[id]!, x: positions[id]!.x, y: positions[id]!.y };
  return { positions, frames };
}

function foldEdges(edges: readonly GraphEdge[], rep: (id: string) => string): ViewEdge[] {
  const out = new Map<string, ViewEdge>();
  for (const e of edges) {
    const source = rep(e.source);
    const target = rep(e.target);
    if (source === target && source !== e.source) continue;
    if (source === e.source && target === e.target) {
      out.set(e.id, { id: e.id, source, target, kind: e.kind, count: 1, edge: e });
      continue;
    }
    const id = `agg:${source}->${target}`;
    const agg = out.get(id);
    if (agg) agg.count++;
    else out.set(id, { id, source, target, kind: 'aggregate', count: 1 });
  }
  return [...out.values()].sort((a, b) => cmp(a.id, b.id));
}

/** Connected components of the namespace's nodes over the edges between them. */
function components(nodes: GraphNode[], edges: readonly GraphEdge[]): GraphNode[][] {
  const index = new Map(nodes.map((n, i) => [n.id, i]));
  const parent = nodes.map((_, i) => i);
  const find = (i: number): number => {
    while (parent[i] !== i) {
      parent[i] = parent[parent[i]!]!;
      i = parent[i]!;
    }
    return i;
  };
  for (const e of edges) {
    const a = index.get(e.source);
    const b = index.get(e.target);
    if (a === undefined || b === undefined) continue;
    const ra = find(a);
    const rb = find(b);
    if (ra !== rb) parent[Math.max(ra, rb)] = Math.min(ra, rb);
  }
  const byRoot = new Map<number, GraphNode[]>();
  nodes.forEach((n, i) => {
    const r = find(i);
    const list = byRoot.get(r) ?? [];
    list.push(n);
    byRoot.set(r, list);
  });
  return [...byRoot.values()];
}

/** The node a service group is named after: its first written VirtualService, else its first node. */
function serviceHead(members: GraphNode[]): GraphNode {
  const sorted = [...members].sort((a, b) => cmp(a.id, b.id));
  return (
    sorted.find((n) => n.kind === 'VirtualService' && !n.generated) ??
    sorted.find((n) => n.kind === 'VirtualService') ??
    sorted[0]!
  );
}

function summarise(g: Omit<GraphGroup, 'kinds' | 'diagnostics' | 'worst'>, members: GraphNode[]): GraphGroup {
  const kinds: Partial<Record<GraphNodeKind, number>> = {};
  const diagnostics: Record<Severity, number> = { error: 0, warning: 0, info: 0 };
  for (const n of members) {
    kinds[n.kind] = (kinds[n.kind] ?? 0) + 1;
    for (const s of SEVERITIES) diagnostics[s] += n.counts[s];
  }
  const worst = SEVERITIES.find((s) => diagnostics[s] > 0);
  return {
    ...g,
    members: members.map((n) => n.id).sort(cmp),
    kinds,
    diagnostics,
    ...(worst ? { worst } : {}),
  };
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
