/**
 * The adapter from the renderer's per-proxy output (lib/xds `renderXds(resolved)`: per proxy id
 * `<namespace>/<pod>` -> {listeners, routes, clusters, endpoints}) to `SnapshotCache.setSnapshot`.
 * Kept structural so this folder does not depend on lib/xds while it is being written.
 */
import type { SnapshotCache, SnapshotInput, XdsResource } from './SnapshotCache';

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
 */
export function applyRendered(
  cache: SnapshotCache,
  rendered: Record<string, RenderedProxyXds> | Map<string, RenderedProxyXds>,
  previous: Iterable<string> = [],
): Map<string, Error> {
  const entries = rendered instanceof Map ? [...rendered] : Object.entries(rendered);
  const errors = new Map<string, Error>();
  const seen = new Set<string>();
  for (const [nodeId, r] of entries) {
    seen.add(nodeId);
    try {
      cache.setSnapshot(nodeId, snapshotFromRendered(r));
    } catch (e) {
      errors.set(nodeId, e as Error);
    }
  }
  for (const nodeId of previous) if (!seen.has(nodeId)) cache.clearSnapshot(nodeId);
  return errors;
}
