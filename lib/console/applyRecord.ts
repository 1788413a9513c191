/**
 * The apply history's records (GET /api/applies): who applied what, when, and how it went, with the
 * files before and after, so a user can read any past apply as a diff and load its files back into a
 * draft (a rollback that is reviewed and applied like any edit). An apply to the local mesh writes the
 * mesh directory and the proxies take it; an apply to a cluster (Kubernetes mode) is a server-side apply
 * of the draft's objects, and its "before" is the cluster's objects as the draft started from them.
 * Shared by the server (server/console/ApplyHistory.ts) and the console (HistoryDialog).
 */
import { z } from 'zod';
import { SyncTrigger } from '../gitops/autoSync';
import { DraftDoc } from './draftDoc';

/** How the proxies stood once an apply ended: counts, and each proxy left out of sync with its error. */
export const AppliedProxies = z.strictObject({
  total: z.number().int().nonnegative(),
  inSync: z.number().int().nonnegative(),
  /** Proxies not in sync when the apply answered, with the push's error when there was one. */
  notInSync: z.array(z.strictObject({ id: z.string(), phase: z.string(), error: z.string().optional() })),
});
export type AppliedProxies = z.infer<typeof AppliedProxies>;

/** One object of a cluster apply: what was done to it, whether the write happened, and the API server's refusal. */
export const AppliedObject = z.strictObject({
  /** `Kind/namespace/name`. */
  key: z.string(),
  /** create, update, unchanged, delete, orphan, conflict, error or skipped (server/kube/clusterApply.ts). */
  action: z.string(),
  done: z.boolean(),
  error: z.string().optional(),
});
export type AppliedObject = z.infer<typeof AppliedObject>;

/** Actions that write to the cluster (the others leave the object as it is). */
const WRITES = new Set(['create', 'update', 'delete']);

/** One apply as the history lists it (no file contents). */
export const ApplySummary = z.strictObject({
  /** Where it went; absent means the local mesh (records kept before cluster applies were). */
  target: z.enum(['local-mesh', 'cluster']).optional(),
  /** Increases by one per apply; never reused, also after older records are pruned. */
  id: z.number().int().positive(),
  /** When the files were written (ISO 8601). */
  at: z.string(),
  /** The signed-in user who applied (ConsoleIdentity.user). */
  user: z.string(),
  /** The draft that was applied (`main` or a named draft's id). */
  draft: z.string(),
  /** The draft revision that was applied. */
  revision: z.number().int().nonnegative(),
  /** Files written and deleted (mesh-directory-relative; the layout file included when it changed). */
  applied: z.array(z.string()),
  deleted: z.array(z.string()),
  /** Absent when the control plane could not reload the files (then `error` says why). */
  proxies: AppliedProxies.optional(),
  /** The proxies were still being configured when the apply stopped waiting. */
  timedOut: z.boolean().optional(),
  /** What went wrong: the reload after the files were written, or a write (the files written stay written). */
  error: z.string().optional(),
  /** Writing the mesh directory failed partway: `applied`/`deleted` were done, and "after" is the directory then. */
  writeFailed: z.boolean().optional(),
  /** Cluster: every object of the draft and what the apply did with it. */
  objects: z.array(AppliedObject).optional(),
  /** Cluster: the apply took over fields other managers owned / deleted what the draft removed. */
  force: z.boolean().optional(),
  prune: z.boolean().optional(),
  /**
   * Cluster: the objects changed in the cluster since the draft started whose change this apply undid,
   * with Overwrite chosen (lib/console/clusterDrift.ts), as `Kind/namespace/name`.
   */
  overwrote: z.array(z.string()).optional(),
  /** A sync from Git (lib/gitops/autoSync.ts): the base branch's commit written, and why. */
  git: z.strictObject({ commit: z.string(), trigger: SyncTrigger }).optional(),
  /**
   * A step of a progressive rollout (lib/rollout/rollout.ts), or its rollback: which rollout, the step's
   * index in its steps (absent for the rollback) and the canary's share it set, in percent.
   */
  rollout: z
    .strictObject({
      id: z.string(),
      step: z.number().int().nonnegative().optional(),
      of: z.number().int().positive(),
      percent: z.number(),
      action: z.enum(['step', 'rollback']),
    })
    .optional(),
});
export type ApplySummary = z.infer<typeof ApplySummary>;

/** One apply with the mesh directory as it was before and after it (GET /api/applies/<id>). */
export const ApplyRecord = ApplySummary.extend({
  before: DraftDoc,
  after: DraftDoc,
});
export type ApplyRecord = z.infer<typeof ApplyRecord>;

/** GET /api/applies: newest first. */
export const ApplyList = z.strictObject({ applies: z.array(ApplySummary) });
export type ApplyList = z.infer<typeof ApplyList>;

/** How an apply ended, in a word and a tone, for the history's list. */
export function applyOutcome(s: ApplySummary): { tone: 'ok' | 'busy' | 'bad'; text: string } {
  if (s.target === 'cluster') return clusterOutcome(s.objects ?? []);
  if (s.writeFailed) return { tone: 'bad', text: 'write failed partway' };
  if (s.error !== undefined) return { tone: 'bad', text: 'reload failed' };
  const p = s.proxies;
  if (!p) return { tone: 'bad', text: 'no proxy state' };
  if (p.total === 0) return { tone: 'ok', text: 'no proxies' };
  const failed = p.notInSync.filter((x) => x.error !== undefined).length;
  if (failed > 0) return { tone: 'bad', text: `${failed} of ${p.total} failed` };
  if (p.inSync < p.total)
    return {
      tone: s.timedOut ? 'busy' : 'bad',
      text: `${p.total - p.inSync} of ${p.total} not in sync${s.timedOut ? ' yet' : ''}`,
    };
  return { tone: 'ok', text: `${p.total} in sync` };
}

/** A cluster apply's outcome: the objects written, or how many of those it meant to write failed. */
function clusterOutcome(objects: readonly AppliedObject[]): { tone: 'ok' | 'bad'; text: string } {
  const writes = objects.filter((o) => WRITES.has(o.action));
  const failed = writes.filter((o) => !o.done).length;
  const n = (k: number) => `${k} object${k === 1 ? '' : 's'}`;
  if (failed > 0) return { tone: 'bad', text: `${failed} of ${n(writes.length)} failed` };
  return {
    tone: 'ok',
    text: writes.length ? `${n(writes.length)} applied to the cluster` : 'nothing to apply',
  };
}

/** "2 files changed", "1 file deleted", ... for the history's list. */
export function applyFilesText(s: Pick<ApplySummary, 'applied' | 'deleted'>): string {
  const n = (k: number, what: string) => `${k} file${k === 1 ? '' : 's'} ${what}`;
  const parts = [];
  if (s.applied.length) parts.push(n(s.applied.length, 'written'));
  if (s.deleted.length) parts.push(n(s.deleted.length, 'deleted'));
  return parts.length ? parts.join(', ') : 'no file changed';
}
