import { afterEach, describe, expect, it } from 'vitest';
import { countsArg, numberArg } from './argv';
import { pct } from './pct';

describe('pct', () => {
  it('is the nearest rank (the ceil(p/100 * n)-th smallest), rounded to 0.1; NaN when empty', () => {
    const v = Array.from({ length: 100 }, (_, i) => 100 - i + 0.04);
    expect(pct(v, 50)).toBe(50);
    expect(pct(v, 99)).toBe(99);
    expect(pct(v, 100)).toBe(100);
    expect(pct([3, 1, 2], 50)).toBe(2);
    expect(pct([], 50)).toBeNaN();
  });
});

describe('argv', () => {
  const saved = process.argv;
  afterEach(() => {
    process.argv = saved;
  });

  it('reads --name values and the bare counts, not the values of value flags', () => {
    process.argv = ['node', 'bench', '500', '--warmup', '3', '--track', '2000', '--pushes', '7'];
    expect(numberArg('warmup', 20)).toBe(3);
    expect(numberArg('pushes', 9)).toBe(7);
    expect(numberArg('rounds', 12)).toBe(12);
    expect(countsArg(['warmup', 'pushes'], [1])).toEqual([500, 2000]);
    process.argv = ['node', 'bench', '--track'];
    expect(countsArg(['warmup'], [500, 2000])).toEqual([500, 2000]);
  });
});
