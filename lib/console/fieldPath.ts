/** Field paths as segments (`['spec', 'rules', 0]`), the form the Document API and the forms use. */
export type FieldPath = readonly (string | number)[];

/**
 * Reads a path the way diagnostics print it (`spec.rules[0].action.route`, `metadata.labels["a.b/c"]`)
 * back into segments; the inverse of lib/model/fieldPath's formatFieldPath.
 */
export function parseFieldPath(path: string): (string | number)[] {
  const out: (string | number)[] = [];
  let i = 0;
  while (i < path.length) {
    const c = path[i];
    if (c === '.') {
      i++;
      continue;
    }
    if (c === '[') {
      const end = path[i + 1] === '"' ? closingQuote(path, i + 1) + 1 : path.indexOf(']', i);
      if (end < 0 || path[end] !== ']') {
        out.push(path.slice(i));
        break;
      }
      const inner = path.slice(i + 1, end);
      if (/^\d+$/.test(inner)) out.push(Number(inner));
      else {
        try {
          out.push(String(JSON.parse(inner)));
        } catch {
          out.push(inner);
        }
      }
      i = end + 1;
      continue;
    }
    let j = i;
    while (j < path.length && path[j] !== '.' && path[j] !== '[') j++;
    out.push(path.slice(i, j));
    i = j;
  }
  return out;
}

function closingQuote(s: string, open: number): number {
  for (let i = open + 1; i < s.length; i++) {
    if (s[i] === '\\') i++;
    else if (s[i] === '"') return i;
  }
  return -1;
}

/** True when `path` equals `prefix` or lies inside it. */
export function startsWithPath(path: FieldPath, prefix: FieldPath): boolean {
  if (prefix.length > path.length) return false;
  for (let i = 0; i < prefix.length; i++) if (path[i] !== prefix[i]) return false;
  return true;
}
