import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonEqual } from './jsonEqual';

/** JSON.stringify with sorted keys: the reference jsonEqual must agree with. */
function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : x,
  );
}

describe('jsonEqual', () => {
  it('ignores key order and undefined members, as JSON does', () => {
    expect(jsonEqual({ a: 1, b: [1, { c: 'x' }] }, { b: [1, { c: 'x' }], a: 1 })).toBe(true);
    expect(jsonEqual({ a: 1, u: undefined }, { a: 1 })).toBe(true);
  });
  it('tells apart arrays from objects, lengths, values and missing keys', () => {
    expect(jsonEqual([1], { 0: 1 })).toBe(false);
    expect(jsonEqual([1, 2], [1])).toBe(false);
    expect(jsonEqual({ a: 1 }, { a: 2 })).toBe(false);
    expect(jsonEqual({ a: 1 }, { a: 1, b: 0 })).toBe(false);
    expect(jsonEqual(null, {})).toBe(false);
  });
  it('agrees with comparing canonical JSON text', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
        expect(jsonEqual(a, b)).toBe(canonical(a) === canonical(b));
        expect(jsonEqual(a, structuredClone(a))).toBe(true);
      }),
    );
  });
});
