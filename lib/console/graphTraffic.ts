/**
 * Live traffic on the graph: the nodes and edges that the proxies' current sessions pass through, from
 * l7mp's session list (GET /api/v1/sessions, read every 2 s by the control plane). A session names its
 * listener, its destination cluster and the endpoint it connected to; the rule it took is the first
 * whose match holds (lib/l7mp/liveSession.ts). Pure: the canvas and the Inspector both draw from it.
 *
 * l7mp 0.5.7 dumps no byte or packet counters, so traffic here is sessions (flows), not rates; a proxy
 * whose sessions cannot be listed (it answers 422 while a session has an ingress or egress chain) is
 * named in `unavailable` rather than counted as idle. Proxyless gRPC clients have no sessions: their
 * RPC load, from their own load reports, comes along as `load` (lib/console/grpcLoad.ts).
 */
import type { LiveSession, MeshLiveState } from '@/server/controlPlane/liveState';
import { addLoadCell, type GraphLoad, grpcLoad, type LoadCell, NO_LOAD } from './grpcLoad';
import type { GraphEdge, MeshGraph } from './meshGraph';
import { objectNodeId, proxyNodeId } from './nodeIds';

/** One session as the graph places it. */
export interface TrafficSession {
  /** The proxy it runs on (`namespace/pod`). */
  proxy: string;
  session: LiveSession;
  /** The nodes it passes through, from the listener's VirtualService to the endpoint's Service. */
  nodes: string[];
  /** The edges it runs along (ids). */
  edges: string[];
}

export interface GraphTraffic {
  /** Sessions through each node, by node id. */
  nodes: Record<string, number>;
  /** Sessions along each edge, by edge id. */
  edges: Record<string, number>;
  /** Every session placed on the graph. */
  sessions: TrafficSession[];
  /** Sessions on a listener the draft does not have (the draft differs from what runs). */
  unplaced: number;
  /** Proxies whose sessions could not be listed, and why. */
  unavailable: { proxy: string; reason: string }[];
  /** The proxyless gRPC clients' RPCs per cluster, placed on the same graph. */
  load: GraphLoad;
}

const NO_TRAFFIC: GraphTraffic = {
  nodes: {},
  edges: {},
  sessions: [],
  unplaced: 0,
  unavailable: [],
  load: NO_LOAD,
};

/** Where the live sessions of `live` run on `graph`: sessions per node and per edge. */
export function graphTraffic(graph: MeshGraph, live: MeshLiveState | null | undefined): GraphTraffic {
  if (!live) return NO_TRAFFIC;
  const out = outEdges(graph);
  const traffic: GraphTraffic = {
    nodes: {},
    edges: {},
    sessions: [],
    unplaced: 0,
    unavailable: [],
    load: grpcLoad(graph, live),
  };
  for (const proxy of Object.values(live.proxies).sort((a, b) => (a.id < b.id ? -1 : 1))) {
    if (!proxy.sessions.available) {
      // A proxyless gRPC client has no sessions to list: it is not a proxy that failed to answer.
      if (proxy.role !== 'grpc') traffic.unavailable.push({ proxy: proxy.id, reason: proxy.sessions.reason });
      continue;
    }
    for (const session of proxy.sessions.items) {
      const path = place(graph, out, live, proxy.id, session);
      if (!path) {
        traffic.unplaced++;
        continue;
      }
      for (const n of path.nodes) traffic.nodes[n] = (traffic.nodes[n] ?? 0) + 1;
      for (const e of path.edges) traffic.edges[e] = (traffic.edges[e] ?? 0) + 1;
      traffic.sessions.push({ proxy: proxy.id, session, ...path });
    }
  }
  return traffic;
}

/** The sessions through one node (for the Inspector), oldest first. */
export function sessionsThrough(traffic: GraphTraffic, nodeId: string): TrafficSession[] {
  return traffic.sessions
    .filter((s) => s.nodes.includes(nodeId))
    .sort((a, b) => (a.session.startedAt ?? '').localeCompare(b.session.startedAt ?? ''));
}

/** Live traffic on each split entry of a canary Target, by entry index (the Target's split edges). */
export interface SplitTraffic {
  /** l7mp sessions on each entry now. */
  sessions: number[];
  /**
   * The gRPC clients' RPCs on each entry (undefined: none reported in the window); absent when no gRPC
   * client is served the Target, so a Target only l7mp proxies reach shows no RPC line.
   */
  rpc?: (LoadCell | undefined)[];
}

/** What runs on each of a canary Target's split entries now: sessions, and RPCs where clients are served it. */
export function splitTraffic(
  graph: MeshGraph,
  nodeId: string,
  traffic: GraphTraffic,
  entries: number,
): SplitTraffic {
  const sessions = new Array<number>(entries).fill(0);
  const rpc = new Array<LoadCell | undefined>(entries).fill(undefined);
  for (const e of graph.edges)
    if (e.source === nodeId && e.kind === 'split' && e.order !== undefined && e.order < entries) {
      sessions[e.order] = traffic.edges[e.id] ?? 0;
      rpc[e.order] = traffic.load.edges[e.id];
    }
  const served = traffic.load.served.includes(nodeId) || traffic.load.nodes[nodeId] !== undefined;
  return served ? { sessions, rpc } : { sessions };
}

/** What a grouped view draws of the live traffic that its collapsed groups stand in for. */
export interface ViewTraffic {
  /** Sessions with a node inside each collapsed group. */
  groups: Record<string, number>;
  /** Sessions along an edge between two shown ends (`source->target`) that a group stands in for. */
  pairs: Record<string, number>;
  /** The gRPC clients' RPCs through each collapsed group, and along each such pair. */
  groupLoad: Record<string, LoadCell>;
  pairLoad: Record<string, LoadCell>;
}

/**
 * Traffic in a grouped view: per collapsed group, the sessions and the gRPC clients' clusters with a node
 * inside it, and per pair of shown ends (`source->target`, a group or a node) that a group stands in for,
 * those along an edge between them. Each session and each client's cluster counts once per group and
 * once per pair.
 */
export function viewTraffic(
  traffic: GraphTraffic,
  graph: MeshGraph,
  view: { nodes: readonly { id: string }[]; collapsed: readonly { id: string }[] },
  groupOf: Record<string, string>,
): ViewTraffic {
  const shown = new Set(view.nodes.map((n) => n.id));
  const collapsed = new Set(view.collapsed.map((g) => g.id));
  const at = (id: string) =>
    shown.has(id) ? id : collapsed.has(groupOf[id] ?? '') ? groupOf[id] : undefined;
  const edges = edgesById(graph);
  /** The collapsed groups and the pairs a path (a session's or a cluster's) touches, each once. */
  const touched = (path: { nodes: string[]; edges: string[] }) => {
    const groups = new Set<string>();
    for (const n of path.nodes) {
      const g = groupOf[n];
      if (g !== undefined && collapsed.has(g)) groups.add(g);
    }
    const pairs = new Set<string>();
    for (const id of path.edges) {
      const e = edges.get(id);
      const [from, to] = e ? [at(e.source), at(e.target)] : [];
      // Between two nodes shown as themselves the edge is drawn as itself (traffic.edges has it).
      if (from && to && from !== to && (collapsed.has(from) || collapsed.has(to)))
        pairs.add(`${from}->${to}`);
    }
    return { groups, pairs };
  };
  const out: ViewTraffic = { groups: {}, pairs: {}, groupLoad: {}, pairLoad: {} };
  for (const s of traffic.sessions) {
    const { groups, pairs } = touched(s);
    for (const g of groups) out.groups[g] = (out.groups[g] ?? 0) + 1;
    for (const k of pairs) out.pairs[k] = (out.pairs[k] ?? 0) + 1;
  }
  for (const c of traffic.load.clusters) {
    const { groups, pairs } = touched(c);
    for (const g of groups) out.groupLoad[g] = addLoadCell(out.groupLoad[g], c.load);
    for (const k of pairs) out.pairLoad[k] = addLoadCell(out.pairLoad[k], c.load);
  }
  return out;
}

/**
 * The nodes and edges of one session's path; undefined when its listener is not in the graph. Each hop
 * is taken only where the graph has it: a destination the draft no longer routes to still counts on its
 * Target, without an edge to it.
 */
function place(
  graph: MeshGraph,
  out: Map<string, GraphEdge[]>,
  live: MeshLiveState,
  proxyId: string,
  s: LiveSession,
): { nodes: string[]; edges: string[] } | undefined {
  const listener = s.listener ? graph.listeners[s.listener] : undefined;
  if (!listener) return undefined;
  const edges: string[] = [];
  const count = (e: GraphEdge | undefined) => {
    if (e) edges.push(e.id);
  };
  const vs = listener.node;
  const nodes = [vs];
  const proxy = proxyNodeId(proxyId);
  // Traffic enters at the proxy the VirtualService selects (drawn VirtualService -> proxy).
  const selects = out.get(vs)?.find((e) => e.kind === 'selects' && e.target === proxy);
  if (selects) {
    nodes.push(proxy);
    count(selects);
  }
  const order = s.rule === undefined ? undefined : listener.rules[s.rule];
  const rule =
    order === undefined ? undefined : out.get(vs)?.find((e) => e.kind === 'rule' && e.order === order);
  if (rule) {
    nodes.push(rule.target);
    count(rule);
  }
  const target = s.destination ? targetNode(graph, out, s.destination) : undefined;
  if (!target) return { nodes, edges };
  nodes.push(target);
  if (rule) count(out.get(rule.target)?.find((e) => e.kind === 'destination' && e.target === target));
  if (!s.endpoint) return { nodes, edges };
  // The endpoint's source: the one (of a canary split) whose Services have the address, else the only
  // one when it has no Service to ask (a proxy's VirtualService, explicit endpoints). An endpoint no
  // source has (a flow that stays on an entry the draft removed) stops at the Target.
  const sources = (out.get(target) ?? []).filter((e) => e.kind === 'endpoints' || e.kind === 'split');
  let via: GraphEdge | undefined;
  let service: string | undefined;
  for (const e of sources) {
    service = servicesOf(out, e.target).find((svc) => hasAddress(live, svc, s.endpoint!));
    if (service) {
      via = e;
      break;
    }
  }
  if (!via && sources.length === 1 && servicesOf(out, sources[0]!.target).length === 0) via = sources[0];
  if (!via) return { nodes, edges };
  count(via);
  nodes.push(via.target);
  if (service && service !== via.target) {
    nodes.push(service);
    count(out.get(via.target)?.find((x) => x.kind === 'selects' && x.target === service));
  }
  return { nodes, edges };
}

/**
 * The Target node of an l7mp cluster: as the draft renders it, else (a Target the draft no longer uses,
 * so renders no cluster for) the named Target whose long name it is.
 */
function targetNode(graph: MeshGraph, out: Map<string, GraphEdge[]>, cluster: string): string | undefined {
  const rendered = graph.clusterNodes[cluster];
  if (rendered) return rendered;
  const m = /^([^.]+)\.([^.]+)\.target\.cluster\.local$/.exec(cluster);
  const id = m ? objectNodeId('Target', m[2]!, m[1]!) : undefined;
  return id && (out.has(id) || graph.nodes.some((n) => n.id === id)) ? id : undefined;
}

/** The Service nodes behind an endpoint source: itself, or the Services its VirtualService selects. */
function servicesOf(out: Map<string, GraphEdge[]>, id: string): string[] {
  if (id.startsWith('Service/')) return [id];
  return (out.get(id) ?? [])
    .filter((e) => e.kind === 'selects' && e.target.startsWith('Service/'))
    .map((e) => e.target);
}

function hasAddress(live: MeshLiveState, serviceNode: string, address: string): boolean {
  const svc = live.services[serviceNode.slice('Service/'.length)];
  return !!svc?.endpoints.some((e) => e.address === address);
}

const edgesByIdOf = new WeakMap<MeshGraph, Map<string, GraphEdge>>();

function edgesById(graph: MeshGraph): Map<string, GraphEdge> {
  let m = edgesByIdOf.get(graph);
  if (!m) edgesByIdOf.set(graph, (m = new Map(graph.edges.map((e) => [e.id, e]))));
  return m;
}

/** Each node's outgoing edges; kept per graph, which the canvas keeps from one live update to the next. */
const outEdgesOf = new WeakMap<MeshGraph, Map<string, GraphEdge[]>>();

function outEdges(graph: MeshGraph): Map<string, GraphEdge[]> {
  let out = outEdgesOf.get(graph);
  if (!out) {
    out = new Map();
    for (const e of graph.edges) {
      const list = out.get(e.source);
      if (list) list.push(e);
      else out.set(e.source, [e]);
    }
    outEdgesOf.set(graph, out);
  }
  return out;
}
