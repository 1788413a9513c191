/** Exponential backoff parameters. */
export interface BackoffOptions {
  /** Upper bound of the first delay. */
  baseMs: number;
  /** Upper bound of any delay. */
  capMs: number;
}

/**
 * The delay before retry number `attempt` (1 for the first retry): "full jitter", a uniform random
 * value in [0, min(cap, base * 2^(attempt-1))). Full jitter spreads the retries of many proxies that
 * failed together (a control-plane restart, a network blip) instead of retrying them in lockstep.
 */
export function backoffDelay(
  attempt: number,
  options: BackoffOptions,
  random: () => number = Math.random,
): number {
  const exponent = Math.min(Math.max(attempt - 1, 0), 30); // 2^30 already exceeds any sane cap
  const ceiling = Math.min(options.capMs, options.baseMs * 2 ** exponent);
  const r = Math.min(Math.max(random(), 0), 1);
  return Math.floor(r * ceiling);
}
