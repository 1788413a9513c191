/**
 * A draft's files already read, sent by the server with the draft (`GET /api/draft?parsed=1`), so the
 * console's first compile reads no YAML. Reading YAML is most of a cold compile: for a 1,000-object
 * draft about 1.2 s of the 1.4 s, where parsing the same results from JSON takes about 25 ms. The
 * server builds the pack with the very functions the browser would run (parseDraft's and
 * draftSnapshot's per-file readers), so a seeded compile equals one that read the text.
 */
import type { DraftObject, FileProblem, ParsedFileObjects } from './draftModel';
import { fileObjects, seedParsedFiles } from './draftModel';
import { fileSnapshot, seedFileSnapshot } from './draftSnapshot';
import type { Snapshot } from '../model/snapshot';

/** One file read: the draft model's part of it and its snapshot (its text is the draft's). */
export interface ParsedDraftFile {
  objects: DraftObject[];
  problems: FileProblem[];
  snapshot: Snapshot;
}

/** Read files by path; a file whose results JSON cannot carry exactly is left out (read from text). */
export interface DraftParsePack {
  files: Record<string, ParsedDraftFile>;
}

/** Reads every file of a draft (memoised per file) into a pack for another thread or process. */
export function buildDraftParsePack(files: Readonly<Record<string, string>>): DraftParsePack {
  const out: Record<string, ParsedDraftFile> = {};
  for (const path of Object.keys(files).sort()) {
    const text = files[path]!;
    const { objects, problems } = fileObjects(path, text);
    const part: ParsedDraftFile = { objects, problems, snapshot: fileSnapshot(path, text) };
    if (jsonFaithful(part)) out[path] = part;
  }
  return { files: out };
}

/**
 * Takes a pack into this thread's per-file memos, each entry for the text of `files` at that path
 * (the draft it came with). Returns how many files were seeded.
 */
export function seedDraftParsePack(files: Readonly<Record<string, string>>, pack: DraftParsePack): number {
  let n = 0;
  const parsed: Record<string, ParsedFileObjects> = {};
  for (const [path, part] of Object.entries(pack.files)) {
    const text = files[path];
    if (text === undefined) continue;
    parsed[path] = { text, objects: part.objects, problems: part.problems };
    seedFileSnapshot(path, text, part.snapshot);
    n++;
  }
  seedParsedFiles(parsed);
  return n;
}

/**
 * True when `JSON.parse(JSON.stringify(v))` gives back the same value: plain objects, arrays,
 * strings, booleans, null and finite numbers other than -0, with no undefined member. YAML can give
 * `.nan`, `.inf` and `-0`, which JSON would turn into null and 0.
 */
export function jsonFaithful(v: unknown): boolean {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(v) && !Object.is(v, -0);
    case 'object': {
      if (v === null) return true;
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) if (!(i in v) || !jsonFaithful(v[i])) return false;
        return true;
      }
      const proto = Object.getPrototypeOf(v) as unknown;
      if (proto !== Object.prototype && proto !== null) return false;
      for (const k in v) {
        if (!Object.prototype.hasOwnProperty.call(v, k)) return false;
        if (k === '__proto__') return false;
        if (!jsonFaithful((v as Record<string, unknown>)[k])) return false;
      }
      return true;
    }
    default:
      return false;
  }
}
