/**
 * The pure core of leader election over a coordination.k8s.io/v1 Lease, after client-go's
 * `tools/leaderelection` (tryAcquireOrRenew): given the lease as read, what this replica saw before, its
 * identity and its local clock, decide whether to acquire, renew, wait or give up leadership. No I/O, no
 * clock: every time is an argument, so the rules are unit-tested exactly (leaderElection.ts does the I/O).
 *
 * Expiry is judged the way client-go judges it, by the LOCAL monotonic clock from the moment this replica
 * first saw the current spec (a new renewTime is a new spec), never by comparing the lease's timestamps
 * with our wall clock: replicas' clocks may disagree, but each one's elapsed time is trustworthy.
 */

/** The LeaseSpec fields the election reads and writes; times are MicroTime strings (RFC 3339, 6 digits). */
export interface LeaseSpecRecord {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

/** What this replica last saw of the lease and when (local monotonic milliseconds). */
export interface LeaseObservation {
  /** The observed spec in a canonical form: any change (a renewal, a new holder) is a new key. */
  key: string;
  /** When this replica first saw `key`. */
  seenAtMs: number;
}

/** The inputs of {@link decideLease}. */
export interface LeaseDecisionInput {
  /** The lease's spec as just read, or null when the Lease does not exist (404). */
  spec: LeaseSpecRecord | null;
  /** {@link observeLease} of this very read (so `seenAtMs` is when this spec was first seen). */
  observation: LeaseObservation | undefined;
  identity: string;
  /** Local monotonic now (ms). */
  nowMs: number;
  /**
   * When this replica leads: the local time at which the write that last renewed the lease was SENT
   * (the server applied it later, so everyone else's expiry clock started later still). Undefined when
   * not leading.
   */
  renewedAtMs: number | undefined;
  /** Our lease duration: written into the lease, and the fallback when the lease has none. */
  leaseDurationSeconds: number;
  /** A leader that has not renewed for this long stops leading (must be below the lease duration). */
  renewDeadlineMs: number;
  /** Wall-clock now, written as acquireTime/renewTime (informational for humans and other tools). */
  wallNow: Date;
}

/** How a leadership began. */
export type AcquireReason =
  /** There was no Lease: we created it. */
  | 'create'
  /** The Lease named no holder (released). */
  | 'free'
  /** The holder did not renew within the lease duration of our observation. */
  | 'expired'
  /** The Lease already named us (our own earlier write, e.g. after a restart or a late renewal). */
  | 'ours';

/** Why a leadership ended. */
export type LostReason =
  /** No successful renewal within renewDeadline. */
  | 'deadline'
  /** The Lease names another holder (or none). */
  | 'taken'
  /** The Lease was deleted under us. */
  | 'deleted';

/** The outcome of {@link decideLease}. */
export type LeaseDecision =
  | { action: 'acquire'; reason: AcquireReason; spec: LeaseSpecRecord }
  | { action: 'renew'; spec: LeaseSpecRecord }
  | { action: 'wait'; holder: string; expiresInMs: number }
  | { action: 'lost'; reason: LostReason; holder: string };

/** A Date as a Kubernetes MicroTime (`2006-01-02T15:04:05.000000Z`); the API server rejects 3 digits. */
export function formatMicroTime(date: Date): string {
  return date.toISOString().replace(/Z$/, '000Z');
}

/** The canonical form of a spec: the fields in a fixed order, absent ones spelled out. */
export function leaseSpecKey(spec: LeaseSpecRecord | null): string {
  if (!spec) return 'absent';
  return JSON.stringify([
    spec.holderIdentity ?? '',
    spec.leaseDurationSeconds ?? 0,
    spec.acquireTime ?? '',
    spec.renewTime ?? '',
    spec.leaseTransitions ?? 0,
  ]);
}

/** The observation after reading `spec` at `nowMs`: unchanged if we saw this spec before, else seen now. */
export function observeLease(
  previous: LeaseObservation | undefined,
  spec: LeaseSpecRecord | null,
  nowMs: number,
): LeaseObservation {
  const key = leaseSpecKey(spec);
  return previous?.key === key ? previous : { key, seenAtMs: nowMs };
}

/** Decides what one election round does with the lease it just read (client-go's tryAcquireOrRenew). */
export function decideLease(input: LeaseDecisionInput): LeaseDecision {
  const { spec, identity, nowMs, renewedAtMs, renewDeadlineMs } = input;
  const leading = renewedAtMs !== undefined;
  const holder = spec?.holderIdentity ?? '';
  const now = formatMicroTime(input.wallNow);
  const ours = (acquireTime: string, leaseTransitions: number): LeaseSpecRecord => ({
    holderIdentity: identity,
    leaseDurationSeconds: input.leaseDurationSeconds,
    acquireTime,
    renewTime: now,
    leaseTransitions,
  });

  // Checked before the lease: a renewal that came back after the deadline must not extend a leadership
  // the others may already consider expired.
  if (leading && nowMs - renewedAtMs >= renewDeadlineMs)
    return { action: 'lost', reason: 'deadline', holder };
  if (!spec) {
    // Someone deleted the Lease under a leader: the guarantee is gone (another replica may create it this
    // instant), so stop first and compete again like everyone else.
    if (leading) return { action: 'lost', reason: 'deleted', holder };
    return { action: 'acquire', reason: 'create', spec: ours(now, 0) };
  }
  const transitions = spec.leaseTransitions ?? 0;
  if (holder === identity) {
    // client-go keeps acquireTime and leaseTransitions while the holder stays the same.
    const kept = ours(spec.acquireTime ?? now, transitions);
    return leading ? { action: 'renew', spec: kept } : { action: 'acquire', reason: 'ours', spec: kept };
  }
  if (leading) return { action: 'lost', reason: 'taken', holder };
  if (holder === '') return { action: 'acquire', reason: 'free', spec: ours(now, transitions + 1) };

  const durationMs = (positive(spec.leaseDurationSeconds) ?? input.leaseDurationSeconds) * 1000;
  // A spec we have not seen before (or an observation of another spec) starts the clock now.
  const seenAtMs =
    input.observation && input.observation.key === leaseSpecKey(spec) ? input.observation.seenAtMs : nowMs;
  const expiresInMs = seenAtMs + durationMs - nowMs;
  if (expiresInMs > 0) return { action: 'wait', holder, expiresInMs };
  return { action: 'acquire', reason: 'expired', spec: ours(now, transitions + 1) };
}

/**
 * The spec a graceful stop writes (client-go's release): no holder, so a successor need not wait, and a
 * one-second duration for tools that only look at the duration. The transition count is kept.
 */
export function releasedSpec(spec: LeaseSpecRecord, wallNow: Date): LeaseSpecRecord {
  const now = formatMicroTime(wallNow);
  return {
    holderIdentity: '',
    leaseDurationSeconds: 1,
    acquireTime: now,
    renewTime: now,
    leaseTransitions: spec.leaseTransitions ?? 0,
  };
}

function positive(n: number | undefined): number | undefined {
  return n !== undefined && Number.isFinite(n) && n > 0 ? n : undefined;
}
