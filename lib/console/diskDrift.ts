/**
 * "The mesh directory changed on disk while you edited" (a `git pull`, a teammate's apply, an editor):
 * the control plane follows the files at once, but a draft stays on the files it started from (its
 * base). GET /api/draft/disk says whether the disk moved away from the base and with which files, so the
 * console can show it before Apply would overwrite it; POST /api/draft/rebase carries the draft's own
 * changes over onto the disk's files object by object (lib/gitops/rebaseDraft.ts), conflicts settled by
 * the user's choices. Shared by the server (server/console/diskDrift.ts) and the console.
 */
import { z } from 'zod';
import { ClusterChange } from './clusterDrift';
import { DraftDoc } from './draftDoc';
import { changedPaths } from './filesDiff';

/** GET /api/draft/disk?draft=<id>: the draft's base and the mesh directory now. */
export const DiskState = z.strictObject({
  /** Content hash of the files the draft started from (DraftState.baseHash). */
  baseHash: z.string(),
  /** Content hash of the mesh directory now (same function: equal hashes, same files). */
  diskHash: z.string(),
  /** The mesh directory's files and layout now. */
  disk: DraftDoc,
  /** The files the draft started from; absent when the server has not kept them (an older draft). */
  base: DraftDoc.optional(),
});
export type DiskState = z.infer<typeof DiskState>;

/**
 * GET /api/draft/disk?summary=1: what the toolbar needs on every reload of the directory, without the
 * files (the dialog reads those when it opens).
 */
export const DiskSummary = z.strictObject({
  baseHash: z.string(),
  diskHash: z.string(),
  /** Files changed on disk since the base (empty when the base is not kept). */
  changed: z.array(z.string()),
  /** Whether the base files are kept (a rebase needs them). */
  hasBase: z.boolean(),
  /**
   * Kubernetes mode: the mesh objects the cluster changed since the base that the draft does not hold
   * as the cluster does (lib/console/clusterDrift.ts). There the mirror's Services, Pods and
   * EndpointSlices move all the time, so these objects, not the hashes, say whether the draft is behind.
   */
  cluster: z.array(ClusterChange).optional(),
});
export type DiskSummary = z.infer<typeof DiskSummary>;

/** The summary of a disk state. */
export function diskSummary(s: DiskState): DiskSummary {
  return {
    baseHash: s.baseHash,
    diskHash: s.diskHash,
    changed: s.base ? changedPaths(s.base, s.disk) : [],
    hasBase: s.base !== undefined,
  };
}

/** How one conflict is settled: the draft's side, the disk's side, or a text the user wrote. */
export const DiskConflictChoice = z.union([
  z.literal('ours'),
  z.literal('theirs'),
  z.strictObject({ text: z.string().max(5_000_000) }),
]);
export type DiskConflictChoice = z.infer<typeof DiskConflictChoice>;

/** The body of POST /api/draft/rebase?draft=<id>. */
export const RebaseOnDiskBody = z.strictObject({
  /** The draft revision the user saw; another one is refused (409 with the current state). */
  revision: z.number().int().nonnegative(),
  /** Conflict key (RebaseConflict.key) -> choice; a conflict without one is answered back (409). */
  choices: z.record(z.string(), DiskConflictChoice).optional(),
});
export type RebaseOnDiskBody = z.infer<typeof RebaseOnDiskBody>;

/** Whether the disk moved away from the draft's base. */
export function diskMoved(s: Pick<DiskState, 'baseHash' | 'diskHash'>): boolean {
  return s.baseHash !== s.diskHash;
}

/**
 * Whether the console should say the draft is behind: in Kubernetes mode (the summary has `cluster`),
 * when a mesh object changed in the cluster; otherwise when the directory moved at all.
 */
export function draftBehind(s: DiskSummary): boolean {
  return s.cluster ? s.cluster.length > 0 : diskMoved(s);
}
