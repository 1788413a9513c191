import { describe, expect, it } from 'vitest';
import {
  canaryPercent,
  checkRollout,
  judgeStep,
  nextMove,
  replyPod,
  rolloutId,
  RolloutSpec,
  stepWeights,
  summariseProbes,
} from './rollout';

const spec = (over: Record<string, unknown> = {}) =>
  RolloutSpec.parse({ target: { name: 'echo-canary' }, canary: 'echo-v2', steps: [25, 50, 100], ...over });

const split = [
  { serviceName: 'echo-v1', weight: 80 },
  { serviceName: 'echo-v2', weight: 20 },
];

describe('RolloutSpec', () => {
  it('fills the defaults: namespace, pause, no analysis, roll back on failure', () => {
    const s = spec();
    expect(s.target).toEqual({ namespace: 'default', name: 'echo-canary' });
    expect(s.pauseS).toBe(30);
    expect(s.analysis).toEqual({});
    expect(s.onFailure).toBe('rollback');
  });

  it('names the step that is not above the one before', () => {
    const r = RolloutSpec.safeParse({ target: { name: 't' }, canary: 'c', steps: [10, 50, 50] });
    expect(r.success).toBe(false);
    expect(r.error!.issues.map((i) => [i.path.join('.'), i.message])).toEqual([
      ['steps.2', 'each step must be above the one before (50% after 50%)'],
    ]);
  });

  it('takes http(s) webhooks only, and probe defaults', () => {
    expect(
      RolloutSpec.safeParse({
        target: { name: 't' },
        canary: 'c',
        steps: [100],
        analysis: { webhook: { url: 'file:///etc/passwd' } },
      }).success,
    ).toBe(false);
    const s = spec({
      analysis: { probe: { listener: 'gateway' }, webhook: { url: 'http://127.0.0.1:9/x' } },
    });
    expect(s.analysis.probe).toMatchObject({ count: 20, minSuccessPercent: 95, timeoutMs: 1000 });
    expect(s.analysis.webhook).toEqual({ url: 'http://127.0.0.1:9/x', timeoutMs: 5000 });
  });
});

describe('stepWeights and canaryPercent', () => {
  it('gives the canary its share and the others the rest in their proportions, summing to 100', () => {
    expect(stepWeights([80, 20], 1, 50)).toEqual([50, 50]);
    expect(stepWeights([60, 30, 10], 2, 40)).toEqual([40, 20, 40]);
    expect(stepWeights([80, 20], 1, 100)).toEqual([0, 100]);
    expect(stepWeights([3, 1], 1, 25).reduce((a, b) => a + b, 0)).toBe(100);
  });

  it('reads the share from relative weights', () => {
    expect(canaryPercent([3, 1], 1)).toBe(25);
    expect(canaryPercent([2, 1], 1)).toBe(33.3);
    expect(canaryPercent([0, 0], 1)).toBe(0);
  });
});

describe('checkRollout', () => {
  it('passes a canary of the split whose first step is above its share now', () => {
    expect(checkRollout(spec(), split)).toEqual([]);
  });

  it('says what is wrong and where', () => {
    expect(checkRollout(spec(), undefined)).toEqual([
      { path: 'target', message: 'Target default/echo-canary does not run with a split' },
    ]);
    expect(checkRollout(spec({ canary: 'echo-v3' }), split)[0]).toEqual({
      path: 'canary',
      message: 'echo-v3 is not in the split of Target default/echo-canary (it has echo-v1, echo-v2)',
    });
    expect(checkRollout(spec({ steps: [20, 100] }), split)[0]).toEqual({
      path: 'steps.0',
      message: "the first step (20%) must be above the canary's share now (20%)",
    });
    expect(checkRollout(spec(), [{ serviceName: 'echo-v2', weight: 1 }])[0]!.path).toBe('target');
  });
});

describe('probes and verdicts', () => {
  const backendOf = (pod: string) => ({ 'echo-v1-a': 'echo-v1', 'echo-v2-a': 'echo-v2' })[pod];

  it('reads the answering pod from a demo echo', () => {
    expect(replyPod('echo-v2-a(meshdeck-rollout)')).toBe('echo-v2-a');
    expect(replyPod('hello')).toBeUndefined();
    expect(replyPod(undefined)).toBeUndefined();
  });

  it('sums probes up: success rate, percentiles, answers per backend, distinct errors', () => {
    const a = summariseProbes(
      [
        { ok: true, reply: 'echo-v1-a(x)', latencyMs: 3 },
        { ok: true, reply: 'echo-v2-a(x)', latencyMs: 9 },
        { ok: true, reply: 'stranger', latencyMs: 5 },
        { ok: false, error: 'timeout after 1000 ms' },
        { ok: false, error: 'timeout after 1000 ms' },
      ],
      backendOf,
    );
    expect(a).toEqual({
      sent: 5,
      answered: 3,
      successPercent: 60,
      p50Ms: 5,
      p99Ms: 9,
      byBackend: { 'echo-v1': 1, 'echo-v2': 1, other: 1 },
      errors: ['timeout after 1000 ms'],
    });
  });

  it('fails a step on a low success rate, a slow p99 or a webhook refusal, with each reason', () => {
    const at = new Date('2026-11-28T20:00:00Z');
    const analysis = spec({
      analysis: { probe: { listener: 'gateway', maxP99Ms: 5 }, webhook: { url: 'http://127.0.0.1:9/' } },
    }).analysis;
    const probe = summariseProbes(
      [
        { ok: true, reply: 'echo-v2-a(x)', latencyMs: 9 },
        { ok: false, error: 'refused' },
      ],
      backendOf,
    );
    const v = judgeStep(analysis, { probe, webhook: { ok: false, status: 503, ms: 4 } }, at);
    expect(v.passed).toBe(false);
    expect(v.reasons).toEqual([
      '1 of 2 probes answered (50%, at least 95% needed): refused',
      "the probes' p99 latency was 9 ms (at most 5 ms allowed)",
      'the webhook answered 503',
    ]);
    expect(judgeStep(analysis, {}, at).reasons).toEqual([
      'the probes did not run',
      'the webhook was not called',
    ]);
    const good = summariseProbes([{ ok: true, reply: 'echo-v2-a(x)', latencyMs: 2 }], backendOf);
    expect(judgeStep(analysis, { probe: good, webhook: { ok: true, status: 204, ms: 1 } }, at)).toMatchObject(
      {
        passed: true,
        reasons: [],
        at: '2026-11-28T20:00:00.000Z',
      },
    );
    // No analysis asked for: a step passes after its pause.
    expect(judgeStep({}, {}, at).passed).toBe(true);
  });

  it('moves on, finishes, rolls back or pauses', () => {
    expect(nextMove(spec(), 0, { passed: true })).toEqual({ do: 'next', step: 1 });
    expect(nextMove(spec(), 2, { passed: true })).toEqual({ do: 'done' });
    expect(nextMove(spec(), 1, { passed: false })).toEqual({ do: 'rollback' });
    expect(nextMove(spec({ onFailure: 'pause' }), 1, { passed: false })).toEqual({ do: 'pause' });
  });
});

it('rolloutId sorts by start time', () => {
  const a = rolloutId(new Date('2026-11-28T20:00:00.123Z'), () => 0.5);
  expect(a).toMatch(/^20261128T200000Z-[0-9a-z]{4}$/);
  expect(rolloutId(new Date('2026-11-28T20:00:01Z'), () => 0) > a).toBe(true);
});
