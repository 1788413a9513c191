/**
 * Canary split sliders as pure functions: moving one weight rebalances the unlocked others so the
 * total stays 100, "evenly distribute" shares what the locked entries leave, all in whole numbers.
 */

/** Moves entry `index` to `value`, taking the difference from the other unlocked entries in proportion. */
export function moveWeight(
  weights: readonly number[],
  locked: readonly boolean[],
  index: number,
  value: number,
): number[] {
  const n = weights.length;
  if (index < 0 || index >= n) return [...weights];
  const lockedSum = sum(weights.filter((_, i) => i !== index && locked[i]));
  const others = weights.map((_, i) => i).filter((i) => i !== index && !locked[i]);
  const budget = Math.max(0, 100 - lockedSum);
  // With nothing to take from, the entry cannot move away from what keeps the total at 100.
  const v = others.length === 0 ? budget : clamp(Math.round(value), 0, budget);
  const rest = budget - v;
  const out = [...weights];
  out[index] = v;
  const current = others.map((i) => Math.max(0, weights[i]!));
  const base = sum(current) > 0 ? current : current.map(() => 1);
  const shares = apportion(base, rest);
  others.forEach((i, k) => (out[i] = shares[k]!));
  return out;
}

/** Shares what the locked entries leave evenly over the unlocked ones (earlier entries get the remainder). */
export function distributeEvenly(weights: readonly number[], locked: readonly boolean[]): number[] {
  const lockedSum = sum(weights.filter((_, i) => locked[i]));
  const free = weights.map((_, i) => i).filter((i) => !locked[i]);
  const shares = apportion(
    free.map(() => 1),
    Math.max(0, 100 - lockedSum),
  );
  const out = [...weights];
  free.forEach((i, k) => (out[i] = shares[k]!));
  return out;
}

/** The share of each entry in percent (what the engine does: weights are normalised over the split). */
export function percentages(weights: readonly number[]): number[] {
  const total = sum(weights);
  return weights.map((w) => (total > 0 ? (100 * w) / total : 0));
}

/** Null when the weights add up to 100, else what is wrong. */
export function checkSplitSum(weights: readonly number[]): string | null {
  const total = sum(weights);
  if (total === 100) return null;
  if (total === 0) return 'all weights are 0: no traffic can be split';
  return `weights add up to ${total}, not 100; the engine normalises them, so shares are ${percentages(
    weights,
  )
    .map((p) => `${Math.round(p * 10) / 10}%`)
    .join(' / ')}`;
}

/** Splits `total` into whole numbers in proportion to `parts` (largest remainder). */
function apportion(parts: readonly number[], total: number): number[] {
  const s = sum(parts);
  if (parts.length === 0) return [];
  if (s <= 0) return parts.map(() => 0);
  const exact = parts.map((p) => (p / s) * total);
  const out = exact.map(Math.floor);
  let left = total - sum(out);
  const order = exact
    .map((e, i) => [e - Math.floor(e), i] as const)
    .sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  for (const [, i] of order) {
    if (left <= 0) break;
    out[i]!++;
    left--;
  }
  return out;
}

function sum(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0);
}

function clamp(v: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, v));
}

/**
 * Whether `count` of `total` calls is further from the configured share `percent` than chance allows:
 * more than 4 binomial standard deviations and more than 5 points off, over at least 20 calls. Either
 * the clients do not run these weights (not applied yet, or still converging) or something else steers.
 */
export function shareOff(percent: number, count: number, total: number): boolean {
  if (total < 20 || !Number.isFinite(percent)) return false;
  const p = Math.min(1, Math.max(0, percent / 100));
  const sd = Math.sqrt(total * p * (1 - p));
  return Math.abs(count - total * p) > Math.max(4 * sd, 0.05 * total);
}
