/**
 * Is what runs what Git says? The mesh as it runs (the cluster's objects in Kubernetes mode, as the
 * cluster mirror writes them; the mesh directory the local mesh runs) against the GitOps repository's
 * base branch, object by object: Argo CD's Synced / OutOfSync, with the fields that differ. Objects are
 * compared by the value the engine reads (the seed's dialect converted, files and formatting ignored), with
 * what the API server and GitOps tools add left out (status, server metadata, their annotations), so an
 * object applied from Git unchanged is in sync wherever each side keeps it. Pure.
 */
import { type FieldChange, objectDiff } from '../kube/objectDiff';
import { type FileMap, type ManifestObject, type ParseCache, parseFiles } from './manifestObjects';

/** `synced`: the same on both sides; `modified`: both have it, values differ; `missing`: in Git, not
 * running; `extra`: running, not in Git. */
export type SyncState = 'synced' | 'modified' | 'missing' | 'extra';

/** One object of either side. */
export interface SyncEntry {
  /** `Kind/namespace/name`. */
  key: string;
  kind: string;
  namespace: string;
  name: string;
  state: SyncState;
  /** Where Git has it (file in the repository's mesh directory, 1-based line). */
  git?: { file: string; line: number };
  /** Where the running side has it. */
  live?: { file: string; line: number };
  /** `modified`: Git's value -> the running value, field by field (at most MAX_FIELDS). */
  fields?: FieldChange[];
  /** More fields differ than `fields` lists. */
  moreFields?: number;
}

/** The comparison, out-of-sync entries first. */
export interface LiveSync {
  entries: SyncEntry[];
  counts: Record<SyncState, number>;
  /** Files that cannot be read as YAML: their objects are unknown (they count as neither side's). */
  unreadable: { side: 'git' | 'live'; path: string; line: number; message: string }[];
  /** Keys defined more than once on one side (compared by their first definition). */
  duplicates: string[];
}

const MAX_FIELDS = 20;

/** Annotation prefixes that tools write when they apply (not part of what anyone declared in Git). */
const TOOL_ANNOTATION_PREFIXES = [
  'kubectl.kubernetes.io/',
  'argocd.argoproj.io/',
  'kustomize.toolkit.fluxcd.io/',
  'meta.helm.sh/',
  'deployment.kubernetes.io/',
];

/**
 * Compares the objects of `gitFiles` (the base branch's mesh directory) with `liveFiles`, limited to
 * `kinds` when given (Kubernetes mode: the mesh kinds; the cluster's Pods are not in Git).
 */
export function liveSync(
  gitFiles: FileMap,
  liveFiles: FileMap,
  kinds?: readonly string[],
  cache: ParseCache = new Map(),
): LiveSync {
  const git = parseFiles(gitFiles, cache);
  const live = parseFiles(liveFiles, cache);
  const wanted = (kind: string) => !kinds || kinds.includes(kind);
  const counts: Record<SyncState, number> = { synced: 0, modified: 0, missing: 0, extra: 0 };
  const entries: SyncEntry[] = [];
  const duplicates: string[] = [];
  const keys = [...new Set([...git.byKey.keys(), ...live.byKey.keys()])].sort();
  for (const key of keys) {
    const gl = git.byKey.get(key);
    const ll = live.byKey.get(key);
    const g = gl?.[0];
    const l = ll?.[0];
    const o = (g ?? l)!;
    if (!wanted(o.kind)) continue;
    if ((gl && gl.length > 1) || (ll && ll.length > 1)) duplicates.push(key);
    const entry: SyncEntry = { key, kind: o.kind, namespace: o.namespace, name: o.name, state: 'synced' };
    if (g) entry.git = { file: g.file, line: g.line };
    if (l) entry.live = { file: l.file, line: l.line };
    if (!l) entry.state = 'missing';
    else if (!g) entry.state = 'extra';
    else {
      const fields = objectDiff(declared(g), declared(l));
      if (fields.length > 0) {
        entry.state = 'modified';
        entry.fields = fields.slice(0, MAX_FIELDS);
        if (fields.length > MAX_FIELDS) entry.moreFields = fields.length - MAX_FIELDS;
      }
    }
    counts[entry.state]++;
    entries.push(entry);
  }
  const order: Record<SyncState, number> = { modified: 0, missing: 1, extra: 2, synced: 3 };
  entries.sort((a, b) => order[a.state] - order[b.state] || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const unreadable: LiveSync['unreadable'] = [];
  for (const [side, parsed] of [
    ['git', git],
    ['live', live],
  ] as const) {
    for (const f of parsed.files.values()) {
      if (f.error) unreadable.push({ side, path: f.path, line: f.error.line, message: f.error.message });
    }
  }
  return { entries, counts, unreadable, duplicates };
}

/** True when nothing differs and nothing is unknown. */
export function inSync(s: LiveSync): boolean {
  return s.counts.modified + s.counts.missing + s.counts.extra === 0 && s.unreadable.length === 0;
}

/** What someone declared: the value without status, server metadata and tools' annotations. */
function declared(o: ManifestObject): Record<string, unknown> {
  const { status: _status, metadata, ...rest } = o.value;
  const meta = (metadata ?? {}) as Record<string, unknown>;
  const out: Record<string, unknown> = { name: meta.name, namespace: o.namespace };
  if (isNonEmpty(meta.labels)) out.labels = meta.labels;
  if (isRecord(meta.annotations)) {
    const kept = Object.entries(meta.annotations).filter(
      ([k]) => !TOOL_ANNOTATION_PREFIXES.some((p) => k.startsWith(p)),
    );
    if (kept.length > 0) out.annotations = Object.fromEntries(kept);
  }
  return { ...rest, metadata: out };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isNonEmpty(v: unknown): boolean {
  return isRecord(v) && Object.keys(v).length > 0;
}
