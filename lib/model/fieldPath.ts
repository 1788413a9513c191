/** Formats a field path the way diagnostics show it: `spec.rules[0].action.route`. */
export function formatFieldPath(segments: readonly PropertyKey[]): string {
  let out = '';
  for (const s of segments) {
    if (typeof s === 'number') out += `[${s}]`;
    else {
      const key = String(s);
      out += /^[A-Za-z_$][\w$-]*$/.test(key) ? (out ? `.${key}` : key) : `[${JSON.stringify(key)}]`;
    }
  }
  return out;
}

/** The paths from `path` up to the root, longest first: `a.b[0]`, `a.b`, `a`. */
export function parentPaths(path: string): string[] {
  const out: string[] = [];
  let p = path;
  while (p) {
    out.push(p);
    const m = /^(.*?)(\.[^.[\]]+|\[[^\]]*\])$/.exec(p);
    if (!m) break;
    p = m[1] ?? '';
  }
  return out;
}
