import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { layoutDrawing } from '../../bench/layoutDrawing';
import { LAYOUT_SPACING, type LayoutInput, NODE_HEIGHT, NODE_WIDTH, type Positions } from './elkLayout';
import { countCrossings, layeredLayout } from './layeredLayout';

const edge = (source: string, target: string) => ({ id: `${source}->${target}`, source, target, kind: 'k' });

/** Boxes of the input's nodes at `at`. */
function boxes(input: LayoutInput, at: Positions) {
  return input.nodes.map((n) => ({
    id: n.id,
    x: at[n.id]!.x,
    y: at[n.id]!.y,
    w: n.width ?? NODE_WIDTH,
    h: n.height ?? NODE_HEIGHT,
  }));
}

/** Crossings of straight lines between node centres. */
const crossings = (input: LayoutInput, at: Positions) => layoutDrawing(input, at).crossings;

const graphs = fc
  .record({
    n: fc.integer({ min: 1, max: 40 }),
    edges: fc.array(fc.tuple(fc.nat(45), fc.nat(45)), { maxLength: 80 }),
    sizes: fc.array(fc.tuple(fc.integer({ min: 10, max: 300 }), fc.integer({ min: 10, max: 120 })), {
      maxLength: 10,
    }),
  })
  .map(({ n, edges, sizes }): LayoutInput => ({
    nodes: Array.from({ length: n }, (_, i) =>
      i < sizes.length ? { id: `n${i}`, width: sizes[i]![0], height: sizes[i]![1] } : { id: `n${i}` },
    ),
    // Ends past n name no node: such edges are left out, as the canvas leaves them out.
    edges: edges.map(([s, t], i) => ({ ...edge(`n${s}`, `n${t}`), id: `e${i}` })),
  }));

describe('layeredLayout', () => {
  it('places every node in whole pixels, no two overlapping, for any graph (cycles, loops, repeats)', () => {
    fc.assert(
      fc.property(graphs, (input) => {
        const at = layeredLayout(input);
        expect(Object.keys(at).sort()).toEqual(input.nodes.map((n) => n.id).sort());
        const bs = boxes(input, at);
        for (const b of bs) {
          expect(Number.isInteger(b.x) && Number.isInteger(b.y)).toBe(true);
          expect(b.x).toBeGreaterThanOrEqual(0);
          expect(b.y).toBeGreaterThanOrEqual(0);
        }
        for (let i = 0; i < bs.length; i++)
          for (let j = i + 1; j < bs.length; j++) {
            const [a, b] = [bs[i]!, bs[j]!];
            const apart = a.x + a.w <= b.x || b.x + b.w <= a.x || a.y + a.h <= b.y || b.y + b.h <= a.y;
            expect(apart, `${a.id} and ${b.id} overlap`).toBe(true);
          }
      }),
      { numRuns: 300 },
    );
  });

  it('draws every edge of an acyclic graph left to right, and gives the same places again', () => {
    fc.assert(
      fc.property(graphs, (g) => {
        // Only edges from a lower to a higher number: acyclic.
        const input = { ...g, edges: g.edges.filter((e) => +e.source.slice(1) < +e.target.slice(1)) };
        const at = layeredLayout(input);
        for (const e of input.edges)
          if (at[e.source] && at[e.target]) expect(at[e.source]!.x).toBeLessThan(at[e.target]!.x);
        expect(layeredLayout(input)).toEqual(at);
      }),
      { numRuns: 200 },
    );
  });

  it('puts layers one node width and the spacing apart, and a chain on one line', () => {
    const input = { nodes: [{ id: 'a' }, { id: 'b' }, { id: 'c' }], edges: [edge('a', 'b'), edge('b', 'c')] };
    const at = layeredLayout(input);
    const step = NODE_WIDTH + LAYOUT_SPACING.betweenLayers;
    expect(at).toEqual({ a: { x: 0, y: 0 }, b: { x: step, y: 0 }, c: { x: 2 * step, y: 0 } });
    // Two sources of one target: the target sits level with their middle.
    const fan = layeredLayout({
      nodes: [{ id: 'a' }, { id: 'b' }, { id: 'c' }],
      edges: [edge('a', 'c'), edge('b', 'c')],
    });
    expect(fan.c!.y).toBe((fan.a!.y + fan.b!.y) / 2);
    expect(fan.b!.y - fan.a!.y).toBe(NODE_HEIGHT + LAYOUT_SPACING.nodeNode);
  });

  it('untangles what the input order crosses', () => {
    // Listed so that a1->b2 and a2->b1 cross, and the long edge a1->c3 runs across the middle.
    const input: LayoutInput = {
      nodes: ['a1', 'a2', 'b1', 'b2', 'c1', 'c2', 'c3'].map((id) => ({ id })),
      edges: [edge('a1', 'b2'), edge('a2', 'b1'), edge('b1', 'c1'), edge('b2', 'c2'), edge('a1', 'c3')],
    };
    expect(crossings(input, layeredLayout(input))).toBe(0);
    // Here the first order (a breadth-first walk) crosses once; the barycenter sweeps untangle it.
    const swept: LayoutInput = {
      nodes: ['a0', 'a1', 'a2', 'b0', 'b1', 'b2', 'c1'].map((id) => ({ id })),
      edges: [
        edge('a0', 'b0'),
        edge('a0', 'b1'),
        edge('a1', 'b2'),
        edge('a2', 'b0'),
        edge('a2', 'b2'),
        edge('b0', 'c1'),
      ],
    };
    expect(crossings(swept, layeredLayout(swept))).toBe(0);
  });

  it('breaks a cycle by turning one edge around: the rest runs left to right', () => {
    const input: LayoutInput = {
      nodes: ['a', 'b', 'c'].map((id) => ({ id })),
      edges: [edge('a', 'b'), edge('b', 'c'), edge('c', 'a')],
    };
    const at = layeredLayout(input);
    expect(at.a!.x).toBeLessThan(at.b!.x);
    expect(at.b!.x).toBeLessThan(at.c!.x);
  });

  it('puts a node with more edges out than in beside its nearest successor, not in the first layer', () => {
    // gw is selected by two VirtualServices three layers in: it sits one layer before them.
    const input: LayoutInput = {
      nodes: ['r', 's', 't', 'vs1', 'vs2', 'gw'].map((id) => ({ id })),
      edges: [
        edge('r', 's'),
        edge('s', 't'),
        edge('t', 'vs1'),
        edge('t', 'vs2'),
        edge('gw', 'vs1'),
        edge('gw', 'vs2'),
      ],
    };
    const at = layeredLayout(input);
    expect(at.gw!.x).toBe(at.t!.x);
  });

  it('lays out components apart, the largest first, in rows', () => {
    const input: LayoutInput = {
      nodes: ['x', 'a', 'b', 'c'].map((id) => ({ id })),
      edges: [edge('a', 'b'), edge('b', 'c')],
    };
    const at = layeredLayout(input);
    expect(at.a).toEqual({ x: 0, y: 0 });
    // Rows are as wide as the widest component here: the lone node starts the next row.
    expect(at.x).toEqual({ x: 0, y: NODE_HEIGHT + LAYOUT_SPACING.componentComponent });
    // Eight lone nodes make a row wider than one node: side by side, in input order.
    const many = layeredLayout({ nodes: Array.from({ length: 8 }, (_, i) => ({ id: `n${i}` })), edges: [] });
    expect(many.n1).toEqual({ x: NODE_WIDTH + LAYOUT_SPACING.componentComponent, y: 0 });
  });

  it('keeps the first of repeated node ids and survives an empty graph', () => {
    expect(layeredLayout({ nodes: [], edges: [] })).toEqual({});
    const at = layeredLayout({ nodes: [{ id: 'a' }, { id: 'a', width: 9 }], edges: [edge('a', 'a')] });
    expect(at).toEqual({ a: { x: 0, y: 0 } });
  });
});

describe('countCrossings', () => {
  it('counts the crossings between adjacent layers', () => {
    // Layer 0: 0, 1, 2; layer 1: 3, 4, 5. Edges 0->5, 1->4, 2->3 cross pairwise: 3 crossings.
    const layers = [
      [0, 1, 2],
      [3, 4, 5],
    ];
    const down = [[5], [4], [3], [], [], []];
    const pos = new Float64Array([0, 1, 2, 0, 1, 2]);
    expect(countCrossings(layers, down, pos)).toBe(3);
    expect(countCrossings(layers, [[3], [4], [5], [], [], []], pos)).toBe(0);
  });
});
