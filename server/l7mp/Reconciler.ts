/**
 * Keeps many l7mp proxies running their desired configurations. Each proxy is reconciled on its own
 * (all in parallel, one reconcile at a time per proxy) by a ProxyReconciler; this class decides when:
 * on a desired change (coalesced: at once after a quiet period, else debounced), on a retry after a failure (exponential backoff, full jitter), when
 * told that a proxy restarted or asked to resync, and on a periodic drift check, which is also how a
 * restarted proxy (l7mp keeps no state across restarts) or an outside change is noticed unprompted.
 */
import { EventEmitter } from 'node:events';
import { canonicalL7mpConfig } from '@/lib/l7mp/canonicalL7mp';
import type { L7mpConfig, L7mpOperation } from '@/lib/model/l7mp';
import { backoffDelay } from './backoffDelay';
import {
  DEFAULT_L7MP_TIMEOUT_MS,
  describeL7mpProxyMessage,
  L7mpApiError,
  L7mpRestClient,
  L7mpUnreachableError,
} from './L7mpRestClient';
import { type ProxyReconcileResult, ProxyReconciler } from './ProxyReconciler';

/** Where a proxy stands. */
export type ProxySyncPhase = 'pending' | 'syncing' | 'synced' | 'failed' | 'unreachable';

/** Why the last push failed. */
export interface ProxySyncFailure {
  /** The operation the proxy refused or did not answer; absent if reading its live state failed. */
  op?: Pick<L7mpOperation, 'method' | 'path' | 'kind' | 'name' | 'reason'>;
  /** The HTTP status of an answered failure (absent if the proxy could not be reached). */
  status?: number;
  /** The proxy's own message (see describeL7mpProxyMessage), or why it could not be reached. */
  message: string;
}

/** One proxy's synchronisation state, as the console shows it. */
export interface ProxySyncState {
  id: string;
  apiUrl: string;
  phase: ProxySyncPhase;
  /** Whether the proxy's API answered the last time it was called; null before the first call. */
  reachable: boolean | null;
  /** Whether the proxy is known to run `desiredVersion` (as of the last push or drift check). */
  inSync: boolean;
  /** Counts the changes of this proxy's desired configuration (1 for the first one). */
  desiredVersion: number;
  /** The last reconcile that sent operations or failed (drift checks that found nothing are not pushes). */
  lastPush?: {
    at: string;
    ok: boolean;
    /** Operations that succeeded. */
    operations: number;
    durationMs: number;
    failed?: ProxySyncFailure;
  };
  /** The last time the live state was read and compared: how many operations were needed. */
  lastCheck?: { at: string; drift: number };
  /** Consecutive failed reconciles (0 once synced). */
  attempts: number;
  /** When the next retry is due, if one is scheduled. */
  nextRetryAt?: string;
}

/** One proxy's desired state. */
export interface DesiredL7mpProxy {
  apiUrl: string;
  config: L7mpConfig;
}

/** The console-like logger the reconciler writes to (never with request bodies). */
export interface ReconcilerLogger {
  debug?(message: string, ...details: unknown[]): void;
  info(message: string, ...details: unknown[]): void;
  warn(message: string, ...details: unknown[]): void;
  error(message: string, ...details: unknown[]): void;
}

/** Time source and timers, injectable for tests. */
export interface ReconcilerClock {
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Reconciler options; every one has a default. */
export interface ReconcilerOptions {
  /** Per proxy, operations of one group in flight at once (ProxyReconciler); default 4. */
  maxInFlight?: number;
  /**
   * Quiet period that coalesces desired changes; default 20 ms. A change after such a quiet period is
   * pushed at once (with the rest of its event-loop turn); changes that follow it are debounced.
   */
  coalesceMs?: number;
  /** Longest a change waits while changes keep coming; default 100 ms. */
  coalesceMaxMs?: number;
  /** Interval of the drift check (re-read every idle proxy, re-push on drift); default 5000, 0 = off. */
  driftIntervalMs?: number;
  /** Timeout of each l7mp request; default DEFAULT_L7MP_TIMEOUT_MS. */
  requestTimeoutMs?: number;
  /** Backoff after a failed reconcile: the first retry within base, then doubling up to cap. */
  backoffBaseMs?: number;
  backoffCapMs?: number;
  /** Random source of the backoff jitter, in [0, 1). */
  random?: () => number;
  clock?: ReconcilerClock;
  logger?: ReconcilerLogger;
}

/** The events a Reconciler emits. */
export interface ReconcilerEvents {
  /** A proxy's state changed (a copy). */
  state: [state: ProxySyncState];
  /** A reconcile finished that sent operations or failed, and what set it off. */
  pushed: [proxyId: string, result: ProxyReconcileResult, trigger: ReconcileTrigger];
}

/**
 * What set a reconcile off: a desired change, a retry after a failure, the periodic drift check, the
 * proxy's process restarting, or a resync asked for.
 */
export type ReconcileTrigger = 'change' | 'retry' | 'check' | 'restart' | 'resync';
type Trigger = ReconcileTrigger;

interface Outcome {
  ok: boolean;
  unreachable: boolean;
}

interface Entry {
  readonly id: string;
  apiUrl: string;
  config: L7mpConfig;
  /** apiUrl + canonical config, to tell a real change from a re-render of the same thing. */
  key: string;
  reconciler: ProxyReconciler;
  state: ProxySyncState;
  /** The desired state changed since the last reconcile started; the coalescing flush picks it up. */
  changed: boolean;
  /** Run again as soon as the current reconcile ends (unless the proxy is unreachable). */
  dirty: boolean;
  /** Run again as soon as the current reconcile ends, whatever its outcome. */
  force: boolean;
  /**
   * What forced the run that follows the running one: a restart noticed mid-push is still a restart
   * (its push counts as `trigger="restart"` in the metrics), not a generic resync.
   */
  forceTrigger?: 'restart' | 'resync';
  running?: Promise<void>;
  abort?: AbortController;
  retryTimer?: unknown;
  /** clock.now() of the last completed read of the live state. */
  lastReadAt?: number;
  /** The config the last reconcile applied successfully; cleared by any failure. */
  applied?: L7mpConfig;
  removed: boolean;
}

const realClock: ReconcilerClock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Reconciles a set of l7mp proxies against their desired configurations (see the module comment). */
export class Reconciler extends EventEmitter<ReconcilerEvents> {
  private readonly proxies = new Map<string, Entry>();
  /** Reconciles of proxies that were removed while running: a re-added proxy waits for them. */
  private readonly draining = new Map<string, Promise<void>>();
  private readonly idleWaiters: (() => void)[] = [];
  private readonly clock: ReconcilerClock;
  private readonly logger: ReconcilerLogger;
  private readonly random: () => number;
  private readonly maxInFlight: number;
  private readonly coalesceMs: number;
  private readonly coalesceMaxMs: number;
  private readonly driftIntervalMs: number;
  private readonly requestTimeoutMs: number;
  private readonly backoff: { baseMs: number; capMs: number };
  private flushTimer: unknown;
  private flushFirstAt: number | undefined;
  private lastFlushAt = -Infinity;
  private flushAtOnce = false;
  private driftTimer: unknown;
  private stopped = false;

  constructor(options: ReconcilerOptions = {}) {
    super();
    this.clock = options.clock ?? realClock;
    this.logger = options.logger ?? console;
    this.random = options.random ?? Math.random;
    this.maxInFlight = options.maxInFlight ?? 4;
    this.coalesceMs = options.coalesceMs ?? 20;
    this.coalesceMaxMs = Math.max(options.coalesceMaxMs ?? 100, this.coalesceMs);
    this.driftIntervalMs = options.driftIntervalMs ?? 5000;
    this.requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_L7MP_TIMEOUT_MS;
    this.backoff = { baseMs: options.backoffBaseMs ?? 200, capMs: options.backoffCapMs ?? 10_000 };
    this.scheduleDriftCheck();
  }

  /**
   * Replaces the whole desired state. Proxies whose apiUrl and canonical config are unchanged are left
   * alone; changed and new ones are reconciled after a short coalescing window. A proxy missing from
   * `desired` is no longer managed (its live configuration is left as it is).
   */
  setDesired(desired: Readonly<Record<string, DesiredL7mpProxy>>): void {
    if (this.stopped) return;
    let changed = false;
    for (const [id, want] of Object.entries(desired)) {
      const entry = this.proxies.get(id);
      if (entry === undefined) {
        this.proxies.set(id, this.createEntry(id, want));
        this.emitState(this.proxies.get(id)!);
        changed = true;
        continue;
      }
      // The engine hands out the same objects for unchanged proxies: skip serialising those.
      if (want.config === entry.config && want.apiUrl === entry.apiUrl) continue;
      const key = desiredKey(want);
      if (key === entry.key) {
        entry.config = want.config;
        continue;
      }
      if (want.apiUrl !== entry.apiUrl) entry.reconciler = this.proxyReconciler(want.apiUrl);
      entry.apiUrl = want.apiUrl;
      entry.config = want.config;
      entry.key = key;
      entry.changed = true;
      changed = true;
      // `synced` no longer holds; `syncing`, `failed` and `unreachable` still describe what goes on.
      // (A reconcile that has just recorded `synced` may not have returned yet: still `pending`.)
      this.update(entry, {
        apiUrl: want.apiUrl,
        desiredVersion: entry.state.desiredVersion + 1,
        inSync: false,
        ...(entry.state.phase === 'synced' ? { phase: 'pending' as const } : {}),
      });
    }
    for (const entry of [...this.proxies.values()]) {
      if (!Object.hasOwn(desired, entry.id)) this.remove(entry);
    }
    if (changed) this.scheduleFlush();
    this.checkIdle();
  }

  /** The local-mesh supervisor saw the proxy process come back: reconcile it now. */
  proxyRestarted(id: string): void {
    const entry = this.proxies.get(id);
    if (entry === undefined) return;
    this.logger.info(`l7mp ${id}: proxy restarted, reconciling`);
    this.runNow(entry, 'restart');
  }

  /** Reconciles one proxy (or all) now, skipping any backoff wait. */
  resync(id?: string): void {
    if (id === undefined) {
      for (const entry of this.proxies.values()) this.runNow(entry, 'resync');
      return;
    }
    const entry = this.proxies.get(id);
    if (entry !== undefined) this.runNow(entry, 'resync');
  }

  /** Every managed proxy's state, sorted by id (copies). */
  states(): ProxySyncState[] {
    return [...this.proxies.values()]
      .map((entry) => copyState(entry.state))
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** One proxy's state (a copy), or undefined if it is not managed. */
  state(id: string): ProxySyncState | undefined {
    const entry = this.proxies.get(id);
    return entry === undefined ? undefined : copyState(entry.state);
  }

  /**
   * Resolves once no reconcile is running or waiting for the coalescing window. Scheduled backoff
   * retries and future drift checks do not count: a proxy that keeps failing would never be idle.
   */
  whenIdle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops all timers, aborts running reconciles and resolves once they have ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.clearTimer(this.flushTimer);
    this.flushTimer = undefined;
    this.clearTimer(this.driftTimer);
    this.driftTimer = undefined;
    const running: Promise<void>[] = [...this.draining.values()];
    for (const entry of this.proxies.values()) {
      this.clearRetry(entry);
      entry.abort?.abort();
      if (entry.running) running.push(entry.running);
    }
    await Promise.all(running);
    this.checkIdle();
  }

  private createEntry(id: string, want: DesiredL7mpProxy): Entry {
    return {
      id,
      apiUrl: want.apiUrl,
      config: want.config,
      key: desiredKey(want),
      reconciler: this.proxyReconciler(want.apiUrl),
      state: {
        id,
        apiUrl: want.apiUrl,
        phase: 'pending',
        reachable: null,
        inSync: false,
        desiredVersion: 1,
        attempts: 0,
      },
      changed: true,
      dirty: false,
      force: false,
      removed: false,
    };
  }

  private proxyReconciler(apiUrl: string): ProxyReconciler {
    const client = new L7mpRestClient(apiUrl, { timeoutMs: this.requestTimeoutMs });
    return new ProxyReconciler(client, { maxInFlight: this.maxInFlight });
  }

  private remove(entry: Entry): void {
    entry.removed = true;
    this.proxies.delete(entry.id);
    this.clearRetry(entry);
    this.logger.info(`l7mp ${entry.id}: no longer desired, stopped managing it`);
    if (entry.running) {
      // Pushing on to a proxy nobody wants configured is pointless: abort, but let it settle.
      entry.abort?.abort();
      const draining = entry.running.then(() => {
        if (this.draining.get(entry.id) === draining) this.draining.delete(entry.id);
        this.checkIdle();
      });
      this.draining.set(entry.id, draining);
    }
  }

  /**
   * Debounces desired changes: coalesceMs after the last one, at most coalesceMaxMs after the first. A
   * change after a quiet period (nothing flushed for coalesceMs) goes out at once, with whatever else
   * arrives in the same event-loop turn: a lone edit waits for no timer, as SnapshotCache does for xDS.
   */
  private scheduleFlush(): void {
    // Already going out at once: later changes of this turn join it.
    if (this.flushAtOnce) return;
    const now = this.clock.now();
    const quiet = this.flushFirstAt === undefined && now - this.lastFlushAt >= this.coalesceMs;
    this.flushFirstAt ??= now;
    this.flushAtOnce = quiet;
    const due = quiet ? now : Math.min(now + this.coalesceMs, this.flushFirstAt + this.coalesceMaxMs);
    this.clearTimer(this.flushTimer);
    this.flushTimer = this.clock.setTimeout(
      () => this.guard('flush', () => this.flush()),
      Math.max(0, due - now),
    );
  }

  private flush(): void {
    this.flushTimer = undefined;
    this.flushFirstAt = undefined;
    this.flushAtOnce = false;
    this.lastFlushAt = this.clock.now();
    if (this.stopped) return;
    for (const entry of this.proxies.values()) {
      if (entry.running) {
        if (entry.changed) entry.dirty = true;
        continue;
      }
      if (entry.retryTimer !== undefined) {
        // A new config may fix what the proxy refused; it cannot make an unreachable proxy answer.
        if (entry.changed && entry.state.phase !== 'unreachable') this.start(entry, 'change');
        continue;
      }
      if (entry.changed || !entry.state.inSync) this.start(entry, 'change');
    }
    this.checkIdle();
  }

  private runNow(entry: Entry, trigger: Trigger): void {
    if (this.stopped) return;
    if (entry.running) {
      entry.force = true;
      if (trigger === 'restart' || trigger === 'resync')
        entry.forceTrigger = entry.forceTrigger === 'restart' ? 'restart' : trigger;
      return;
    }
    this.start(entry, trigger);
  }

  private start(entry: Entry, trigger: Trigger): void {
    if (this.stopped || entry.removed) return;
    this.clearRetry(entry);
    const promise: Promise<void> = this.run(entry, trigger)
      .catch((e: unknown) => {
        this.logger.error(`l7mp ${entry.id}: reconcile crashed`, e);
        return undefined;
      })
      .then((outcome) => {
        if (entry.running === promise) entry.running = undefined;
        this.guard('follow-up', () => this.followUp(entry, outcome));
        this.checkIdle();
      });
    entry.running = promise;
  }

  private async run(entry: Entry, trigger: Trigger): Promise<Outcome | undefined> {
    const previous = this.draining.get(entry.id);
    if (previous) await previous;
    if (this.stopped || entry.removed) return undefined;
    entry.changed = false;
    entry.dirty = false;
    entry.force = false;
    delete entry.forceTrigger;
    const version = entry.state.desiredVersion;
    const controller = new AbortController();
    entry.abort = controller;
    if (trigger !== 'check') this.update(entry, { phase: 'syncing' });
    let result: ProxyReconcileResult;
    const config = entry.config;
    try {
      result = await entry.reconciler.reconcile(config, {
        signal: controller.signal,
        // Leftovers come from failed calls or outside changes: after a success, a desired change can
        // skip the three extra GETs; retries, checks, restarts and resyncs look.
        leftovers: trigger !== 'change' || entry.state.attempts > 0 || entry.lastReadAt === undefined,
        // A desired change right after a success diffs against what was applied instead of re-reading the
        // proxy (3 GETs of recursive dumps, most of a push's cost); drift checks still read it.
        ...(trigger === 'change' && entry.state.attempts === 0 && entry.applied
          ? { assumeLive: entry.applied }
          : {}),
        onPlan: () => this.update(entry, { phase: 'syncing', inSync: false }),
      });
    } catch (e) {
      // ProxyReconciler reports l7mp failures in its result; anything thrown is a bug, kept contained.
      const error = e instanceof Error ? e : new Error(String(e));
      result = { ok: false, applied: [], drift: [], failed: { error }, durationMs: 0, ignored: [] };
    } finally {
      entry.abort = undefined;
    }
    entry.applied = result.ok ? config : undefined;
    if (this.stopped || entry.removed) return undefined;
    return this.record(entry, trigger, version, result);
  }

  /** Folds a reconcile result into the proxy's state, logs it and emits `pushed`. */
  private record(entry: Entry, trigger: Trigger, version: number, result: ProxyReconcileResult): Outcome {
    const now = this.clock.now();
    const at = new Date(now).toISOString();
    const readFailed = result.failed !== undefined && result.failed.op === undefined;
    if (!readFailed) entry.lastReadAt = now;
    const pushed = !(trigger === 'check' && result.ok && result.drift.length === 0);
    const error = result.failed?.error;
    const unreachable = error instanceof L7mpUnreachableError;
    const previous = entry.state;
    const patch: Partial<ProxySyncState> = {};
    if (!readFailed) patch.lastCheck = { at, drift: result.drift.length };
    if (pushed) {
      patch.lastPush = {
        at,
        ok: result.ok,
        operations: result.applied.length,
        durationMs: Math.round(result.durationMs * 10) / 10,
        ...(result.failed ? { failed: failureOf(result.failed) } : {}),
      };
    }
    if (result.ok) {
      const current = version === entry.state.desiredVersion;
      Object.assign(patch, {
        phase: current ? 'synced' : 'pending',
        reachable: true,
        inSync: current,
        attempts: 0,
        nextRetryAt: undefined,
      });
    } else {
      Object.assign(patch, {
        phase: unreachable ? 'unreachable' : 'failed',
        reachable: unreachable ? false : error instanceof L7mpApiError ? true : previous.reachable,
        inSync: false,
        attempts: previous.attempts + 1,
      });
      // Scheduled here so that the state that reports the failure also says when the retry is due.
      if (!this.rerunsAtOnce(entry, false, unreachable)) {
        patch.nextRetryAt = this.scheduleRetry(entry, previous.attempts + 1);
      }
    }
    // `previous` is the live object: remember what the log decisions below compare against.
    const wasAttempts = previous.attempts;
    const wasFailing = wasAttempts > 0;
    const wasMessage = previous.lastPush?.failed?.message;
    this.update(entry, patch);

    if (result.ok) {
      if (result.drift.length > 0) {
        this.logger.info(
          `l7mp ${entry.id}: ${trigger === 'check' ? 'drift found, ' : ''}applied ${result.applied.length} operation(s) in ${Math.round(result.durationMs)} ms`,
        );
      }
      if (wasFailing)
        this.logger.info(`l7mp ${entry.id}: in sync again after ${wasAttempts} failed attempt(s)`);
    } else {
      const failure = entry.state.lastPush?.failed;
      const where = failure?.op ? `${failure.op.method} ${failure.op.path}` : 'reading live state';
      const line = `l7mp ${entry.id}: ${where} failed (attempt ${entry.state.attempts}): ${failure?.message ?? error?.message}`;
      // Every backoff retry would repeat the same line: warn on news only.
      if (!wasFailing || failure?.message !== wasMessage) this.logger.warn(line);
      else this.logger.debug?.(line);
    }
    if (pushed) this.safeEmit('pushed', entry.id, result, trigger);
    return { ok: result.ok, unreachable };
  }

  /**
   * Whether a reconcile that just ended is followed at once by another: always if forced (restart,
   * resync), and after a desired change unless the proxy is unreachable (that waits for the backoff).
   */
  private rerunsAtOnce(entry: Entry, ok: boolean, unreachable: boolean): boolean {
    return entry.force || (entry.dirty && (ok || !unreachable));
  }

  private followUp(entry: Entry, outcome: Outcome | undefined): void {
    if (this.stopped || entry.removed || outcome === undefined) return;
    if (this.rerunsAtOnce(entry, outcome.ok, outcome.unreachable)) {
      this.start(entry, entry.force ? (entry.forceTrigger ?? 'resync') : 'change');
    }
  }

  /** Arms the backoff timer for retry number `attempt` and returns when it is due (ISO). */
  private scheduleRetry(entry: Entry, attempt: number): string {
    this.clearRetry(entry);
    const delay = backoffDelay(attempt, this.backoff, this.random);
    entry.retryTimer = this.clock.setTimeout(
      () =>
        this.guard('retry', () => {
          entry.retryTimer = undefined;
          this.start(entry, 'retry');
        }),
      delay,
    );
    return new Date(this.clock.now() + delay).toISOString();
  }

  /** Disarms the backoff timer; the next state update (e.g. `syncing`) carries the cleared nextRetryAt. */
  private clearRetry(entry: Entry): void {
    if (entry.retryTimer !== undefined) {
      this.clearTimer(entry.retryTimer);
      entry.retryTimer = undefined;
    }
    delete entry.state.nextRetryAt;
  }

  private scheduleDriftCheck(): void {
    if (this.stopped || this.driftIntervalMs <= 0) return;
    this.driftTimer = this.clock.setTimeout(() => {
      this.driftTimer = undefined;
      this.guard('drift check', () => this.driftCheck());
      this.scheduleDriftCheck();
    }, this.driftIntervalMs);
  }

  /** Re-reads every idle proxy that was not read recently; ProxyReconciler re-pushes on any drift. */
  private driftCheck(): void {
    if (this.stopped) return;
    const now = this.clock.now();
    for (const entry of this.proxies.values()) {
      if (entry.running || entry.retryTimer !== undefined || entry.changed) continue;
      // A push re-read the proxy moments ago: that read was the check.
      if (entry.lastReadAt !== undefined && now - entry.lastReadAt < this.driftIntervalMs / 2) continue;
      this.start(entry, 'check');
    }
  }

  /** Applies `patch` and emits the state, unless the patch changed nothing. */
  private update(entry: Entry, patch: Partial<ProxySyncState>): void {
    const state = entry.state as unknown as Record<string, unknown>;
    let changed = false;
    for (const [key, value] of Object.entries(patch)) {
      if (value === undefined) {
        if (Object.hasOwn(state, key)) changed = true;
        delete state[key];
      } else {
        // Objects (lastPush, lastCheck) are always new ones: they count as changes.
        if (state[key] !== value) changed = true;
        state[key] = value;
      }
    }
    if (changed) this.emitState(entry);
  }

  private emitState(entry: Entry): void {
    // Every push emits a few states per proxy: copy only for a listener, and by hand (structuredClone
    // was a visible share of a 20-proxy push's CPU).
    if (this.listenerCount('state') === 0) return;
    this.safeEmit('state', copyState(entry.state));
  }

  /** A throwing listener must not break the reconciler's timers and promises. */
  private safeEmit<K extends keyof ReconcilerEvents>(event: K, ...args: ReconcilerEvents[K]): void {
    try {
      (this.emit as (event: K, ...args: ReconcilerEvents[K]) => boolean)(event, ...args);
    } catch (e) {
      this.logger.error(`l7mp reconciler: a '${event}' listener threw`, e);
    }
  }

  private guard(what: string, fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.logger.error(`l7mp reconciler: ${what} failed`, e);
    }
  }

  private isIdle(): boolean {
    if (this.flushTimer !== undefined || this.draining.size > 0) return false;
    for (const entry of this.proxies.values()) if (entry.running) return false;
    return true;
  }

  private checkIdle(): void {
    if (!this.isIdle() && !this.stopped) return;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  private clearTimer(handle: unknown): void {
    if (handle !== undefined) this.clock.clearTimeout(handle);
  }
}

/** A deep copy of a state: its nested objects too, so that a listener cannot change ours. */
function copyState(state: ProxySyncState): ProxySyncState {
  const copy: ProxySyncState = { ...state };
  if (state.lastCheck) copy.lastCheck = { ...state.lastCheck };
  if (state.lastPush) {
    const { failed } = state.lastPush;
    copy.lastPush = { ...state.lastPush };
    if (failed) copy.lastPush.failed = { ...failed, ...(failed.op ? { op: { ...failed.op } } : {}) };
  }
  return copy;
}

function desiredKey(want: DesiredL7mpProxy): string {
  return JSON.stringify([want.apiUrl, canonicalL7mpConfig(want.config)]);
}

function failureOf(failed: NonNullable<ProxyReconcileResult['failed']>): ProxySyncFailure {
  const { op, error } = failed;
  const failure: ProxySyncFailure = { message: error.message };
  if (op) failure.op = { method: op.method, path: op.path, kind: op.kind, name: op.name, reason: op.reason };
  if (error instanceof L7mpApiError) {
    failure.status = error.status;
    // With the op alongside, the proxy's own words are the message; a failed read keeps the URL.
    if (op) failure.message = describeL7mpProxyMessage(error.proxyMessage) || error.statusMessage;
  }
  return failure;
}
