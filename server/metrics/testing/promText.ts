/**
 * Reads samples out of Prometheus exposition text, for tests: `sample(text, name, labels)` is the value
 * of the one series of `name` whose labels include `labels`, undefined when there is none (and an error
 * when several match, so a test cannot pass on the wrong series).
 */
export function samples(text: string, name: string): { labels: Record<string, string>; value: number }[] {
  const out: { labels: Record<string, string>; value: number }[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (!m || m[1] !== name) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    out.push({ labels, value: Number(m[3]) });
  }
  return out;
}

export function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const hits = samples(text, name).filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (hits.length > 1)
    throw new Error(`${name}${JSON.stringify(labels)} matches ${hits.length} series: name more labels`);
  return hits[0]?.value;
}
