import { describe, expect, it } from 'vitest';
import { canPlaceIncrementally, placeNewNodes, type Point } from './placeNewNodes';

const size = { width: 100, height: 40 };
const nodes = (...ids: string[]) => ids.map((id) => ({ id }));
const edge = (source: string, target: string) => ({ source, target });

function overlaps(ps: Record<string, Point>, w = size.width, h = size.height): string[] {
  const ids = Object.keys(ps);
  const out: string[] = [];
  for (let i = 0; i < ids.length; i++)
    for (let j = i + 1; j < ids.length; j++) {
      const a = ps[ids[i]!]!;
      const b = ps[ids[j]!]!;
      if (a.x < b.x + w && b.x < a.x + w && a.y < b.y + h && b.y < a.y + h) out.push(`${ids[i]}/${ids[j]}`);
    }
  return out;
}

describe('placeNewNodes', () => {
  it('places only the new nodes: right of the upstream neighbour, level with it', () => {
    const known = { a: { x: 0, y: 0 }, b: { x: 0, y: 200 } };
    const out = placeNewNodes({ nodes: nodes('a', 'b', 'c'), edges: [edge('a', 'c')], known, size });
    expect(out).toEqual({ c: { x: 156, y: 0 } });
  });

  it('stacks siblings below each other and below a node already there', () => {
    const known = { a: { x: 0, y: 0 }, t: { x: 156, y: 0 } };
    const out = placeNewNodes({
      nodes: nodes('a', 't', 'c', 'd'),
      edges: [edge('a', 't'), edge('a', 'c'), edge('a', 'd')],
      known,
      size,
    });
    expect(out).toEqual({ c: { x: 156, y: 60 }, d: { x: 156, y: 120 } });
    expect(overlaps({ ...known, ...out })).toEqual([]);
  });

  it('puts a node with only a downstream neighbour left of it', () => {
    const out = placeNewNodes({
      nodes: nodes('t', 'r'),
      edges: [edge('r', 't')],
      known: { t: { x: 500, y: 100 } },
      size,
    });
    expect(out).toEqual({ r: { x: 344, y: 100 } });
  });

  it('grows a chain of new nodes from the placed one they hang off', () => {
    const out = placeNewNodes({
      nodes: nodes('a', 'x', 'y', 'z'),
      edges: [edge('z', 'x'), edge('y', 'z'), edge('a', 'y')],
      known: { a: { x: 0, y: 0 } },
      size,
    });
    expect(out).toEqual({ y: { x: 156, y: 0 }, z: { x: 312, y: 0 }, x: { x: 468, y: 0 } });
  });

  it('starts a row under the drawing for nodes with no placed neighbour', () => {
    const known = { a: { x: 10, y: 0 }, b: { x: 300, y: 100 } };
    const out = placeNewNodes({
      nodes: nodes('a', 'b', 'p', 'q', 'r'),
      edges: [edge('p', 'r')],
      known,
      size,
    });
    // Below b (bottom 140) by two gaps, from a's left edge; r hangs off p.
    expect(out.p).toEqual({ x: 10, y: 180 });
    expect(out.r).toEqual({ x: 166, y: 180 });
    expect(out.q).toEqual({ x: 166, y: 240 });
    expect(overlaps({ ...known, ...out })).toEqual([]);
  });

  it('honours node sizes and ignores positions of nodes that are gone', () => {
    const out = placeNewNodes({
      nodes: [{ id: 'g', width: 220, height: 76 }, { id: 'n' }],
      edges: [edge('g', 'n'), edge('gone', 'n')],
      known: { g: { x: 0, y: 0 }, gone: { x: 276, y: 0 } },
      size,
    });
    expect(out).toEqual({ n: { x: 276, y: 0 } });
  });

  it('returns nothing when every node has a place, and never moves a known node', () => {
    const known = { a: { x: 0, y: 0 }, b: { x: 156, y: 0 } };
    expect(placeNewNodes({ nodes: nodes('a', 'b'), edges: [edge('a', 'b')], known, size })).toEqual({});
  });

  it('keeps new nodes clear of a thousand placed ones', () => {
    const known: Record<string, Point> = {};
    const ids: string[] = [];
    const edges: { source: string; target: string }[] = [];
    for (let i = 0; i < 1000; i++) {
      ids.push(`n${i}`);
      known[`n${i}`] = { x: (i % 4) * 156, y: Math.floor(i / 4) * 60 };
    }
    // 50 new nodes all hanging off one node in a packed block: they go beside the block,
    for (let i = 0; i < 50; i++) {
      ids.push(`new${i}`);
      edges.push(edge('n500', `new${i}`));
    }
    const out = placeNewNodes({ nodes: nodes(...ids), edges, known, size });
    expect(Object.keys(out)).toHaveLength(50);
    expect(overlaps({ ...known, ...out })).toEqual([]);
    // Right of the block, near the row of the node they hang off (n500 is at y 7500), not at its far end.
    for (const p of Object.values(out)) {
      expect(p.x).toBeGreaterThanOrEqual(624);
      expect(p.y).toBeGreaterThanOrEqual(7500);
      expect(p.y).toBeLessThan(7500 + 15 * 60);
    }
    expect(out.new0).toEqual({ x: 624, y: 7500 });
    expect(out.new1).toEqual({ x: 624, y: 7560 });
  });
});

describe('canPlaceIncrementally', () => {
  it('wants at least half the nodes placed', () => {
    const known = { a: { x: 0, y: 0 } };
    expect(canPlaceIncrementally(nodes('a', 'b'), known)).toBe(true);
    expect(canPlaceIncrementally(nodes('a', 'b', 'c'), known)).toBe(false);
    expect(canPlaceIncrementally(nodes('b'), known)).toBe(false);
    expect(canPlaceIncrementally([], known)).toBe(false);
  });
});
