/**
 * What changed between two versions of a mesh directory (an apply's before and after, or an apply
 * against the draft being edited): one diff section per file that differs, in path order, the layout
 * file compared as the text it is written as. It is the Preview's ConfigDiff shape, so ConfigDiffView
 * shows it.
 */
import type { ConfigDiff, DiffSection } from './configDiff';
import { type DraftDoc, formatLayout, LAYOUT_FILE } from './draftDoc';
import { diffCounts, diffLines } from './lineDiff';

/** How a file changed. */
export type FileChange = 'added' | 'deleted' | 'modified';

/** A file's section of the diff, with how the file changed. */
export interface FileDiffSection extends DiffSection {
  change: FileChange;
}

/** The files that differ between `before` and `after`, as a ConfigDiff whose section kinds are paths. */
export interface FilesDiff extends ConfigDiff {
  sections: FileDiffSection[];
}

function lines(text: string): string[] {
  if (text === '') return [];
  return (text.endsWith('\n') ? text.slice(0, -1) : text).split('\n');
}

/** Texts of a draft's files plus its layout file (when it has positions), keyed by path. */
function texts(doc: DraftDoc): Map<string, string> {
  const m = new Map(Object.entries(doc.files));
  if (Object.keys(doc.layout).length > 0) m.set(LAYOUT_FILE, formatLayout(doc.layout));
  return m;
}

/** The paths (the layout file included) whose text differs between `a` and `b`, sorted. */
export function changedPaths(a: DraftDoc, b: DraftDoc): string[] {
  const x = texts(a);
  const y = texts(b);
  return [...new Set([...x.keys(), ...y.keys()])].filter((p) => x.get(p) !== y.get(p)).sort();
}

/** The per-file diff from `before` to `after`; files with the same text are left out. */
export function filesDiff(before: DraftDoc, after: DraftDoc): FilesDiff {
  const a = texts(before);
  const b = texts(after);
  const paths = [...new Set([...a.keys(), ...b.keys()])].sort();
  const sections: FileDiffSection[] = [];
  for (const p of paths) {
    const x = a.get(p);
    const y = b.get(p);
    if (x === y) continue;
    const ops = diffLines(lines(x ?? ''), lines(y ?? ''));
    const change: FileChange = x === undefined ? 'added' : y === undefined ? 'deleted' : 'modified';
    sections.push({ kind: p, change, ops, ...diffCounts(ops) });
  }
  return { sections, same: sections.length === 0 };
}
