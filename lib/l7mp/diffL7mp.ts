import type {
  L7mpCluster,
  L7mpConfig,
  L7mpEndpoint,
  L7mpListener,
  L7mpOperation,
  L7mpRoute,
  L7mpRule,
} from '@/lib/model/l7mp';
import {
  canonicalL7mpCluster,
  canonicalL7mpEndpoint,
  canonicalL7mpListener,
  canonicalL7mpRoute,
  l7mpProtocolTakesEndpoints,
  sameL7mp,
} from './canonicalL7mp';
import { describeL7mpChange } from './describeL7mpChange';
import { l7mpPaths } from './l7mpPaths';

/**
 * An inline route nobody claims any more (`<listener>-RuleList-<n>-Rule-<n>-Route-<n>`): dumps list it
 * among the named routes once its listener or rule is gone, and removing it is just cleanup.
 */
const LEFTOVER_ROUTE = /-RuleList-\d+(?:_\d+)?-Rule-\d+(?:_\d+)?-Route-\d+(?:_\d+)?$/;

function byName<T extends { name: string }>(a: T, b: T): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** Name-keyed view of a list; the first of duplicate names wins (valid configs have none). */
function index<T extends { name: string }>(items: readonly T[]): Map<string, T> {
  const map = new Map<string, T>();
  for (const item of [...items].sort(byName)) if (!map.has(item.name)) map.set(item.name, item);
  return map;
}

/** A canonical cluster without its endpoints: what decides between re-adding a cluster and endpoint calls. */
function clusterShell(canonical: L7mpCluster): L7mpCluster {
  const { endpoints: _endpoints, ...shell } = canonical;
  return shell;
}

function endpointBody(endpoint: L7mpEndpoint): L7mpEndpoint {
  const body: L7mpEndpoint = { name: endpoint.name, spec: endpoint.spec };
  if (endpoint.weight !== undefined) body.weight = endpoint.weight;
  return body;
}

function clusterBody(cluster: L7mpCluster): { cluster: L7mpCluster } {
  const body: L7mpCluster = { name: cluster.name, spec: cluster.spec };
  // Inline endpoints on a virtual cluster (Sync, Echo, ...) make l7mp 0.5.7 exit: never send them.
  if (cluster.endpoints !== undefined && l7mpProtocolTakesEndpoints(cluster.spec.protocol)) {
    body.endpoints = cluster.endpoints.map(endpointBody);
  }
  if (cluster.loadbalancer !== undefined) body.loadbalancer = cluster.loadbalancer;
  return { cluster: body };
}

function routeBody(route: L7mpRoute): { route: L7mpRoute } {
  const body: L7mpRoute = { name: route.name, destination: route.destination };
  if (route.ingress !== undefined) body.ingress = route.ingress;
  if (route.egress !== undefined) body.egress = route.egress;
  if (route.retry !== undefined) body.retry = route.retry;
  return { route: body };
}

function ruleBody(rule: L7mpRule): L7mpRule {
  const body: L7mpRule = { action: { route: rule.action.route } };
  if (rule.match !== undefined) body.match = rule.match;
  if (rule.action.rewrite !== undefined) body.action = { rewrite: rule.action.rewrite, ...body.action };
  return body;
}

/** The addListener body: never `live` (ours, not l7mp's), and rules always an inline array. */
function listenerBody(listener: L7mpListener): { listener: Omit<L7mpListener, 'live'> } {
  const body: Omit<L7mpListener, 'live'> = {
    name: listener.name,
    spec: listener.spec,
    rules: listener.rules.map(ruleBody),
  };
  if (listener.options !== undefined) body.options = listener.options;
  return { listener: body };
}

/** The seed's `removeOrphanSessions`, carried in the listener options l7mp reads back verbatim. */
function removesOrphanSessions(listener: L7mpListener): boolean {
  return listener.options?.removeOrphanSessions === true;
}

/**
 * The DELETEs that remove a live listener. With removeOrphanSessions a recursive delete, which also
 * ends its sessions and removes its auto-generated rulelist, rules and inline routes. Otherwise a
 * plain delete, so that established sessions keep flowing, and then the auto-generated leftovers that
 * a plain delete leaks, named in `live` (skipping any name the desired config still uses as its own).
 */
function deleteListenerOps(listener: L7mpListener, reason: string, keptRoutes: Set<string>): L7mpOperation[] {
  const name = listener.name;
  if (removesOrphanSessions(listener)) {
    return [
      {
        method: 'DELETE',
        path: l7mpPaths.listener(name, { recursive: true }),
        kind: 'listener',
        name,
        reason: `${reason} (removeOrphanSessions: recursive delete ends its sessions)`,
      },
    ];
  }
  const ops: L7mpOperation[] = [
    { method: 'DELETE', path: l7mpPaths.listener(name), kind: 'listener', name, reason },
  ];
  const live = listener.live;
  if (live?.rulelist !== undefined) {
    ops.push({
      method: 'DELETE',
      path: l7mpPaths.rulelist(live.rulelist),
      kind: 'rulelist',
      name: live.rulelist,
      reason: `auto-generated rulelist of listener ${name}`,
    });
  }
  for (const rule of live?.rules ?? []) {
    ops.push({
      method: 'DELETE',
      path: l7mpPaths.rule(rule),
      kind: 'rule',
      name: rule,
      reason: `auto-generated rule of listener ${name}`,
    });
  }
  for (const route of live?.routes ?? []) {
    if (keptRoutes.has(route)) continue;
    ops.push({
      method: 'DELETE',
      path: l7mpPaths.route(route),
      kind: 'route',
      name: route,
      reason: `inline route of listener ${name}`,
    });
  }
  return ops;
}

/**
 * The minimal ordered l7mp REST calls that turn the `live` proxy configuration into `desired`.
 * l7mp has no update, so a changed listener, route or cluster is deleted and re-added; endpoint-only
 * changes of an otherwise unchanged cluster go through the endpoint API. All deletes come first, in
 * reverse dependency order (listeners, routes, endpoints, clusters), then all adds in dependency order
 * (clusters with their endpoints inline, endpoints of kept clusters, routes, listeners), each group
 * sorted by name. Deleting everything first also frees endpoint names, which are global per proxy.
 */
export function diffL7mp(live: L7mpConfig, desired: L7mpConfig): L7mpOperation[] {
  const deleteListeners: L7mpOperation[] = [];
  const deleteRoutes: L7mpOperation[] = [];
  const deleteEndpoints: L7mpOperation[] = [];
  const deleteClusters: L7mpOperation[] = [];
  const addClusters: L7mpOperation[] = [];
  const addEndpoints: L7mpOperation[] = [];
  const addRoutes: L7mpOperation[] = [];
  const addListeners: L7mpOperation[] = [];

  // Clusters: a changed shell (spec or load balancer) means re-adding it, endpoints and all.
  const liveClusters = index(live.clusters);
  const desiredClusters = index(desired.clusters);
  for (const [name, was] of liveClusters) {
    const want = desiredClusters.get(name);
    if (want === undefined) {
      deleteClusters.push({
        method: 'DELETE',
        path: l7mpPaths.cluster(name),
        kind: 'cluster',
        name,
        reason: 'cluster removed',
      });
      continue;
    }
    // Canonicalised once per side: every cluster of every proxy passes here on every push.
    const wasCanonical = canonicalL7mpCluster(was);
    const wantCanonicalCluster = canonicalL7mpCluster(want);
    const wasShell = clusterShell(wasCanonical);
    const wantShell = clusterShell(wantCanonicalCluster);
    if (!sameL7mp(wasShell, wantShell)) {
      const reason = describeL7mpChange('cluster', wasShell, wantShell);
      deleteClusters.push({ method: 'DELETE', path: l7mpPaths.cluster(name), kind: 'cluster', name, reason });
      addClusters.push({
        method: 'POST',
        path: l7mpPaths.clusters(),
        body: clusterBody(want),
        kind: 'cluster',
        name,
        reason,
      });
      continue;
    }
    // Same shell: reconcile endpoints one by one (compared canonically, so a virtual cluster has none).
    const wasEndpoints = index(wasCanonical.endpoints ?? []);
    const wantCanonical = index(wantCanonicalCluster.endpoints ?? []);
    const wantEndpoints = index(want.endpoints ?? []);
    for (const [epName, wasEp] of wasEndpoints) {
      const wantEp = wantCanonical.get(epName);
      if (wantEp !== undefined && sameL7mp(wasEp, wantEp)) continue;
      const reason =
        wantEp === undefined ? 'endpoint removed' : describeL7mpChange('endpoint', wasEp, wantEp);
      deleteEndpoints.push({
        method: 'DELETE',
        path: l7mpPaths.endpoint(epName),
        kind: 'endpoint',
        name: epName,
        reason,
      });
    }
    for (const [epName, wantEp] of wantEndpoints) {
      const wasEp = wasEndpoints.get(epName);
      const wantCanon = canonicalL7mpEndpoint(wantEp);
      if (wasEp !== undefined && sameL7mp(wasEp, wantCanon)) continue;
      if (!wantCanonical.has(epName)) continue; // a virtual cluster: it cannot hold endpoints
      addEndpoints.push({
        method: 'POST',
        path: l7mpPaths.clusterEndpoints(name),
        body: { endpoint: endpointBody(wantEp) },
        kind: 'endpoint',
        name: epName,
        reason:
          wasEp === undefined
            ? `endpoint added to cluster ${name}`
            : describeL7mpChange('endpoint', wasEp, wantCanon),
      });
    }
  }
  for (const [name, want] of desiredClusters) {
    if (liveClusters.has(name)) continue;
    addClusters.push({
      method: 'POST',
      path: l7mpPaths.clusters(),
      body: clusterBody(want),
      kind: 'cluster',
      name,
      reason: 'cluster added',
    });
  }

  // Routes.
  const liveRoutes = index(live.routes);
  const desiredRoutes = index(desired.routes);
  const keptRoutes = new Set<string>();
  for (const [name, was] of liveRoutes) {
    const want = desiredRoutes.get(name);
    const wasRoute = canonicalL7mpRoute(was);
    const wantRoute = want === undefined ? undefined : canonicalL7mpRoute(want);
    if (wantRoute !== undefined && sameL7mp(wasRoute, wantRoute)) {
      keptRoutes.add(name);
      continue;
    }
    const reason =
      wantRoute !== undefined
        ? describeL7mpChange('route', wasRoute, wantRoute)
        : LEFTOVER_ROUTE.test(name)
          ? 'auto-generated route left over from a deleted listener or rule removed'
          : 'route removed';
    deleteRoutes.push({ method: 'DELETE', path: l7mpPaths.route(name), kind: 'route', name, reason });
    if (want !== undefined) {
      addRoutes.push({
        method: 'POST',
        path: l7mpPaths.routes(),
        body: routeBody(want),
        kind: 'route',
        name,
        reason,
      });
    }
  }
  for (const [name, want] of desiredRoutes) {
    if (liveRoutes.has(name)) continue;
    addRoutes.push({
      method: 'POST',
      path: l7mpPaths.routes(),
      body: routeBody(want),
      kind: 'route',
      name,
      reason: 'route added',
    });
  }

  // Listeners.
  const liveListeners = index(live.listeners);
  const desiredListeners = index(desired.listeners);
  for (const [name, was] of liveListeners) {
    const want = desiredListeners.get(name);
    const wasListener = canonicalL7mpListener(was);
    const wantListener = want === undefined ? undefined : canonicalL7mpListener(want);
    if (wantListener !== undefined && sameL7mp(wasListener, wantListener)) continue;
    const reason =
      wantListener === undefined
        ? 'listener removed'
        : describeL7mpChange('listener', wasListener, wantListener);
    deleteListeners.push(...deleteListenerOps(was, reason, keptRoutes));
    if (want !== undefined) {
      addListeners.push({
        method: 'POST',
        path: l7mpPaths.listeners(),
        body: listenerBody(want),
        kind: 'listener',
        name,
        reason,
      });
    }
  }
  for (const [name, want] of desiredListeners) {
    if (liveListeners.has(name)) continue;
    addListeners.push({
      method: 'POST',
      path: l7mpPaths.listeners(),
      body: listenerBody(want),
      kind: 'listener',
      name,
      reason: 'listener added',
    });
  }

  // Maps iterate in name order, so every group is already sorted by name.
  return [
    ...deleteListeners,
    ...deleteRoutes,
    ...deleteEndpoints.sort(byName),
    ...deleteClusters,
    ...addClusters.sort(byName),
    ...addEndpoints.sort(byName),
    ...addRoutes.sort(byName),
    ...addListeners.sort(byName),
  ];
}
