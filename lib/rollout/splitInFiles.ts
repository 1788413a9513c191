/**
 * A Target's `split` found in a mesh directory's YAML files, and its weights rewritten in place: only the
 * weight numbers' characters change, so comments, flow style and every other object of the file stay as
 * the user wrote them (a rollout step is a one-line diff in the apply history and in Git).
 */
import { isMap, isScalar, isSeq, parseAllDocuments } from 'yaml';
import type { ObjectRef } from './rollout';

/** Where a Target's split is: its file, and the split's entries as written. */
export interface SplitInFiles {
  file: string;
  entries: { serviceName: string; weight: number }[];
}

/** The Targets named `ref` in `files` that have a split; a file that does not parse is skipped. */
function findSplits(
  files: Readonly<Record<string, string>>,
  ref: ObjectRef,
): { file: string; split: unknown; weights: { range: [number, number]; value: unknown }[] }[] {
  const hits: ReturnType<typeof findSplits> = [];
  for (const [file, text] of Object.entries(files)) {
    if (!/\bTarget\b/.test(text)) continue;
    for (const doc of parseAllDocuments(text)) {
      if (!('contents' in doc) || doc.errors.length > 0 || !isMap(doc.contents)) continue;
      if (doc.get('kind') !== 'Target') continue;
      const js = doc.toJS() as {
        metadata?: { name?: unknown; namespace?: unknown };
        spec?: { split?: unknown };
      };
      if (js.metadata?.name !== ref.name || (js.metadata.namespace ?? 'default') !== ref.namespace) continue;
      const split = doc.getIn(['spec', 'split'], true);
      if (!isSeq(split)) continue;
      const weights = split.items.map((item) => {
        const w = isMap(item) ? item.get('weight', true) : undefined;
        return isScalar(w) && w.range
          ? { range: [w.range[0], w.range[1]] as [number, number], value: w.value }
          : { range: [-1, -1] as [number, number], value: undefined };
      });
      hits.push({ file, split: js.spec?.split, weights });
    }
  }
  return hits;
}

/** The split of Target `ref` as the files have it, or why it cannot be read. */
export function splitInFiles(
  files: Readonly<Record<string, string>>,
  ref: ObjectRef,
): SplitInFiles | { error: string } {
  const hits = findSplits(files, ref);
  const name = `Target ${ref.namespace}/${ref.name}`;
  if (hits.length === 0) return { error: `no file of the mesh has ${name} with a split` };
  if (hits.length > 1)
    return { error: `${name} is defined more than once (${hits.map((h) => h.file).join(', ')})` };
  const { file, split } = hits[0]!;
  const entries: SplitInFiles['entries'] = [];
  for (const e of split as unknown[]) {
    const o = e as { serviceName?: unknown; weight?: unknown } | null;
    if (
      !o ||
      typeof o.serviceName !== 'string' ||
      typeof o.weight !== 'number' ||
      !Number.isInteger(o.weight)
    )
      return { error: `${name} in ${file}: every split entry needs a serviceName and a whole-number weight` };
    entries.push({ serviceName: o.serviceName, weight: o.weight });
  }
  return { file, entries };
}

/** `files` with Target `ref`'s split weights set to `weights` (in the split's order), or why not. */
export function setSplitWeights(
  files: Readonly<Record<string, string>>,
  ref: ObjectRef,
  weights: readonly number[],
): { file: string; text: string } | { error: string } {
  const found = splitInFiles(files, ref);
  if ('error' in found) return found;
  if (found.entries.length !== weights.length)
    return {
      error: `Target ${ref.namespace}/${ref.name} has ${found.entries.length} split entries, not ${weights.length}`,
    };
  const hit = findSplits(files, ref)[0]!;
  let text = files[found.file]!;
  // From the end, so the earlier ranges stay where they are.
  const edits = hit.weights
    .map((w, i) => ({ ...w, to: weights[i]! }))
    .sort((a, b) => b.range[0] - a.range[0]);
  for (const e of edits) {
    if (e.range[0] < 0)
      return { error: `a weight of Target ${ref.namespace}/${ref.name} is not a plain number` };
    text = text.slice(0, e.range[0]) + String(e.to) + text.slice(e.range[1]);
  }
  return { file: found.file, text };
}
