import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { calibrateL7mpWeights, l7mpRingCounts, md5 } from './l7mpHashRing';

// The real hash ring l7mp 0.5.7 uses (its dependency), to check the reproduction against.
const HashRing = createRequire(require.resolve('@l7mp/l7mp/package.json'))('hashring') as new (
  servers: Record<string, { weight: number }>,
  algorithm: string,
  options: Record<string, unknown>,
) => { get(key: string): string };

function realCounts(ws: Record<string, number>): Map<string, number> {
  const servers = Object.fromEntries(Object.entries(ws).map(([a, weight]) => [a, { weight }]));
  const ring = new HashRing(servers, 'md5', { replicas: 1, 'max cache size': 100 });
  const counts = new Map(Object.keys(ws).map((a) => [a, 0]));
  for (let i = 0; i < 1000; i++) {
    const s = ring.get(String(i));
    counts.set(s, (counts.get(s) ?? 0) + 1);
  }
  return counts;
}

describe('l7mp hash ring', () => {
  it('md5 matches node:crypto', () => {
    for (const s of ['', 'a', '127.0.0.51-0', 'x'.repeat(55), 'y'.repeat(56), 'z'.repeat(200), 'ümlaut']) {
      expect(Buffer.from(md5(s)).toString('hex')).toBe(createHash('md5').update(s).digest('hex'));
    }
  });

  it('reproduces hashring exactly, as l7mp configures it', () => {
    for (const ws of <Record<string, number>[]>[
      { '127.0.0.51': 250, '127.0.0.52': 250, '127.0.0.61': 500 },
      { '127.0.0.51': 400, '127.0.0.52': 400, '127.0.0.61': 200 },
      { '10.0.0.1': 1, '10.0.0.2': 1 },
      { '10.1.1.1': 7, '10.1.1.2': 3, '10.1.1.3': 13, '10.1.1.4': 1 },
    ]) {
      const ours = l7mpRingCounts(Object.entries(ws).map(([address, weight]) => ({ address, weight })));
      expect(Object.fromEntries(ours)).toEqual(Object.fromEntries(realCounts(ws)));
    }
  });

  it('reproduces hashring for 200 random weightings of 1 to 12 endpoints', () => {
    let seed = 11;
    const rnd = (n: number) => Math.floor(((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * n);
    for (let t = 0; t < 200; t++) {
      const ws: Record<string, number> = {};
      for (let i = 0, k = 1 + rnd(12); i < k; i++) ws[`10.${t}.${i}.${rnd(250)}`] = 1 + rnd(rnd(2) ? 5 : 900);
      const ours = l7mpRingCounts(Object.entries(ws).map(([address, weight]) => ({ address, weight })));
      expect(Object.fromEntries(ours)).toEqual(Object.fromEntries(realCounts(ws)));
    }
  });

  it('answers a repeated calibration from memory, with copies the caller may change', () => {
    const groups = [
      { share: 70, addresses: ['10.9.0.1', '10.9.0.2'] },
      { share: 30, addresses: ['10.9.0.3'] },
    ];
    const first = calibrateL7mpWeights(groups);
    first.weights.set('10.9.0.1', -1);
    first.shares[0] = -1;
    const again = calibrateL7mpWeights(groups.map((g) => ({ ...g, addresses: [...g.addresses] })));
    expect(again.weights.get('10.9.0.1')).toBeGreaterThanOrEqual(1);
    expect(again.shares[0]).toBeGreaterThan(0.6);
    const real = realCounts(Object.fromEntries(again.weights));
    expect(real.get('10.9.0.3')! / 1000).toBeCloseTo(again.shares[1]!, 6);
  });

  it('calibrated weights give the asked split on the real ring (the naive ones are off by 5.5 points)', () => {
    const naive = realCounts({ '127.0.0.51': 250, '127.0.0.52': 250, '127.0.0.61': 500 });
    expect(naive.get('127.0.0.61')).toBe(555);
    for (const [v1, v2] of [
      [50, 50],
      [80, 20],
      [90, 10],
      [1, 99],
    ] as const) {
      const { weights, shares } = calibrateL7mpWeights([
        { share: v1, addresses: ['127.0.0.51', '127.0.0.52'] },
        { share: v2, addresses: ['127.0.0.61'] },
      ]);
      const real = realCounts(Object.fromEntries(weights));
      const got = (real.get('127.0.0.51')! + real.get('127.0.0.52')!) / 10;
      expect(Math.abs(got - v1)).toBeLessThanOrEqual(1);
      expect(shares[0]! * 100).toBeCloseTo(got, 6);
      expect([...weights.values()].every((w) => Number.isInteger(w) && w >= 1)).toBe(true);
    }
  });
});
