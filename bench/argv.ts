/** Command-line reading shared by the benches: `--name value` numbers and bare positional counts. */

/** The number after `--name`, else `fallback`. */
export function numberArg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

/** The bare numbers on the command line (not flags, nor the values of `valueFlags`), else `fallback`. */
export function countsArg(valueFlags: string[], fallback: number[]): number[] {
  const counts = process.argv
    .slice(2)
    .filter((a, i, all) => !a.startsWith('--') && !valueFlags.includes(all[i - 1]?.slice(2) ?? ''))
    .map(Number)
    .filter(Boolean);
  return counts.length ? counts : fallback;
}
