import { describe, expect, it } from 'vitest';
import {
  decideLease,
  formatMicroTime,
  type LeaseDecisionInput,
  type LeaseSpecRecord,
  leaseSpecKey,
  observeLease,
  releasedSpec,
} from './leaderElectionDecision';

const wallNow = new Date('2026-11-26T07:30:00.123Z');
const NOW = '2026-11-26T07:30:00.123000Z';

const held = (holder: string, extra: Partial<LeaseSpecRecord> = {}): LeaseSpecRecord => ({
  holderIdentity: holder,
  leaseDurationSeconds: 15,
  acquireTime: '2026-11-26T07:00:00.000000Z',
  renewTime: '2026-11-26T07:29:58.000000Z',
  leaseTransitions: 4,
  ...extra,
});

/** One round as the elector runs it: observe the read spec, then decide. */
function round(
  spec: LeaseSpecRecord | null,
  nowMs: number,
  overrides: Partial<LeaseDecisionInput> = {},
  previous?: ReturnType<typeof observeLease>,
) {
  const observation = observeLease(previous, spec, nowMs);
  const decision = decideLease({
    spec,
    observation,
    identity: 'me',
    nowMs,
    renewedAtMs: undefined,
    leaseDurationSeconds: 15,
    renewDeadlineMs: 10_000,
    wallNow,
    ...overrides,
  });
  return { observation, decision };
}

describe('formatMicroTime', () => {
  it('writes six fraction digits (MicroTime), in UTC', () => {
    expect(formatMicroTime(wallNow)).toBe(NOW);
    expect(formatMicroTime(new Date(0))).toBe('1970-01-01T00:00:00.000000Z');
  });
});

describe('observeLease', () => {
  it('keeps the first sighting of an unchanged spec and restarts on any change', () => {
    const a = observeLease(undefined, held('other'), 100);
    expect(a.seenAtMs).toBe(100);
    expect(observeLease(a, held('other'), 900)).toBe(a);
    // A renewal changes renewTime: the clock restarts at the new sighting.
    const b = observeLease(a, held('other', { renewTime: '2026-11-26T07:29:59.000000Z' }), 900);
    expect(b.seenAtMs).toBe(900);
    // So does a new holder with the same renewTime, or a changed duration.
    expect(observeLease(a, held('third'), 950).seenAtMs).toBe(950);
    expect(observeLease(a, held('other', { leaseDurationSeconds: 30 }), 960).seenAtMs).toBe(960);
  });

  it('treats a missing lease as a spec of its own', () => {
    const absent = observeLease(undefined, null, 5);
    expect(absent.key).toBe('absent');
    expect(observeLease(absent, held('x'), 6).seenAtMs).toBe(6);
  });

  it('spells absent fields out, so {} and explicit defaults are the same spec', () => {
    expect(leaseSpecKey({})).toBe(
      leaseSpecKey({ holderIdentity: '', leaseDurationSeconds: 0, leaseTransitions: 0 }),
    );
    expect(leaseSpecKey(null)).not.toBe(leaseSpecKey({}));
  });
});

describe('decideLease: acquiring', () => {
  it('creates a missing lease with us as holder and no transitions', () => {
    const { decision } = round(null, 0);
    expect(decision).toEqual({
      action: 'acquire',
      reason: 'create',
      spec: {
        holderIdentity: 'me',
        leaseDurationSeconds: 15,
        acquireTime: NOW,
        renewTime: NOW,
        leaseTransitions: 0,
      },
    });
  });

  it('takes a released lease at once and counts a transition', () => {
    const { decision } = round(held('', { leaseDurationSeconds: 1 }), 0);
    expect(decision).toEqual({
      action: 'acquire',
      reason: 'free',
      spec: {
        holderIdentity: 'me',
        leaseDurationSeconds: 15,
        acquireTime: NOW,
        renewTime: NOW,
        leaseTransitions: 5,
      },
    });
    // An absent holderIdentity is free too.
    expect(round({ leaseTransitions: 2 }, 0).decision).toMatchObject({
      action: 'acquire',
      reason: 'free',
      spec: { leaseTransitions: 3 },
    });
  });

  it('waits out a held lease for its duration from OUR first sighting, whatever its timestamps say', () => {
    // renewTime is half an hour old by our wall clock: irrelevant, we have only just seen it.
    const stale = held('other', { renewTime: '2026-11-26T07:00:00.000000Z' });
    const first = round(stale, 1_000);
    expect(first.decision).toEqual({ action: 'wait', holder: 'other', expiresInMs: 15_000 });
    const later = round(stale, 15_999, {}, first.observation);
    expect(later.decision).toEqual({ action: 'wait', holder: 'other', expiresInMs: 1 });
    const expired = round(stale, 16_000, {}, later.observation);
    expect(expired.decision).toEqual({
      action: 'acquire',
      reason: 'expired',
      spec: {
        holderIdentity: 'me',
        leaseDurationSeconds: 15,
        acquireTime: NOW,
        renewTime: NOW,
        leaseTransitions: 5,
      },
    });
  });

  it('restarts the wait whenever the holder renews', () => {
    const first = round(held('other'), 0);
    const renewed = held('other', { renewTime: '2026-11-26T07:30:10.000000Z' });
    const second = round(renewed, 14_000, {}, first.observation);
    expect(second.decision).toEqual({ action: 'wait', holder: 'other', expiresInMs: 15_000 });
    expect(round(renewed, 28_999, {}, second.observation).decision.action).toBe('wait');
    expect(round(renewed, 29_000, {}, second.observation).decision.action).toBe('acquire');
  });

  it("uses the lease's own duration, and ours when the lease has none", () => {
    const short = round(held('other', { leaseDurationSeconds: 3 }), 0);
    expect(short.decision).toEqual({ action: 'wait', holder: 'other', expiresInMs: 3_000 });
    expect(
      round(held('other', { leaseDurationSeconds: 3 }), 3_000, {}, short.observation).decision,
    ).toMatchObject({
      action: 'acquire',
      reason: 'expired',
      spec: { leaseDurationSeconds: 15 },
    });
    for (const d of [undefined, 0, -5, Number.NaN]) {
      expect(round(held('other', { leaseDurationSeconds: d }), 0).decision).toEqual({
        action: 'wait',
        holder: 'other',
        expiresInMs: 15_000,
      });
    }
  });

  it('starts the clock at this read when given an observation of another spec', () => {
    const old = observeLease(undefined, held('other'), 0);
    const spec = held('other', { renewTime: '2026-11-26T07:31:00.000000Z' });
    const decision = decideLease({
      spec,
      observation: old,
      identity: 'me',
      nowMs: 50_000,
      renewedAtMs: undefined,
      leaseDurationSeconds: 15,
      renewDeadlineMs: 10_000,
      wallNow,
    });
    expect(decision).toEqual({ action: 'wait', holder: 'other', expiresInMs: 15_000 });
  });

  it('reclaims a lease that already names us, keeping acquireTime and the transition count', () => {
    const { decision } = round(held('me'), 0);
    expect(decision).toEqual({
      action: 'acquire',
      reason: 'ours',
      spec: {
        holderIdentity: 'me',
        leaseDurationSeconds: 15,
        acquireTime: '2026-11-26T07:00:00.000000Z',
        renewTime: NOW,
        leaseTransitions: 4,
      },
    });
  });
});

describe('decideLease: leading', () => {
  const leading = { renewedAtMs: 1_000 };

  it('renews our lease before the deadline, keeping acquireTime and transitions, with our duration', () => {
    const { decision } = round(held('me', { leaseDurationSeconds: 40 }), 10_999, leading);
    expect(decision).toEqual({
      action: 'renew',
      spec: {
        holderIdentity: 'me',
        leaseDurationSeconds: 15,
        acquireTime: '2026-11-26T07:00:00.000000Z',
        renewTime: NOW,
        leaseTransitions: 4,
      },
    });
  });

  it('is lost once renewDeadline has passed since the last renewal was sent, even if the lease still names us', () => {
    expect(round(held('me'), 11_000, leading).decision).toEqual({
      action: 'lost',
      reason: 'deadline',
      holder: 'me',
    });
    expect(round(null, 11_000, leading).decision).toMatchObject({ action: 'lost', reason: 'deadline' });
  });

  it('is lost at once when the lease names someone else or nobody', () => {
    expect(round(held('other'), 2_000, leading).decision).toEqual({
      action: 'lost',
      reason: 'taken',
      holder: 'other',
    });
    expect(round(held(''), 2_000, leading).decision).toEqual({ action: 'lost', reason: 'taken', holder: '' });
  });

  it('is lost when the lease was deleted (another replica may be creating it right now)', () => {
    expect(round(null, 2_000, leading).decision).toEqual({ action: 'lost', reason: 'deleted', holder: '' });
  });
});

describe('never two leaders', () => {
  // A leader L renews at local times it sends writes; a candidate C reads the lease at arbitrary times
  // after each write lands. Whatever the delays, C never acquires while L still counts itself leader.
  it('the candidate cannot acquire before the leader has given up, for any interleaving', () => {
    const leaseSeconds = 3;
    const renewDeadlineMs = 2_000;
    let seed = 7;
    const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    for (let trial = 0; trial < 200; trial++) {
      // The leader's last successful renewal: sent at `sent`, applied by the server at `applied`.
      const sent = Math.floor(random() * 10_000);
      const applied = sent + Math.floor(random() * 1_500);
      const spec = held('leader', {
        leaseDurationSeconds: leaseSeconds,
        renewTime: `renewal-${trial}`,
      });
      // The candidate first sees that spec at some point after it was applied, then keeps polling.
      let observation = observeLease(undefined, held('leader'), 0);
      let t = applied + Math.floor(random() * 800);
      let acquiredAt: number | undefined;
      for (let i = 0; i < 100 && acquiredAt === undefined; i++, t += Math.floor(random() * 400) + 1) {
        observation = observeLease(observation, spec, t);
        const d = decideLease({
          spec,
          observation,
          identity: 'candidate',
          nowMs: t,
          renewedAtMs: undefined,
          leaseDurationSeconds: leaseSeconds,
          renewDeadlineMs,
          wallNow,
        });
        if (d.action === 'acquire') acquiredAt = t;
      }
      expect(acquiredAt).toBeDefined();
      // The leader, with the same clock, considers itself lost from `sent + renewDeadline` on.
      const leaderAtAcquire = decideLease({
        spec,
        observation: undefined,
        identity: 'leader',
        nowMs: acquiredAt!,
        renewedAtMs: sent,
        leaseDurationSeconds: leaseSeconds,
        renewDeadlineMs,
        wallNow,
      });
      expect(leaderAtAcquire).toMatchObject({ action: 'lost', reason: 'deadline' });
    }
  });
});

describe('releasedSpec', () => {
  it('clears the holder, shortens the duration and keeps the transition count', () => {
    expect(releasedSpec(held('me'), wallNow)).toEqual({
      holderIdentity: '',
      leaseDurationSeconds: 1,
      acquireTime: NOW,
      renewTime: NOW,
      leaseTransitions: 4,
    });
    expect(releasedSpec({}, wallNow).leaseTransitions).toBe(0);
  });
});
