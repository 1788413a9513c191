/**
 * The adapter from the renderer's per-proxy output (lib/xds `renderXds(resolved)`: per proxy id
 * `<namespace>/<pod>` -> {listeners, routes, clusters, endpoints}) to `SnapshotCache.setSnapshot`.
 * Kept structural so this folder does not depend on lib/xds while it is being written.
 */
import { deepFreeze, type SnapshotCache, type SnapshotInput, type XdsResource } from './SnapshotCache';

export interface RenderedProxyXds {
  listeners?: XdsResource[];
  routes?: XdsResource[];
  clusters?: XdsResource[];
  endpoints?: XdsResource[];
}

/** One proxy's rendered resources as a snapshot input (missing lists are empty). */
export function snapshotFromRendered(rendered: RenderedProxyXds): SnapshotInput {
  return {
    listeners: rendered.listeners ?? [],
    routes: rendered.routes ?? [],
    clusters: rendered.clusters ?? [],
    endpoints: rendered.endpoints ?? [],
  };
}

/**
 * Sets the snapshot of every proxy in a render, and clears proxies that disappeared from it when
 * `previous` node ids are given. Returns the node ids whose snapshot was refused, with the error.
 *
 * Proxies whose rendered resources are the same JSON (replicas: 2,000 proxyless clients selected by
 * one VirtualService) share one frozen copy, so the cache hashes, checks and encodes it once instead
 * of once per proxy: the content hashes were most of a publish (2,000 such clients: 220-320 ms per
 * endpoint change, before any push). JSON.stringify is native and far cheaper than the cache's
 * key-sorted hash; equal JSON is equal content, and unequal JSON of equal content only misses a share.
 * The caller's objects are not frozen (they are cloned once per distinct content).
 */
export function applyRendered(
  cache: SnapshotCache,
  rendered: Record<string, RenderedProxyXds> | Map<string, RenderedProxyXds>,
  previous: Iterable<string> = [],
): Map<string, Error> {
  const entries = rendered instanceof Map ? [...rendered] : Object.entries(rendered);
  const errors = new Map<string, Error>();
  const seen = new Set<string>();
  const shared = new Map<string, SnapshotInput>();
  // Renders that share their lists (MeshXdsPublisher's replicas) are matched without the JSON.
  const byLists = new Map<unknown, { lists: RenderedProxyXds; input: SnapshotInput }>();
  // Nodes by the one input they get, each group set at once (replicas are encoded once, not per node).
  const groups = new Map<SnapshotInput, string[]>();
  for (const [nodeId, r] of entries) {
    seen.add(nodeId);
    try {
      const known = r.listeners ? byLists.get(r.listeners) : undefined;
      let one = known && sameLists(known.lists, r) ? known.input : undefined;
      if (!one) {
        const input = snapshotFromRendered(r);
        const json = JSON.stringify(input);
        one = shared.get(json);
        if (!one) shared.set(json, (one = deepFreeze(structuredClone(input))));
        if (r.listeners && !known) byLists.set(r.listeners, { lists: r, input: one });
      }
      const group = groups.get(one);
      if (group) group.push(nodeId);
      else groups.set(one, [nodeId]);
    } catch (e) {
      errors.set(nodeId, e as Error);
    }
  }
  for (const [input, nodeIds] of groups) {
    try {
      cache.setSnapshotOfNodes(nodeIds, input);
    } catch {
      // Refused: each node gets its own error, naming it.
      for (const nodeId of nodeIds) {
        try {
          cache.setSnapshot(nodeId, input);
        } catch (e) {
          errors.set(nodeId, e as Error);
        }
      }
    }
  }
  for (const nodeId of previous) if (!seen.has(nodeId)) cache.clearSnapshot(nodeId);
  return errors;
}

function sameLists(a: RenderedProxyXds, b: RenderedProxyXds): boolean {
  return (
    a.listeners === b.listeners &&
    a.routes === b.routes &&
    a.clusters === b.clusters &&
    a.endpoints === b.endpoints
  );
}
