/**
 * What the compile worker sends after its first result: only what changed since the result it sent
 * before. A 500-object draft's compilation is about 570 KB structured-cloned, and an edit changes a few
 * graph nodes, a proxy or two and a file's markers; reading the whole clone again cost the main thread
 * about 6 ms per edit (issue 5, P8). The decoded value keeps the previous result's objects wherever
 * nothing changed, so React's memoized parts see the same objects.
 *
 * Pure and generic over JSON-like trees: plain objects are compared key by key, arrays item by item
 * (matched by `id` when items have one, else by content), down to `DELTA_DEPTH` levels; below that a
 * changed value is sent whole. Anything but plain objects, arrays and primitives (a Map, a Date) is
 * never taken as unchanged.
 */

/** One encoded value: unchanged (`s`), a new value (`v`), an object's changed keys (`o`), an array (`a`). */
export type Encoded =
  | { s: 1 }
  | { v: unknown }
  | {
      /** Changed keys only; an unchanged key is absent. */
      o: Record<string, Encoded>;
      /** The keys in order, when they differ from the previous value's. */
      keys?: string[];
    }
  | { a: EncodedItem[] };

/**
 * An array item: the index of an equal item in the previous array, the item itself, or the item encoded
 * against the previous item `at` (the one with its id).
 */
export type EncodedItem = number | { v: unknown } | { at: number; d: Encoded };

/** How many levels of objects and arrays are compared before a changed value is sent whole. */
export const DELTA_DEPTH = 3;

/** `next` encoded against `prev` (what the receiver holds). */
export function encodeDelta(prev: unknown, next: unknown, depth = DELTA_DEPTH): Encoded {
  if (prev === next) return { s: 1 };
  // Containers above the depth limit are compared by their parts, each part once.
  if (depth > 0 && isPlainObject(prev) && isPlainObject(next)) {
    const o: Record<string, Encoded> = {};
    const keys = Object.keys(next);
    let changed = false;
    for (const k of keys) {
      const e = encodeDelta(prev[k], next[k], depth - 1);
      if ('s' in e) continue;
      o[k] = e;
      changed = true;
    }
    const prevKeys = Object.keys(prev);
    const sameKeys = prevKeys.length === keys.length && keys.every((k, i) => prevKeys[i] === k);
    if (sameKeys) return changed ? { o } : { s: 1 };
    // The same keys in another order: equal, as plainEqual has it.
    if (!changed && prevKeys.length === keys.length && keys.every((k) => k in prev)) return { s: 1 };
    return { o, keys };
  }
  if (plainEqual(prev, next)) return { s: 1 };
  if (depth > 0 && Array.isArray(prev) && Array.isArray(next)) {
    const byId = new Map<string, number>();
    prev.forEach((x, i) => {
      const id = idOf(x);
      if (id !== undefined) byId.set(id, i);
    });
    let byText: Map<string, number> | undefined;
    let changed = prev.length !== next.length;
    // How far the last matched item had moved: after an insertion the rest of a list is shifted by it.
    let shift = 0;
    const a = next.map((x, i): EncodedItem => {
      // Where it was (an unchanged list), where the items before it went, else where its id was, else
      // where the same content was.
      if (i < prev.length && plainEqual(prev[i], x)) return i;
      changed = true;
      const k = i + shift;
      if (shift !== 0 && k >= 0 && k < prev.length && plainEqual(prev[k], x)) return k;
      const id = idOf(x);
      if (id !== undefined) {
        const j = byId.get(id);
        if (j === undefined) return { v: x };
        shift = j - i;
        return plainEqual(prev[j], x) ? j : { at: j, d: encodeDelta(prev[j], x, depth - 1) };
      }
      if (!isPlainObject(x)) return { v: x };
      if (!byText) {
        byText = new Map();
        prev.forEach((p, k) => {
          if (isPlainObject(p) && idOf(p) === undefined) byText!.set(JSON.stringify(p), k);
        });
      }
      // Verified: the text of NaN is null's.
      const j = byText.get(JSON.stringify(x));
      if (j === undefined || !plainEqual(prev[j], x)) return { v: x };
      shift = j - i;
      return j;
    });
    return changed ? { a } : { s: 1 };
  }
  return { v: next };
}

/** The value `e` encodes, given the `prev` it was encoded against; `prev`'s own objects where unchanged. */
export function decodeDelta<T>(prev: T, e: Encoded): T {
  return decode(prev, e) as T;
}

function decode(prev: unknown, e: Encoded): unknown {
  if ('s' in e) return prev;
  if ('v' in e) return e.v;
  if ('o' in e) {
    const base = isPlainObject(prev) ? prev : {};
    const keys = e.keys ?? Object.keys(base);
    const out: Record<string, unknown> = {};
    for (const k of keys) out[k] = k in e.o ? decode(base[k], e.o[k]!) : base[k];
    return out;
  }
  const base = Array.isArray(prev) ? (prev as unknown[]) : [];
  return e.a.map((x) => (typeof x === 'number' ? base[x] : 'v' in x ? x.v : decode(base[x.at], x.d)));
}

function idOf(x: unknown): string | undefined {
  return isPlainObject(x) && typeof x.id === 'string' ? x.id : undefined;
}

function isPlainObject(x: unknown): x is Record<string, unknown> {
  if (typeof x !== 'object' || x === null || Array.isArray(x)) return false;
  const p = Object.getPrototypeOf(x) as unknown;
  return p === Object.prototype || p === null;
}

/** JSON-like equality that never calls a Map, a Set or any other class instance equal to another value. */
export function plainEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!plainEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b) || !isPlainObject(a) || !isPlainObject(b)) return false;
  let n = 0;
  for (const k in a) {
    n++;
    if (!(k in b) || !plainEqual(a[k], b[k])) return false;
  }
  for (const _ in b) n--;
  return n === 0;
}
