import { type Diagnostic, type ObjectRef, normalizeDiagnostics } from '../model/diagnostic';
import { isVirtualClusterKey } from '../model/protocols';
import type { Proxy } from '../engine/clusterIndex';
import type {
  ResolvedEndpoint,
  ResolvedMesh,
  ResolvedRouteBody,
  ResolvedRule,
  ResolvedTarget,
  ResolvedVirtualService,
} from '../engine/resolvedMesh';
import {
  type Cluster,
  type ClusterLoadAssignment,
  type ConfigSource,
  type HashPolicy,
  type HttpConnectionManagerAny,
  type LbEndpoint,
  type Listener,
  type RetryPolicy,
  type Route,
  type RouteConfiguration,
  TYPE_URL,
  type TcpProxyAny,
  type UdpProxyAny,
  type WeightedCluster,
  type XdsResources,
} from './envoyTypes';

/** One proxy's xDS snapshot: what the ADS server publishes to the node `<namespace>/<pod>`. */
export interface ProxyXdsSnapshot extends XdsResources {
  /** The xDS node id: `<namespace>/<pod>`. */
  node: string;
  proxy: Proxy;
}

export interface XdsRender {
  proxies: Record<string, ProxyXdsSnapshot>;
  diagnostics: Diagnostic[];
}

export const XDS_UNSUPPORTED = 'xds-unsupported';

const ADS: ConfigSource = { ads: {}, resource_api_version: 'V3' };
const ROUTER_FILTER = 'envoy.filters.http.router';
const GRPC_RETRY_ALL = 'cancelled,deadline-exceeded,internal,resource-exhausted,unavailable';

/**
 * Renders each proxy's Envoy v3 resources (Listeners, RouteConfigurations, Clusters,
 * ClusterLoadAssignments) from the resolved mesh. Pure; what xDS cannot express is a warning
 * (`xds-unsupported`) naming the object and field, never a silent drop.
 */
export function renderXds(mesh: ResolvedMesh): XdsRender {
  const proxies: Record<string, ProxyXdsSnapshot> = {};
  const diagnostics: Diagnostic[] = [];
  for (const id of Object.keys(mesh.proxies)) {
    const r = renderXdsProxy(mesh, id);
    proxies[id] = r.snapshot;
    diagnostics.push(...r.diagnostics);
  }
  return { proxies, diagnostics: normalizeDiagnostics(diagnostics) };
}

/**
 * All that renderXdsProxy reads of a proxy besides the mesh: its role, its placement, and which of
 * its placed Targets select it by their own selector. Proxies with the same key (replicas of one
 * Deployment) get the same resources; only the node, the proxy and the diagnostics' messages (which
 * name the proxy) differ. Keep it in step with ProxyRenderer: a read of the proxy it misses would
 * share one proxy's resources with another.
 */
export function xdsRenderKey(mesh: ResolvedMesh, proxyId: string): string {
  const proxy = mesh.proxies[proxyId]!;
  const placement = mesh.placement[proxyId];
  if (!placement) return JSON.stringify([proxy.role]);
  const selects = placement.clusters.map((c) => mesh.targets[c]?.selectedProxies.includes(proxyId) ?? false);
  return JSON.stringify([proxy.role, placement.listeners, placement.routes, placement.clusters, selects]);
}

/** The cluster a split entry of Target `targetId` becomes: `<target id>/<the VirtualService's short name>`. */
export function splitClusterName(targetId: string, virtualService: string): string {
  return `${targetId}/${shortName(virtualService)}`;
}

/** Renders one proxy's snapshot. */
export function renderXdsProxy(
  mesh: ResolvedMesh,
  proxyId: string,
): { snapshot: ProxyXdsSnapshot; diagnostics: Diagnostic[] } {
  const r = new ProxyRenderer(mesh, mesh.proxies[proxyId]!);
  r.run();
  return { snapshot: r.snapshot(), diagnostics: r.diagnostics };
}

type ListenerKind = 'grpc' | 'http' | 'tcp' | 'udp';
type Destination = { cluster: string } | { weighted: WeightedCluster[] };

class ProxyRenderer {
  readonly diagnostics: Diagnostic[] = [];
  private readonly listeners: Listener[] = [];
  private readonly routes: RouteConfiguration[] = [];
  private readonly clusters = new Map<string, Cluster>();
  private readonly assignments = new Map<string, ClusterLoadAssignment>();

  constructor(
    private readonly mesh: ResolvedMesh,
    private readonly proxy: Proxy,
  ) {}

  run(): void {
    const placement = this.mesh.placement[this.proxy.id];
    if (!placement) return;
    for (const l of placement.listeners) this.renderListener(this.mesh.virtualServices[l]!);
    // Clusters a named Target's own selector puts on this proxy, even when no route here uses them.
    for (const c of placement.clusters) {
      const t = this.mesh.targets[c]!;
      if (t.selectedProxies.includes(this.proxy.id)) this.destination(t, 'http');
    }
  }

  snapshot(): ProxyXdsSnapshot {
    const byName = <T extends { name: string }>(a: T, b: T) => cmp(a.name, b.name);
    return {
      node: this.proxy.id,
      proxy: this.proxy,
      listeners: [...this.listeners].sort(byName),
      routes: [...this.routes].sort(byName),
      clusters: [...this.clusters.values()].sort(byName),
      endpoints: [...this.assignments.values()].sort((a, b) => cmp(a.cluster_name, b.cluster_name)),
    };
  }

  private unsupported(object: ObjectRef, path: string | undefined, message: string): void {
    const d: Diagnostic = { severity: 'warning', code: XDS_UNSUPPORTED, message, object };
    if (path) d.path = path;
    this.diagnostics.push(d);
  }

  // ---------------------------------------------------------------- listeners

  private renderListener(vs: ResolvedVirtualService): void {
    const key = vs.protocol.key;
    if (this.proxy.role === 'grpc' && key !== 'grpc') {
      this.unsupported(
        vs.ref,
        `spec.${key}`,
        `proxy ${this.proxy.id} is a proxyless gRPC client: it takes only grpc VirtualServices, not ${key}; no listener is rendered for it`,
      );
      return;
    }
    switch (key) {
      case 'grpc':
      case 'http':
      case 'websocket':
        return this.renderHttpListener(vs);
      case 'tcp':
      case 'udp':
        return this.renderL4Listener(vs, key);
      default:
        this.unsupported(
          vs.ref,
          `spec.${key}`,
          `xDS has no ${key} listener; no listener is rendered on proxy ${this.proxy.id}`,
        );
    }
  }

  private renderHttpListener(vs: ResolvedVirtualService): void {
    const kind: ListenerKind = vs.protocol.key === 'grpc' ? 'grpc' : 'http';
    const routes: Route[] = [];
    for (const rule of vs.rules) {
      const body = this.ruleBody(vs, rule, kind);
      if (!body) continue;
      const dest = this.destination(body.target, kind);
      if (!dest) {
        this.ruleLeftOut(vs, rule);
        continue;
      }
      const action: Route['route'] =
        'cluster' in dest ? { cluster: dest.cluster } : { weighted_clusters: { clusters: dest.weighted } };
      const retry = this.retryPolicy(body.body, kind);
      if (retry) action.retry_policy = retry;
      const hash = this.hashPolicy(body.target, kind);
      if (hash) action.hash_policy = [hash];
      routes.push({ name: `rules/${rule.index}`, match: { prefix: '' }, route: action });
    }
    if (routes.length === 0) {
      this.unsupported(
        vs.ref,
        'spec.rules',
        `no rule can be expressed in xDS; no listener is rendered on proxy ${this.proxy.id}`,
      );
      return;
    }
    const grpc = kind === 'grpc';
    this.routes.push({
      name: vs.longName,
      virtual_hosts: [{ name: vs.longName, domains: grpc ? [vs.ref.name] : ['*'], routes }],
    });
    const hcm: HttpConnectionManagerAny = {
      '@type': TYPE_URL.httpConnectionManager,
      stat_prefix: vs.longName,
      rds: { config_source: ADS, route_config_name: vs.longName },
      http_filters: [{ name: ROUTER_FILTER, typed_config: { '@type': TYPE_URL.router } }],
    };
    if (vs.protocol.key === 'websocket') hcm.upgrade_configs = [{ upgrade_type: 'websocket' }];
    if (grpc) {
      // The client dials xds:///<VirtualService short name>: the listener is named after it.
      this.listeners.push({ name: vs.ref.name, api_listener: { api_listener: hcm } });
      return;
    }
    this.listeners.push({
      name: vs.longName,
      address: { socket_address: { address: '0.0.0.0', port_value: Number(vs.protocol.spec.port) } },
      filter_chains: [
        { filters: [{ name: 'envoy.filters.network.http_connection_manager', typed_config: hcm }] },
      ],
    });
  }

  /** TCP and UDP proxies take one upstream: the first rule that can be expressed (l7mp's first match-all rule). */
  private renderL4Listener(vs: ResolvedVirtualService, kind: 'tcp' | 'udp'): void {
    for (const rule of vs.rules) {
      const body = this.ruleBody(vs, rule, kind);
      if (!body) continue;
      const dest = this.destination(body.target, kind);
      if (!dest) {
        this.ruleLeftOut(vs, rule);
        continue;
      }
      const port = Number(vs.protocol.spec.port);
      if (kind === 'udp') {
        const cluster = 'cluster' in dest ? dest.cluster : dest.weighted[0]!.name;
        const udp: UdpProxyAny = { '@type': TYPE_URL.udpProxy, stat_prefix: vs.longName, cluster };
        if (this.ringHash(body.target)) udp.hash_policies = [{ source_ip: true }];
        if (body.body.retry && body.body.retry.retry_on !== 'never')
          this.unsupported(
            body.at.object,
            `${body.at.path}.retry`,
            'the UDP proxy has no retries; retry is ignored',
          );
        this.listeners.push({
          name: vs.longName,
          address: { socket_address: { protocol: 'UDP', address: '0.0.0.0', port_value: port } },
          udp_listener_config: {},
          listener_filters: [{ name: 'envoy.filters.udp_listener.udp_proxy', typed_config: udp }],
        });
      } else {
        const tcp: TcpProxyAny = { '@type': TYPE_URL.tcpProxy, stat_prefix: vs.longName };
        if ('cluster' in dest) tcp.cluster = dest.cluster;
        else
          tcp.weighted_clusters = {
            clusters: dest.weighted.map((w) => ({ name: w.name, weight: w.weight.value })),
          };
        const retry = body.body.retry;
        if (retry && retry.retry_on !== 'never') {
          tcp.max_connect_attempts = { value: (retry.num_retries ?? 1) + 1 };
          if (retry.retry_on !== 'connect-failure')
            this.unsupported(
              body.at.object,
              `${body.at.path}.retry.retry_on`,
              `the TCP proxy retries connect failures only, not "${retry.retry_on}"`,
            );
        }
        if (this.ringHash(body.target)) tcp.hash_policy = [{ source_ip: {} }];
        this.listeners.push({
          name: vs.longName,
          address: { socket_address: { address: '0.0.0.0', port_value: port } },
          filter_chains: [{ filters: [{ name: 'envoy.filters.network.tcp_proxy', typed_config: tcp }] }],
        });
      }
      return;
    }
    this.unsupported(
      vs.ref,
      'spec.rules',
      `no rule can be expressed in xDS; no listener is rendered on proxy ${this.proxy.id}`,
    );
  }

  private ruleLeftOut(vs: ResolvedVirtualService, rule: ResolvedRule): void {
    this.unsupported(
      vs.ref,
      `spec.rules[${rule.index}]`,
      `rule ${rule.index} is left out of the xDS config: its destination cannot be expressed (see the Target's diagnostic)`,
    );
  }

  /** The route body of a rule, or null (with a diagnostic) when xDS cannot express the rule. */
  private ruleBody(
    vs: ResolvedVirtualService,
    rule: ResolvedRule,
    kind: ListenerKind,
  ): { body: ResolvedRouteBody; target: ResolvedTarget; at: { object: ObjectRef; path: string } } | null {
    const rulePath = `spec.rules[${rule.index}]`;
    if (rule.match) {
      this.unsupported(
        vs.ref,
        `${rulePath}.match`,
        `a JSONPredicate match cannot be expressed in xDS${kind === 'grpc' ? ' for gRPC' : ''}; rule ${rule.index} is left out`,
      );
      return null;
    }
    if (rule.rewrite) {
      this.unsupported(
        vs.ref,
        `${rulePath}.action.rewrite`,
        'xDS cannot rewrite stream metadata; the rewrite is ignored',
      );
    }
    let body: ResolvedRouteBody;
    let at: { object: ObjectRef; path: string };
    if ('named' in rule.route) {
      const r = this.mesh.routes[rule.route.named]!;
      body = r.body;
      at = { object: r.ref, path: 'spec' };
    } else {
      body = rule.route.inline;
      at = { object: vs.ref, path: `${rulePath}.action.route` };
    }
    const chains = (['ingress', 'egress'] as const).filter((k) => body[k].length > 0);
    if (chains.length > 0) {
      for (const k of chains)
        this.unsupported(
          at.object,
          `${at.path}.${k}`,
          `xDS has no ${k} chains (the stream would skip its transformers); rule ${rule.index} of ${vs.ref.name} is left out`,
        );
      return null;
    }
    return { body, target: this.mesh.targets[body.destination]!, at };
  }

  // ---------------------------------------------------------------- clusters

  /** The cluster(s) a Target becomes; null (with a diagnostic) when xDS cannot express it. */
  private destination(t: ResolvedTarget, kind: ListenerKind): Destination | null {
    const key = t.protocol.key;
    const path = t.path ? `${t.path}.${key}` : `spec.${key}`;
    if (isVirtualClusterKey(key)) {
      this.unsupported(
        t.ref,
        path,
        `${key} is an l7mp virtual cluster inside the proxy (${key === 'sync' ? 'the sync rendezvous' : 'no endpoints'}); xDS has no equivalent, so cluster ${t.id} is not rendered`,
      );
      return null;
    }
    if (key === 'jsonsocket' || key === 'unixdomainsocket') {
      this.unsupported(t.ref, path, `xDS has no ${key} upstream; cluster ${t.id} is not rendered`);
      return null;
    }
    if (t.split && kind !== 'udp') {
      // weighted_clusters: one cluster per split entry (the VirtualService's own endpoints).
      const weighted: WeightedCluster[] = [];
      for (const s of t.split) {
        if (s.weight <= 0 || s.members.length === 0) continue;
        const name = splitClusterName(t.id, s.virtualService);
        this.addCluster(name, t, s.members);
        weighted.push({ name, weight: { value: s.weight } });
      }
      if (weighted.length === 0) return null; // resolveMesh already rejects a split with no traffic
      return weighted.length === 1 ? { cluster: weighted[0]!.name } : { weighted };
    }
    if (t.split) {
      this.diagnostics.push({
        severity: 'info',
        code: 'xds-split-by-endpoint-weight',
        message: `the UDP proxy has no weighted clusters: cluster ${t.id} carries the split as endpoint weights`,
        object: t.ref,
        path: t.path ? `${t.path}.split` : 'spec.split',
      });
    }
    this.addCluster(t.id, t, t.endpoints);
    return { cluster: t.id };
  }

  private ringHash(t: ResolvedTarget): boolean {
    const p = t.loadbalancer?.policy;
    return p === 'ConsistentHash' || p === 'HashRing';
  }

  private addCluster(name: string, t: ResolvedTarget, endpoints: ResolvedEndpoint[]): void {
    if (this.clusters.has(name)) return;
    if (t.loadbalancer?.policy === 'Trivial') {
      this.unsupported(
        t.ref,
        t.path ? `${t.path}.loadbalancer.policy` : 'spec.loadbalancer.policy',
        'xDS has no "always the first endpoint" policy (Trivial); ROUND_ROBIN is used',
      );
    }
    this.clusters.set(name, {
      name,
      type: 'EDS',
      eds_cluster_config: { eds_config: ADS, service_name: name },
      lb_policy: this.ringHash(t) ? 'RING_HASH' : 'ROUND_ROBIN',
      // The client then reports its RPCs per cluster to the ADS server (LRS): the only way to see a
      // proxyless canary's traffic and errors, as no proxy sits in its path.
      ...(this.proxy.role === 'grpc' ? { lrs_server: { self: {} } } : {}),
    });
    const defaultPort = t.protocol.spec.port;
    const lbEndpoints: LbEndpoint[] = [];
    for (const e of endpoints) {
      const port = typeof e.extra?.port === 'number' ? e.extra.port : defaultPort;
      if (typeof port !== 'number') {
        this.unsupported(
          t.ref,
          t.path ? `${t.path}.endpoints` : 'spec.endpoints',
          `endpoint ${e.name ?? e.address} has no port; xDS endpoints need one, so it is left out`,
        );
        continue;
      }
      const lb: LbEndpoint = {
        endpoint: { address: { socket_address: { address: e.address, port_value: port } } },
        health_status: 'HEALTHY',
      };
      if (e.weight !== undefined && e.weight > 0) lb.load_balancing_weight = { value: e.weight };
      lbEndpoints.push(lb);
    }
    this.assignments.set(name, {
      cluster_name: name,
      endpoints:
        lbEndpoints.length === 0
          ? []
          : // One locality; its load_balancing_weight must be set or gRPC drops the locality.
            [{ locality: {}, load_balancing_weight: { value: 1 }, lb_endpoints: lbEndpoints }],
    });
  }

  // ---------------------------------------------------------------- route policies

  private retryPolicy(body: ResolvedRouteBody, kind: ListenerKind): RetryPolicy | undefined {
    const r = body.retry;
    if (!r || r.retry_on === 'never') return undefined;
    const num_retries = { value: r.num_retries ?? 1 };
    if (kind === 'grpc') {
      const retry_on = r.retry_on === 'always' ? GRPC_RETRY_ALL : 'unavailable';
      return { retry_on, num_retries };
    }
    const retry_on =
      r.retry_on === 'connect-failure'
        ? 'connect-failure'
        : r.retry_on === 'disconnect'
          ? 'reset,connect-failure'
          : '5xx,reset,connect-failure';
    const ms = r.timeout ?? 2000;
    return {
      retry_on,
      num_retries,
      per_try_timeout: { seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1_000_000 },
    };
  }

  /** ConsistentHash/HashRing -> RING_HASH cluster plus a hash policy on the route. */
  private hashPolicy(t: ResolvedTarget, kind: ListenerKind): HashPolicy | undefined {
    if (!this.ringHash(t)) return undefined;
    const key = t.loadbalancer?.key;
    const header = key?.match(/^\/(?:HTTP\/headers|labels|metadata)\/([^/]+)$/);
    if (header) return { header: { header_name: header[1]!.toLowerCase() } };
    if (key !== undefined && key !== '/IP/src_addr') {
      this.unsupported(
        t.ref,
        t.path ? `${t.path}.loadbalancer.key` : 'spec.loadbalancer.key',
        `hash key ${key} has no xDS equivalent (headers and the source address do); hashing on the ${kind === 'grpc' ? 'channel' : 'source address'} instead`,
      );
    }
    // gRPC has no connection properties: hash per channel, which keeps a client on one backend.
    return kind === 'grpc'
      ? { filter_state: { key: 'io.grpc.channel_id' } }
      : { connection_properties: { source_ip: true } };
  }
}

/** `echo-v1.default.virtualservice.cluster.local` -> `echo-v1`. */
function shortName(longName: string): string {
  return longName.split('.')[0]!;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
