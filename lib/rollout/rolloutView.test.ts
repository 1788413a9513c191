import { describe, expect, it } from 'vitest';
import { ENDED_PHASES, RolloutPhase } from './rollout';
import { FAILED_ANALYSIS, grpcFailed, NOW, rolloutIn } from './rolloutFixtures.testutil';
import {
  activeRolloutOf,
  analysisLines,
  rolloutActions,
  rolloutChip,
  rolloutRecordText,
  RolloutsAnswer,
  secondsLeft,
  stepViews,
  weightsNow,
} from './rolloutView';

const statuses = (phase: RolloutPhase) =>
  stepViews(rolloutIn(phase), NOW).map((s) => `${s.percent}% ${s.status}: ${s.text}`);

describe('stepViews', () => {
  it('a progressing rollout: the passed step, the running one with its countdown, the pending ones', () => {
    expect(statuses('progressing')).toEqual([
      '10% passed: passed',
      '25% running: waiting, analysis in 12 s',
      '50% pending: pending',
      '100% pending: pending',
    ]);
    // The countdown follows the clock and stops at 0.
    expect(stepViews(rolloutIn('progressing'), NOW + 5_500)[1]!.text).toBe('waiting, analysis in 7 s');
    expect(stepViews(rolloutIn('progressing'), NOW + 60_000)[1]!.text).toBe('waiting, analysis in 0 s');
    expect(
      stepViews(rolloutIn('progressing', { activity: 'analysing', nextAt: undefined }), NOW)[1]!.text,
    ).toBe('analysing');
    expect(
      stepViews(rolloutIn('progressing', { activity: 'applying', nextAt: undefined }), NOW)[1]!.text,
    ).toBe('applying');
  });

  it('a failed step keeps its analysis and reasons; steps never run say so once the rollout ended', () => {
    const [, second, third] = stepViews(rolloutIn('rolled-back'), NOW);
    expect(second).toMatchObject({
      status: 'failed',
      text: 'failed its analysis',
      reasons: FAILED_ANALYSIS.reasons,
    });
    expect(second!.analysis).toEqual([
      '12 of 20 probes answered (60%)',
      'p50 3 ms, p99 41 ms',
      'answers: echo-v1 9, echo-v2 3',
    ]);
    expect(third).toMatchObject({ status: 'skipped', text: 'not run' });
    expect(statuses('paused').slice(0, 3)).toEqual([
      '10% passed: passed',
      '25% failed: failed its analysis',
      '50% pending: pending',
    ]);
    expect(statuses('aborted')[1]).toBe('25% stopped: ended before its analysis');
    expect(stepViews(rolloutIn('failed'), NOW)[1]).toMatchObject({
      status: 'failed',
      text: 'failed to apply',
      reasons: ['the mesh directory could not be written: EACCES'],
    });
    expect(statuses('succeeded').every((s) => s.includes(' passed: '))).toBe(true);
  });

  it('a promotion: the steps it jumped over were not run, the last one applied without analysis', () => {
    const r = rolloutIn('succeeded');
    const promoted = rolloutIn('succeeded', {
      steps: [
        r.steps[0]!,
        { percent: 25, weights: [75, 25] },
        { percent: 50, weights: [50, 50] },
        { ...r.steps[3]!, analysis: undefined },
      ],
      message: 'promoted by local-admin: echo-v2 at 100% at once',
    });
    expect(stepViews(promoted, NOW).map((s) => `${s.status}: ${s.text}`)).toEqual([
      'passed: passed',
      'skipped: not run',
      'skipped: not run',
      'passed: promoted, not analysed',
    ]);
    // While the promotion applies: the steps between are still pending, the last one applying.
    const applying = rolloutIn('progressing', {
      activity: 'applying',
      nextAt: undefined,
      steps: [
        r.steps[0]!,
        { percent: 25, weights: [75, 25] },
        { percent: 50, weights: [50, 50] },
        { percent: 100, weights: [0, 100] },
      ],
    });
    expect(stepViews(applying, NOW).map((s) => `${s.status}: ${s.text}`)).toEqual([
      'passed: passed',
      'pending: pending',
      'pending: pending',
      'running: applying',
    ]);
  });

  it('without an analysis a step passes once the rollout moves on from it', () => {
    const spec = { ...rolloutIn('progressing').spec, analysis: {} };
    const noAnalysis = (r: ReturnType<typeof rolloutIn>) => ({
      ...r,
      spec,
      steps: r.steps.map(({ analysis: _, ...s }) => s),
    });
    expect(stepViews(noAnalysis(rolloutIn('progressing')), NOW).map((s) => s.status)).toEqual([
      'passed',
      'running',
      'pending',
      'pending',
    ]);
    expect(stepViews(noAnalysis(rolloutIn('succeeded')), NOW)[3]).toMatchObject({
      status: 'passed',
      analysis: ['no analysis: the step passed after its pause'],
    });
    // Aborted during its pause: the step before passed, that one did not finish.
    expect(stepViews(noAnalysis(rolloutIn('aborted')), NOW).map((s) => s.status)).toEqual([
      'passed',
      'stopped',
      'skipped',
      'skipped',
    ]);
  });

  it('analysis lines: backends in the split’s order then others, the webhook, or no analysis at all', () => {
    expect(
      analysisLines(
        {
          at: '',
          probe: {
            sent: 4,
            answered: 4,
            successPercent: 100,
            p50Ms: 2.345,
            p99Ms: 31.02,
            byBackend: { other: 1, b: 2, a: 1 },
            errors: [],
          },
          webhook: { ok: true, status: 204, ms: 12.4 },
          passed: true,
          reasons: [],
        },
        ['a', 'b'],
      ),
    ).toEqual([
      '4 of 4 probes answered (100%)',
      'p50 2.3 ms, p99 31 ms',
      'answers: a 1, b 2, other 1',
      'webhook answered 204 in 12 ms',
    ]);
    expect(
      analysisLines(
        { at: '', webhook: { ok: false, error: 'timed out', ms: 5000 }, passed: false, reasons: [] },
        [],
      ),
    ).toEqual(['webhook: timed out (5000 ms)']);
    expect(analysisLines({ at: '', passed: true, reasons: [] }, [])).toEqual([
      'no analysis: the step passed after its pause',
    ]);
  });

  it('analysis lines of the gRPC clients: the canary’s success rate over the window, every entry’s RPCs', () => {
    expect(analysisLines(grpcFailed(46, 76), ['echo-v1', 'echo-v2'])).toEqual([
      'gRPC RPCs to the canary: 0 of 50 succeeded (0%) in 30 s',
      'RPCs: echo-v1 250, echo-v2 50 (50 failed)',
    ]);
    const none = grpcFailed(0, 2);
    none.grpc = {
      ...none.grpc!,
      requests: 0,
      failed: 0,
      successPercent: null,
      byBackend: { 'echo-v1': { requests: 0, succeeded: 0, failed: 0 } },
    };
    expect(analysisLines(none, ['echo-v1', 'echo-v2'])).toEqual([
      'gRPC RPCs to the canary: 0 of 0 succeeded (none finished) in 2 s',
      'RPCs: echo-v1 0',
    ]);
    // A rollout judged by the gRPC clients alone: its steps before the current one are judged ones.
    const r = rolloutIn('rolled-back', {
      spec: {
        ...rolloutIn('rolled-back').spec,
        analysis: { grpc: { minSuccessPercent: 99, minRequests: 20 } },
      },
    });
    r.steps[1]!.analysis = grpcFailed(46, 76);
    expect(stepViews(r, NOW)[1]).toMatchObject({
      status: 'failed',
      analysis: [
        'gRPC RPCs to the canary: 0 of 50 succeeded (0%) in 30 s',
        'RPCs: echo-v1 250, echo-v2 50 (50 failed)',
      ],
      reasons: ["the canary's success rate was 0% (0 of 50 RPCs succeeded, at least 99% needed)"],
    });
  });

  it('secondsLeft rounds up and never goes below 0', () => {
    expect(secondsLeft(new Date(NOW + 1200).toISOString(), NOW)).toBe(2);
    expect(secondsLeft(new Date(NOW - 1200).toISOString(), NOW)).toBe(0);
    expect(secondsLeft(undefined, NOW)).toBeUndefined();
  });
});

describe('what a phase allows', () => {
  it('pause while progressing, resume while paused, abort and promote in both, nothing once ended', () => {
    expect(rolloutActions(rolloutIn('progressing'))).toEqual(['pause', 'abort', 'promote']);
    expect(rolloutActions(rolloutIn('paused'))).toEqual(['resume', 'abort', 'promote']);
    expect(rolloutActions(rolloutIn('progressing', { activity: 'rolling back', nextAt: undefined }))).toEqual(
      [],
    );
    for (const phase of ENDED_PHASES) expect(rolloutActions(rolloutIn(phase))).toEqual([]);
  });

  it('finds the Target’s rollout that has not ended', () => {
    const list = [rolloutIn('succeeded'), rolloutIn('paused')];
    expect(activeRolloutOf(list, { namespace: 'default', name: 'echo-canary' })?.phase).toBe('paused');
    expect(activeRolloutOf(list, { namespace: 'other', name: 'echo-canary' })).toBeUndefined();
    expect(
      activeRolloutOf([rolloutIn('succeeded')], { namespace: 'default', name: 'echo-canary' }),
    ).toBeUndefined();
  });

  it('weights now, with those before the rollout', () => {
    expect(weightsNow(rolloutIn('progressing'))).toEqual([
      { name: 'echo-v1', weight: 75, initial: 100, percent: 75, canary: false },
      { name: 'echo-v2', weight: 25, initial: 0, percent: 25, canary: true },
    ]);
  });
});

describe('the toolbar chip', () => {
  const none = new Set<string>();
  it('says the step while progressing, paused while paused', () => {
    expect(rolloutChip([rolloutIn('progressing')], none)).toEqual({
      id: rolloutIn('progressing').id,
      text: 'Rollout: 25% (step 2 of 4)',
      short: 'Rollout: 25%',
      tone: 'busy',
    });
    expect(rolloutChip([rolloutIn('progressing', { steps: [] })], none)?.text).toBe('Rollout: starting');
    expect(rolloutChip([rolloutIn('paused'), rolloutIn('rolled-back')], none)).toMatchObject({
      text: 'Rollout paused',
      tone: 'warn',
    });
  });

  it('shows a rollback or failure until this browser opened it; nothing for a success or an abort', () => {
    const back = rolloutIn('rolled-back');
    expect(rolloutChip([back], none)).toEqual({
      id: back.id,
      text: 'Rollout rolled back',
      short: 'Rollout rolled back',
      tone: 'bad',
    });
    expect(rolloutChip([back], new Set([back.id]))).toBeUndefined();
    expect(rolloutChip([rolloutIn('failed')], none)).toMatchObject({ text: 'Rollout failed', tone: 'bad' });
    expect(rolloutChip([rolloutIn('succeeded')], none)).toBeUndefined();
    expect(rolloutChip([rolloutIn('aborted')], none)).toBeUndefined();
    // Only the newest counts: an old rollback behind a newer success is history.
    expect(rolloutChip([rolloutIn('succeeded'), back], none)).toBeUndefined();
    expect(rolloutChip([], none)).toBeUndefined();
  });
});

describe('history words and the list', () => {
  it('names a step (counted from 1) and the rollback', () => {
    expect(rolloutRecordText({ id: 'r', step: 1, of: 4, percent: 25, action: 'step' })).toBe(
      'rollout step 2 of 4 (25%)',
    );
    expect(rolloutRecordText({ id: 'r', of: 4, percent: 0, action: 'rollback' })).toBe('rollout rolled back');
  });

  it('reads GET /api/rollouts', () => {
    const list = { available: true, rollouts: [rolloutIn('progressing')] };
    expect(RolloutsAnswer.parse(JSON.parse(JSON.stringify(list)))).toEqual(list);
    expect(
      RolloutsAnswer.safeParse({ available: false, reason: 'no local mesh', rollouts: [] }).success,
    ).toBe(true);
    expect(RolloutsAnswer.safeParse({ rollouts: [] }).success).toBe(false);
  });
});
