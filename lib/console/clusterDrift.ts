/**
 * "Changed in the cluster since this draft started" (Kubernetes mode): a draft starts from the cluster's
 * mesh objects (its base); meanwhile kubectl, a GitOps tool or another console may change them. The
 * console applies the whole draft with server-side apply as one field manager, so applying a draft that
 * still holds an object as it was would quietly revert that change (and Prune would delete an object
 * someone created meanwhile). An object counts when the cluster's version differs from the base's and
 * from the draft's: the changes the draft already holds (its own applied edits) do not count. Shared by
 * the server (GET /api/draft/disk, the apply gate) and the console. Pure.
 */
import { z } from 'zod';
import { type FileMap, type ManifestObject, type ParseCache, parseFiles } from '../gitops/manifestObjects';
import { CLUSTER_FILE } from '../kube/clusterDraftFiles';
import { objectDiff } from '../kube/objectDiff';
import { jsonEqual } from '../util/jsonEqual';

/** One mesh object the cluster changed since the draft's base that the draft does not hold as the cluster does. */
export const ClusterChange = z.strictObject({
  /** `Kind/namespace/name`. */
  key: z.string(),
  kind: z.string(),
  namespace: z.string(),
  name: z.string(),
  /** What the cluster did to it since the base. */
  change: z.enum(['added', 'modified', 'deleted']),
  /** The fields the cluster changed (for `modified`), at most 20. */
  fields: z.array(z.string()),
  /**
   * Whether the draft changed it too (then a rebase asks which side wins); otherwise applying the draft
   * reverts the cluster's change, or with Prune deletes an object the cluster gained.
   */
  draftChanged: z.boolean(),
});
export type ClusterChange = z.infer<typeof ClusterChange>;

const MAX_FIELDS = 20;

/**
 * The objects of `kinds` the cluster changed since `base` that `draft` does not hold as the cluster
 * does, sorted by key. An object defined twice on a side is judged by its first definition, as the
 * rebase does. Files that cannot be parsed contribute no objects.
 */
export function clusterChanges(
  base: FileMap,
  draft: FileMap,
  cluster: FileMap,
  kinds: readonly string[],
  cache: ParseCache = new Map(),
): ClusterChange[] {
  const wanted = new Set(kinds);
  const [B, D, C] = [base, draft, cluster].map((files) => firstByKey(files, wanted, cache)) as [
    Map<string, ManifestObject>,
    Map<string, ManifestObject>,
    Map<string, ManifestObject>,
  ];
  const out: ClusterChange[] = [];
  for (const key of [...new Set([...B.keys(), ...C.keys()])].sort()) {
    const b = B.get(key);
    const c = C.get(key);
    if (same(b, c) || same(c, D.get(key))) continue;
    const o = (c ?? b)!;
    out.push({
      key,
      kind: o.kind,
      namespace: o.namespace,
      name: o.name,
      change: !b ? 'added' : !c ? 'deleted' : 'modified',
      fields:
        b && c
          ? objectDiff(b.value, c.value)
              .slice(0, MAX_FIELDS)
              .map((f) => f.path)
          : [],
      draftChanged: !same(b, D.get(key)),
    });
  }
  return out;
}

/**
 * The changes an apply of the draft would undo: every modified or deleted object, and an object the
 * cluster gained only with Prune (without it an object the draft lacks is left alone).
 */
export function changesUndoneBy(changes: readonly ClusterChange[], prune: boolean): ClusterChange[] {
  return changes.filter((c) => c.change !== 'added' || prune);
}

/** What applying the draft as it is does to one change, for the console. */
export function clusterChangeConsequence(c: ClusterChange): string {
  if (c.change === 'added') return 'not in your draft: Prune deletes it if Meshdeck applied it';
  if (c.draftChanged) return 'your draft changes it too: applying writes your version over it';
  return c.change === 'deleted' ? 'applying the draft creates it again' : 'applying the draft reverts it';
}

/**
 * A draft document without the mirror's `<namespace>/cluster.yaml` files (Services, Pods and
 * EndpointSlices: never applied from the console, and megabytes in a large cluster).
 */
export function meshFilesOnly<T extends { files: Record<string, string> }>(doc: T): T {
  return {
    ...doc,
    files: Object.fromEntries(Object.entries(doc.files).filter(([f]) => !f.endsWith(`/${CLUSTER_FILE}`))),
  };
}

/** `Route default/r1 (modified in the cluster: spec.destination)`, for messages. */
export function clusterChangeLabel(c: ClusterChange): string {
  const what =
    c.change === 'modified' && c.fields.length
      ? `modified in the cluster: ${c.fields.slice(0, 3).join(', ')}${c.fields.length > 3 ? ', …' : ''}`
      : `${c.change} in the cluster`;
  return `${c.kind} ${c.namespace}/${c.name} (${what})`;
}

function firstByKey(files: FileMap, kinds: Set<string>, cache: ParseCache): Map<string, ManifestObject> {
  // Only files that name one of the kinds are parsed: a large cluster's mirror holds megabytes of
  // Services, Pods and EndpointSlices (`cluster.yaml`) that would cost seconds of YAML parsing.
  const names = new RegExp(`\\bkind["']?\\s*:\\s*["']?(?:${[...kinds].map(escapeRegExp).join('|')})\\b`);
  const relevant = Object.fromEntries(Object.entries(files).filter(([, text]) => names.test(text)));
  const out = new Map<string, ManifestObject>();
  for (const [key, list] of parseFiles(relevant, cache).byKey) {
    const o = list[0]!;
    if (kinds.has(o.kind)) out.set(key, o);
  }
  return out;
}

function same(a: ManifestObject | undefined, b: ManifestObject | undefined): boolean {
  if (!a || !b) return a === b;
  return jsonEqual(a.value, b.value);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
