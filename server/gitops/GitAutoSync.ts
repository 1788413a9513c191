/**
 * Sync from Git (lib/gitops/autoSync.ts): after each comparison of what runs with the GitOps base branch
 * (GitSyncWatcher), writes the base branch's tip when the repository's `autoSync` policy says so, and
 * "Sync now" from the console (POST /api/gitops/sync) whatever the policy. Every sync passes the same gate
 * as Apply: a commit the engine finds errors in is held, nothing is written, and its diagnostics are kept
 * for the console. The last attempt is kept in `<stateDir>/gitops/sync.json`, so a restart does not sync a
 * held or failed commit again. One sync at a time; never throws. The console turns the policy on and off
 * (setPolicy: config.json rewritten, read at the next comparison); who did it last is kept in
 * `<stateDir>/gitops/sync-policy.json`.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import {
  AutoSyncPolicy,
  type AutoSyncSetting,
  DEFAULT_SYNC_USER,
  holdReason,
  isAutoSyncOn,
  outOfSyncKeys,
  policyText,
  samePolicy,
  SyncAttempt,
  type SyncDecision,
  syncDecision,
  type SyncTrigger,
} from '@/lib/gitops/autoSync';
import { type Diagnostic, objectKey } from '@/lib/model/diagnostic';
import { writeFileAtomic } from '../console/meshDirFiles';
import type { GitOpsService, LiveSyncStatus } from './GitOpsService';

/** Where a sync writes (the local mesh's directory; a cluster later) and what it checks first. */
export interface SyncTarget {
  kind: 'local-mesh' | 'cluster';
  /** The errors that keep these files from running (the same check as Apply's). */
  errors(files: Record<string, string>): Diagnostic[] | Promise<Diagnostic[]>;
  /**
   * Makes what runs Git's `files` (with `prune`, also removing what Git does not have). Never throws:
   * `error` says what failed, with `applied`/`deleted` what was written anyway.
   */
  apply(
    files: Record<string, string>,
    o: { prune: boolean; actor: SyncActor; commit: string; trigger: SyncTrigger },
  ): Promise<{ applied: string[]; deleted: string[]; error?: string; historyId?: number }>;
}

/** What the console shows of the sync: the policy, the last attempt and the last decision. */
export interface SyncView {
  /** The repository's policy; absent or `enabled: false`: automated sync is off (Sync now still works). */
  policy?: AutoSyncPolicy;
  /** Who last changed the policy from the console, and when (ISO 8601), while the config still says so. */
  policyChangedBy?: string;
  policyChangedAt?: string;
  /** Why the console may not change the policy here (where it is configured instead). */
  policyReadOnly?: string;
  /** No target here (the local mesh is not running in this process): the sync cannot run in this server. */
  unavailable?: string;
  /** A push webhook secret is configured: pushes are compared at once, not only every few minutes. */
  webhook?: boolean;
  last?: SyncAttempt;
  /** Why the last comparison did not sync, when it found something out of sync. */
  waiting?: string;
}

export interface GitAutoSyncOptions {
  gitops: Promise<GitOpsService>;
  /** `<stateDir>/gitops`: where the last attempt is kept. */
  dir: string;
  /** Where syncs write; undefined when this server cannot (then only the comparison runs). */
  target: () => SyncTarget | undefined;
  /**
   * Whether this server runs the automated sync now (Kubernetes mode: only the replica holding the Lease,
   * so two replicas never write the same commit); default always. Sync now runs on any replica.
   */
  automated?: () => boolean;
  /** Why `target` is undefined, for the console. */
  unavailable?: () => string | undefined;
  logger?: { info?(m: string): void; warn(m: string): void };
  /** Counts each sync by trigger and result (the metrics). */
  onSync?: (trigger: SyncTrigger, result: SyncAttempt['result']) => void;
  now?: () => Date;
}

/** Who a sync acts as: the policy's `as` (automated; Kubernetes RBAC decides) or the signed-in user. */
export interface SyncActor {
  user: string;
  groups: string[];
}

/** The last change of the policy from the console (`<stateDir>/gitops/sync-policy.json`). */
const PolicyChange = z.strictObject({
  by: z.string(),
  at: z.string(),
  /** The policy it set (absent: none), to tell whether the config still says so. */
  autoSync: AutoSyncPolicy.optional(),
});
type PolicyChange = z.infer<typeof PolicyChange>;

/** See the module comment. */
export class GitAutoSync {
  private last: SyncAttempt | undefined;
  private loaded: Promise<void> | undefined;
  private change: PolicyChange | undefined;
  private changeLoaded: Promise<void> | undefined;
  private waiting: string | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly now: () => Date;

  constructor(private readonly o: GitAutoSyncOptions) {
    this.now = o.now ?? (() => new Date());
  }

  private get file(): string {
    return path.join(this.o.dir, 'sync.json');
  }

  private get changeFile(): string {
    return path.join(this.o.dir, 'sync-policy.json');
  }

  /** The policy, the last attempt and why nothing is syncing (GET /api/gitops/sync). */
  async view(): Promise<SyncView> {
    await this.load();
    await this.loadChange();
    const policy = await this.policy();
    const unavailable = this.o.target() ? undefined : (this.o.unavailable?.() ?? 'no sync target here');
    const webhook = await this.o.gitops.then(
      (g) => g.config.webhook !== undefined,
      () => false,
    );
    const readOnly = await this.policyReadOnly();
    // A change the config no longer says (edited by hand since) is not shown as the policy's author.
    const change = this.change && samePolicy(this.change.autoSync, policy) ? this.change : undefined;
    return {
      ...(policy ? { policy } : {}),
      ...(change ? { policyChangedBy: change.by, policyChangedAt: change.at } : {}),
      ...(readOnly ? { policyReadOnly: readOnly } : {}),
      ...(webhook ? { webhook } : {}),
      ...(unavailable ? { unavailable } : {}),
      ...(this.last ? { last: this.last } : {}),
      ...(this.waiting ? { waiting: this.waiting } : {}),
    };
  }

  /**
   * Takes a comparison: the first after a sync notes what it left out of sync; then, with a policy, syncs
   * when syncDecision says so. True when it wrote something (compare again to see the result).
   */
  consider(status: LiveSyncStatus): Promise<boolean> {
    return this.exclusive(async () => {
      await this.load();
      const policy = await this.policy();
      const last = this.last;
      if (last && last.commit === status.commit && last.result === 'synced' && last.left === undefined) {
        this.last = { ...last, left: outOfSyncKeys(status.entries, last.prune) };
        await this.save();
      }
      if (!isAutoSyncOn(policy)) {
        this.waiting = undefined;
        return false;
      }
      const decision = syncDecision(status, policy, this.last);
      this.waiting = waitingText(decision, status.commit);
      if (decision.action !== 'sync') return false;
      if (this.o.automated && !this.o.automated()) {
        this.waiting = `${decision.keys.length} object${decision.keys.length === 1 ? '' : 's'} out of sync: the replica holding the Lease syncs them`;
        return false;
      }
      const actor = policy.as ?? { user: DEFAULT_SYNC_USER, groups: [] };
      const attempt = await this.sync(status.commit, decision.trigger, actor, policy.prune);
      return attempt !== undefined && attempt.applied.length + attempt.deleted.length > 0;
    });
  }

  /**
   * Turns the automated sync on with `next`'s prune and self-heal, or off (null), for `actor`: the
   * repository config rewritten (GitOpsService.setAutoSync) and read by the next comparison, no restart;
   * who and when kept for the console, one log line. 409 where this server may not change it
   * (policyReadOnly, or config.json refused the write). `changed` is false when the policy already was so.
   */
  async setPolicy(
    actor: SyncActor,
    next: AutoSyncSetting | null,
  ): Promise<{ policy: AutoSyncPolicy | undefined; changed: boolean } | { status: number; error: string }> {
    const readOnly = await this.policyReadOnly();
    if (readOnly) return { status: 409, error: readOnly };
    let gitops: GitOpsService;
    try {
      gitops = await this.o.gitops;
    } catch (e) {
      return { status: 503, error: `GitOps is unavailable: ${(e as Error).message}` };
    }
    let r: { before: AutoSyncPolicy | undefined; after: AutoSyncPolicy | undefined };
    try {
      r = await gitops.setAutoSync(next);
    } catch (e) {
      // By name: the class may come from another bundle than this one (the route's).
      if ((e as Error).name === 'ConfigNotWritable') return { status: 409, error: (e as Error).message };
      return { status: 500, error: `changing the sync policy failed: ${(e as Error).message}` };
    }
    if (samePolicy(r.before, r.after)) return { policy: r.after, changed: false };
    await this.loadChange();
    this.change = { by: actor.user, at: this.now().toISOString(), ...(r.after ? { autoSync: r.after } : {}) };
    try {
      await writeFileAtomic(this.changeFile, `${JSON.stringify(this.change, null, 2)}\n`, 0o600);
    } catch (e) {
      this.o.logger?.warn(`meshdeck: who changed the sync policy could not be kept: ${(e as Error).message}`);
    }
    this.o.logger?.info?.(
      `meshdeck: sync from Git policy changed by ${actor.user}: ${policyText(r.before)} -> ${policyText(r.after)}`,
    );
    // Off: nothing waits on the automated sync any more (the next comparison says the same).
    if (!isAutoSyncOn(r.after)) this.waiting = undefined;
    return { policy: r.after, changed: true };
  }

  /**
   * Why the console may not change the policy in this server, or undefined: Kubernetes mode on a replica
   * that does not hold the Lease (each replica reads its own state directory's config, and only the
   * holder's policy syncs), or a config.json that is not this server's to write (a mounted ConfigMap or
   * Secret, a read-only file).
   */
  async policyReadOnly(): Promise<string | undefined> {
    if (this.o.automated && !this.o.automated())
      return "this replica does not hold the Lease: the replica that does runs the automated sync with its own state directory's repository config; change the policy there";
    return this.o.gitops.then(
      (g) => g.policyWriteProblem(),
      () => undefined,
    );
  }

  /** Syncs the base branch's tip now (the console's Sync now), whatever the policy says. */
  syncNow(actor: SyncActor, prune: boolean): Promise<SyncAttempt | { error: string; status: number }> {
    return this.exclusive(async () => {
      await this.load();
      if (!this.o.target())
        return { status: 409, error: this.o.unavailable?.() ?? 'this server cannot sync from Git' };
      let commit: string;
      try {
        commit = await (await this.o.gitops).fetchTip();
      } catch (e) {
        return { status: 502, error: `fetching the base branch failed: ${(e as Error).message}` };
      }
      const attempt = await this.sync(commit, 'manual', actor, prune);
      return attempt ?? { status: 409, error: 'another apply is running; wait for it to finish' };
    });
  }

  /** Checks and writes one commit; undefined when it could not start (another apply held the lock). */
  private async sync(
    commit: string,
    trigger: SyncTrigger,
    actor: SyncActor,
    prune: boolean,
  ): Promise<SyncAttempt | undefined> {
    const target = this.o.target();
    if (!target) return undefined;
    // What every outcome of this attempt shares; nothing written until the target says otherwise.
    const base = {
      commit,
      at: this.now().toISOString(),
      trigger,
      user: actor.user,
      prune,
      applied: [] as string[],
      deleted: [] as string[],
    };
    const short = commit.slice(0, 7);
    let files: Record<string, string>;
    try {
      files = await (await this.o.gitops).filesAt(commit);
    } catch (e) {
      return this.finish({
        ...base,
        result: 'failed',
        error: `reading ${short} failed: ${(e as Error).message}`,
      });
    }
    let errors: Diagnostic[];
    try {
      errors = (await target.errors(files)).filter((d) => d.severity === 'error');
    } catch (e) {
      return this.finish({
        ...base,
        result: 'failed',
        error: `checking ${short} failed: ${(e as Error).message}`,
      });
    }
    if (errors.length > 0) {
      return this.finish({
        ...base,
        result: 'held',
        error: `${short} has ${errors.length} error${errors.length === 1 ? '' : 's'}: nothing was synced, what runs stays as it is`,
        diagnostics: errors.slice(0, 20).map(diagnosticLine),
      });
    }
    const r = await target.apply(files, { prune, actor, commit, trigger }).catch((e: unknown) => ({
      applied: [] as string[],
      deleted: [] as string[],
      error: `syncing ${short} failed: ${(e as Error).message}`,
      historyId: undefined,
    }));
    if (r.error === BUSY) return undefined;
    return this.finish({
      ...base,
      result: r.error ? 'failed' : 'synced',
      ...(r.error ? { error: r.error } : {}),
      applied: r.applied,
      deleted: r.deleted,
      ...(r.historyId !== undefined ? { historyId: r.historyId } : {}),
    });
  }

  private async finish(attempt: SyncAttempt): Promise<SyncAttempt> {
    this.last = attempt;
    this.waiting = undefined;
    const what = `${attempt.trigger === 'manual' ? 'sync' : 'automated sync'} of ${attempt.commit.slice(0, 7)}`;
    if (attempt.result === 'synced')
      this.o.logger?.info?.(
        `meshdeck: ${what}: ${attempt.applied.length} written, ${attempt.deleted.length} deleted`,
      );
    else this.o.logger?.warn(`meshdeck: ${what} ${attempt.result}: ${attempt.error ?? ''}`);
    this.o.onSync?.(attempt.trigger, attempt.result);
    await this.save();
    return attempt;
  }

  private async policy(): Promise<AutoSyncPolicy | undefined> {
    try {
      return (await this.o.gitops).config.autoSync;
    } catch {
      return undefined;
    }
  }

  private load(): Promise<void> {
    this.loaded ??= readFile(this.file, 'utf8').then(
      (text) => {
        const parsed = SyncAttempt.safeParse(safeJson(text));
        if (parsed.success) this.last = parsed.data;
        else this.o.logger?.warn(`meshdeck: ${this.file} is not a sync record; ignored`);
      },
      () => undefined,
    );
    return this.loaded;
  }

  private loadChange(): Promise<void> {
    this.changeLoaded ??= readFile(this.changeFile, 'utf8').then(
      (text) => {
        const parsed = PolicyChange.safeParse(safeJson(text));
        // A change setPolicy made meanwhile is newer than the file.
        if (parsed.success) this.change ??= parsed.data;
        else this.o.logger?.warn(`meshdeck: ${this.changeFile} is not a policy change record; ignored`);
      },
      () => undefined,
    );
    return this.changeLoaded;
  }

  private async save(): Promise<void> {
    try {
      await writeFileAtomic(this.file, `${JSON.stringify(this.last, null, 2)}\n`, 0o600);
    } catch (e) {
      this.o.logger?.warn(`meshdeck: the last sync could not be kept: ${(e as Error).message}`);
    }
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }
}

/** A target's answer when another apply holds the lock: nothing was tried, nothing is recorded. */
export const BUSY = 'busy';

function waitingText(d: SyncDecision, commit: string): string | undefined {
  return d.action === 'hold' ? holdReason(d, commit) : undefined;
}

function diagnosticLine(d: Diagnostic): string {
  const at = d.source ? ` (${d.source.file}:${d.source.line})` : '';
  return `${objectKey(d.object)}${d.path ? ` ${d.path}` : ''}${at}: ${d.message}`;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
