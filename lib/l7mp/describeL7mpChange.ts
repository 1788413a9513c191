/** How many leaf differences one field's description lists before summarising the rest. */
const MAX_LEAVES = 3;
const MAX_VALUE_CHARS = 60;

interface Leaf {
  path: string;
  before: unknown;
  after: unknown;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Where two JSON values differ, descending into objects and same-length arrays. */
function leaves(before: unknown, after: unknown, path: string, out: Leaf[]): void {
  if (same(before, after)) return;
  if (isPlainObject(before) && isPlainObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    for (const key of keys) leaves(before[key], after[key], path ? `${path}.${key}` : key, out);
    return;
  }
  if (Array.isArray(before) && Array.isArray(after) && before.length === after.length) {
    before.forEach((item, i) => leaves(item, after[i], `${path}[${i}]`, out));
    return;
  }
  out.push({ path, before, after });
}

function show(value: unknown): string {
  if (value === undefined) return '(none)';
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS - 1)}…` : text;
}

/**
 * A one-line human description of how an object changed, e.g. "listener spec changed: port 9001 -> 9002"
 * or "endpoint weight 80 -> 50"; `before` and `after` should be canonical forms of the same kind.
 */
export function describeL7mpChange(kind: string, before: object, after: object): string {
  const b = before as Record<string, unknown>;
  const a = after as Record<string, unknown>;
  const fields = [...new Set([...Object.keys(b), ...Object.keys(a)])].sort();
  const parts: string[] = [];
  for (const field of fields) {
    const found: Leaf[] = [];
    leaves(b[field], a[field], '', found);
    if (found.length === 0) continue;
    const [only] = found;
    if (found.length === 1 && only && only.path === '') {
      parts.push(`${field} ${show(only.before)} -> ${show(only.after)}`);
      continue;
    }
    const shown = found
      .slice(0, MAX_LEAVES)
      .map((leaf) => `${leaf.path.replace(/^\./, '')} ${show(leaf.before)} -> ${show(leaf.after)}`);
    if (found.length > MAX_LEAVES) shown.push(`and ${found.length - MAX_LEAVES} more`);
    parts.push(`${field} changed: ${shown.join(', ')}`);
  }
  return parts.length > 0 ? `${kind} ${parts.join('; ')}` : `${kind} unchanged`;
}
