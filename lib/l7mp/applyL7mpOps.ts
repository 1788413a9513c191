import type { z } from 'zod';
import {
  L7mpCluster,
  L7mpEndpoint,
  L7mpListener,
  L7mpRoute,
  type L7mpConfig,
  type L7mpOperation,
} from '@/lib/model/l7mp';
import { l7mpProtocolTakesEndpoints } from './canonicalL7mp';

function noEndpoints(protocol: string): string {
  return `Adding an endpoint to a cluster of type "${protocol}" is not supported`;
}

function byName<T extends { name: string }>(a: T, b: T): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** What a path names: the collection, the decoded object name, a sub-collection, `?recursive=true`. */
interface Target {
  collection: string;
  name?: string;
  sub?: string;
  recursive: boolean;
}

function parsePath(path: string): Target | string {
  const [pathname = '', search = ''] = path.split('?', 2);
  const m = /^\/api\/v1\/([a-z]+)(?:\/([^/]+)(?:\/([a-z]+))?)?$/.exec(pathname);
  if (!m || m[1] === undefined) return `unknown API operation: ${path}`;
  let name: string | undefined;
  if (m[2] !== undefined) {
    try {
      name = decodeURIComponent(m[2]);
    } catch {
      return `bad URL encoding in ${path}`;
    }
  }
  return { collection: m[1], name, sub: m[3], recursive: /(^|&)recursive=true(&|$)/.test(search) };
}

/** The wrapped object of a POST body (`{cluster: {...}}` etc.), checked with the model's schema. */
function unwrap<T>(body: unknown, key: string, schema: z.ZodType<T>): T | string {
  if (body === null || typeof body !== 'object' || !(key in body)) {
    return `422 schema validation failed: missing property "${key}"`;
  }
  const parsed = schema.safeParse((body as Record<string, unknown>)[key]);
  return parsed.success ? parsed.data : `422 schema validation failed: ${parsed.error.message}`;
}

/** A deep copy, so that the simulation never aliases (or mutates) the caller's objects. */
function clone<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/**
 * Simulates l7mp 0.5.7's REST semantics on Meshdeck's model: applies `ops` to a copy of `config` and
 * returns the result and one error per failed call (later calls still run, like a client that goes on).
 * Adding an existing name fails with "already defined" (endpoint names are global per proxy); deleting
 * an unknown object succeeds, as Meshdeck treats the real API's "Unknown"/"Not Found" as already gone.
 * Deletes never cascade to referring objects, a cluster takes its endpoints with it, and the
 * auto-generated rulelists, rules and inline routes of listeners are not modelled (deleting them is a no-op).
 */
export function applyL7mpOps(
  config: L7mpConfig,
  ops: readonly L7mpOperation[],
): { config: L7mpConfig; errors: string[] } {
  const state = clone(config);
  const errors: string[] = [];
  const fail = (op: L7mpOperation, message: string): void => {
    errors.push(`${op.method} ${op.path}: ${message}`);
  };
  const endpointOwner = (name: string): L7mpCluster | undefined =>
    state.clusters.find((c) => (c.endpoints ?? []).some((e) => e.name === name));

  for (const op of ops) {
    const target = parsePath(op.path);
    if (typeof target === 'string') {
      fail(op, target);
      continue;
    }
    const { collection, name, sub } = target;

    if (op.method === 'POST') {
      if (collection === 'clusters' && name === undefined) {
        const cluster = unwrap(op.body, 'cluster', L7mpCluster);
        if (typeof cluster === 'string') fail(op, cluster);
        else if (state.clusters.some((c) => c.name === cluster.name)) {
          fail(op, `Cannot add cluster: Cluster "${cluster.name}" already defined`);
        } else {
          // l7mp 0.5.7 adds inline endpoints without awaiting them: it answers 200, and a failing one
          // (duplicate name, or a cluster that cannot hold endpoints) makes the proxy process exit.
          const endpoints: L7mpEndpoint[] = [];
          for (const ep of cluster.endpoints ?? []) {
            if (!l7mpProtocolTakesEndpoints(cluster.spec.protocol)) {
              fail(op, `${noEndpoints(cluster.spec.protocol)} (inline: l7mp 0.5.7 crashes)`);
            } else if (endpointOwner(ep.name) || endpoints.some((e) => e.name === ep.name)) {
              fail(
                op,
                `Cannot add endpoint: Endpoint "${ep.name}" already defined (inline: l7mp 0.5.7 crashes)`,
              );
            } else endpoints.push(ep);
          }
          state.clusters.push(cluster.endpoints === undefined ? cluster : { ...cluster, endpoints });
        }
      } else if (collection === 'clusters' && name !== undefined && sub === 'endpoints') {
        const endpoint = unwrap(op.body, 'endpoint', L7mpEndpoint);
        const cluster = state.clusters.find((c) => c.name === name);
        if (typeof endpoint === 'string') fail(op, endpoint);
        else if (endpointOwner(endpoint.name)) {
          fail(op, `Cannot add endpoint: Endpoint "${endpoint.name}" already defined`);
        } else if (cluster === undefined) fail(op, 'Not Found');
        else if (!l7mpProtocolTakesEndpoints(cluster.spec.protocol))
          fail(op, noEndpoints(cluster.spec.protocol));
        else cluster.endpoints = [...(cluster.endpoints ?? []), endpoint];
      } else if (collection === 'routes' && name === undefined) {
        const route = unwrap(op.body, 'route', L7mpRoute);
        if (typeof route === 'string') fail(op, route);
        else if (state.routes.some((r) => r.name === route.name)) {
          fail(op, `Cannot add route: Route "${route.name}" already defined`);
        } else state.routes.push(route);
      } else if (collection === 'listeners' && name === undefined) {
        const listener = unwrap(op.body, 'listener', L7mpListener.omit({ live: true }));
        if (typeof listener === 'string') fail(op, listener);
        else if (state.listeners.some((l) => l.name === listener.name)) {
          fail(op, `Cannot add listener: Listener "${listener.name}" already defined`);
        } else state.listeners.push(listener);
      } else fail(op, 'unsupported POST in the simulator');
      continue;
    }

    // DELETE: an unknown name is "already gone", which Meshdeck counts as success.
    if (name === undefined || sub !== undefined) {
      fail(op, 'unknown API operation');
    } else if (collection === 'listeners') {
      state.listeners = state.listeners.filter((l) => l.name !== name);
    } else if (collection === 'routes') {
      state.routes = state.routes.filter((r) => r.name !== name);
    } else if (collection === 'clusters') {
      state.clusters = state.clusters.filter((c) => c.name !== name);
    } else if (collection === 'endpoints') {
      const owner = endpointOwner(name);
      if (owner) owner.endpoints = (owner.endpoints ?? []).filter((e) => e.name !== name);
    } else if (collection !== 'rulelists' && collection !== 'rules') {
      fail(op, 'unknown API operation');
    }
  }

  state.listeners.sort(byName);
  state.routes.sort(byName);
  state.clusters.sort(byName);
  return { config: state, errors };
}
