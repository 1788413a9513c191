/**
 * One reconcile of one l7mp proxy: read what it runs, compute the calls that turn it into the desired
 * configuration, send them in order. Stateless between calls: the proxy itself is the record of what
 * was applied, so a restarted proxy, an outside change or a half-applied earlier push are all just a
 * different live state to diff against.
 */
import { performance } from 'node:perf_hooks';
import { diffL7mp } from '@/lib/l7mp/diffL7mp';
import { l7mpPaths } from '@/lib/l7mp/l7mpPaths';
import type { L7mpConfig, L7mpOperation } from '@/lib/model/l7mp';
import { type L7mpLive, type L7mpRestClient, L7mpUnreachableError } from './L7mpRestClient';
import { leftoverL7mpOps, type L7mpRuleTables } from './leftoverL7mpOps';

/** Options of a ProxyReconciler. */
export interface ProxyReconcilerOptions {
  /**
   * How many operations of one group (consecutive operations with the same method and kind, e.g. the
   * cluster adds) may be in flight at once; default 4. l7mp is single-threaded, so more buys nothing
   * (shared/notes/l7mp-rest-api.md §11); 1 sends strictly one after the other.
   */
  maxInFlight?: number;
}

/** Options of one reconcile. */
export interface ProxyReconcileOptions {
  /** Aborts the reconcile between or during requests (the result then reports a failure). */
  signal?: AbortSignal;
  /** Called once the needed operations are known, before the first one is sent; not called if none. */
  onPlan?: (operations: readonly L7mpOperation[]) => void;
  /**
   * Also look for leftovers of failed adds (three more GETs: plain listeners, rulelists, rules);
   * default true. Leftovers only appear after a failed call or an outside change, so a caller that
   * saw the previous reconcile succeed may skip them for a quicker push and catch outside ones later.
   */
  leftovers?: boolean;
  /**
   * The config this reconciler last applied successfully. When given, it stands in for the live
   * state (no GETs: a push costs only its operations), unless the change deletes a listener, whose
   * auto-generated leftovers only a real read can name. Drift checks must not pass it: they are what
   * finds restarts and outside changes.
   */
  assumeLive?: L7mpConfig;
}

/** What one reconcile found and did. */
export interface ProxyReconcileResult {
  /** Whether the proxy now runs the desired configuration (as far as this reconcile knows). */
  ok: boolean;
  /** The operations that succeeded (including deletes of objects that were already gone), in order. */
  applied: L7mpOperation[];
  /**
   * The operations that were needed: leftover cleanup, then diffL7mp(live, desired). Empty if the
   * proxy already ran the desired configuration, or if it could not be read.
   */
  drift: L7mpOperation[];
  /** The first failure; `op` is undefined if reading the live state failed. */
  failed?: { op?: L7mpOperation; error: Error };
  durationMs: number;
  /** Live objects parseL7mpDump skipped or simplified (see L7mpLive.ignored). */
  ignored: string[];
}

/** The live configuration plus, if asked for, the plain dumps that leftovers are found in. */
interface LiveState {
  live: L7mpLive;
  tables?: L7mpRuleTables;
}

class ReadError extends Error {
  constructor(readonly error: Error) {
    super(error.message);
  }
}

/** Reconciles one proxy (see reconcile). */
export class ProxyReconciler {
  readonly maxInFlight: number;

  constructor(
    readonly client: L7mpRestClient,
    options: ProxyReconcilerOptions = {},
  ) {
    this.maxInFlight = Math.max(1, Math.floor(options.maxInFlight ?? 4));
  }

  /**
   * Reads the proxy (per-kind GETs, with the stale-rule fallback), removes leftovers of earlier failed
   * adds (unless `leftovers: false`), then applies diffL7mp(live, desired) strictly in order, overlapping only consecutive
   * operations of one group (at most maxInFlight at once), and stops at the first failure. Never
   * throws for l7mp errors: they are reported in the result.
   */
  async reconcile(desired: L7mpConfig, options: ProxyReconcileOptions = {}): Promise<ProxyReconcileResult> {
    const started = performance.now();
    const { signal } = options;
    const applied: L7mpOperation[] = [];
    let drift: L7mpOperation[] = [];
    let ignored: string[] = [];
    const result = (failed?: ProxyReconcileResult['failed']): ProxyReconcileResult => ({
      ok: failed === undefined,
      applied,
      drift,
      ...(failed ? { failed } : {}),
      durationMs: performance.now() - started,
      ignored,
    });

    try {
      const leftovers = options.leftovers ?? true;
      const assumed = options.assumeLive ? diffL7mp(options.assumeLive, desired) : undefined;
      if (assumed && !assumed.some((op) => op.kind === 'listener' && op.method === 'DELETE')) {
        drift = assumed;
        if (drift.length > 0) options.onPlan?.(drift);
        const failed = await this.applyAll(assumed, signal, applied);
        return result(failed);
      }
      let state = await this.read(signal, leftovers);
      ignored = state.live.ignored;
      const cleanup = state.tables ? leftoverL7mpOps(state.tables) : [];
      let operations = diffL7mp(state.live.config, desired);
      drift = [...cleanup, ...operations];
      if (drift.length > 0) options.onPlan?.(drift);
      if (cleanup.length > 0) {
        const failed = await this.applyAll(cleanup, signal, applied);
        if (failed) return result(failed);
        // The cleanup removed auto-generated routes too: diff against what is really left.
        state = await this.read(signal, false);
        ignored = state.live.ignored;
        operations = diffL7mp(state.live.config, desired);
        drift = [...cleanup, ...operations];
      }
      return result(await this.applyAll(operations, signal, applied));
    } catch (e) {
      if (e instanceof ReadError) return result({ error: e.error });
      throw e;
    }
  }

  /** The live state: the config dumps and (with `leftovers`) the rule tables, all GETs in parallel. */
  private async read(signal: AbortSignal | undefined, leftovers: boolean): Promise<LiveState> {
    const failed = new AbortController();
    const combined = signal ? AbortSignal.any([signal, failed.signal]) : failed.signal;
    const guard = <T>(promise: Promise<T>): Promise<T> =>
      promise.catch((e: unknown) => {
        failed.abort(e);
        throw e;
      });
    try {
      const live = guard(this.client.readLive({ signal: combined }));
      if (!leftovers) return { live: await live };
      const [config, listeners, rulelists, rules] = await Promise.all([
        live,
        guard(this.client.get(l7mpPaths.listeners(), { signal: combined })),
        guard(this.client.get(l7mpPaths.rulelists(), { signal: combined })),
        guard(this.client.get(l7mpPaths.rules(), { signal: combined })),
      ]);
      return { live: config, tables: { listeners, rulelists, rules } };
    } catch (e) {
      throw new ReadError(e instanceof Error ? e : new Error(String(e)));
    }
  }

  /** Applies `operations` in order, groups with up to maxInFlight in flight; the first failure, if any. */
  private async applyAll(
    operations: readonly L7mpOperation[],
    signal: AbortSignal | undefined,
    applied: L7mpOperation[],
  ): Promise<ProxyReconcileResult['failed']> {
    let i = 0;
    while (i < operations.length) {
      const key = groupKey(operations[i]!);
      let j = i + 1;
      while (j < operations.length && groupKey(operations[j]!) === key) j++;
      j = endpointSwapEnd(operations, i, j);
      const failed = await this.applyGroup(operations.slice(i, j), signal, applied);
      if (failed) return failed;
      i = j;
    }
    return undefined;
  }

  private async applyGroup(
    group: readonly L7mpOperation[],
    signal: AbortSignal | undefined,
    applied: L7mpOperation[],
  ): Promise<ProxyReconcileResult['failed']> {
    const done: boolean[] = group.map(() => false);
    type Failure = { index: number; op: L7mpOperation; error: Error };
    const first: { failure?: Failure } = {};
    // With several in flight, report the earliest failing operation of the group.
    const fail = (failure: Failure): void => {
      if (first.failure === undefined || failure.index < first.failure.index) first.failure = failure;
    };
    let next = 0;
    const worker = async (): Promise<void> => {
      while (first.failure === undefined && next < group.length && !signal?.aborted) {
        const index = next++;
        const op = group[index]!;
        try {
          await this.client.apply(op, signal ? { signal } : undefined);
          done[index] = true;
        } catch (e) {
          fail({ index, op, error: e instanceof Error ? e : new Error(String(e)) });
        }
      }
    };
    const workers = Math.min(this.maxInFlight, group.length);
    await Promise.all(Array.from({ length: workers }, worker));
    group.forEach((op, k) => {
      if (done[k]) applied.push(op);
    });
    if (first.failure) return { op: first.failure.op, error: first.failure.error };
    const notSent = done.indexOf(false);
    if (notSent >= 0) {
      // Aborted between two requests: report the first operation that was not sent.
      const op = group[notSent]!;
      return {
        op,
        error: new L7mpUnreachableError(`${this.client.apiUrl}${op.path}`, 'aborted', { op }),
      };
    }
    return undefined;
  }
}

/**
 * An endpoint change is a DELETE of the old endpoint and a POST of the new one, and moving endpoints is
 * the commonest push. When the names deleted and added are disjoint (names are global per proxy) the
 * two groups may overlap, which halves the push's latency; returns the end of the merged group.
 */
function endpointSwapEnd(operations: readonly L7mpOperation[], start: number, end: number): number {
  if (groupKey(operations[start]!) !== 'DELETE endpoint') return end;
  let k = end;
  while (k < operations.length && groupKey(operations[k]!) === 'POST endpoint') k++;
  if (k === end) return end;
  const deleted = new Set(operations.slice(start, end).map((op) => op.name));
  return operations.slice(end, k).some((op) => deleted.has(op.name)) ? end : k;
}

/** Operations that may overlap: same method and kind (e.g. all cluster adds of one diff). */
function groupKey(op: L7mpOperation): string {
  return `${op.method} ${op.kind}`;
}
