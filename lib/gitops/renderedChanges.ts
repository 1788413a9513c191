/**
 * What a draft changes in the dataplane, per proxy: both sides compiled with the engine, then the
 * l7mp operations that take a proxy from the base render to the draft render (diffL7mp) and the
 * Envoy resources added, changed and removed (by name, per type). This is the summary a pull request
 * carries, so a reviewer sees the effect of a YAML change, not just the YAML.
 */
import { type CompiledMesh, compileMesh } from '../engine/compileMesh';
import { diffL7mp } from '../l7mp/diffL7mp';
import type { Diagnostic } from '../model/diagnostic';
import { emptyL7mpConfig, type L7mpOperation } from '../model/l7mp';
import { parseManifests } from '../parse/parseManifests';
import { jsonEqual } from '../util/jsonEqual';
import type { XdsResources } from '../xds/envoyTypes';
import { renderXds, type XdsRender } from '../xds/renderXds';
import { type FileMap, isManifestPath } from './manifestObjects';

export const XDS_TYPES = ['listeners', 'routes', 'clusters', 'endpoints'] as const;
export type XdsType = (typeof XDS_TYPES)[number];

/** Resource names added, changed and removed (each sorted). */
export interface NameChanges {
  added: string[];
  changed: string[];
  removed: string[];
}

export interface ProxyRenderedChanges {
  /** The engine's proxy id `namespace/pod`. */
  proxy: string;
  /** `added`/`removed`: the proxy exists (has a config) on one side only. */
  status: 'added' | 'removed' | 'changed';
  /** The l7mp REST operations from the base render to the draft render, in the order they would run. */
  l7mp: L7mpOperation[];
  /** Envoy resources per type, by name (ClusterLoadAssignments by cluster name). */
  xds: Record<XdsType, NameChanges>;
}

export interface RenderedChanges {
  /** Proxies whose l7mp config or xDS resources change, sorted by id. */
  proxies: ProxyRenderedChanges[];
  /** The draft's diagnostics, as `meshdeck check` reports them (errors first). */
  diagnostics: Diagnostic[];
  /** The base's diagnostics (to tell new problems from old ones). */
  baseDiagnostics: Diagnostic[];
  /** Set when the xDS render failed on a side (the l7mp part is still complete). */
  xdsError?: string;
}

/** Compiles both sides with the engine and summarises the per-proxy dataplane changes. Pure. */
export function renderedChanges(baseFiles: FileMap, draftFiles: FileMap): RenderedChanges {
  const base = compile(baseFiles);
  const draft = compile(draftFiles);
  const ids = new Set([
    ...Object.keys(base.compiled.l7mp.proxies),
    ...Object.keys(draft.compiled.l7mp.proxies),
    ...Object.keys(base.xds?.proxies ?? {}),
    ...Object.keys(draft.xds?.proxies ?? {}),
  ]);
  const proxies: ProxyRenderedChanges[] = [];
  for (const proxy of [...ids].sort()) {
    const before = base.compiled.l7mp.proxies[proxy]?.config;
    const after = draft.compiled.l7mp.proxies[proxy]?.config;
    const l7mp = diffL7mp(before ?? emptyL7mpConfig(), after ?? emptyL7mpConfig());
    const xds = xdsChanges(base.xds?.proxies[proxy], draft.xds?.proxies[proxy]);
    const xdsChanged = XDS_TYPES.some((t) => {
      const c = xds[t];
      return c.added.length + c.changed.length + c.removed.length > 0;
    });
    if (l7mp.length === 0 && !xdsChanged) continue;
    const existsBefore = before !== undefined || base.xds?.proxies[proxy] !== undefined;
    const existsAfter = after !== undefined || draft.xds?.proxies[proxy] !== undefined;
    proxies.push({
      proxy,
      status: !existsBefore ? 'added' : !existsAfter ? 'removed' : 'changed',
      l7mp,
      xds,
    });
  }
  const out: RenderedChanges = {
    proxies,
    diagnostics: draft.compiled.diagnostics,
    baseDiagnostics: base.compiled.diagnostics,
  };
  const xdsError = draft.xdsError ?? base.xdsError;
  if (xdsError) out.xdsError = xdsError;
  return out;
}

function compile(files: FileMap): { compiled: CompiledMesh; xds?: XdsRender; xdsError?: string } {
  const manifests = Object.keys(files)
    .filter(isManifestPath)
    .map((path) => ({ path, content: files[path]! }));
  const compiled = compileMesh(parseManifests(manifests));
  try {
    return { compiled, xds: renderXds(compiled.mesh) };
  } catch (e) {
    return { compiled, xdsError: `the xDS renderer failed: ${(e as Error).message}` };
  }
}

/** Added/changed/removed resource names per xDS type between two renders of one proxy. */
export function xdsChanges(
  before: XdsResources | undefined,
  after: XdsResources | undefined,
): Record<XdsType, NameChanges> {
  const out = {} as Record<XdsType, NameChanges>;
  for (const type of XDS_TYPES) {
    const a = named(type, before);
    const b = named(type, after);
    const changes: NameChanges = { added: [], changed: [], removed: [] };
    for (const [name, v] of a) {
      if (!b.has(name)) changes.removed.push(name);
      else if (!jsonEqual(v, b.get(name))) changes.changed.push(name);
    }
    for (const name of b.keys()) if (!a.has(name)) changes.added.push(name);
    for (const list of [changes.added, changes.changed, changes.removed]) list.sort();
    out[type] = changes;
  }
  return out;
}

function named(type: XdsType, r: XdsResources | undefined): Map<string, unknown> {
  const map = new Map<string, unknown>();
  if (!r) return map;
  if (type === 'endpoints') for (const e of r.endpoints) map.set(e.cluster_name, e);
  else for (const x of r[type]) map.set(x.name, x);
  return map;
}
