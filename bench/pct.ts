/**
 * The p-th percentile (0-100) of `xs` by nearest rank (the ceil(p/100 * n)-th smallest), rounded to
 * 0.1; NaN when empty. The xDS benches' figures (bench/kubeObjects.ts `percentile` takes the rank
 * below instead; kept, so each bench's figures stay comparable with its earlier runs).
 */
export function pct(xs: readonly number[], p: number): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]! * 10) / 10;
}
