/**
 * What a draft changes against its base commit, object by object: the list a commit message, a pull
 * request and the console's "changes" view are made from. Objects are compared by value (as the
 * engine reads them), so a reformatted object is "formatting only", not a modification.
 */
import { jsonEqual } from '../util/jsonEqual';
import {
  type FileMap,
  type ManifestObject,
  type ParseCache,
  parseFiles,
  type ParsedFiles,
} from './manifestObjects';

export type ObjectChangeKind = 'added' | 'modified' | 'deleted' | 'moved' | 'formatting';

/** One object the draft changes. */
export interface ObjectChange {
  /** `Kind/namespace/name`. */
  key: string;
  kind: string;
  namespace: string;
  name: string;
  /**
   * `modified`: its value differs (it may also have moved, see `previousFile`); `moved`: same value,
   * another file; `formatting`: same value and file, different text (only reformatted).
   */
  change: ObjectChangeKind;
  /** Where it is in the draft (for `deleted`: where it was in the base). */
  file: string;
  line: number;
  /** Where it was in the base, when it existed there. */
  previousFile?: string;
  previousLine?: number;
}

/** A changed file no object change accounts for. */
export interface FileChange {
  path: string;
  change: 'added' | 'modified' | 'deleted';
  /**
   * `non-object`: a file without objects (the layout file, a README); `outside-objects`: a manifest
   * whose objects are unchanged but whose other text (comments, separators) changed; `unreadable`:
   * YAML that cannot be parsed on one side, so its objects are unknown.
   */
  what: 'non-object' | 'outside-objects' | 'unreadable';
}

export interface ObjectChanges {
  /** Sorted by key. */
  objects: ObjectChange[];
  /** Sorted by path. */
  files: FileChange[];
  /** Keys defined more than once on one side (compared by their first definition). */
  duplicates: string[];
}

/**
 * Object-level changes from `baseFiles` to `draftFiles`, plus the changed files no object explains.
 * Pass a `cache` kept across calls to parse only the files that changed since the last call.
 */
export function objectChanges(
  baseFiles: FileMap,
  draftFiles: FileMap,
  cache: ParseCache = new Map(),
): ObjectChanges {
  const base = parseFiles(baseFiles, cache);
  const draft = parseFiles(draftFiles, cache);
  // A cache kept across calls holds only what the two sides use now.
  if (cache.size > base.files.size + draft.files.size) {
    const live = new Set([...base.files.values(), ...draft.files.values()]);
    for (const [id, f] of cache) if (!live.has(f)) cache.delete(id);
  }
  return changesBetween(base, draft);
}

/** objectChanges over already parsed sides. */
export function changesBetween(base: ParsedFiles, draft: ParsedFiles): ObjectChanges {
  const objects: ObjectChange[] = [];
  const duplicates: string[] = [];
  const keys = [...new Set([...base.byKey.keys(), ...draft.byKey.keys()])].sort();
  const touched = new Set<string>();
  for (const key of keys) {
    const bl = base.byKey.get(key);
    const dl = draft.byKey.get(key);
    if ((bl && bl.length > 1) || (dl && dl.length > 1)) duplicates.push(key);
    const b = bl?.[0];
    const d = dl?.[0];
    const change = compareObjects(b, d);
    if (!change) continue;
    const o = (d ?? b)!;
    const c: ObjectChange = {
      key,
      kind: o.kind,
      namespace: o.namespace,
      name: o.name,
      change,
      file: o.file,
      line: o.line,
    };
    if (b && d) {
      c.previousFile = b.file;
      c.previousLine = b.line;
    }
    if (b) touched.add(b.file);
    if (d) touched.add(d.file);
    objects.push(c);
  }
  const files: FileChange[] = [];
  const paths = [...new Set([...base.files.keys(), ...draft.files.keys()])].sort();
  for (const path of paths) {
    const bf = base.files.get(path);
    const df = draft.files.get(path);
    if (bf?.text === df?.text) continue;
    const change = !bf ? 'added' : !df ? 'deleted' : 'modified';
    if (bf?.error || df?.error) files.push({ path, change, what: 'unreadable' });
    else if ((bf?.objects.length ?? 0) === 0 && (df?.objects.length ?? 0) === 0)
      files.push({ path, change, what: 'non-object' });
    else if (!touched.has(path)) files.push({ path, change, what: 'outside-objects' });
  }
  return { objects, files, duplicates };
}

/** How `d` differs from `b` (either may be absent), or null when they are the same text in the same file. */
export function compareObjects(
  b: ManifestObject | undefined,
  d: ManifestObject | undefined,
): ObjectChangeKind | null {
  if (!b && !d) return null;
  if (!b) return 'added';
  if (!d) return 'deleted';
  if (!jsonEqual(b.value, d.value)) return 'modified';
  if (b.file !== d.file) return 'moved';
  if (b.text !== d.text) return 'formatting';
  return null;
}

/** True when the draft changes nothing at all. */
export function isUnchanged(changes: ObjectChanges): boolean {
  return changes.objects.length === 0 && changes.files.length === 0;
}

/** Object changes that matter to the mesh (not `formatting` or `moved`). */
export function semanticChanges(changes: ObjectChanges): ObjectChange[] {
  return changes.objects.filter((c) => c.change !== 'formatting' && c.change !== 'moved');
}
