/**
 * Evaluates a rule's JSONPredicate `match` (draft-snell-json-test, as l7mp's json-predicate reads it)
 * against session metadata, to explain which rule a connection would take. Returns 'unknown' for
 * operations it does not model, rather than guessing.
 */
export type MatchResult = boolean | 'unknown';

export function matchPredicate(predicate: unknown, metadata: unknown): MatchResult {
  if (predicate === undefined || predicate === null) return true;
  if (typeof predicate !== 'object' || Array.isArray(predicate)) return 'unknown';
  const p = predicate as { op?: unknown; path?: unknown; value?: unknown; apply?: unknown };
  if (p.op === undefined && Object.keys(p).length === 0) return true;
  if (p.op === 'and' || p.op === 'or' || p.op === 'not') {
    const parts = Array.isArray(p.apply) ? p.apply.map((x) => matchPredicate(x, metadata)) : [];
    if (p.op === 'and') return parts.includes(false) ? false : parts.includes('unknown') ? 'unknown' : true;
    if (p.op === 'or') return parts.includes(true) ? true : parts.includes('unknown') ? 'unknown' : false;
    // not: true when none of the operands holds
    return parts.includes(true) ? false : parts.includes('unknown') ? 'unknown' : true;
  }
  if (typeof p.path !== 'string') return 'unknown';
  const actual = valueAtPointer(metadata, p.path);
  switch (p.op) {
    case 'test':
      return JSON.stringify(actual) === JSON.stringify(p.value);
    case 'more':
      return typeof actual === 'number' && typeof p.value === 'number' && actual > p.value;
    case 'less':
      return typeof actual === 'number' && typeof p.value === 'number' && actual < p.value;
    case 'defined':
      return actual !== undefined;
    case 'undefined':
      return actual === undefined;
    case 'contains':
      return typeof actual === 'string' && typeof p.value === 'string' && actual.includes(p.value);
    case 'starts':
      return typeof actual === 'string' && typeof p.value === 'string' && actual.startsWith(p.value);
    case 'ends':
      return typeof actual === 'string' && typeof p.value === 'string' && actual.endsWith(p.value);
    case 'in':
      return Array.isArray(p.value) && p.value.some((v) => JSON.stringify(v) === JSON.stringify(actual));
    default:
      return 'unknown';
  }
}

/** RFC 6901 JSON pointer lookup (`/IP/src_addr`). */
export function valueAtPointer(doc: unknown, pointer: string): unknown {
  if (pointer === '') return doc;
  let cur = doc;
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}
