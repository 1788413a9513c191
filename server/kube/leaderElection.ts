/**
 * Leader election over a coordination.k8s.io/v1 Lease, after client-go's `tools/leaderelection`: every
 * replica runs a LeaderElector; the one holding the lease reconciles and pushes, the others only serve.
 *
 * - Candidates poll the lease every retryPeriod (with client-go's jitter) and take it when it is missing,
 *   released (no holder) or expired. Expiry is judged by the local monotonic clock from when this replica
 *   first saw the current spec (leaderElectionDecision.ts), never by comparing wall clocks.
 * - Every write is a create or a replace carrying the resourceVersion that was read, so of two replicas
 *   racing for the same lease exactly one wins; the loser gets 409 and goes on waiting.
 * - The leader renews every retryPeriod. It stops leading (aborts the signal given to onStartedLeading,
 *   then calls onStoppedLeading) when renewDeadline has passed since the last successful renewal was SENT:
 *   the server applied that write later, and others start their lease-duration clock later still, so with
 *   renewDeadline < lease duration the old leader has stopped before anyone else can take the lease.
 * - A graceful stop aborts the leading work, waits (bounded) for it to finish and then releases the lease
 *   (clears holderIdentity), so a successor takes over at its next poll instead of waiting it out.
 * - API errors never throw: they are logged (once per distinct message) and retried every retryPeriod.
 */
import * as k8s from '@kubernetes/client-node';
import {
  type AcquireReason,
  decideLease,
  type LeaseObservation,
  type LeaseSpecRecord,
  type LostReason,
  observeLease,
  releasedSpec,
} from './leaderElectionDecision';

/** The console-like logger the elector writes to. */
export interface LeaderElectionLogger {
  debug?(message: string, ...details: unknown[]): void;
  info(message: string, ...details: unknown[]): void;
  warn(message: string, ...details: unknown[]): void;
  error(message: string, ...details: unknown[]): void;
}

/** What the elector tells its owner. Callbacks run synchronously in the election loop; errors are logged. */
export interface LeaderElectionCallbacks {
  /**
   * This replica leads until `signal` aborts. Whatever it starts must stop as soon as the signal aborts
   * (another replica may take over shortly after). A returned promise is the leading work: a graceful
   * stop waits for it (bounded) before releasing the lease.
   */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  /** Each leadership's end, after its signal aborted. */
  onStoppedLeading?(): void;
  /** The lease names a new holder (this replica included); not called when it is released to nobody. */
  onNewLeader?(identity: string): void;
}

/** Options of {@link LeaderElector}; the durations default to client-go's usual 15 s / 10 s / 2 s. */
export interface LeaderElectorOptions {
  kubeConfig: k8s.KubeConfig;
  /** The Lease's namespace and name. */
  namespace: string;
  name: string;
  /** This replica's identity (e.g. the pod name); unique among the replicas. */
  identity: string;
  /** How long others wait after last seeing a renewal before they may take the lease; whole seconds, ≥ 1. */
  leaseDurationSeconds?: number;
  /** A leader that has not renewed for this long stops leading; below the lease duration. */
  renewDeadlineMs?: number;
  /** Interval of acquire and renew attempts; renewDeadlineMs must exceed jitterFactor × this. */
  retryPeriodMs?: number;
  /** Candidates wait retryPeriod × (1 + random × jitterFactor) between attempts; default 1.2 (client-go). */
  jitterFactor?: number;
  /** Whether stop() releases the lease by default; default true. */
  releaseOnStop?: boolean;
  /** How long stop() waits for the leading work before releasing; default renewDeadlineMs. */
  stopTimeoutMs?: number;
  callbacks: LeaderElectionCallbacks;
  logger?: LeaderElectionLogger;
  /** Random source of the jitter, in [0, 1). */
  random?: () => number;
}

/** A snapshot of the elector's state (for health checks, the console and tests). */
export interface LeaderElectionStatus {
  identity: string;
  /** Whether this replica leads now (its leading signal is not aborted). */
  leading: boolean;
  /** The holder named by the lease as last read or written ('' = none or not read yet). */
  leader: string;
  /** While leading: performance.now() when the write that last renewed the lease was sent. */
  renewedAtMs?: number;
  /** How the current or last leadership began. */
  acquiredBy?: AcquireReason;
  /** Why the last leadership ended ('stopped' for stop()). */
  lostBy?: LostReason | 'stopped';
  /** The last API error (e.g. RBAC's refusal), cleared by the next successful request. */
  lastError?: string;
  /** Completed election rounds (each reads the lease once). */
  rounds: number;
}

interface Leadership {
  controller: AbortController;
  renewedAtMs: number;
  deadline?: NodeJS.Timeout;
}

const RBAC_HINT = 'the identity needs get, create and update on leases.coordination.k8s.io';

/** One replica's participant in the election for one Lease. */
export class LeaderElector {
  private readonly api: k8s.CoordinationV1Api;
  private readonly namespace: string;
  private readonly name: string;
  private readonly identity: string;
  private readonly leaseDurationSeconds: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly jitterFactor: number;
  private readonly releaseOnStop: boolean;
  private readonly stopTimeoutMs: number;
  private readonly callbacks: LeaderElectionCallbacks;
  private readonly logger: LeaderElectionLogger;
  private readonly random: () => number;

  private loop: Promise<void> | undefined;
  private runAbort: AbortController | undefined;
  private stopping: Promise<void> | undefined;
  private leadership: Leadership | undefined;
  /** Leading work (onStartedLeading's promises) not finished yet. */
  private readonly work = new Set<Promise<void>>();
  private observation: LeaseObservation | undefined;
  private reportedLeader = '';
  private observedLeader = '';
  private acquiredBy: AcquireReason | undefined;
  private lostBy: LostReason | 'stopped' | undefined;
  private lastError: string | undefined;
  private rounds = 0;

  constructor(options: LeaderElectorOptions) {
    this.namespace = options.namespace;
    this.name = options.name;
    this.identity = options.identity;
    this.leaseDurationSeconds = options.leaseDurationSeconds ?? 15;
    this.renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = options.retryPeriodMs ?? 2_000;
    this.jitterFactor = options.jitterFactor ?? 1.2;
    this.releaseOnStop = options.releaseOnStop ?? true;
    this.stopTimeoutMs = options.stopTimeoutMs ?? this.renewDeadlineMs;
    this.callbacks = options.callbacks;
    this.logger = options.logger ?? console;
    this.random = options.random ?? Math.random;
    // Configuration errors are programming errors: refuse them here rather than elect unsafely later.
    if (!this.identity) throw new Error('leader election: identity must not be empty');
    if (!this.namespace || !this.name)
      throw new Error('leader election: the Lease needs a namespace and a name');
    if (!Number.isInteger(this.leaseDurationSeconds) || this.leaseDurationSeconds < 1) {
      throw new Error('leader election: leaseDurationSeconds must be a whole number of seconds, at least 1');
    }
    if (!(this.renewDeadlineMs < this.leaseDurationSeconds * 1000)) {
      throw new Error('leader election: renewDeadlineMs must be less than the lease duration');
    }
    if (!(this.retryPeriodMs > 0) || !(this.jitterFactor >= 0)) {
      throw new Error('leader election: retryPeriodMs must be positive and jitterFactor not negative');
    }
    if (!(this.renewDeadlineMs > this.jitterFactor * this.retryPeriodMs)) {
      throw new Error('leader election: renewDeadlineMs must exceed jitterFactor × retryPeriodMs');
    }
    this.api = options.kubeConfig.makeApiClient(k8s.CoordinationV1Api);
  }

  /** Starts competing for the lease (idempotent; a stopped elector may be started again, also mid-stop). */
  start(): void {
    if (this.stopping) {
      void this.stopping.then(() => this.start());
      return;
    }
    if (this.loop) return;
    const runAbort = new AbortController();
    this.runAbort = runAbort;
    this.loop = this.run(runAbort.signal);
  }

  /**
   * Stops competing. While leading: aborts the leading signal, waits up to stopTimeoutMs for the leading
   * work, then (unless `release: false`, which behaves like a crashed replica) clears holderIdentity so a
   * successor need not wait out the lease. Never throws; idempotent.
   */
  stop(options: { release?: boolean } = {}): Promise<void> {
    if (this.stopping) return this.stopping;
    if (!this.loop) return Promise.resolve();
    const loop = this.loop;
    const release = options.release ?? this.releaseOnStop;
    this.runAbort?.abort();
    this.stopping = (async () => {
      await loop;
      this.loseLeadership('stopped');
      const settled = await settledWithin([...this.work], this.stopTimeoutMs);
      if (!release) return;
      if (!settled) {
        this.logger.warn(
          `leader election ${this.where()}: the leading work did not stop within ${this.stopTimeoutMs} ms; ` +
            'not releasing the lease (a successor waits for it to expire)',
        );
        return;
      }
      await this.release();
    })().finally(() => {
      this.loop = undefined;
      this.stopping = undefined;
    });
    return this.stopping;
  }

  /** Whether this replica leads now. */
  isLeader(): boolean {
    return this.leadership !== undefined;
  }

  /** The holder named by the lease as last seen ('' = none or unknown). */
  leader(): string {
    return this.observedLeader;
  }

  /** A snapshot of the state. */
  status(): LeaderElectionStatus {
    return {
      identity: this.identity,
      leading: this.leadership !== undefined,
      leader: this.observedLeader,
      ...(this.leadership ? { renewedAtMs: this.leadership.renewedAtMs } : {}),
      ...(this.acquiredBy ? { acquiredBy: this.acquiredBy } : {}),
      ...(this.lostBy ? { lostBy: this.lostBy } : {}),
      ...(this.lastError !== undefined ? { lastError: this.lastError } : {}),
      rounds: this.rounds,
    };
  }

  private async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.round(signal);
      } catch (e) {
        // round() handles API errors itself; this is a bug, and the loop must survive it.
        this.logger.error(`leader election ${this.where()}: round failed`, e);
      }
      this.rounds++;
      if (signal.aborted) break;
      // The leader renews on a fixed period; candidates spread out like client-go's JitterUntil.
      const wait = this.leadership
        ? this.retryPeriodMs
        : this.retryPeriodMs * (1 + this.random() * this.jitterFactor);
      await sleep(wait, signal);
    }
  }

  /** One tryAcquireOrRenew: read the lease, decide, write if the decision says so. */
  private async round(runSignal: AbortSignal): Promise<void> {
    const leadership = this.leadership;
    // A leader's requests end at its deadline (a renewal answered later could not be trusted anyway);
    // a candidate's at renewDeadline, so a fresh leadership always starts within its deadline.
    const timeoutMs = leadership
      ? Math.max(1, Math.floor(leadership.renewedAtMs + this.renewDeadlineMs - performance.now()))
      : this.renewDeadlineMs;
    const linked = linkedSignal(timeoutMs, runSignal, leadership?.controller.signal);
    try {
      await this.exchange(runSignal, leadership, timeoutMs, withSignal(linked.signal));
    } finally {
      linked.dispose();
    }
  }

  /** The round's requests, all bound to one signal (stop, timeout, end of the leadership). */
  private async exchange(
    runSignal: AbortSignal,
    leadership: Leadership | undefined,
    timeoutMs: number,
    options: k8s.ConfigurationOptions,
  ): Promise<void> {
    let lease: k8s.V1Lease | null;
    try {
      lease = await this.api.readNamespacedLease({ name: this.name, namespace: this.namespace }, options);
    } catch (e) {
      if (statusCode(e) !== 404) return this.failed('get', e, runSignal, timeoutMs);
      lease = null;
    }
    const spec = lease ? specOf(lease) : null;
    this.observe(spec);
    if (runSignal.aborted) return;

    const decision = decideLease({
      spec,
      observation: this.observation,
      identity: this.identity,
      nowMs: performance.now(),
      renewedAtMs: this.leadership?.renewedAtMs,
      leaseDurationSeconds: this.leaseDurationSeconds,
      renewDeadlineMs: this.renewDeadlineMs,
      wallNow: new Date(),
    });
    if (decision.action === 'wait') {
      this.succeeded();
      this.logger.debug?.(
        `leader election ${this.where()}: held by ${decision.holder}, expires in ${Math.round(decision.expiresInMs)} ms unless renewed`,
      );
      return;
    }
    if (decision.action === 'lost') {
      this.succeeded();
      this.loseLeadership(decision.reason, decision.holder);
      return;
    }

    const sentAtMs = performance.now();
    let written: k8s.V1Lease;
    try {
      written = lease
        ? await this.api.replaceNamespacedLease(
            { name: this.name, namespace: this.namespace, body: { ...lease, spec: toV1Spec(decision.spec) } },
            options,
          )
        : await this.api.createNamespacedLease(
            {
              namespace: this.namespace,
              body: {
                apiVersion: 'coordination.k8s.io/v1',
                kind: 'Lease',
                metadata: { name: this.name, namespace: this.namespace },
                spec: toV1Spec(decision.spec),
              },
            },
            options,
          );
    } catch (e) {
      if (statusCode(e) === 409) {
        // Someone else wrote between our read and our write (resourceVersion or create conflict): they
        // won this round. The next round reads what they wrote.
        this.succeeded();
        this.logger.debug?.(`leader election ${this.where()}: lost a write race (409), retrying`);
        return;
      }
      return this.failed(lease ? 'update' : 'create', e, runSignal, timeoutMs);
    }
    this.succeeded();
    this.observe(specOf(written));

    if (decision.action === 'renew') {
      // Only if this is still the leadership the round started under (the deadline may have ended it).
      if (this.leadership && this.leadership === leadership) this.renewed(this.leadership, sentAtMs);
      return;
    }
    // A stop() that began during the write: the lease names us now and stop() releases it.
    if (runSignal.aborted || this.leadership) return;
    this.startLeading(sentAtMs, decision.reason);
  }

  private observe(spec: LeaseSpecRecord | null): void {
    this.observation = observeLease(this.observation, spec, performance.now());
    this.observedLeader = spec?.holderIdentity ?? '';
    if (this.observedLeader && this.observedLeader !== this.reportedLeader) {
      this.reportedLeader = this.observedLeader;
      this.logger.info(`leader election ${this.where()}: the leader is now ${this.observedLeader}`);
      this.safely('onNewLeader', () => this.callbacks.onNewLeader?.(this.observedLeader));
    }
  }

  private startLeading(sentAtMs: number, reason: AcquireReason): void {
    const controller = new AbortController();
    const leadership: Leadership = { controller, renewedAtMs: sentAtMs };
    this.leadership = leadership;
    this.acquiredBy = reason;
    this.renewed(leadership, sentAtMs);
    this.logger.info(`leader election ${this.where()}: ${this.identity} started leading (${reason})`);
    this.safely('onStartedLeading', () => {
      const result = this.callbacks.onStartedLeading(controller.signal);
      if (result && typeof (result as Promise<void>).then === 'function') {
        const work: Promise<void> = Promise.resolve(result).then(
          () => undefined,
          (e: unknown) => this.logger.error(`leader election ${this.where()}: the leading work failed`, e),
        );
        this.work.add(work);
        void work.finally(() => this.work.delete(work));
      }
    });
  }

  /** Records a successful renewal sent at `sentAtMs` and moves the deadline accordingly. */
  private renewed(leadership: Leadership, sentAtMs: number): void {
    leadership.renewedAtMs = sentAtMs;
    clearTimeout(leadership.deadline);
    const remaining = sentAtMs + this.renewDeadlineMs - performance.now();
    // A timer, not the next round: a renewal request may hang, and the leader must stop on time anyway.
    leadership.deadline = setTimeout(() => this.loseLeadership('deadline'), Math.max(0, remaining));
  }

  private loseLeadership(reason: LostReason | 'stopped', holder?: string): void {
    const leadership = this.leadership;
    if (!leadership) return;
    this.leadership = undefined;
    this.lostBy = reason;
    clearTimeout(leadership.deadline);
    leadership.controller.abort(new Error(`leadership lost: ${reason}`));
    const why = {
      deadline: `no successful renewal within ${this.renewDeadlineMs} ms`,
      taken: holder ? `the lease is now held by ${holder}` : 'the lease was released by someone else',
      deleted: 'the Lease was deleted',
      stopped: 'stopping',
    }[reason];
    const log = reason === 'stopped' ? this.logger.info : this.logger.warn;
    log.call(this.logger, `leader election ${this.where()}: ${this.identity} stopped leading (${why})`);
    this.safely('onStoppedLeading', () => this.callbacks.onStoppedLeading?.());
  }

  /** Clears holderIdentity if the lease still names us (a few tries within renewDeadline). Never throws. */
  private async release(): Promise<void> {
    const linked = linkedSignal(this.renewDeadlineMs);
    try {
      await this.releaseWithin(linked.signal);
    } finally {
      linked.dispose();
    }
  }

  private async releaseWithin(signal: AbortSignal): Promise<void> {
    const options = withSignal(signal);
    for (let attempt = 0; attempt < 3 && !signal.aborted; attempt++) {
      try {
        const lease = await this.api.readNamespacedLease(
          { name: this.name, namespace: this.namespace },
          options,
        );
        const spec = specOf(lease);
        if (spec.holderIdentity !== this.identity) return;
        const written = await this.api.replaceNamespacedLease(
          {
            name: this.name,
            namespace: this.namespace,
            body: { ...lease, spec: toV1Spec(releasedSpec(spec, new Date())) },
          },
          options,
        );
        this.observe(specOf(written));
        this.logger.info(`leader election ${this.where()}: ${this.identity} released the lease`);
        return;
      } catch (e) {
        const code = statusCode(e);
        if (code === 404) return;
        if (code === 409) continue;
        this.logger.warn(
          `leader election ${this.where()}: could not release the lease (a successor waits for it to expire): ${describeError(e)}`,
        );
        return;
      }
    }
  }

  private succeeded(): void {
    if (this.lastError !== undefined) {
      this.logger.info(`leader election ${this.where()}: the API server answers again`);
    }
    this.lastError = undefined;
  }

  private failed(op: string, e: unknown, runSignal: AbortSignal, timeoutMs: number): void {
    if (runSignal.aborted) return;
    const code = statusCode(e);
    let message = `leader election ${this.where()}: cannot ${op} the lease as ${this.identity}: `;
    message += isAbort(e) ? `no answer within ${Math.round(timeoutMs)} ms` : describeError(e);
    if (code === 403) message += ` (${RBAC_HINT} in namespace ${this.namespace})`;
    // Once per distinct message: a replica without rights would otherwise log every retry period.
    if (message !== this.lastError) this.logger.warn(message);
    else this.logger.debug?.(message);
    this.lastError = message;
  }

  private safely(what: string, fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.logger.error(`leader election ${this.where()}: ${what} threw`, e);
    }
  }

  private where(): string {
    return `${this.namespace}/${this.name}`;
  }
}

/** The spec of a lease as read: client-node leaves MicroTime fields as the strings the server sent. */
function specOf(lease: k8s.V1Lease): LeaseSpecRecord {
  const s = lease.spec ?? {};
  const time = (t: unknown) =>
    typeof t === 'string' ? t : t instanceof Date ? t.toISOString().replace(/Z$/, '000Z') : undefined;
  return {
    holderIdentity: s.holderIdentity,
    leaseDurationSeconds: s.leaseDurationSeconds,
    acquireTime: time(s.acquireTime),
    renewTime: time(s.renewTime),
    leaseTransitions: s.leaseTransitions,
  };
}

/**
 * Our spec for client-node. Its ObjectSerializer passes V1MicroTime values through untouched, so the
 * MicroTime strings go out exactly as formatted (a Date would be sent with three fraction digits).
 */
function toV1Spec(spec: LeaseSpecRecord): k8s.V1LeaseSpec {
  return {
    holderIdentity: spec.holderIdentity,
    leaseDurationSeconds: spec.leaseDurationSeconds,
    acquireTime: spec.acquireTime as unknown as k8s.V1MicroTime,
    renewTime: spec.renewTime as unknown as k8s.V1MicroTime,
    leaseTransitions: spec.leaseTransitions,
  };
}

/** Per-request options that attach an AbortSignal (client-node 1.x has no per-call timeout of its own). */
function withSignal(signal: AbortSignal): k8s.ConfigurationOptions {
  return {
    middleware: [
      {
        pre: (context) => {
          context.setSignal(signal);
          return new k8s.Observable(Promise.resolve(context));
        },
        post: (context) => new k8s.Observable(Promise.resolve(context)),
      },
    ],
    middlewareMergeStrategy: 'append',
  };
}

/** The HTTP status of a client-node ApiException (not Node's string error codes). */
function statusCode(e: unknown): number | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

function isAbort(e: unknown): boolean {
  return (e as { name?: unknown } | null)?.name === 'AbortError';
}

/** An ApiException as `HTTP 403: <the Status message>`, anything else by its message. */
function describeError(e: unknown): string {
  const code = statusCode(e);
  if (code !== undefined) {
    const body = (e as { body?: unknown }).body;
    let message: string | undefined;
    if (typeof body === 'string') {
      try {
        message = (JSON.parse(body) as { message?: string }).message;
      } catch {
        message = body.slice(0, 500);
      }
    }
    return `HTTP ${code}${message ? `: ${message}` : ''}`;
  }
  return e instanceof Error ? e.message : String(e);
}

/**
 * A signal that aborts after `timeoutMs` or with any of `parents`, and lets go of the parents when
 * disposed. Not AbortSignal.any: on Node 20 it leaks when one input is long-lived (nodejs/node#55351),
 * and the run signal lives as long as the elector.
 */
function linkedSignal(timeoutMs: number, ...parents: (AbortSignal | undefined)[]) {
  const controller = new AbortController();
  const abort = () => controller.abort();
  const timer = setTimeout(abort, Math.max(1, Math.ceil(timeoutMs)));
  const linked = parents.filter((p): p is AbortSignal => p !== undefined);
  for (const p of linked) {
    if (p.aborted) controller.abort();
    else p.addEventListener('abort', abort, { once: true });
  }
  return {
    signal: controller.signal,
    dispose: () => {
      clearTimeout(timer);
      for (const p of linked) p.removeEventListener('abort', abort);
    },
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Whether all `promises` settled within `ms` (they never reject here). */
async function settledWithin(promises: Promise<void>[], ms: number): Promise<boolean> {
  if (promises.length === 0) return true;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  const all = Promise.all(promises).then(() => true as const);
  try {
    return await Promise.race([all, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
