/**
 * parseManifests for a draft that changes one file at a time: each file is parsed on its own and
 * remembered while its text is unchanged, and the per-file snapshots are merged exactly as one
 * parseManifests call over all files would build them (same order, same diagnostics). Reading YAML
 * is most of the cost of a recompile, so an edit pays for one file instead of all of them.
 */
import { normalizeDiagnostics, objectKey } from '../model/diagnostic';
import { emptySnapshot, type Snapshot } from '../model/snapshot';
import { parseManifests } from '../parse/parseManifests';
import { DocumentMemo, type YamlSegment, yamlSegments } from '../parse/yamlDocuments';

const cache = new Map<string, { text: string; snapshot: Snapshot }>();
const CACHE_LIMIT = 5000;

type ListField = 'virtualServices' | 'routes' | 'targets' | 'services' | 'endpointSlices' | 'pods';
const LISTS: ListField[] = ['virtualServices', 'routes', 'targets', 'services', 'endpointSlices', 'pods'];

/** The snapshot of the draft's files, identical to `parseManifests` over all of them. */
export function draftSnapshot(files: Readonly<Record<string, string>>): Snapshot {
  const paths = Object.keys(files).sort();
  const parts: Snapshot[] = [];
  for (const path of paths) parts.push(fileSnapshot(path, files[path]!));
  const keyed = parts.map(partKeys);
  // An object in two files is a duplicate only the all-files parse can report in its words.
  if (hasDuplicate(keyed)) return parseManifests(paths.map((path) => ({ path, content: files[path]! })));
  return merge(parts, keyed);
}

/** A file snapshot's object keys, in list order: what merging it needs, worked out once per snapshot. */
interface PartKeys {
  lists: Record<ListField, string[]>;
  rejected: string[];
  /** Every object's key once, for the duplicate check. */
  all: string[];
}

// Keyed by the cached snapshot, which stays the same object while its file's text does: an edit then
// builds the keys of the edited file only, not the strings of every object in the draft.
const partKeysCache = new WeakMap<Snapshot, PartKeys>();

function partKeys(s: Snapshot): PartKeys {
  let k = partKeysCache.get(s);
  if (!k) {
    const lists = {} as Record<ListField, string[]>;
    for (const f of LISTS) lists[f] = (s[f] as Keyed[]).map(keyOf);
    const rejected = s.rejected.map((r) => objectKey({ ...r, namespace: r.namespace ?? '' }));
    const all = [...new Set([...LISTS.flatMap((f) => lists[f]), ...rejected])];
    k = { lists, rejected, all };
    partKeysCache.set(s, k);
  }
  return k;
}

/** One file's snapshot, `parseManifests` of that file alone, remembered while its text stays the same. */
export function fileSnapshot(path: string, text: string): Snapshot {
  let hit = cache.get(path);
  if (!hit || hit.text !== text) {
    hit = { text, snapshot: readFileSnapshot(path, text) };
    remember(path, hit);
  }
  return hit.snapshot;
}

/**
 * `parseManifests` of one file, from its documents' snapshots where it has several (each remembered by
 * its text, so an edit of one document of a 500-object file reads that document: issue 5, P8), merged
 * as the draft's files are; the file read whole where a document does not read alone as one clean
 * document, or an object is in two of them (a duplicate parseManifests reports in its own words).
 */
function readFileSnapshot(path: string, text: string): Snapshot {
  const segments = yamlSegments(text);
  const parts = segments && segmentSnapshots(path, segments);
  if (parts) {
    const keyed = parts.map(partKeys);
    if (!hasDuplicate(keyed)) return merge(parts, keyed);
  }
  return parseManifests([{ path, content: text }]);
}

/** One document's snapshot read alone (lines from its own start), and its last placing in its file. */
interface SegmentSnapshot {
  snapshot: Snapshot;
  placed?: { line: number; snapshot: Snapshot };
}
const documentMemo = new DocumentMemo<SegmentSnapshot>((path, text) => ({
  snapshot: parseManifests([{ path, content: text }]),
}));

function segmentSnapshots(path: string, segments: readonly YamlSegment[]): Snapshot[] | undefined {
  const out: Snapshot[] = [];
  for (const { text, line } of segments) {
    const entry = documentMemo.get(path, text);
    if (entry === null) return undefined;
    if (entry.placed?.line !== line) entry.placed = { line, snapshot: shiftLines(entry.snapshot, line - 1) };
    out.push(entry.placed.snapshot);
  }
  return out;
}

/** As draftModel's readDocumentsAhead, for the documents' snapshots; true when every document is in. */
export function snapshotDocumentsAhead(path: string, text: string, stop: () => boolean): boolean {
  return documentMemo.readAhead(path, text, stop);
}

/** The snapshot with every source line (objects', their fields', diagnostics') `by` lines further down. */
function shiftLines(s: Snapshot, by: number): Snapshot {
  if (by === 0) return s;
  const sources: Snapshot['sources'] = {};
  for (const [k, src] of Object.entries(s.sources)) {
    const fields = src.fields && Object.fromEntries(Object.entries(src.fields).map(([f, l]) => [f, l + by]));
    sources[k] = { ...src, line: src.line + by, ...(fields ? { fields } : {}) };
  }
  const diagnostics = s.diagnostics.map((d) =>
    d.source ? { ...d, source: { ...d.source, line: d.source.line + by } } : d,
  );
  return { ...s, sources, diagnostics };
}

function hasDuplicate(keyed: readonly PartKeys[]): boolean {
  const seen = new Set<string>();
  for (const { all } of keyed)
    for (const k of all) {
      if (seen.has(k)) return true;
      seen.add(k);
    }
  return false;
}

/** Takes one file's snapshot computed elsewhere (the server's, see draftParsePack) for this text. */
export function seedFileSnapshot(path: string, text: string, snapshot: Snapshot): void {
  remember(path, { text, snapshot });
}

function remember(path: string, hit: { text: string; snapshot: Snapshot }): void {
  if (cache.size >= CACHE_LIMIT && !cache.has(path)) cache.clear();
  cache.set(path, hit);
}

function merge(parts: Snapshot[], keyed: PartKeys[]): Snapshot {
  const out = emptySnapshot();
  // parseManifests emits objects in key order across all files.
  for (const f of LISTS)
    (out[f] as unknown[]) = sortedByKey(
      parts.map((s) => s[f] as unknown[]),
      keyed.map((k) => k.lists[f]),
    );
  out.rejected = sortedByKey(
    parts.map((s) => s.rejected),
    keyed.map((k) => k.rejected),
  );
  // A later file's source wins, as Object.assign of each file's sources in turn had it.
  const sources = new Map<string, Snapshot['sources'][string]>();
  for (const s of parts) for (const k of Object.keys(s.sources)) sources.set(k, s.sources[k]!);
  // The default sort orders strings by code unit, as cmp does.
  out.sources = plainRecord([...sources.keys()].sort(), sources);
  for (const s of parts) out.diagnostics.push(...s.diagnostics);
  out.diagnostics = normalizeDiagnostics(out.diagnostics);
  return out;
}

/**
 * `Object.fromEntries` of `keys` with their values, built without a prototype and given
 * Object.prototype afterwards. V8 then keeps it a hash table from the start; filling an ordinary
 * object with a draft's 500 source keys went through a hidden class per key and cost ten times more.
 */
function plainRecord<V>(keys: readonly string[], values: ReadonlyMap<string, V>): Record<string, V> {
  const out = Object.create(null) as Record<string, V>;
  for (const k of keys) out[k] = values.get(k)!;
  return Object.setPrototypeOf(out, Object.prototype) as Record<string, V>;
}

type Keyed = { kind: string; metadata: { name: string; namespace?: string } };

/** The lists concatenated and stably sorted by their items' precomputed keys. */
function sortedByKey<T>(lists: T[][], keys: string[][]): T[] {
  const items: { key: string; item: T }[] = [];
  lists.forEach((list, i) => list.forEach((item, j) => items.push({ key: keys[i]![j]!, item })));
  items.sort((a, b) => cmp(a.key, b.key));
  return items.map((x) => x.item);
}

function keyOf(o: Keyed): string {
  return objectKey({ kind: o.kind, namespace: o.metadata.namespace ?? '', name: o.metadata.name });
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
