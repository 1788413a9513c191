import { type Diagnostic, normalizeDiagnostics } from '../model/diagnostic';
import type {
  L7mpCluster,
  L7mpConfig,
  L7mpEndpoint,
  L7mpListener,
  L7mpRoute,
  L7mpRouteBody,
  L7mpRule,
  L7mpSpec,
} from '../model/l7mp';
import { L7MP_DEFAULT_RETRY as DEFAULT_RETRY } from '../l7mp/canonicalL7mp';
import {
  L7MP_PROTOCOL_BY_KEY,
  type ProtocolKey,
  isVirtualClusterKey,
  isXdsOnlyProtocolKey,
} from '../model/protocols';
import { type Proxy, isL7mpProxy } from './clusterIndex';
import type {
  ProtocolOf,
  ResolvedMesh,
  ResolvedRouteBody,
  ResolvedTarget,
  ResolvedVirtualService,
} from './resolvedMesh';

/** One proxy's desired l7mp configuration. */
export interface ProxyL7mpConfig {
  proxy: Proxy;
  config: L7mpConfig;
}

export interface L7mpRender {
  proxies: Record<string, ProxyL7mpConfig>;
  diagnostics: Diagnostic[];
}

/** JSONSocket listeners store the client's request header under /JSONSocket (notes §10.2). */
const JSONSOCKET_META = '/JSONSocket';

/**
 * Renders each proxy's l7mp configuration from the resolved mesh: exactly the bodies the l7mp 0.5.7
 * REST API accepts, adapted where the real proxy needs more than the seed's literal mapping.
 */
export function renderL7mp(mesh: ResolvedMesh): L7mpRender {
  const proxies: Record<string, ProxyL7mpConfig> = {};
  const diagnostics: Diagnostic[] = [];
  for (const id of Object.keys(mesh.proxies)) {
    // A proxyless gRPC client (msm.l7mp.io/proxy: grpc) runs no l7mp: it is configured over xDS only.
    if (!isL7mpProxy(mesh.proxies[id]!)) continue;
    const r = renderL7mpProxy(mesh, id);
    proxies[id] = { proxy: mesh.proxies[id]!, config: r.config };
    diagnostics.push(...r.diagnostics);
  }
  return { proxies, diagnostics: normalizeDiagnostics(diagnostics) };
}

/** Renders one proxy; the incremental engine calls this for just the proxies a change touches. */
export function renderL7mpProxy(
  mesh: ResolvedMesh,
  proxyId: string,
): { config: L7mpConfig; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const placement = mesh.placement[proxyId];
  const proxy = mesh.proxies[proxyId];
  if (!placement || (proxy && !isL7mpProxy(proxy)))
    return { config: { listeners: [], routes: [], clusters: [] }, diagnostics };

  // Which listener protocols each cluster sits behind on this proxy (JSONSocket needs adaptations).
  const behind = new Map<string, Set<string>>();
  const note = (cluster: string, protocol: string) => {
    const s = behind.get(cluster) ?? new Set<string>();
    s.add(protocol);
    behind.set(cluster, s);
  };
  const bodyClusters = (b: ResolvedRouteBody) => [b.destination, ...b.ingress, ...b.egress];
  for (const l of placement.listeners) {
    const vs = mesh.virtualServices[l]!;
    for (const rule of vs.rules) {
      const body = 'named' in rule.route ? mesh.routes[rule.route.named]!.body : rule.route.inline;
      for (const c of bodyClusters(body)) note(c, vs.protocol.key);
    }
  }

  const listeners: L7mpListener[] = [];
  for (const l of placement.listeners) {
    const vs = mesh.virtualServices[l]!;
    if (isXdsOnlyProtocolKey(vs.protocol.key)) {
      diagnostics.push({
        severity: 'warning',
        code: 'l7mp-unsupported',
        message: `l7mp has no ${vs.protocol.key} listener (it is served over xDS only); no listener is rendered on proxy ${proxyId}`,
        object: vs.ref,
        path: `spec.${vs.protocol.key}`,
      });
      continue;
    }
    listeners.push(renderListener(vs, diagnostics));
  }
  const routes = placement.routes.map((r): L7mpRoute => ({
    name: r,
    ...renderRouteBody(mesh.routes[r]!.body),
  }));
  const clusters = placement.clusters.map((c) =>
    renderCluster(mesh.targets[c]!, behind.get(c) ?? new Set(), diagnostics),
  );
  return { config: { listeners, routes, clusters }, diagnostics };
}

function renderListener(vs: ResolvedVirtualService, diagnostics: Diagnostic[]): L7mpListener {
  const jsonSocket = vs.protocol.key === 'jsonsocket';
  const rules = vs.rules.map((rule): L7mpRule => {
    const out = {} as L7mpRule;
    if (rule.match) {
      out.match = jsonSocket ? (prefixLabelPaths(rule.match) as Record<string, unknown>) : rule.match;
      if (jsonSocket && JSON.stringify(out.match) !== JSON.stringify(rule.match)) {
        diagnostics.push({
          severity: 'info',
          code: 'jsonsocket-match-path',
          message: `match paths under /labels are read under ${JSONSOCKET_META}/labels: a JSONSocket listener stores the request header there`,
          object: vs.ref,
          path: `spec.rules[${rule.index}].match`,
          rule: 'notes/l7mp-rest-api.md §10.2',
        });
      }
    }
    const route = 'named' in rule.route ? rule.route.named : renderRouteBody(rule.route.inline);
    out.action = rule.rewrite
      ? { rewrite: rule.rewrite.map((r) => ({ path: r.path, value: r.value })), route }
      : { route };
    return out;
  });
  const listener: L7mpListener = { name: vs.longName, spec: listenerSpec(vs.protocol), rules };
  // l7mp keeps listener options verbatim: removeOrphanSessions travels with the listener so that the diff
  // knows to delete it recursively ("removeOrphanSessions means a recursive listener delete").
  const options: Record<string, unknown> = {};
  if (vs.options.track !== undefined) options.track = vs.options.track;
  if (vs.options.removeOrphanSessions) options.removeOrphanSessions = true;
  if (Object.keys(options).length > 0) listener.options = options;
  return listener;
}

function renderRouteBody(b: ResolvedRouteBody): L7mpRouteBody {
  const out: L7mpRouteBody = { destination: b.destination };
  if (b.ingress.length > 0) out.ingress = [...b.ingress];
  if (b.egress.length > 0) out.egress = [...b.egress];
  // A partial retry is not merged with the defaults by l7mp (no timeout = no limit): always send it whole.
  out.retry = b.retry
    ? {
        retry_on: b.retry.retry_on,
        num_retries: b.retry.num_retries ?? DEFAULT_RETRY.num_retries,
        timeout: b.retry.timeout ?? DEFAULT_RETRY.timeout,
      }
    : { ...DEFAULT_RETRY };
  return out;
}

function renderCluster(t: ResolvedTarget, behind: Set<string>, diagnostics: Diagnostic[]): L7mpCluster {
  const jsonBehind = behind.has('jsonsocket');
  const mixed = jsonBehind && behind.size > 1;
  const diagBase = { object: t.ref, ...(t.path ? { path: t.path } : {}) };
  if (mixed) {
    diagnostics.push({
      severity: 'warning',
      code: 'jsonsocket-mixed-use',
      message: `cluster ${t.id} is used behind JSONSocket and other listeners on one proxy; metadata paths are not rewritten`,
      ...diagBase,
    });
  }
  const rewrite = jsonBehind && !mixed;
  const spec = clusterSpec(t.protocol);
  if (t.protocol.key === 'jsonsocket' && spec.header === undefined) {
    // Without a header entry JSONSocket sends only {"JSONSocketVersion":1}: labels must be copied explicitly.
    const from = rewrite ? `${JSONSOCKET_META}/labels` : '/labels';
    spec.header = [{ path: { from, to: '/labels' } }];
    diagnostics.push({
      severity: 'info',
      code: 'jsonsocket-label-header',
      message: `JSONSocket cluster ${t.id} copies session labels into its header (${from} -> /labels) so that they reach the next hop`,
      rule: 'notes/l7mp-rest-api.md §10.1, §10.3',
      ...diagBase,
    });
  }
  if (
    t.protocol.key === 'sync' &&
    rewrite &&
    typeof spec.query === 'string' &&
    spec.query.startsWith('/labels')
  ) {
    const q = `${JSONSOCKET_META}${spec.query}`;
    diagnostics.push({
      severity: 'info',
      code: 'jsonsocket-sync-query',
      message: `Sync query ${spec.query} becomes ${q}: behind a JSONSocket listener the stream's labels live under ${JSONSOCKET_META}`,
      rule: 'notes/l7mp-rest-api.md §10.2',
      ...diagBase,
    });
    spec.query = q;
  }
  const cluster: L7mpCluster = { name: t.id, spec };
  if (!isVirtualClusterKey(t.protocol.key)) {
    cluster.endpoints = t.endpoints.map((e): L7mpEndpoint => {
      const ep: L7mpEndpoint = {
        name: `${t.id}@${e.name ?? e.address}`,
        spec: e.extra ? { ...e.extra, address: e.address } : { address: e.address },
      };
      if (e.weight !== undefined) ep.weight = e.weight;
      return ep;
    });
    let lb = t.loadbalancer ? { ...t.loadbalancer } : undefined;
    if (!lb && (t.managed || t.endpoints.length > 1)) {
      // l7mp's default (Trivial) sends every flow to the first endpoint.
      lb = { policy: 'ConsistentHash' };
    }
    if (lb?.key && rewrite && lb.key.startsWith('/labels')) lb.key = `${JSONSOCKET_META}${lb.key}`;
    if (lb) cluster.loadbalancer = lb;
  }
  return cluster;
}

/** The l7mp Listener spec for a model protocol (`udp: {port}` -> `{protocol: UDP, port}`). */
export function listenerSpec(p: ProtocolOf<string>): L7mpSpec {
  const protocol = L7MP_PROTOCOL_BY_KEY[p.key as ProtocolKey];
  const s = p.spec;
  switch (p.key) {
    case 'jsonsocket': {
      const [tkey, tspec] = Object.entries(
        (s.transport ?? {}) as Record<string, Record<string, unknown>>,
      )[0] ?? ['udp', {}];
      return { protocol, transport: listenerSpec({ key: tkey, spec: tspec }) };
    }
    case 'udp':
      return pick({ protocol }, s, ['port', 'address', 'connect', 'options']);
    case 'http':
    case 'websocket':
      return pick({ protocol }, s, ['port', 'path']);
    case 'unixdomainsocket':
      return pick({ protocol }, s, ['filename']);
    default:
      return pick({ protocol }, s, ['port']);
  }
}

/** The l7mp Cluster spec for a model protocol. */
export function clusterSpec(p: ProtocolOf<string>): L7mpSpec {
  const protocol = L7MP_PROTOCOL_BY_KEY[p.key as ProtocolKey];
  const s = p.spec;
  switch (p.key) {
    case 'jsonsocket': {
      const [tkey, tspec] = Object.entries(
        (s.transport ?? {}) as Record<string, Record<string, unknown>>,
      )[0] ?? ['udp', {}];
      const out: L7mpSpec = { protocol, transport: clusterSpec({ key: tkey, spec: tspec }) };
      if (s.header !== undefined) out.header = s.header;
      return out;
    }
    case 'udp':
    case 'tcp':
      return pick({ protocol }, s, ['port', 'bind']);
    case 'websocket':
      return pick({ protocol }, s, ['port']);
    case 'unixdomainsocket':
      return { protocol };
    default:
      return { protocol, ...s };
  }
}

function pick(out: L7mpSpec, from: Record<string, unknown>, keys: string[]): L7mpSpec {
  for (const k of keys) if (from[k] !== undefined) out[k] = from[k];
  return out;
}

function prefixLabelPaths(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(prefixLabelPaths);
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      out[k] =
        k === 'path' && typeof x === 'string' && x.startsWith('/labels')
          ? `${JSONSOCKET_META}${x}`
          : prefixLabelPaths(x);
    }
    return out;
  }
  return v;
}
