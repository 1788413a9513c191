import { describe, expect, it } from 'vitest';
import { backoffDelay } from './backoffDelay';

const options = { baseMs: 200, capMs: 10_000 };

describe('backoffDelay', () => {
  it('doubles the ceiling per attempt up to the cap', () => {
    const max = (attempt: number) => backoffDelay(attempt, options, () => 0.999999);
    expect([1, 2, 3, 4, 5, 6, 7, 8].map(max)).toEqual([199, 399, 799, 1599, 3199, 6399, 9999, 9999]);
    expect(max(1000)).toBe(9999);
  });

  it('draws uniformly below the ceiling (full jitter)', () => {
    expect(backoffDelay(3, options, () => 0)).toBe(0);
    expect(backoffDelay(3, options, () => 0.5)).toBe(400);
    const draws = Array.from({ length: 1000 }, () => backoffDelay(2, options));
    expect(Math.min(...draws)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...draws)).toBeLessThan(400);
    expect(new Set(draws).size).toBeGreaterThan(100);
  });

  it('treats attempt 0 like attempt 1 and clamps a random source out of range', () => {
    expect(backoffDelay(0, options, () => 0.5)).toBe(100);
    expect(backoffDelay(1, options, () => 7)).toBe(200);
  });
});
