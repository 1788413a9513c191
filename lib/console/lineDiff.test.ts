import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { diffCounts, diffLines, type LineOp, sideBySideRows, unifiedRows } from './lineDiff';

const lines = (s: string) => (s === '' ? [] : s.split(''));
/** The old and new texts a diff implies. */
function sides(ops: LineOp[]): [string[], string[]] {
  return [
    ops.filter((o) => o.kind !== 'add').map((o) => o.text),
    ops.filter((o) => o.kind !== 'del').map((o) => o.text),
  ];
}

describe('diffLines', () => {
  it('finds a changed line among kept ones', () => {
    const ops = diffLines(['a', 'port: 5000', 'c'], ['a', 'port: 5001', 'c']);
    expect(ops).toEqual([
      { kind: 'same', text: 'a', a: 1, b: 1 },
      { kind: 'del', text: 'port: 5000', a: 2 },
      { kind: 'add', text: 'port: 5001', b: 2 },
      { kind: 'same', text: 'c', a: 3, b: 3 },
    ]);
  });

  it('is all kept for equal texts and all added from nothing', () => {
    expect(diffCounts(diffLines(['x', 'y'], ['x', 'y']))).toEqual({ added: 0, removed: 0 });
    expect(diffLines([], ['x'])).toEqual([{ kind: 'add', text: 'x', b: 1 }]);
    expect(diffLines(['x'], [])).toEqual([{ kind: 'del', text: 'x', a: 1 }]);
  });

  it('rebuilds both texts, numbers lines in order and is minimal on small inputs (property)', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[abc]{0,9}$/), fc.stringMatching(/^[abc]{0,9}$/), (x, y) => {
        const a = lines(x);
        const b = lines(y);
        const ops = diffLines(a, b);
        expect(sides(ops)).toEqual([a, b]);
        const as = ops.flatMap((o) => (o.kind === 'add' ? [] : [o.a]));
        const bs = ops.flatMap((o) => (o.kind === 'del' ? [] : [o.b]));
        expect(as).toEqual(a.map((_, i) => i + 1));
        expect(bs).toEqual(b.map((_, i) => i + 1));
        // Minimal: kept lines equal the longest common subsequence.
        expect(ops.filter((o) => o.kind === 'same').length).toBe(lcs(a, b));
      }),
    );
  });

  it('past the edit limit still rebuilds both texts', () => {
    const a = Array.from({ length: 50 }, (_, i) => `a${i}`);
    const b = Array.from({ length: 50 }, (_, i) => (i % 2 ? `a${i}` : `b${i}`));
    const ops = diffLines(a, b, 5);
    expect(sides(ops)).toEqual([a, b]);
    expect(diffCounts(diffLines(a, b)).added).toBe(25);
  });
});

function lcs(a: string[], b: string[]): number {
  const t = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++)
      t[i]![j] = a[i - 1] === b[j - 1] ? t[i - 1]![j - 1]! + 1 : Math.max(t[i - 1]![j]!, t[i]![j - 1]!);
  return t[a.length]![b.length]!;
}

describe('views', () => {
  const a = Array.from({ length: 20 }, (_, i) => `l${i}`);
  const b = [...a];
  b[10] = 'changed';
  b.splice(15, 0, 'new');
  const ops = diffLines(a, b);

  it('unified: context around changes, the rest folded', () => {
    const rows = unifiedRows(ops, 2);
    expect(rows[0]).toEqual({ kind: 'skip', lines: 8 });
    expect(rows.filter((r) => r.kind === 'del').map((r) => (r as { text: string }).text)).toEqual(['l10']);
    expect(rows.filter((r) => r.kind === 'add').map((r) => (r as { text: string }).text)).toEqual([
      'changed',
      'new',
    ]);
    expect(rows.at(-1)).toEqual({ kind: 'skip', lines: 3 });
  });

  it('side by side: a removed line and the added one after it are one changed row', () => {
    const rows = sideBySideRows(ops, 1);
    expect(rows.filter((r) => r.kind === 'change')).toEqual([
      { kind: 'change', left: { line: 11, text: 'l10' }, right: { line: 11, text: 'changed' } },
    ]);
    expect(rows.filter((r) => r.kind === 'add')).toEqual([{ kind: 'add', right: { line: 16, text: 'new' } }]);
  });

  it('no differences: nothing but folded lines', () => {
    expect(unifiedRows(diffLines(a, a))).toEqual([{ kind: 'skip', lines: 20 }]);
  });
});
