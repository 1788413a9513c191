/**
 * Sync from Git: what runs follows the GitOps base branch, as Argo CD's automated sync policy does. After
 * each comparison of what runs with the base branch's tip (lib/gitops/liveSync.ts) the server decides
 * here whether to write Git's version: a new commit is synced once; with `selfHeal` an object changed
 * outside Git is put back; with `prune` objects running but not in Git are removed. Unlike Argo CD a
 * commit the engine finds errors in is never synced: it is held with its diagnostics and the last good
 * version keeps running. A commit whose sync failed is not tried again until a new commit arrives (Argo
 * CD's rule too), so a broken commit cannot make the server write in a loop. Pure; shared by the server
 * (server/gitops/GitAutoSync.ts) and the console's "What runs vs. Git" dialog.
 */
import { z } from 'zod';
import type { LiveSync, SyncEntry } from './liveSync';

/** The sync policy of the GitOps repository (its config's `autoSync`; absent: no automated sync). */
export const AutoSyncPolicy = z.strictObject({
  /**
   * `false`: the automated sync is off but its settings are kept (Argo CD's `automated.enabled`), as the
   * console turns it off; absent or `true`: on.
   */
  enabled: z.boolean().optional(),
  /** Remove what runs but is not in Git (Argo CD's prune); without it such objects are left running. */
  prune: z.boolean().default(false),
  /** Put back what was changed outside Git even when Git did not move (Argo CD's selfHeal). */
  selfHeal: z.boolean().default(false),
  /**
   * Kubernetes mode: the identity the automated sync impersonates, so Kubernetes RBAC decides what it may
   * write (default `meshdeck:gitops-sync`, a user bound to nothing until an operator binds it).
   */
  as: z
    .strictObject({
      user: z.string().min(1).max(256),
      groups: z.array(z.string().min(1).max(256)).max(32).default([]),
    })
    .optional(),
});
export type AutoSyncPolicy = z.infer<typeof AutoSyncPolicy>;

/** Whether a policy syncs automatically: present and not turned off (`enabled: false`). */
export function isAutoSyncOn(p: AutoSyncPolicy | undefined): p is AutoSyncPolicy {
  return p !== undefined && p.enabled !== false;
}

/** What the console sets (PUT /api/gitops/sync/policy): prune and self-heal, or null to turn it off. */
export const AutoSyncSetting = z.strictObject({ prune: z.boolean(), selfHeal: z.boolean() });
export type AutoSyncSetting = z.infer<typeof AutoSyncSetting>;

/** The body of PUT /api/gitops/sync/policy. */
export const SyncPolicyChange = z.strictObject({ autoSync: AutoSyncSetting.nullable() });
export type SyncPolicyChange = z.infer<typeof SyncPolicyChange>;

/**
 * The policy after the console's change: `null` turns it off keeping its settings and identity
 * (`enabled: false`; nothing to keep: still no policy), a setting turns it on with that prune and self-heal.
 * The `as` identity is never the console's to change: it stays as the config has it.
 */
export function changedPolicy(
  current: AutoSyncPolicy | undefined,
  next: AutoSyncSetting | null,
): AutoSyncPolicy | undefined {
  if (next === null) return current ? { ...current, enabled: false } : undefined;
  return { prune: next.prune, selfHeal: next.selfHeal, ...(current?.as ? { as: current.as } : {}) };
}

/** Whether two policies are the same setting (an absent `enabled` is `true`; the order of `as.groups` aside). */
export function samePolicy(a: AutoSyncPolicy | undefined, b: AutoSyncPolicy | undefined): boolean {
  const norm = (p: AutoSyncPolicy | undefined) =>
    p
      ? JSON.stringify([
          isAutoSyncOn(p),
          p.prune,
          p.selfHeal,
          p.as ? [p.as.user, [...p.as.groups].sort()] : null,
        ])
      : 'none';
  return norm(a) === norm(b);
}

/** The policy in a few words, for the log: `off`, `on`, `on (prune, self-heal)`. */
export function policyText(p: AutoSyncPolicy | undefined): string {
  if (!isAutoSyncOn(p)) return 'off';
  const opts = [p.prune ? 'prune' : '', p.selfHeal ? 'self-heal' : ''].filter(Boolean);
  return opts.length > 0 ? `on (${opts.join(', ')})` : 'on';
}

/** The user an automated sync acts as in Kubernetes mode when the policy names none. */
export const DEFAULT_SYNC_USER = 'meshdeck:gitops-sync';

/** Why a sync ran (or was asked for). */
export const SyncTrigger = z.enum(['new-commit', 'drift', 'manual']);
export type SyncTrigger = z.infer<typeof SyncTrigger>;

/** One sync of a commit, or its refusal, as the server keeps the last one. */
export const SyncAttempt = z.strictObject({
  /** The base branch's commit synced (full id). */
  commit: z.string(),
  /** When it was decided (ISO 8601). */
  at: z.string(),
  trigger: SyncTrigger,
  /** Who: the signed-in user for a manual sync, else the automated sync. */
  user: z.string(),
  /** `synced`: written (or nothing needed writing); `held`: the commit has errors, nothing written; `failed`: the write failed. */
  result: z.enum(['synced', 'held', 'failed']),
  /** What went wrong, for `held` and `failed`. */
  error: z.string().optional(),
  /** `held`: the commit's error diagnostics (at most 20), as `where: message`. */
  diagnostics: z.array(z.string()).optional(),
  /** Files written and deleted (local mesh), or objects written (cluster), as the apply history lists them. */
  applied: z.array(z.string()),
  deleted: z.array(z.string()),
  prune: z.boolean(),
  /** The apply history's record of this sync, when it wrote something. */
  historyId: z.number().int().positive().optional(),
  /**
   * Set by the first comparison after a sync: the objects still out of sync then (what the sync could not
   * settle, e.g. an object another tool keeps changing, or one prune may not delete). Self-heal does not
   * sync the same commit again for these alone.
   */
  left: z.array(z.string()).optional(),
});
export type SyncAttempt = z.infer<typeof SyncAttempt>;

/** What the comparison says, as the decision needs it. */
export interface SyncComparison extends Pick<LiveSync, 'entries' | 'unreadable'> {
  commit: string;
  /** The fetch failed: the comparison is against the last tip the server knew. */
  fetchError?: unknown;
}

export type SyncDecision =
  | { action: 'none'; why: 'synced' | 'fetch-failed' }
  | { action: 'sync'; trigger: 'new-commit' | 'drift'; keys: string[] }
  | {
      action: 'hold';
      why: 'unreadable' | 'failed-before' | 'held-before' | 'no-self-heal' | 'unsettled';
      keys: string[];
    };

/** The objects a sync would change: modified and missing ones, and with `prune` the extra ones. */
export function outOfSyncKeys(entries: readonly SyncEntry[], prune: boolean): string[] {
  return entries
    .filter((e) => e.state === 'modified' || e.state === 'missing' || (prune && e.state === 'extra'))
    .map((e) => e.key);
}

/**
 * Whether to sync now (see the module comment). `last` is the last attempt of any commit; a fetch that
 * failed decides nothing (the tip may have moved), and an unreadable file on either side holds the sync
 * (its objects are unknown: writing could remove what it holds).
 */
export function syncDecision(
  cmp: SyncComparison,
  policy: Pick<AutoSyncPolicy, 'prune' | 'selfHeal'>,
  last: SyncAttempt | undefined,
): SyncDecision {
  if (cmp.fetchError !== undefined) return { action: 'none', why: 'fetch-failed' };
  const keys = outOfSyncKeys(cmp.entries, policy.prune);
  if (keys.length === 0) return { action: 'none', why: 'synced' };
  if (cmp.unreadable.length > 0) return { action: 'hold', why: 'unreadable', keys };
  if (!last || last.commit !== cmp.commit) return { action: 'sync', trigger: 'new-commit', keys };
  if (last.result === 'held') return { action: 'hold', why: 'held-before', keys };
  if (last.result === 'failed') return { action: 'hold', why: 'failed-before', keys };
  if (!policy.selfHeal) return { action: 'hold', why: 'no-self-heal', keys };
  const settled = new Set(last.left ?? []);
  const drifted = keys.filter((k) => !settled.has(k));
  return drifted.length > 0
    ? { action: 'sync', trigger: 'drift', keys: drifted }
    : { action: 'hold', why: 'unsettled', keys };
}

/** One line for a decision that holds a sync, for the log and the dialog. */
export function holdReason(d: Extract<SyncDecision, { action: 'hold' }>, commit: string): string {
  const c = commit.slice(0, 7);
  const n = `${d.keys.length} object${d.keys.length === 1 ? '' : 's'} out of sync`;
  switch (d.why) {
    case 'unreadable':
      return `${n}, not synced: a file cannot be read as YAML, so its objects are unknown`;
    case 'held-before':
      return `${n}: ${c} has errors and is held until a new commit fixes them`;
    case 'failed-before':
      return `${n}: syncing ${c} failed and is not retried until a new commit (or Sync now)`;
    case 'no-self-heal':
      return `${n}: changed outside Git since ${c} was synced (self-heal is off)`;
    case 'unsettled':
      return `${n}: still different after ${c} was synced (another writer, or nothing Meshdeck may delete)`;
  }
}
