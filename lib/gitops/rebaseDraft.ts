/**
 * Rebasing a draft onto a moved base branch, object by object (issue 6). The result starts from
 * THEIR files (the new tip) and re-applies our object-level changes into them, so their comments and
 * formatting survive and our edited objects keep our text. Nothing is dropped silently: every object
 * we changed is either merged or listed as a conflict, which `resolveConflict` settles.
 */
import { jsonEqual } from '../util/jsonEqual';
import { compareObjects } from './objectChanges';
import {
  applyFileEdits,
  emptyEdits,
  type FileEdits,
  type FileMap,
  isLayoutPath,
  isRecord,
  type ManifestObject,
  type ObjectPlacement,
  parseFile,
  parseFiles,
  type ParseCache,
  type ParsedFile,
  type ParsedFiles,
  queueRemove,
  queueReplace,
} from './manifestObjects';

export interface RebaseInput {
  /** The files of the commit the draft started from. */
  base: FileMap;
  /** The draft's files. */
  ours: FileMap;
  /** The files of the base branch's new tip. */
  theirs: FileMap;
}

/** One side of a conflict; null in a conflict means "absent on that side". */
export interface ConflictSide {
  file: string;
  line: number;
  /** The object as a stand-alone YAML document (for a file conflict: the file's text). */
  text: string;
  /** The object as the engine reads it (for a file conflict: null). */
  value: unknown;
}

export interface RebaseConflict {
  /** The object key `Kind/namespace/name`, or the path for a file conflict. */
  key: string;
  type: 'object' | 'file';
  /** Why it could not be merged, for the user. */
  reason: string;
  base: ConflictSide | null;
  ours: ConflictSide | null;
  theirs: ConflictSide | null;
  oursFile: string | null;
  theirsFile: string | null;
}

/** An object we changed and how it ended up in the result. */
export interface MergedObject {
  key: string;
  /**
   * `ours`: our version applied; `both`: both sides made the same change; `theirs`: we only
   * reformatted or moved it and they changed it, so theirs stands; `edited`: a conflict the user
   * resolved with their own text.
   */
  from: 'ours' | 'theirs' | 'both' | 'edited';
}

export interface RebaseResult {
  /** The merged files (conflicting objects hold THEIR version until resolved). */
  files: Record<string, string>;
  conflicts: RebaseConflict[];
  merged: MergedObject[];
  /** Things worth a look that are not conflicts (text outside objects not carried over, duplicates). */
  notes: string[];
}

/** Three-way merges the draft onto the new tip of its base branch, object by object. */
export function rebaseDraft(input: RebaseInput): RebaseResult {
  const { base, ours, theirs } = input;
  const cache: ParseCache = new Map();
  const B = parseFiles(base, cache);
  const O = parseFiles(ours, cache);
  const T = parseFiles(theirs, cache);
  const conflicts: RebaseConflict[] = [];
  const merged: MergedObject[] = [];
  const notes: string[] = [];
  const broken = new Set<string>();
  for (const side of [B, O, T]) for (const [p, f] of side.files) if (f.error) broken.add(p);

  // Files only one side touched are taken whole: this alone is exact when one side is the base.
  const files: Record<string, string> = {};
  const bothChanged: string[] = [];
  const paths = [...new Set([...Object.keys(base), ...Object.keys(ours), ...Object.keys(theirs)])].sort();
  for (const p of paths) {
    const b = base[p];
    const o = ours[p];
    const t = theirs[p];
    let r: string | undefined;
    if (t === b || o === t) r = o;
    else if (o === b) r = t;
    else {
      r = t;
      bothChanged.push(p);
    }
    if (r !== undefined) files[p] = r;
  }
  for (const p of bothChanged) {
    const fileConflict = (reason: string) =>
      conflicts.push(fileConflictOf(p, reason, base[p], ours[p], theirs[p]));
    if (broken.has(p)) {
      fileConflict('cannot be read as YAML on one side, so it cannot be merged object by object');
      continue;
    }
    const objectCount = [B, O, T].reduce((n, s) => n + (s.files.get(p)?.objects.length ?? 0), 0);
    if (objectCount === 0) {
      const layout = isLayoutPath(p) ? mergeLayout(base[p], ours[p], theirs[p]) : null;
      if (layout !== null) files[p] = layout;
      else fileConflict('changed on both sides (a file without mesh objects)');
      continue;
    }
    const so = skeleton(O.files.get(p));
    if (so !== skeleton(B.files.get(p)) && so !== skeleton(T.files.get(p)))
      notes.push(
        `${p}: your changes to comments or text outside objects were not carried over, because the base branch changed this file too`,
      );
  }

  const b = singles(B, broken);
  const o = singles(O, broken);
  const t = singles(T, broken);
  const dups = new Set([...b.dups, ...o.dups, ...t.dups]);
  // An object in a file that does not parse on some side is merged with that file, not as an object.
  const inBroken = new Set<string>();
  for (const side of [B, O, T])
    for (const [key, list] of side.byKey) if (list.some((x) => broken.has(x.file))) inBroken.add(key);
  const desired = new Map<string, ObjectPlacement | null>();
  const keys = [...new Set([...b.map.keys(), ...o.map.keys(), ...t.map.keys(), ...dups, ...inBroken])].sort();
  for (const key of keys) {
    if (inBroken.has(key) || dups.has(key)) {
      const texts = (side: ParsedFiles) =>
        (side.byKey.get(key) ?? []).map((x) => `${x.file}\0${x.text}`).join('\0');
      if (texts(B) !== texts(O))
        notes.push(
          inBroken.has(key)
            ? `${key} is in a file that cannot be read as YAML on one side; it was merged with that file`
            : `${key} is defined more than once; it was merged file by file, not as an object`,
        );
      continue;
    }
    const bo = b.map.get(key);
    const oo = o.map.get(key);
    const to = t.map.get(key);
    const oursChanged = compareObjects(bo, oo) !== null;
    if (!oursChanged) {
      desired.set(key, placementOf(to));
      continue;
    }
    if (compareObjects(bo, to) === null) {
      desired.set(key, placementOf(oo));
      merged.push({ key, from: 'ours' });
    } else if (sameValue(oo, to)) {
      desired.set(key, placementOf(to));
      merged.push({ key, from: 'both' });
    } else if (sameValue(oo, bo)) {
      desired.set(key, placementOf(to));
      merged.push({ key, from: 'theirs' });
    } else if (sameValue(to, bo)) {
      // Our value; in their file unless we moved it.
      const p = placementOf(oo);
      if (p && to && bo && oo!.file === bo.file) p.file = to.file;
      desired.set(key, p);
      merged.push({ key, from: 'ours' });
    } else {
      desired.set(key, placementOf(to));
      conflicts.push(objectConflictOf(key, bo, oo, to));
    }
  }

  const placed = placeObjects(files, desired, broken, cache);
  const failed = new Set(verify(placed, desired, broken, cache));
  for (const key of failed) {
    const i = merged.findIndex((m) => m.key === key);
    if (i >= 0) merged.splice(i, 1);
    const c = objectConflictOf(key, b.map.get(key), o.map.get(key), t.map.get(key));
    c.reason = 'could not be written back into the file automatically; choose a version';
    if (!conflicts.some((x) => x.key === key)) conflicts.push(c);
  }
  conflicts.sort((x, y) => cmp(x.key, y.key));
  return { files: placed, conflicts, merged, notes };
}

export type ConflictChoice = 'ours' | 'theirs' | { text: string };

/**
 * Settles one conflict: keep our version, theirs, or the user's own text (a YAML document of the
 * same object; empty text deletes it; for a file conflict, the file's text). Never throws on input.
 */
export function resolveConflict(
  result: RebaseResult,
  key: string,
  choice: ConflictChoice,
): { ok: true; result: RebaseResult } | { ok: false; error: string } {
  const conflict = result.conflicts.find((c) => c.key === key);
  if (!conflict) return { ok: false, error: `${key} is not in conflict` };
  const rest = result.conflicts.filter((c) => c !== conflict);
  const from: MergedObject['from'] = choice === 'ours' ? 'ours' : choice === 'theirs' ? 'theirs' : 'edited';
  if (conflict.type === 'file') {
    const text =
      choice === 'ours' ? conflict.ours?.text : choice === 'theirs' ? conflict.theirs?.text : choice.text;
    const files = { ...result.files };
    if (text === undefined) delete files[key];
    else files[key] = text;
    return { ok: true, result: { ...result, files, conflicts: rest } };
  }
  let side: ConflictSide | null;
  if (choice === 'ours') side = conflict.ours;
  else if (choice === 'theirs') side = conflict.theirs;
  else if (choice.text.trim() === '') side = null;
  else {
    const parsed = parseFile('resolution.yaml', choice.text);
    if (parsed.error) return { ok: false, error: `the text is not valid YAML: ${parsed.error.message}` };
    if (parsed.objects.length !== 1 || parsed.docs.length !== 1)
      return { ok: false, error: 'the text must be exactly one object (one YAML document)' };
    if (parsed.objects[0]!.key !== key)
      return {
        ok: false,
        error: `the text is ${parsed.objects[0]!.key}, not ${key}: kind, namespace and name must stay`,
      };
    side = { file: '', line: 1, text: choice.text, value: parsed.objects[0]!.value };
  }
  let placement: ObjectPlacement | null = null;
  if (side) {
    const p = placementOf(parseFile('resolution.yaml', side.text).objects[0]);
    if (!p) return { ok: false, error: `${key}: the chosen version cannot be read` };
    const movedByUs = conflict.ours && conflict.base && conflict.ours.file !== conflict.base.file;
    p.file =
      choice === 'theirs'
        ? side.file
        : movedByUs
          ? conflict.ours!.file
          : (conflict.theirs?.file ?? conflict.ours?.file ?? conflict.base?.file ?? `${fileStem(key)}.yaml`);
    placement = p;
  }
  const desired = new Map([[key, placement]]);
  const cache: ParseCache = new Map();
  const broken = new Set<string>();
  for (const [p, f] of parseFiles(result.files, cache).files) if (f.error) broken.add(p);
  const files = placeObjects(result.files, desired, broken, cache);
  if (verify(files, desired, broken, cache).length > 0)
    return { ok: false, error: `${key} could not be written into ${placement?.file ?? 'its file'}` };
  const merged = [...result.merged.filter((m) => m.key !== key), { key, from }];
  return { ok: true, result: { files, conflicts: rest, merged, notes: result.notes } };
}

// ------------------------------------------------------------------ placing objects in files

/** The files with each key brought to its desired placement (null: absent); all else untouched. */
function placeObjects(
  input: FileMap,
  desired: ReadonlyMap<string, ObjectPlacement | null>,
  broken: ReadonlySet<string>,
  cache: ParseCache,
): Record<string, string> {
  const current = parseFiles(input, cache);
  const edits = new Map<string, FileEdits>();
  const editsOf = (file: string) => {
    let e = edits.get(file);
    if (!e) edits.set(file, (e = emptyEdits()));
    return e;
  };
  for (const [key, want] of desired) {
    const occurrences = (current.byKey.get(key) ?? []).filter((x) => !broken.has(x.file));
    if (want === null) {
      for (const x of occurrences) queueRemove(editsOf(x.file), x);
      continue;
    }
    const keep = occurrences.find((x) => x.file === want.file);
    for (const x of occurrences) if (x !== keep) queueRemove(editsOf(x.file), x);
    if (keep) queueReplace(editsOf(keep.file), keep, want);
    else editsOf(want.file).append.push(want.docText);
  }
  const files: Record<string, string> = { ...input };
  for (const [file, e] of edits) {
    if (
      e.replace.size === 0 &&
      e.setItems.length === 0 &&
      e.removeDocs.size === 0 &&
      e.removeItems.length === 0 &&
      e.append.length === 0
    )
      continue;
    // A fresh parse: item edits go through (and mutate) the Document.
    const fresh = input[file] === undefined ? undefined : parseFile(file, input[file]);
    const text = applyFileEdits(fresh, e);
    if (text === null) delete files[file];
    else files[file] = text;
  }
  return files;
}

/** Keys whose placement did not come out as wanted. */
function verify(
  files: FileMap,
  desired: ReadonlyMap<string, ObjectPlacement | null>,
  broken: ReadonlySet<string>,
  cache: ParseCache,
): string[] {
  const now = parseFiles(files, cache);
  const bad: string[] = [];
  for (const [key, want] of desired) {
    const occ = (now.byKey.get(key) ?? []).filter((x) => !broken.has(x.file));
    if (
      want === null
        ? occ.length !== 0
        : occ.length !== 1 || occ[0]!.file !== want.file || !jsonEqual(occ[0]!.value, want.value)
    )
      bad.push(key);
  }
  return bad;
}

function placementOf(o: ManifestObject | undefined): ObjectPlacement | null {
  if (!o) return null;
  return {
    file: o.file,
    text: o.item === undefined ? o.text : o.docText,
    raw: o.raw,
    docText: o.docText,
    value: o.value,
  };
}

// ------------------------------------------------------------------ helpers

function singles(side: ParsedFiles, broken: ReadonlySet<string>) {
  const map = new Map<string, ManifestObject>();
  const dups = new Set<string>();
  for (const [key, list] of side.byKey) {
    const ok = list.filter((x) => !broken.has(x.file));
    if (ok.length > 1) dups.add(key);
    else if (ok.length === 1) map.set(key, ok[0]!);
  }
  return { map, dups };
}

function sameValue(a: ManifestObject | undefined, b: ManifestObject | undefined): boolean {
  if (!a || !b) return !a && !b;
  return jsonEqual(a.value, b.value);
}

function sideOf(o: ManifestObject | undefined): ConflictSide | null {
  if (!o) return null;
  return { file: o.file, line: o.line, text: o.docText, value: o.value };
}

function objectConflictOf(
  key: string,
  b: ManifestObject | undefined,
  o: ManifestObject | undefined,
  t: ManifestObject | undefined,
): RebaseConflict {
  const reason = !o
    ? 'you deleted it; the base branch changed it'
    : !t
      ? b
        ? 'you changed it; the base branch deleted it'
        : 'the base branch does not have it'
      : !b
        ? 'added on both sides with different content'
        : 'changed on both sides';
  return {
    key,
    type: 'object',
    reason,
    base: sideOf(b),
    ours: sideOf(o),
    theirs: sideOf(t),
    oursFile: o?.file ?? null,
    theirsFile: t?.file ?? null,
  };
}

function fileConflictOf(
  path: string,
  reason: string,
  b: string | undefined,
  o: string | undefined,
  t: string | undefined,
): RebaseConflict {
  const side = (text: string | undefined): ConflictSide | null =>
    text === undefined ? null : { file: path, line: 1, text, value: null };
  return {
    key: path,
    type: 'file',
    reason,
    base: side(b),
    ours: side(o),
    theirs: side(t),
    oursFile: o === undefined ? null : path,
    theirsFile: t === undefined ? null : path,
  };
}

/** A manifest's text outside its objects: what a merge by object cannot carry over. */
function skeleton(f: ParsedFile | undefined): string {
  if (!f) return '';
  const parts: string[] = [];
  f.docs.forEach((doc, i) => {
    let seg = f.text.slice(f.starts[i], f.starts[i + 1] ?? f.text.length);
    const whole = f.objects.find((o) => o.doc === i && o.item === undefined);
    const items = f.objects.some((o) => o.doc === i && o.item !== undefined);
    if (items) seg = '\0';
    else if (whole && doc.contents?.range) {
      const [a, , b] = doc.contents.range;
      seg = `${f.text.slice(f.starts[i], a)}\0${f.text.slice(b, f.starts[i + 1] ?? f.text.length)}`;
    }
    if (seg !== '\0' && !/^---[ \t]*\r?\n\0$/.test(seg)) parts.push(seg);
  });
  return parts.join('\u0001');
}

/** Three-way merge of the layout file (node id -> position), ours winning a position both moved. */
function mergeLayout(b: string | undefined, o: string | undefined, t: string | undefined): string | null {
  if (o === undefined || t === undefined) return null;
  const read = (s: string | undefined): Record<string, unknown> | null => {
    if (s === undefined) return {};
    try {
      const v: unknown = JSON.parse(s);
      return isRecord(v) ? v : null;
    } catch {
      return null;
    }
  };
  const bm = read(b);
  const om = read(o);
  const tm = read(t);
  if (!bm || !om || !tm) return null;
  const out: Record<string, unknown> = {};
  for (const k of new Set([...Object.keys(bm), ...Object.keys(om), ...Object.keys(tm)])) {
    const v = jsonEqual(om[k], bm[k]) ? tm[k] : om[k];
    if (v !== undefined) out[k] = v;
  }
  const keys = Object.keys(out).sort();
  if (keys.length === 0) return '{}\n';
  return `{\n${keys.map((k) => `  ${JSON.stringify(k)}: ${JSON.stringify(out[k])}`).join(',\n')}\n}\n`;
}

function fileStem(key: string): string {
  const [kind, ns, ...name] = key.split('/');
  return `${(kind ?? 'object').toLowerCase()}-${ns === 'default' ? '' : `${ns}-`}${name.join('-')}`;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
