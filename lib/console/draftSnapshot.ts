/**
 * parseManifests for a draft that changes one file at a time: each file is parsed on its own and
 * remembered while its text is unchanged, and the per-file snapshots are merged exactly as one
 * parseManifests call over all files would build them (same order, same diagnostics). Reading YAML
 * is most of the cost of a recompile, so an edit pays for one file instead of all of them.
 */
import { normalizeDiagnostics, objectKey } from '../model/diagnostic';
import { emptySnapshot, type Snapshot } from '../model/snapshot';
import { parseManifests } from '../parse/parseManifests';

const cache = new Map<string, { text: string; snapshot: Snapshot }>();
const CACHE_LIMIT = 5000;

type ListField = 'virtualServices' | 'routes' | 'targets' | 'services' | 'endpointSlices' | 'pods';
const LISTS: ListField[] = ['virtualServices', 'routes', 'targets', 'services', 'endpointSlices', 'pods'];

/** The snapshot of the draft's files, identical to `parseManifests` over all of them. */
export function draftSnapshot(files: Readonly<Record<string, string>>): Snapshot {
  const paths = Object.keys(files).sort();
  const parts: Snapshot[] = [];
  for (const path of paths) parts.push(fileSnapshot(path, files[path]!));
  // An object in two files is a duplicate only the all-files parse can report in its words.
  const seen = new Set<string>();
  for (const s of parts) {
    const keys = new Set<string>();
    for (const f of LISTS) for (const o of s[f]) keys.add(keyOf(o));
    for (const r of s.rejected) keys.add(objectKey({ ...r, namespace: r.namespace ?? '' }));
    for (const k of keys) {
      if (seen.has(k)) return parseManifests(paths.map((path) => ({ path, content: files[path]! })));
      seen.add(k);
    }
  }
  return merge(parts);
}

/** One file's snapshot, `parseManifests` of that file alone, remembered while its text stays the same. */
export function fileSnapshot(path: string, text: string): Snapshot {
  let hit = cache.get(path);
  if (!hit || hit.text !== text) {
    hit = { text, snapshot: parseManifests([{ path, content: text }]) };
    remember(path, hit);
  }
  return hit.snapshot;
}

/** Takes one file's snapshot computed elsewhere (the server's, see draftParsePack) for this text. */
export function seedFileSnapshot(path: string, text: string, snapshot: Snapshot): void {
  remember(path, { text, snapshot });
}

function remember(path: string, hit: { text: string; snapshot: Snapshot }): void {
  if (cache.size >= CACHE_LIMIT && !cache.has(path)) cache.clear();
  cache.set(path, hit);
}

function merge(parts: Snapshot[]): Snapshot {
  const out = emptySnapshot();
  for (const s of parts) {
    for (const f of LISTS) (out[f] as unknown[]).push(...s[f]);
    Object.assign(out.sources, s.sources);
    out.rejected.push(...s.rejected);
    out.diagnostics.push(...s.diagnostics);
  }
  // parseManifests emits objects in key order across all files.
  for (const f of LISTS)
    (out[f] as { metadata: { name: string; namespace?: string }; kind: string }[]).sort(byKey);
  out.rejected.sort((a, b) => cmp(objectKey(a), objectKey(b)));
  out.sources = Object.fromEntries(Object.entries(out.sources).sort(([a], [b]) => cmp(a, b)));
  out.diagnostics = normalizeDiagnostics(out.diagnostics);
  return out;
}

function keyOf(o: { kind: string; metadata: { name: string; namespace?: string } }): string {
  return objectKey({ kind: o.kind, namespace: o.metadata.namespace ?? '', name: o.metadata.name });
}

function byKey(a: { kind: string; metadata: { name: string; namespace?: string } }, b: typeof a): number {
  return cmp(keyOf(a), keyOf(b));
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
