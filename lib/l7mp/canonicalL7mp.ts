import type {
  L7mpCluster,
  L7mpConfig,
  L7mpEndpoint,
  L7mpListener,
  L7mpLoadBalancer,
  L7mpRetry,
  L7mpRoute,
  L7mpRouteBody,
  L7mpRule,
  L7mpSpec,
} from '@/lib/model/l7mp';

/**
 * Canonical forms of l7mp objects, for comparing what we send with what a proxy reports. Both sides
 * get l7mp 0.5.7's defaults filled in exactly as the proxy fills them in when it stores an object, so
 * two objects are equivalent iff their canonical forms are deep-equal (and JSON.stringify-equal:
 * object keys come out sorted and undefined members are dropped).
 */

/** route.js `retry_default_policy`: what a route without `retry` reads back as. */
export const L7MP_DEFAULT_RETRY: L7mpRetry = { retry_on: 'never', num_retries: 1, timeout: 2000 };

/** rule.js: a rule without `match` gets a Wildcard, which dumps as `{match: '*'}`. */
export const L7MP_WILDCARD_MATCH: Record<string, unknown> = { match: '*' };

/**
 * l7mp's virtual clusters (cluster.js). Their constructors rebuild `spec` from scratch (keeping only the
 * listed fields) and force a load balancer, so whatever else was sent is dropped silently.
 */
const VIRTUAL_CLUSTERS: Readonly<
  Record<string, { spec: (spec: L7mpSpec) => L7mpSpec; policy: 'None' | 'Trivial' }>
> = {
  L7mpController: { spec: (s) => ({ protocol: s.protocol }), policy: 'None' },
  Stdio: { spec: (s) => ({ protocol: s.protocol }), policy: 'None' },
  Echo: { spec: (s) => ({ protocol: s.protocol }), policy: 'Trivial' },
  Discard: { spec: (s) => ({ protocol: s.protocol }), policy: 'Trivial' },
  // `||`, as in cluster.js: an empty log_file also becomes '-'.
  Logger: {
    spec: (s) => ({
      protocol: s.protocol,
      log_file: (typeof s.log_file === 'string' && s.log_file) || '-',
      log_prefix: (typeof s.log_prefix === 'string' && s.log_prefix) || '',
    }),
    policy: 'None',
  },
  JSONEncap: { spec: (s) => ({ protocol: s.protocol }), policy: 'Trivial' },
  JSONDecap: { spec: (s) => ({ protocol: s.protocol }), policy: 'Trivial' },
  Sync: { spec: (s) => ({ protocol: s.protocol, query: s.query }), policy: 'None' },
  Metric: { spec: (s) => ({ protocol: s.protocol }), policy: 'Trivial' },
  Prometheus: { spec: (s) => ({ protocol: s.protocol }), policy: 'Trivial' },
};

/** cluster.js `EndPoint.create`: the only cluster protocols that can hold endpoints. */
const ENDPOINT_PROTOCOLS = new Set([
  'WebSocket',
  'WS',
  'UDP',
  'TCP',
  'UnixDomainSocket',
  'JSONSocket',
  'Test',
]);

/**
 * Whether l7mp 0.5.7 accepts endpoints in a cluster of this protocol. Virtual clusters (Sync, Echo, ...)
 * do not: the endpoint API answers 400, and inline endpoints in addCluster make the proxy exit (verified).
 */
export function l7mpProtocolTakesEndpoints(protocol: string): boolean {
  return ENDPOINT_PROTOCOLS.has(protocol);
}

/** A deep copy with object keys sorted and undefined members dropped; array order is kept. */
export function sortL7mpKeys<T>(value: T): T {
  return sortKeysDeep(value) as T;
}

function sortKeysDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeysDeep);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const member = (value as Record<string, unknown>)[key];
      if (member !== undefined) out[key] = sortKeysDeep(member);
    }
    return out;
  }
  return value;
}

function byName<T extends { name: string }>(a: T, b: T): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** The load balancer l7mp reports for a (non-virtual) cluster sent with `lb`. */
export function canonicalL7mpLoadBalancer(lb: L7mpLoadBalancer | undefined): L7mpLoadBalancer {
  const policy = lb?.policy ?? 'Trivial';
  // HashRingLoadBalancer.toJSON always says 'HashRing' and `key || '<RANDOM>'`; the others drop `key`.
  if (policy === 'ConsistentHash' || policy === 'HashRing') {
    return { policy: 'HashRing', key: lb?.key || '<RANDOM>' };
  }
  return { policy };
}

/** An endpoint as l7mp stores it: `weight || 1` (so a weight of 0 also becomes 1 in 0.5.7). */
export function canonicalL7mpEndpoint(endpoint: L7mpEndpoint): L7mpEndpoint {
  return sortL7mpKeys({ name: endpoint.name, spec: endpoint.spec, weight: endpoint.weight || 1 });
}

/** A cluster as l7mp stores it: virtual-cluster rewrites, default load balancer, endpoints by name. */
export function canonicalL7mpCluster(cluster: L7mpCluster): L7mpCluster {
  const virtual = VIRTUAL_CLUSTERS[cluster.spec.protocol];
  // Endpoints a protocol cannot hold are never sent (see diffL7mp), so they are not part of the form.
  const endpoints = l7mpProtocolTakesEndpoints(cluster.spec.protocol)
    ? (cluster.endpoints ?? []).map(canonicalL7mpEndpoint)
    : [];
  return sortL7mpKeys({
    name: cluster.name,
    spec: virtual ? virtual.spec(cluster.spec) : cluster.spec,
    endpoints: endpoints.sort(byName),
    loadbalancer: virtual ? { policy: virtual.policy } : canonicalL7mpLoadBalancer(cluster.loadbalancer),
  });
}

/** A route body (named or inline) with l7mp's defaults for ingress, egress and retry. */
export function canonicalL7mpRouteBody(route: L7mpRouteBody): L7mpRouteBody {
  return sortL7mpKeys({
    destination: route.destination,
    ingress: route.ingress ?? [],
    egress: route.egress ?? [],
    // A partial retry is stored as sent, not merged with the defaults: only a missing one is defaulted.
    retry: route.retry ?? L7MP_DEFAULT_RETRY,
  });
}

/** A named route with l7mp's defaults. */
export function canonicalL7mpRoute(route: L7mpRoute): L7mpRoute {
  return sortL7mpKeys({ name: route.name, ...canonicalL7mpRouteBody(route) });
}

/** A rule with the wildcard match and empty rewrite made explicit. */
export function canonicalL7mpRule(rule: L7mpRule): L7mpRule {
  const route = rule.action.route;
  return sortL7mpKeys({
    match: rule.match ?? L7MP_WILDCARD_MATCH,
    action: {
      rewrite: rule.action.rewrite ?? [],
      route: typeof route === 'string' ? route : canonicalL7mpRouteBody(route),
    },
  });
}

/** A listener as l7mp stores it, without the `live` bookkeeping; rule order is significant and kept. */
export function canonicalL7mpListener(listener: L7mpListener): L7mpListener {
  return sortL7mpKeys({
    name: listener.name,
    spec: listener.spec,
    rules: listener.rules.map(canonicalL7mpRule),
    // listener.js: `l.options || {track: 0}`; any given object (even `{}`) is kept verbatim.
    options: listener.options ?? { track: 0 },
  });
}

/** A whole proxy configuration in canonical form: every object canonical, every list sorted by name. */
export function canonicalL7mpConfig(config: L7mpConfig): L7mpConfig {
  return {
    listeners: config.listeners.map(canonicalL7mpListener).sort(byName),
    routes: config.routes.map(canonicalL7mpRoute).sort(byName),
    clusters: config.clusters.map(canonicalL7mpCluster).sort(byName),
  };
}

/**
 * Whether two values are equal as JSON after key sorting (use on canonical forms). Compared in place,
 * without copies or strings: diffL7mp calls it for every object of every proxy on every push.
 */
export function sameL7mp(a: unknown, b: unknown): boolean {
  // JSON.stringify(undefined) is undefined itself, not 'null'.
  if (omitted(a) || omitted(b)) return omitted(a) && omitted(b);
  return sameJson(jsonScalar(a), jsonScalar(b));
}

/** What JSON.stringify writes for a value in an array: null for undefined, functions and non-finite numbers. */
function jsonScalar(value: unknown): unknown {
  return omitted(value) || (typeof value === 'number' && !Number.isFinite(value)) ? null : value;
}

/** A member JSON.stringify leaves out of an object. */
function omitted(value: unknown): boolean {
  return value === undefined || typeof value === 'function' || typeof value === 'symbol';
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  // Scalars must be identical (=== already equates 0 and -0, which JSON writes alike).
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bs = b as unknown[];
    if (a.length !== bs.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(jsonScalar(a[i]), jsonScalar(bs[i]))) return false;
    return true;
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  let count = 0;
  for (const key of Object.keys(ao)) {
    const value = ao[key];
    if (omitted(value)) continue;
    count++;
    if (!Object.hasOwn(bo, key) || omitted(bo[key])) return false;
    if (!sameJson(jsonScalar(value), jsonScalar(bo[key]))) return false;
  }
  for (const key of Object.keys(bo)) if (!omitted(bo[key])) count--;
  return count === 0;
}
