import fc from 'fast-check';
import type {
  L7mpCluster,
  L7mpConfig,
  L7mpEndpoint,
  L7mpListener,
  L7mpRetry,
  L7mpRoute,
  L7mpRouteBody,
  L7mpRule,
} from '@/lib/model/l7mp';

/**
 * fast-check arbitraries for valid L7mpConfigs. Names come from small shared pools, so two generated
 * configs overlap a lot (same names, same or slightly different objects) and every diff path is hit.
 * Every body they produce is valid against l7mp's OpenAPI schema.
 */

const CLUSTER_NAMES = ['c1', 'c2', 'worker-svc.default.target.cluster.local', 'ns/c@v1:udp'];
const ROUTE_NAMES = ['r1', 'r2', 'ns/route@x'];
const LISTENER_NAMES = ['l1', 'l2', 'default/gw@vsvc:1'];
const ENDPOINT_NAMES = ['e1', 'e2', 'e3', 'e4', 'ns/e@5:x'];

const retry: fc.Arbitrary<L7mpRetry | undefined> = fc.constantFrom(
  undefined,
  { retry_on: 'never', num_retries: 1, timeout: 2000 },
  { retry_on: 'always', num_retries: 3, timeout: 500 },
);

const endpoint: fc.Arbitrary<L7mpEndpoint> = fc
  .record({
    name: fc.constantFrom(...ENDPOINT_NAMES),
    address: fc.constantFrom('127.0.0.2', '127.0.0.3'),
    weight: fc.constantFrom(undefined, 0, 1, 20, 80),
  })
  .map(({ name, address, weight }) =>
    weight === undefined ? { name, spec: { address } } : { name, spec: { address }, weight },
  );

const realCluster = fc
  .record({
    protocol: fc.constantFrom('UDP', 'TCP', 'WebSocket'),
    port: fc.constantFrom(9000, 9001),
    loadbalancer: fc.constantFrom(
      undefined,
      { policy: 'Trivial' },
      { policy: 'ConsistentHash' },
      { policy: 'HashRing' },
      { policy: 'ConsistentHash', key: '/labels/session_id' },
    ),
    endpoints: fc.option(fc.uniqueArray(endpoint, { selector: (e) => e.name, maxLength: 3 }), {
      nil: undefined,
    }),
  })
  .map(({ protocol, port, loadbalancer, endpoints }) => {
    const cluster: Omit<L7mpCluster, 'name'> = { spec: { protocol, port } };
    if (endpoints !== undefined) cluster.endpoints = endpoints;
    if (loadbalancer !== undefined) cluster.loadbalancer = loadbalancer;
    return cluster;
  });

/** Virtual clusters never get endpoints: l7mp hides them, yet their names would stay taken. */
const virtualCluster = fc.constantFrom<Omit<L7mpCluster, 'name'>>(
  { spec: { protocol: 'Sync', query: '/JSONSocket/labels/session_id' } },
  { spec: { protocol: 'Sync', query: '/labels/id' } },
  { spec: { protocol: 'Echo' } },
  { spec: { protocol: 'Logger', log_file: '-' } },
);

const cluster: fc.Arbitrary<L7mpCluster> = fc
  .tuple(
    fc.constantFrom(...CLUSTER_NAMES),
    fc.oneof({ weight: 4, arbitrary: realCluster }, { weight: 1, arbitrary: virtualCluster }),
  )
  .map(([name, body]) => ({ name, ...body }));

const clusterRefs = fc.option(fc.subarray(CLUSTER_NAMES, { maxLength: 2 }), { nil: undefined });

const routeBody: fc.Arbitrary<L7mpRouteBody> = fc
  .record({
    destination: fc.constantFrom(...CLUSTER_NAMES),
    ingress: clusterRefs,
    egress: clusterRefs,
    retry,
  })
  .map(({ destination, ingress, egress, retry: r }) => {
    const body: L7mpRouteBody = { destination };
    if (ingress !== undefined) body.ingress = ingress;
    if (egress !== undefined) body.egress = egress;
    if (r !== undefined) body.retry = r;
    return body;
  });

const route: fc.Arbitrary<L7mpRoute> = fc
  .tuple(fc.constantFrom(...ROUTE_NAMES), routeBody)
  .map(([name, body]) => ({ name, ...body }));

const rule: fc.Arbitrary<L7mpRule> = fc
  .record({
    match: fc.constantFrom<L7mpRule['match']>(
      undefined,
      { op: 'test', path: '/IP/src_addr', value: '127.0.0.100' },
      { op: 'more', path: '/UDP/src_port', value: 8999 },
    ),
    rewrite: fc.constantFrom<L7mpRule['action']['rewrite']>(
      undefined,
      [],
      [{ path: '/labels/session_id', value: '1' }],
    ),
    route: fc.oneof(fc.constantFrom(...ROUTE_NAMES), routeBody),
  })
  .map(({ match, rewrite, route: r }) => {
    const out: L7mpRule = { action: rewrite === undefined ? { route: r } : { rewrite, route: r } };
    if (match !== undefined) out.match = match;
    return out;
  });

const listener: fc.Arbitrary<L7mpListener> = fc
  .record({
    name: fc.constantFrom(...LISTENER_NAMES),
    port: fc.constantFrom(9001, 9002),
    rules: fc.array(rule, { maxLength: 2 }),
    options: fc.constantFrom(
      undefined,
      { track: 0 },
      { track: 5 },
      { removeOrphanSessions: true },
      { removeOrphanSessions: false },
    ),
    // Live parts as a dump would report them; the route pool is included on purpose (a leftover name
    // that is also a named route must never be cleaned up while the desired config keeps it).
    live: fc.option(
      fc.record({
        rulelist: fc.constantFrom(undefined, 'l-RuleList-1'),
        rules: fc.subarray(['l-RuleList-1-Rule-1', 'l-RuleList-1-Rule-2']),
        routes: fc.subarray(['l-RuleList-1-Rule-1-Route-1', ...ROUTE_NAMES], { maxLength: 2 }),
      }),
      { nil: undefined },
    ),
  })
  .map(({ name, port, rules, options, live }) => {
    const l: L7mpListener = { name, spec: { protocol: 'UDP', port }, rules };
    if (options !== undefined) l.options = options;
    if (live !== undefined) {
      l.live =
        live.rulelist === undefined
          ? { rules: live.rules, routes: live.routes }
          : { rulelist: live.rulelist, rules: live.rules, routes: live.routes };
    }
    return l;
  });

/** Endpoint names are global per proxy: keep the first cluster's use of each name. */
function globallyUniqueEndpoints(clusters: L7mpCluster[]): L7mpCluster[] {
  const seen = new Set<string>();
  return clusters.map((c) => {
    if (c.endpoints === undefined) return c;
    const endpoints = c.endpoints.filter((e) => !seen.has(e.name));
    endpoints.forEach((e) => seen.add(e.name));
    return { ...c, endpoints };
  });
}

/** A valid L7mpConfig over the shared name pools. */
export const l7mpConfigArbitrary: fc.Arbitrary<L7mpConfig> = fc
  .record({
    listeners: fc.uniqueArray(listener, { selector: (l) => l.name, maxLength: LISTENER_NAMES.length }),
    routes: fc.uniqueArray(route, { selector: (r) => r.name, maxLength: ROUTE_NAMES.length }),
    clusters: fc.uniqueArray(cluster, { selector: (c) => c.name, maxLength: CLUSTER_NAMES.length }),
  })
  .map(({ listeners, routes, clusters }) => ({
    listeners,
    routes,
    clusters: globallyUniqueEndpoints(clusters),
  }));

/** Small in-place edits: endpoint-only changes (added, removed, reweighted), route retries, listener options. */
function tweaked(a: L7mpConfig): fc.Arbitrary<L7mpConfig> {
  const clusterEdit = (c: L7mpCluster): fc.Arbitrary<L7mpCluster> =>
    fc.oneof(
      fc.constant(c),
      fc
        .uniqueArray(endpoint, { selector: (e) => e.name, maxLength: 3 })
        .map((endpoints) => ({ ...c, endpoints })),
      fc.constantFrom(1, 50, 80).map((weight) => ({
        ...c,
        endpoints: (c.endpoints ?? []).map((e, i) => (i === 0 ? { ...e, weight } : e)),
      })),
    );
  const routeEdit = (r: L7mpRoute): fc.Arbitrary<L7mpRoute> =>
    fc.oneof(
      fc.constant(r),
      retry.map((rt) => (rt === undefined ? { ...r, retry: undefined } : { ...r, retry: rt })),
    );
  const listenerEdit = (l: L7mpListener): fc.Arbitrary<L7mpListener> =>
    fc.oneof(
      fc.constant(l),
      fc
        .constantFrom(undefined, { track: 0 }, { removeOrphanSessions: true })
        .map((options) => ({ ...l, options })),
    );
  return fc
    .record({
      clusters: fc.tuple(...a.clusters.map(clusterEdit)),
      routes: fc.tuple(...a.routes.map(routeEdit)),
      listeners: fc.tuple(...a.listeners.map(listenerEdit)),
    })
    .map(({ clusters, routes, listeners }) => ({
      listeners,
      routes,
      clusters: globallyUniqueEndpoints(clusters),
    }));
}

/** Two configs where the second is often a small edit of the first. */
export const l7mpConfigPairArbitrary: fc.Arbitrary<[L7mpConfig, L7mpConfig]> = fc.oneof(
  fc.tuple(l7mpConfigArbitrary, l7mpConfigArbitrary),
  l7mpConfigArbitrary.chain((a) => tweaked(a).map((b): [L7mpConfig, L7mpConfig] => [a, b])),
  l7mpConfigArbitrary.chain((a) =>
    fc
      .record({
        keepListeners: fc.subarray(a.listeners),
        keepRoutes: fc.subarray(a.routes),
        keepClusters: fc.subarray(a.clusters),
        more: l7mpConfigArbitrary,
      })
      .map(({ keepListeners, keepRoutes, keepClusters, more }): [L7mpConfig, L7mpConfig] => {
        const merge = <T extends { name: string }>(keep: T[], extra: T[]) => [
          ...keep,
          ...extra.filter((x) => !keep.some((k) => k.name === x.name)),
        ];
        return [
          a,
          {
            listeners: merge(keepListeners, more.listeners),
            routes: merge(keepRoutes, more.routes),
            clusters: globallyUniqueEndpoints(merge(keepClusters, more.clusters)),
          },
        ];
      }),
  ),
);
