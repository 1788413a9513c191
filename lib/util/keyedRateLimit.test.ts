import { describe, expect, it } from 'vitest';
import { keyedRateLimit } from './keyedRateLimit';

describe('keyedRateLimit', () => {
  it('allows a burst per key, then one per refill interval, saying how long to wait', () => {
    const limit = keyedRateLimit({ burst: 3, refillMs: 1000 });
    expect([0, 1, 2].map(() => limit.take('a', 0))).toEqual([0, 0, 0]);
    expect(limit.take('a', 0)).toBe(1000);
    expect(limit.take('a', 400)).toBe(600);
    // Another key has its own bucket.
    expect(limit.take('b', 400)).toBe(0);
    expect(limit.take('a', 1000)).toBe(0);
    expect(limit.take('a', 1000)).toBe(1000);
    // Refilled, never above the burst.
    expect([0, 1, 2, 3].map(() => limit.take('a', 60_000))).toEqual([0, 0, 0, 1000]);
  });
});
