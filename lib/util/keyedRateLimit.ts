/**
 * A token bucket per key: each key may do `burst` things at once, then one per `refillMs`. Pure (the
 * caller passes the time), and it forgets keys whose bucket is full again, so it stays small.
 */
export interface KeyedRateLimit {
  /** Takes one token for `key` at `now` (ms): 0 when allowed, else the ms until a token is back. */
  take(key: string, now: number): number;
}

export function keyedRateLimit(o: { burst: number; refillMs: number }): KeyedRateLimit {
  const buckets = new Map<string, { tokens: number; at: number }>();
  const level = (b: { tokens: number; at: number }, now: number) =>
    Math.min(o.burst, b.tokens + Math.max(0, now - b.at) / o.refillMs);
  return {
    take(key, now) {
      if (buckets.size > 10_000)
        for (const [k, b] of buckets) if (level(b, now) >= o.burst) buckets.delete(k);
      const b = buckets.get(key) ?? { tokens: o.burst, at: now };
      const tokens = level(b, now);
      if (tokens < 1) {
        buckets.set(key, { tokens, at: now });
        return Math.ceil((1 - tokens) * o.refillMs);
      }
      buckets.set(key, { tokens: tokens - 1, at: now });
      return 0;
    },
  };
}
