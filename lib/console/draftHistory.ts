/**
 * Undo/redo across every kind of draft command (graph, form, YAML, layout). An entry is a diff of
 * the files and layout it changed, not a copy of the draft; consecutive edits of one group (typing in
 * one YAML file, dragging one slider) within a short window merge into a single entry.
 */
import type { DraftDoc } from './draftDoc';

/** A change to one record (files or layout): per key the value before and after, and key order if it moved. */
interface RecordPatch<T> {
  changes: Record<string, [before: T | undefined, after: T | undefined]>;
  /** Key sequences before and after, when they differ (added, removed or reordered keys). */
  order?: [before: string[], after: string[]];
}

export interface DraftPatch {
  files: RecordPatch<string>;
  layout: RecordPatch<DraftDoc['layout'][string]>;
}

interface Entry {
  patch: DraftPatch;
  group?: string;
  at: number;
}

export interface DraftHistory {
  present: DraftDoc;
  past: Entry[];
  future: Entry[];
}

/** How long consecutive edits of one group merge into one undo step. */
export const MERGE_WINDOW_MS = 1000;
const LIMIT = 200;

/** A history with no undo steps. */
export function createHistory(present: DraftDoc): DraftHistory {
  return { present, past: [], future: [] };
}

/**
 * Records a new present. `group` names a stream of edits that merge (e.g. `yaml:mesh.yaml`) when they
 * follow each other within MERGE_WINDOW_MS of `at` (the caller's clock). No-op edits are not recorded.
 */
export function pushHistory(
  h: DraftHistory,
  next: DraftDoc,
  opts: { group?: string; at?: number } = {},
): DraftHistory {
  const patch = diffDrafts(h.present, next);
  if (!patch) return h;
  const at = opts.at ?? 0;
  const last = h.past[h.past.length - 1];
  if (last && opts.group !== undefined && last.group === opts.group && at - last.at <= MERGE_WINDOW_MS) {
    const base = applyPatch(h.present, last.patch, 'backward');
    const merged = diffDrafts(base, next);
    const past = h.past.slice(0, -1);
    if (merged) past.push({ patch: merged, group: opts.group, at });
    return { present: next, past, future: [] };
  }
  const past = [...h.past, { patch, group: opts.group, at }];
  if (past.length > LIMIT) past.shift();
  return { present: next, past, future: [] };
}

/** Steps back one entry (unchanged if there is none). */
export function undoHistory(h: DraftHistory): DraftHistory {
  const entry = h.past[h.past.length - 1];
  if (!entry) return h;
  return {
    present: applyPatch(h.present, entry.patch, 'backward'),
    past: h.past.slice(0, -1),
    future: [...h.future, { ...entry, group: undefined }],
  };
}

/** Re-applies the last undone entry (unchanged if there is none). */
export function redoHistory(h: DraftHistory): DraftHistory {
  const entry = h.future[h.future.length - 1];
  if (!entry) return h;
  return {
    present: applyPatch(h.present, entry.patch, 'forward'),
    past: [...h.past, { ...entry, group: undefined }],
    future: h.future.slice(0, -1),
  };
}

/** Replaces the present without an undo step (a draft loaded from the server). */
export function resetHistory(h: DraftHistory, present: DraftDoc): DraftHistory {
  void h;
  return { present, past: [], future: [] };
}

/** The diff from `a` to `b`, or null when they are the same. */
export function diffDrafts(a: DraftDoc, b: DraftDoc): DraftPatch | null {
  const files = diffRecord(a.files, b.files);
  const layout = diffRecord(a.layout, b.layout);
  if (!files && !layout) return null;
  return { files: files ?? { changes: {} }, layout: layout ?? { changes: {} } };
}

/** Applies a patch forward (before -> after) or backward (after -> before). */
export function applyPatch(doc: DraftDoc, patch: DraftPatch, dir: 'forward' | 'backward'): DraftDoc {
  return {
    files: patchRecord(doc.files, patch.files, dir),
    layout: patchRecord(doc.layout, patch.layout, dir),
  };
}

function diffRecord<T>(a: Record<string, T>, b: Record<string, T>): RecordPatch<T> | null {
  if (a === b) return null;
  const changes: RecordPatch<T>['changes'] = {};
  let any = false;
  for (const k of Object.keys(a)) {
    if (!(k in b) || !sameValue(a[k], b[k])) {
      changes[k] = [a[k], b[k]];
      any = true;
    }
  }
  for (const k of Object.keys(b)) {
    if (!(k in a)) {
      changes[k] = [undefined, b[k]];
      any = true;
    }
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  const sameOrder = ka.length === kb.length && ka.every((k, i) => kb[i] === k);
  if (!any && sameOrder) return null;
  const patch: RecordPatch<T> = { changes };
  if (!sameOrder) patch.order = [ka, kb];
  return patch;
}

function patchRecord<T>(
  r: Record<string, T>,
  patch: RecordPatch<T>,
  dir: 'forward' | 'backward',
): Record<string, T> {
  const keys = Object.keys(patch.changes);
  if (keys.length === 0 && !patch.order) return r;
  const idx = dir === 'forward' ? 1 : 0;
  const next: Record<string, T> = { ...r };
  for (const k of keys) {
    const v = patch.changes[k]![idx];
    if (v === undefined) delete next[k];
    else next[k] = v;
  }
  if (!patch.order) return next;
  const ordered: Record<string, T> = {};
  for (const k of patch.order[idx]) if (k in next) ordered[k] = next[k]!;
  for (const k of Object.keys(next)) if (!(k in ordered)) ordered[k] = next[k]!;
  return ordered;
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a === 'object' && typeof b === 'object' && a !== null && b !== null) {
    const x = a as Record<string, unknown>;
    const y = b as Record<string, unknown>;
    const kx = Object.keys(x);
    return kx.length === Object.keys(y).length && kx.every((k) => x[k] === y[k]);
  }
  return false;
}
