import { serialize } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { syntheticDraft } from '../../bench/syntheticMesh';
import { decodeDelta, encodeDelta, plainEqual } from './compilationDelta';
import { compilationForTransfer, compileDraft } from './compileDraft';

/** What the main thread gets: the encoding through a structured clone, as postMessage sends it. */
function roundTrip<T>(prev: T, next: T): T {
  return decodeDelta(prev, structuredClone(encodeDelta(prev, next)));
}

/** A small deterministic generator, so a failure names its seed. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    return s / 2 ** 32;
  };
}

function randomValue(r: () => number, depth: number): unknown {
  const x = r();
  if (depth <= 0 || x < 0.3) {
    const y = r();
    return y < 0.25
      ? Math.floor(r() * 5)
      : y < 0.5
        ? `s${Math.floor(r() * 4)}`
        : y < 0.6
          ? null
          : y < 0.7
            ? true
            : NaN;
  }
  if (x < 0.6) return Array.from({ length: Math.floor(r() * 5) }, () => randomValue(r, depth - 1));
  if (x < 0.75)
    return Array.from({ length: Math.floor(r() * 5) }, (_, i) => ({
      id: `n${i * 2 + Math.floor(r() * 2)}`,
      v: randomValue(r, depth - 1),
    }));
  const o: Record<string, unknown> = {};
  for (let i = Math.floor(r() * 5); i > 0; i--) o[`k${Math.floor(r() * 6)}`] = randomValue(r, depth - 1);
  return o;
}

/** `v` with a few random changes, keeping every untouched object. */
function mutate(r: () => number, v: unknown, depth: number): unknown {
  if (r() < 0.15) return randomValue(r, depth);
  if (Array.isArray(v)) {
    const out = v.map((x) => (r() < 0.3 ? mutate(r, x, depth - 1) : x));
    if (r() < 0.2) out.splice(Math.floor(r() * (out.length + 1)), 0, randomValue(r, depth - 1));
    if (r() < 0.2 && out.length > 0) out.splice(Math.floor(r() * out.length), 1);
    if (r() < 0.1) out.reverse();
    return out;
  }
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (r() > 0.1) out[k] = r() < 0.3 ? mutate(r, x, depth - 1) : x;
    if (r() < 0.2) out[`k${Math.floor(r() * 8)}`] = randomValue(r, depth - 1);
    return out;
  }
  return v;
}

/** Every object of `a` reachable by the same path in `b` and structurally equal there is the same object. */
function sharedWherever(prev: unknown, got: unknown, next: unknown): boolean {
  if (typeof prev !== 'object' || prev === null || typeof got !== 'object' || got === null) return true;
  if (plainEqual(prev, next) && got !== prev) return false;
  if (Array.isArray(prev) || Array.isArray(got)) return true;
  return Object.keys(got).every((k) =>
    sharedWherever(
      (prev as Record<string, unknown>)[k],
      (got as Record<string, unknown>)[k],
      (next as Record<string, unknown>)[k],
    ),
  );
}

describe('compilationDelta', () => {
  it('decodes to the new value for 500 random pairs, keeping unchanged objects', () => {
    for (let seed = 1; seed <= 500; seed++) {
      const r = rng(seed);
      const prev = randomValue(r, 4);
      const next = mutate(r, prev, 4);
      const got = roundTrip(prev, next);
      // toStrictEqual treats NaN as equal to NaN and checks undefined keys.
      expect(got, `seed ${seed}`).toStrictEqual(next);
      expect(sharedWherever(prev, got, next), `seed ${seed}`).toBe(true);
    }
  });

  it('gives back the previous value itself when nothing changed', () => {
    const prev = { a: [{ id: 'x', n: 1 }], b: { c: 'd' } };
    const next = structuredClone(prev);
    expect(encodeDelta(prev, next)).toEqual({ s: 1 });
    expect(roundTrip(prev, next)).toBe(prev);
  });

  it('matches array items by id and by content when they move', () => {
    const a = { id: 'a', v: 1 };
    const b = { id: 'b', v: 2 };
    const d1 = { code: 'x', message: 'one' };
    const d2 = { code: 'y', message: 'two' };
    const prev = { nodes: [a, b], diagnostics: [d1, d2] };
    const next = {
      nodes: [structuredClone(b), { id: 'c', v: 3 }, { id: 'a', v: 9 }],
      diagnostics: [{ code: 'z', message: 'new' }, structuredClone(d1), structuredClone(d2)],
    };
    const enc = encodeDelta(prev, next);
    expect(enc).toEqual({
      o: {
        nodes: { a: [1, { v: { id: 'c', v: 3 } }, { at: 0, d: { o: { v: { v: 9 } } } }] },
        diagnostics: { a: [{ v: { code: 'z', message: 'new' } }, 0, 1] },
      },
    });
    const got = roundTrip(prev, next);
    expect(got).toStrictEqual(next);
    expect(got.nodes[0]).toBe(b);
    expect(got.diagnostics[1]).toBe(d1);
  });

  it('never takes a Map, a Set or NaN as unchanged', () => {
    const prev = { m: new Map([['a', 1]]), s: new Set([1]), n: NaN, list: [{ x: NaN as number | null }] };
    const next = { m: new Map([['a', 2]]), s: new Set([2]), n: NaN, list: [{ x: null }] };
    const got = roundTrip(prev, next);
    expect(got.m.get('a')).toBe(2);
    expect([...got.s]).toEqual([2]);
    expect(got.n).toBeNaN();
    // The text of NaN is null's: the item must not be taken for the old one.
    expect(got.list[0]!.x).toBeNull();
    expect(plainEqual(new Map([['a', 1]]), new Map())).toBe(false);
  });

  it('sends a fraction of a 500-object compilation for a one-field edit, and decodes it exactly', () => {
    const draft = syntheticDraft(100);
    const file = 'mesh-50.yaml';
    const edited = draft.files[file]!.replace(/destination: (\S+)/, 'destination: $1-nope');
    expect(edited).not.toBe(draft.files[file]);
    const opts = { localMesh: { podsDir: '/tmp/pods' } };
    const before = compilationForTransfer(compileDraft(draft, opts));
    const after = compilationForTransfer(
      compileDraft({ ...draft, files: { ...draft.files, [file]: edited } }, opts),
    );
    const enc = encodeDelta(before, after);
    const whole = serialize(after).length;
    const sent = serialize(enc).length;
    expect(sent).toBeLessThan(whole / 10);
    const got = decodeDelta(before, structuredClone(enc));
    expect(got).toStrictEqual(after);
    // The nodes the edit did not touch are the previous objects.
    const kept = got.graph.nodes.filter((n, i) => before.graph.nodes.includes(n) && i >= 0).length;
    expect(kept).toBeGreaterThan(got.graph.nodes.length - 10);
    expect(got.l7mp).not.toBe(before.l7mp);
  });
});
