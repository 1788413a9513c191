import { describe, expect, it } from 'vitest';
import type { ProbeOutcome } from '../rollout/rollout';
import {
  summariseTrafficTest,
  type TrafficTestContext,
  TrafficTestRequestSchema,
  TrafficTestResultSchema,
} from './trafficTest';

const first: TrafficTestContext['first'] = {
  proxy: 'default/gateway-0',
  listener: 'gateway.default.virtualservice.cluster.local',
  protocol: 'UDP',
  to: '127.0.0.10:9100',
  from: '127.0.0.100:*',
  path: ['listener gateway.default.virtualservice.cluster.local (UDP)', 'rule 0 (catch-all)'],
};
const pods: Record<string, string> = {
  'echo-v1-a': 'echo-v1',
  'echo-v1-b': 'echo-v1',
  'echo-v2-a': 'echo-v2',
};
const backendOf = (pod: string) => pods[pod];
const split = {
  target: { namespace: 'default', name: 'echo-canary' },
  entries: [
    { name: 'echo-v1', weight: 80 },
    { name: 'echo-v2', weight: 20 },
    { name: 'echo-v3', weight: 0 },
  ],
};
const answer = (pod: string, latencyMs: number): ProbeOutcome => ({
  ok: true,
  reply: `${pod}(ping)`,
  latencyMs,
});

describe('summariseTrafficTest', () => {
  it('gives nearest-rank percentiles of the answered probes, in any order', () => {
    // 1..100 ms shuffled: nearest rank of p is the p-th value.
    const latencies = Array.from({ length: 100 }, (_, i) => ((i * 37) % 100) + 1);
    const r = summariseTrafficTest(
      latencies.map((l) => answer('echo-v1-a', l)),
      { first, backendOf, durationMs: 12.5 },
    );
    expect(r.latency).toEqual({ p50Ms: 50, p90Ms: 90, p99Ms: 99, maxMs: 100 });
    // Three values: p50 is the 2nd (ceil(1.5)), p90 and p99 the 3rd.
    const few = summariseTrafficTest([answer('x', 5), answer('x', 1), answer('x', 3)], {
      first,
      backendOf,
      durationMs: 1,
    });
    expect(few.latency).toEqual({ p50Ms: 3, p90Ms: 5, p99Ms: 5, maxMs: 5 });
  });

  it('counts answers by pod and by split entry against the configured weights, one decimal', () => {
    const outcomes = [
      answer('echo-v1-a', 1),
      answer('echo-v1-b', 2),
      answer('echo-v2-a', 3),
      { ok: true, reply: 'a reply not from a demo app', latencyMs: 4 },
      answer('stray-pod', 5),
      { ok: false, error: 'no reply within 1000 ms' },
    ];
    const r = summariseTrafficTest(outcomes, { first, backendOf, split, durationMs: 42 });
    expect(r).toMatchObject({
      ...first,
      sent: 6,
      answered: 5,
      successPercent: 83.3,
      byPod: { 'echo-v1-a': 1, 'echo-v1-b': 1, 'echo-v2-a': 1, other: 1, 'stray-pod': 1 },
      durationMs: 42,
    });
    expect(r.split).toEqual({
      target: { namespace: 'default', name: 'echo-canary' },
      backends: [
        { name: 'echo-v1', configuredPercent: 80, answered: 2, observedPercent: 40, off: false },
        { name: 'echo-v2', configuredPercent: 20, answered: 1, observedPercent: 20, off: false },
        { name: 'echo-v3', configuredPercent: 0, answered: 0, observedPercent: 0, off: false },
      ],
      other: 2,
    });
    const sum = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0);
    expect(sum(r.byPod)).toBe(r.answered);
    expect(TrafficTestResultSchema.parse(r)).toEqual(r);
  });

  /** The canary's split with echo-v1 and echo-v2 weighted `w1`/`w2`, over these answers. */
  const splitOf = (outcomes: ProbeOutcome[], w1: number, w2: number) =>
    summariseTrafficTest(outcomes, {
      first,
      backendOf,
      split: {
        target: split.target,
        entries: [
          { name: 'echo-v1', weight: w1 },
          { name: 'echo-v2', weight: w2 },
        ],
      },
      durationMs: 1,
    }).split!;

  it('marks a backend whose observed share is further from its configured one than chance allows', () => {
    const run = (v1: number, v2: number) =>
      splitOf(
        [
          ...Array.from({ length: v1 }, () => answer('echo-v1-a', 1)),
          ...Array.from({ length: v2 }, () => answer('echo-v2-a', 1)),
        ],
        80,
        20,
      ).backends.map((b) => b.off);
    // 50/50 of 100 against 80/20: 30 points off, sd 4.
    expect(run(50, 50)).toEqual([true, true]);
    // 74/26: chance.
    expect(run(74, 26)).toEqual([false, false]);
    // Too few answers to say.
    expect(run(5, 5)).toEqual([false, false]);
  });

  it('rounds configured and observed shares to one decimal', () => {
    const r = splitOf([answer('echo-v1-a', 1), answer('echo-v1-b', 1), answer('echo-v2-a', 1)], 1, 2);
    expect(r.backends.map((b) => [b.configuredPercent, b.observedPercent])).toEqual([
      [33.3, 66.7],
      [66.7, 33.3],
    ]);
  });

  it('groups the failures by message, the most frequent first (ties as first seen), at most 5', () => {
    const fail = (error?: string): ProbeOutcome => ({ ok: false, ...(error ? { error } : {}) });
    const outcomes = [
      fail('e1'),
      fail('e2'),
      fail('e2'),
      fail(),
      fail('e3'),
      fail('e4'),
      fail('e5'),
      fail('e6'),
      fail('e2'),
      fail(),
      answer('echo-v1-a', 1),
    ];
    const r = summariseTrafficTest(outcomes, { first, backendOf, durationMs: 1 });
    expect(r.errors).toEqual([
      { message: 'e2', count: 3 },
      { message: 'no answer', count: 2 },
      { message: 'e1', count: 1 },
      { message: 'e3', count: 1 },
      { message: 'e4', count: 1 },
    ]);
    expect(r.successPercent).toBe(9.1);
  });

  it('leaves the latency out when nothing answered, and the split at 0% observed', () => {
    const r = summariseTrafficTest(
      [
        { ok: false, error: 'x' },
        { ok: false, error: 'x' },
      ],
      { first, backendOf, split, durationMs: 3 },
    );
    expect(r.latency).toBeUndefined();
    expect(r).toMatchObject({
      sent: 2,
      answered: 0,
      successPercent: 0,
      byPod: {},
      errors: [{ message: 'x', count: 2 }],
    });
    expect(r.split!.backends.map((b) => b.observedPercent)).toEqual([0, 0, 0]);
    expect(r.split!.other).toBe(0);
    const none = summariseTrafficTest([], { first, backendOf, durationMs: 0 });
    expect(none).toMatchObject({ sent: 0, answered: 0, successPercent: 0 });
    expect(none.split).toBeUndefined();
  });
});

describe('TrafficTestRequestSchema', () => {
  it('takes a probe request with a count, and refuses too many probes or unknown fields', () => {
    expect(
      TrafficTestRequestSchema.safeParse({ listener: 'gateway', payload: 'p', count: 200 }).success,
    ).toBe(true);
    const many = TrafficTestRequestSchema.safeParse({ listener: 'gateway', payload: 'p', count: 1001 });
    expect(many.error?.issues.map((i) => i.path.join('.'))).toEqual(['count']);
    const extra = TrafficTestRequestSchema.safeParse({ listener: 'g', payload: 'p', count: 1, extra: 1 });
    expect(extra.success).toBe(false);
  });
});
