/**
 * The RPC load of proxyless gRPC clients on the graph, from their own load reports (LRS; the live
 * state's `ProxyLoadLiveState`, lib/xds/loadReports.ts). A client reports per xDS cluster, not per
 * route, so each cluster is placed from its name (renderXds: a Target's id, or `<target id>/<entry's
 * VirtualService>` for a split entry) and then walked back to the client along the draft's references:
 * client proxy -> VirtualService (its api_listener) -> rule -> Route -> Target -> split entry -> Service.
 * Pure: graphTraffic hands it to the canvas and the Inspector beside the l7mp sessions.
 */
import type { MeshLiveState, ProxyLiveState } from '@/server/controlPlane/liveState';
import { type ClusterLoadView, successPercent } from '../xds/loadReports';
import type { GraphEdge, GraphNode, MeshGraph } from './meshGraph';
import { objectNodeId, proxyNodeId } from './nodeIds';

/** RPC counts summed over clients and clusters. */
export interface LoadCell {
  /** RPCs started per second over the window. */
  rps: number;
  issued: number;
  succeeded: number;
  failed: number;
  dropped: number;
  inProgress: number;
  /** succeeded / (succeeded + failed) in percent; null when no RPC finished in the window. */
  successPercent: number | null;
}

/** One cluster of one client as the graph places it. */
export interface PlacedClusterLoad {
  /** The client (`namespace/pod`). */
  proxy: string;
  cluster: string;
  load: ClusterLoadView;
  windowMs: number;
  /** The Target node the cluster is rendered from; absent when the draft has no such cluster. */
  target?: string;
  /** The split entry's backend node (a VirtualService), for a split entry's cluster the draft still has. */
  entry?: string;
  /** `cluster`: the draft has no Target for it; `entry`: the Target is there but not this split entry. */
  missing?: 'cluster' | 'entry';
  /** The nodes and edges it is counted on, from the client to the backend Service where the draft has them. */
  nodes: string[];
  edges: string[];
}

export interface GraphLoad {
  /** Load through each node, by node id, summed over clients and clusters. */
  nodes: Record<string, LoadCell>;
  /** Load along each edge, by edge id. */
  edges: Record<string, LoadCell>;
  /** Every reported cluster of every client, placed or not, by client then cluster. */
  clusters: PlacedClusterLoad[];
  /** The gRPC clients with a report in their window (ids), and every gRPC client the live state has. */
  reporting: string[];
  clients: string[];
  /** Targets (node ids) whose clusters a gRPC client is served, so an idle one can say it is idle. */
  served: string[];
  /** Every client's RPCs per second, summed. */
  rps: number;
}

/** One row of a load table: a cluster summed over the clients that report it. */
export interface LoadRow extends LoadCell {
  cluster: string;
  clients: string[];
  windowMs: number;
  missing?: PlacedClusterLoad['missing'];
}

export const NO_LOAD: GraphLoad = {
  nodes: {},
  edges: {},
  clusters: [],
  reporting: [],
  clients: [],
  served: [],
  rps: 0,
};

/** Where the gRPC clients of `live` send their RPCs on `graph`: load per node and per edge. */
export function grpcLoad(graph: MeshGraph, live: MeshLiveState | null | undefined): GraphLoad {
  if (!live) return NO_LOAD;
  const clients = Object.values(live.proxies)
    .filter((p) => p.role === 'grpc')
    .sort((a, b) => (a.id < b.id ? -1 : 1));
  if (clients.length === 0) return NO_LOAD;
  const idx = indexOf(graph);
  const load: GraphLoad = { ...NO_LOAD, nodes: {}, edges: {}, clusters: [], reporting: [], served: [] };
  load.clients = clients.map((p) => p.id);
  const served = new Set<string>();
  for (const p of clients) {
    for (const c of p.clusters) {
      const t = clusterTarget(graph, idx, c.name);
      if (t) served.add(t.target);
    }
    if (!p.load) continue;
    load.reporting.push(p.id);
    for (const view of p.load.clusters) {
      const placed = place(graph, idx, p.id, view, p.load.windowMs);
      load.clusters.push(placed);
      for (const n of placed.nodes) load.nodes[n] = addLoadCell(load.nodes[n], view);
      for (const e of placed.edges) load.edges[e] = addLoadCell(load.edges[e], view);
    }
    load.rps += p.load.rps;
  }
  load.rps = round1(load.rps);
  load.served = [...served].sort();
  return load;
}

/**
 * The load table of one node: per cluster whose path runs through it, the load summed over the clients
 * that report it (a client proxy's node: its own clusters, those the draft no longer has included).
 */
export function loadRows(load: GraphLoad, nodeId: string): LoadRow[] {
  const rows = new Map<string, LoadRow>();
  for (const c of load.clusters) {
    if (!c.nodes.includes(nodeId)) continue;
    const row = rows.get(c.cluster);
    if (!row) {
      rows.set(c.cluster, {
        ...addLoadCell(undefined, c.load),
        cluster: c.cluster,
        clients: [c.proxy],
        windowMs: c.windowMs,
        ...(c.missing ? { missing: c.missing } : {}),
      });
      continue;
    }
    Object.assign(row, addLoadCell(row, c.load));
    row.clients.push(c.proxy);
    row.windowMs = Math.max(row.windowMs, c.windowMs);
  }
  return [...rows.values()].sort((a, b) => (a.cluster < b.cluster ? -1 : 1));
}

/** Every client's RPCs together; undefined while no client has reported. */
export function totalLoad(load: GraphLoad): LoadCell | undefined {
  if (load.reporting.length === 0) return undefined;
  return load.clusters.reduce<LoadCell>((sum, c) => addLoadCell(sum, c.load), addLoadCell(undefined, ZERO));
}

const ZERO: LoadCell = {
  rps: 0,
  issued: 0,
  succeeded: 0,
  failed: 0,
  dropped: 0,
  inProgress: 0,
  successPercent: null,
};

/** Whether a node's Inspector shows a load table: a gRPC client, or a node load runs through or may. */
export function showsLoad(load: GraphLoad, node: Pick<GraphNode, 'id' | 'kind' | 'role'>): boolean {
  if (node.kind === 'Proxy') return node.role === 'grpc';
  return load.nodes[node.id] !== undefined || load.served.includes(node.id);
}

/** Some RPCs failed: the overlay draws it red. */
export function loadFailing(c: Pick<LoadCell, 'failed' | 'successPercent'>): boolean {
  return c.failed > 0 && c.successPercent !== null && c.successPercent < 100;
}

/** `12.5 RPC/s`: a rate to one decimal below 100, whole above. */
export function formatRps(rps: number): string {
  return `${rps >= 100 ? Math.round(rps) : Math.round(rps * 10) / 10} RPC/s`;
}

/** `99.5%`, or `–` when no RPC finished in the window. */
export function formatSuccess(percent: number | null): string {
  return percent === null ? '–' : `${Math.round(percent * 10) / 10}%`;
}

/** What an edge or node of the overlay says: `12.5 RPC/s · 99.5%` (the rate alone while none finished). */
export function loadLabel(c: LoadCell): string {
  const rps = formatRps(c.rps);
  return c.successPercent === null ? rps : `${rps} · ${formatSuccess(c.successPercent)}`;
}

/**
 * A cluster's name as a table shows it: `echo-split/echo-v1` for
 * `echo-split.default.target.cluster.local/echo-v1` (the full name goes in the title).
 */
export function clusterLabel(cluster: string): string {
  const m = /^([^./]+)\.[^./]+\.target\.cluster\.local(\/.*)?$/.exec(cluster);
  return m ? `${m[1]}${m[2] ?? ''}` : cluster;
}

/** What the proxies page says of a gRPC client's load; undefined while it has sent no report. */
export function proxyLoadSummary(
  p: Pick<ProxyLiveState, 'load'>,
): { rps: string; success: string; failing: boolean; failed: number } | undefined {
  if (!p.load) return undefined;
  const failed = p.load.clusters.reduce((n, c) => n + c.failed, 0);
  return {
    rps: formatRps(p.load.rps),
    success: p.load.successPercent === null ? 'none done' : `${formatSuccess(p.load.successPercent)} ok`,
    failing: loadFailing({ failed, successPercent: p.load.successPercent }),
    failed,
  };
}

/** `a` with `b`'s counts added (a new cell; `a` undefined: `b` alone). */
export function addLoadCell(a: LoadCell | undefined, b: LoadCell | ClusterLoadView): LoadCell {
  const sum = {
    issued: (a?.issued ?? 0) + b.issued,
    succeeded: (a?.succeeded ?? 0) + b.succeeded,
    failed: (a?.failed ?? 0) + b.failed,
    dropped: (a?.dropped ?? 0) + b.dropped,
  };
  const pct = successPercent(sum);
  return {
    ...sum,
    rps: round1((a?.rps ?? 0) + b.rps),
    inProgress: (a?.inProgress ?? 0) + b.inProgress,
    successPercent: pct === null ? null : round1(pct),
  };
}

function round1(n: number): number {
  return Math.round(n * 10) / 10;
}

interface GraphIndex {
  byId: Map<string, GraphNode>;
  out: Map<string, GraphEdge[]>;
  /** The VirtualServices' `selects` edges to each proxy node (drawn VirtualService -> proxy). */
  selecting: Map<string, GraphEdge[]>;
}

const indexes = new WeakMap<MeshGraph, GraphIndex>();

/** Kept per graph, which the canvas keeps from one live update to the next. */
function indexOf(graph: MeshGraph): GraphIndex {
  let idx = indexes.get(graph);
  if (idx) return idx;
  idx = { byId: new Map(graph.nodes.map((n) => [n.id, n])), out: new Map(), selecting: new Map() };
  for (const e of graph.edges) {
    push(idx.out, e.source, e);
    if (e.kind === 'selects' && e.target.startsWith('Pod/')) push(idx.selecting, e.target, e);
  }
  indexes.set(graph, idx);
  return idx;
}

function push<T>(m: Map<string, T[]>, k: string, v: T): void {
  const list = m.get(k);
  if (list) list.push(v);
  else m.set(k, [v]);
}

/**
 * The Target of an xDS cluster and, for a split entry's cluster, the VirtualService's short name the
 * entry is named after. A Target the draft no longer renders is still found by its long name.
 */
function clusterTarget(
  graph: MeshGraph,
  idx: GraphIndex,
  cluster: string,
): { target: string; entry?: string } | undefined {
  const direct = targetNode(graph, idx, cluster);
  if (direct) return { target: direct };
  const slash = cluster.lastIndexOf('/');
  if (slash <= 0) return undefined;
  const target = targetNode(graph, idx, cluster.slice(0, slash));
  return target ? { target, entry: cluster.slice(slash + 1) } : undefined;
}

function targetNode(graph: MeshGraph, idx: GraphIndex, id: string): string | undefined {
  const rendered = graph.clusterNodes[id];
  if (rendered) return rendered;
  const m = /^([^.]+)\.([^.]+)\.target\.cluster\.local$/.exec(id);
  const node = m ? objectNodeId('Target', m[2]!, m[1]!) : undefined;
  return node && idx.byId.has(node) ? node : undefined;
}

function place(
  graph: MeshGraph,
  idx: GraphIndex,
  proxyId: string,
  view: ClusterLoadView,
  windowMs: number,
): PlacedClusterLoad {
  const proxy = proxyNodeId(proxyId);
  const placed: PlacedClusterLoad = {
    proxy: proxyId,
    cluster: view.cluster,
    load: view,
    windowMs,
    nodes: [],
    edges: [],
  };
  if (idx.byId.has(proxy)) placed.nodes.push(proxy);
  const t = clusterTarget(graph, idx, view.cluster);
  if (!t) {
    placed.missing = 'cluster';
    return placed;
  }
  placed.target = t.target;
  const upstream = commonHops(routesTo(idx, proxy, t.target));
  placed.nodes.push(...upstream.nodes, t.target);
  placed.edges.push(...upstream.edges);
  const targetOut = idx.out.get(t.target) ?? [];
  let via: GraphEdge | undefined;
  if (t.entry !== undefined) {
    via = targetOut.find((e) => e.kind === 'split' && idx.byId.get(e.target)?.name === t.entry);
    if (!via) placed.missing = 'entry';
  } else {
    // A Target that takes its endpoints from one source; a split Target's own id is no entry's cluster.
    const sources = targetOut.filter((e) => e.kind === 'endpoints' || e.kind === 'split');
    if (sources.length === 1 && sources[0]!.kind === 'endpoints') via = sources[0];
  }
  if (!via) return placed;
  if (via.kind === 'split') placed.entry = via.target;
  placed.nodes.push(via.target);
  placed.edges.push(via.id);
  // The cluster is every endpoint of the source's Services: one Service is where it goes, several are
  // not told apart by the report.
  const services = (idx.out.get(via.target) ?? []).filter(
    (e) => e.kind === 'selects' && e.target.startsWith('Service/'),
  );
  if (services.length === 1) {
    placed.nodes.push(services[0]!.target);
    placed.edges.push(services[0]!.id);
  }
  return placed;
}

/** Every way the client's VirtualServices route to the Target: the selects, rule and destination edges. */
function routesTo(idx: GraphIndex, proxy: string, target: string): GraphEdge[][] {
  const paths: GraphEdge[][] = [];
  for (const selects of idx.selecting.get(proxy) ?? []) {
    for (const rule of idx.out.get(selects.source) ?? []) {
      if (rule.kind !== 'rule') continue;
      const dest = idx.out.get(rule.target)?.find((e) => e.kind === 'destination' && e.target === target);
      if (dest) paths.push([selects, rule, dest]);
    }
  }
  return paths;
}

/**
 * The hops every route shares: a report says which cluster, not which listener or rule, so with two
 * rules to one Target the load is counted only where both run (never twice, never guessed).
 */
function commonHops(paths: GraphEdge[][]): { nodes: string[]; edges: string[] } {
  const [first, ...rest] = paths;
  if (!first) return { nodes: [], edges: [] };
  const edges = first.filter((e, i) => rest.every((p) => p[i]!.id === e.id)).map((e) => e.id);
  // The VirtualService (the selects edge is drawn VirtualService -> proxy) and the Route; the Target
  // is every path's end.
  const hop = (p: GraphEdge[], i: number) => (i === 0 ? p[0]!.source : p[1]!.target);
  const nodes = [0, 1].map((i) => hop(first, i)).filter((n, i) => rest.every((p) => hop(p, i) === n));
  return { nodes, edges };
}
