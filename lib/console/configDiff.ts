/**
 * What the Preview's diff compares: one proxy's config as it runs against the draft's, per kind of
 * object, each side in canonical form (l7mp's defaults applied, keys and objects sorted) written as
 * YAML, so only real differences show and a proxy in sync reads "no differences".
 */
import { stringify } from 'yaml';
import { canonicalL7mpConfig } from '../l7mp/canonicalL7mp';
import type { L7mpConfig } from '../model/l7mp';
import type { XdsResources } from '../xds/envoyTypes';
import { xdsConfigDump } from './configDump';
import { diffCounts, diffLines, type LineOp } from './lineDiff';

/** The diff of one kind of object (listeners, rules, routes, clusters; or a config_dump section). */
export interface DiffSection {
  kind: string;
  ops: LineOp[];
  added: number;
  removed: number;
}

/** A whole proxy's diff; `same` when no section has a difference. */
export interface ConfigDiff {
  sections: DiffSection[];
  same: boolean;
}

/** Objects read best with their name first; the other keys keep their (sorted) order. */
function nameFirst(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(nameFirst);
  if (value === null || typeof value !== 'object') return value;
  const o = value as Record<string, unknown>;
  const out: Record<string, unknown> = 'name' in o ? { name: o.name } : {};
  for (const [k, v] of Object.entries(o)) if (k !== 'name') out[k] = nameFirst(v);
  return out;
}

function asText(value: unknown): string[] {
  if (Array.isArray(value) && value.length === 0) return [];
  return stringify(nameFirst(value), { lineWidth: 0, aliasDuplicateObjects: false }).trimEnd().split('\n');
}

function sectionsDiff(kinds: string[], before: Record<string, unknown>, after: Record<string, unknown>) {
  const sections = kinds.map((kind): DiffSection => {
    const ops = diffLines(asText(before[kind] ?? []), asText(after[kind] ?? []));
    return { kind, ops, ...diffCounts(ops) };
  });
  return { sections, same: sections.every((s) => s.added === 0 && s.removed === 0) };
}

/**
 * l7mp objects by kind as l7mp keeps them: listeners (without their rules), the rules of each
 * listener (order matters), named routes, clusters with their endpoints.
 */
export function l7mpByKind(config: L7mpConfig): Record<string, unknown[]> {
  const c = canonicalL7mpConfig(config);
  return {
    listeners: c.listeners.map(({ rules: _rules, ...l }) => l),
    rules: c.listeners.map((l) => ({ listener: l.name, rules: l.rules })),
    routes: c.routes,
    clusters: c.clusters,
  };
}

export const L7MP_KINDS = ['listeners', 'rules', 'routes', 'clusters'];

/** The l7mp config a proxy runs (`live`) against the draft's, by kind. */
export function l7mpConfigDiff(live: L7mpConfig, draft: L7mpConfig): ConfigDiff {
  return sectionsDiff(L7MP_KINDS, l7mpByKind(live), l7mpByKind(draft));
}

const byName = (a: { name?: string }, b: { name?: string }) =>
  (a.name ?? '') < (b.name ?? '') ? -1 : (a.name ?? '') > (b.name ?? '') ? 1 : 0;

/** The four sections of a config_dump (listeners, clusters, routes, endpoints), objects by name. */
export function xdsByKind(r: XdsResources | undefined): Record<string, unknown[]> {
  if (!r) return {};
  const sorted: XdsResources = {
    listeners: [...r.listeners].sort(byName),
    clusters: [...r.clusters].sort(byName),
    routes: [...r.routes].sort(byName),
    endpoints: [...r.endpoints].sort((a, b) =>
      a.cluster_name < b.cluster_name ? -1 : a.cluster_name > b.cluster_name ? 1 : 0,
    ),
  };
  const [listeners, clusters, routes, endpoints] = xdsConfigDump(sorted).configs;
  return {
    listeners: listeners!.dynamic_listeners as unknown[],
    clusters: clusters!.dynamic_active_clusters as unknown[],
    routes: routes!.dynamic_route_configs as unknown[],
    endpoints: endpoints!.dynamic_endpoint_configs as unknown[],
  };
}

export const XDS_KINDS = ['listeners', 'clusters', 'routes', 'endpoints'];

/** Two xDS renderings of a proxy compared as config_dump sections (undefined: no resources). */
export function xdsConfigDiff(before: XdsResources | undefined, after: XdsResources | undefined): ConfigDiff {
  return sectionsDiff(XDS_KINDS, xdsByKind(before), xdsByKind(after));
}
