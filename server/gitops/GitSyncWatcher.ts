/**
 * Compares what runs with the GitOps base branch every few minutes (GitOpsService.liveSync), so the
 * metrics can say when the mesh drifts from Git (`meshdeck_gitops_objects{state}`) without anyone
 * having the console open: Argo CD's sync status as a series to alert on, and the trigger of the
 * automated sync from Git (GitAutoSync). One comparison at a time; a failure is kept (and logged once per
 * distinct message) and the next run tries again.
 */
import { readMeshDirContent } from '../console/meshDirFiles';
import type { SyncState } from '@/lib/gitops/liveSync';
import type { GitAutoSync } from './GitAutoSync';
import type { GitOpsService, LiveSyncStatus } from './GitOpsService';

/** The last comparison, for the metrics. */
export interface GitSyncSnapshot {
  /** When it ran (ms since the epoch). */
  at: number;
  /** It compared (the fetch may still have failed: `fetchFailed`). */
  ok: boolean;
  counts?: Record<SyncState, number>;
  /** Files one side could not read. */
  unreadable?: number;
  /** The fetch failed: compared with the last tip the clone knew. */
  fetchFailed?: boolean;
  commit?: string;
  error?: string;
}

export interface GitSyncWatcherOptions {
  gitops: Promise<GitOpsService>;
  /** The mesh directory the console serves (the cluster mirror in Kubernetes mode). */
  meshDir: string;
  /** The kinds to compare, read at each run (Kubernetes mode: the mesh kinds); undefined: all. */
  kinds?: () => readonly string[] | undefined;
  everyMs: number;
  /** The first comparison (default 10 s after start: the repository is being opened). */
  firstAfterMs?: number;
  logger?: { warn(m: string): void };
  /** Sync from Git: each comparison is offered to it, and one that synced is followed by another. */
  autoSync?: Pick<GitAutoSync, 'consider'>;
}

/** See the module comment. */
export class GitSyncWatcher {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  /** The comparison compareAfter asked for, waiting for the one in progress. */
  private again: Promise<void> | undefined;
  private stopped = false;
  private lastError: string | undefined;
  /** The last successful comparison in full, with when it ran (ms since the epoch). */
  private full: { at: number; status: LiveSyncStatus } | undefined;
  last: GitSyncSnapshot | undefined;

  constructor(private readonly o: GitSyncWatcherOptions) {}

  /** Starts the periodic comparison. */
  start(): void {
    this.schedule(this.o.firstAfterMs ?? 10_000);
  }

  /** Stops it and waits for a comparison in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.again;
    await this.running;
  }

  /** Compares now (unless a comparison is running: then waits for that one). */
  compareNow(): Promise<void> {
    this.running ??= this.compare().finally(() => (this.running = undefined));
    return this.running;
  }

  /**
   * Compares once more after the comparison in progress, if any (one that started before a change of the
   * sync policy may have decided with the old one); at most one waits, so repeated calls cost one run.
   */
  compareAfter(): Promise<void> {
    if (!this.running) return this.compareNow();
    this.again ??= this.running.then(() => {
      this.again = undefined;
      return this.stopped ? undefined : this.compareNow();
    });
    return this.again;
  }

  /** The last comparison if it is at most `maxAgeMs` old (GET /api/gitops/sync answers it). */
  fresh(maxAgeMs: number): LiveSyncStatus | undefined {
    return this.full && Date.now() - this.full.at <= maxAgeMs ? this.full.status : undefined;
  }

  /** Takes a comparison made elsewhere (the route's, on request) as the latest. */
  record(status: LiveSyncStatus, at = Date.now()): void {
    this.full = { at, status };
    this.last = {
      at,
      ok: true,
      counts: status.counts,
      unreadable: status.unreadable.length,
      fetchFailed: status.fetchError !== undefined,
      commit: status.commit,
    };
    this.lastError = undefined;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.compareNow().finally(() => this.schedule(this.o.everyMs));
    }, ms);
    this.timer.unref();
  }

  private async compare(): Promise<void> {
    const at = Date.now();
    try {
      const gitops = await this.o.gitops;
      const { files } = await readMeshDirContent(this.o.meshDir);
      const r = await gitops.liveSync(files, this.o.kinds?.());
      if (!r.ok) throw new Error(r.body.error);
      this.record(r.body, at);
      const autoSync = this.o.autoSync;
      if (autoSync && (await autoSync.consider(r.body))) {
        // What the sync left out of sync, for the metrics and for the next decision (GitAutoSync.consider).
        const again = await gitops.liveSync(
          (await readMeshDirContent(this.o.meshDir)).files,
          this.o.kinds?.(),
        );
        if (!again.ok) throw new Error(again.body.error);
        this.record(again.body);
        await autoSync.consider(again.body);
      }
    } catch (e) {
      const error = (e as Error).message;
      this.last = { at, ok: false, error };
      if (error !== this.lastError) this.o.logger?.warn(`meshdeck: comparing with Git failed: ${error}`);
      this.lastError = error;
    }
  }
}
