import { describe, expect, it } from 'vitest';
import {
  elkGraphOf,
  firstViewLayoutInput,
  GROUP_HEIGHT,
  GROUP_WIDTH,
  NODE_HEIGHT,
  NODE_WIDTH,
  packPositions,
  positionsOf,
  unpackPositions,
} from './elkLayout';
import { GROUP_ABOVE, groupGraph } from './groupGraph';
import type { GraphEdge, GraphNode, MeshGraph } from './meshGraph';

/** `n` VirtualService -> Route pairs in one namespace: a graph of 2n nodes. */
function pairs(n: number): Pick<MeshGraph, 'nodes' | 'edges'> {
  const node = (kind: 'VirtualService' | 'Route', name: string): GraphNode => ({
    id: `${kind}/default/${name}`,
    kind,
    name,
    namespace: 'default',
    detail: '',
    object: { key: `${kind}/default/${name}` },
    diagnostics: [],
    counts: { error: 0, warning: 0, info: 0 },
  });
  const nodes: GraphNode[] = [];
  const edges: GraphEdge[] = [];
  for (let i = 0; i < n; i++) {
    const vs = node('VirtualService', `vs-${i}`);
    const route = node('Route', `route-${i}`);
    nodes.push(vs, route);
    edges.push({ id: `${vs.id}->${route.id}`, source: vs.id, target: route.id, kind: 'rule' });
  }
  return { nodes, edges };
}

describe('elkGraphOf', () => {
  it('gives ELK every node in order with its size (the default unless given) and every edge', () => {
    const g = elkGraphOf({
      nodes: [{ id: 'a' }, { id: 'g', width: GROUP_WIDTH, height: GROUP_HEIGHT }],
      edges: [{ id: 'e', source: 'a', target: 'g', kind: 'rule' }],
    });
    expect(g.children).toEqual([
      { id: 'a', width: NODE_WIDTH, height: NODE_HEIGHT },
      { id: 'g', width: GROUP_WIDTH, height: GROUP_HEIGHT },
    ]);
    expect(g.edges).toEqual([{ id: 'e', sources: ['a'], targets: ['g'] }]);
    expect(g.layoutOptions?.['elk.algorithm']).toBe('layered');
  });
});

describe('positionsOf', () => {
  it('rounds ELK places to whole pixels', () => {
    expect(positionsOf({ children: [{ id: 'a', x: 12.4, y: 7.6 }, { id: 'b' }] })).toEqual({
      a: { x: 12, y: 8 },
      b: { x: 0, y: 0 },
    });
  });
});

describe('firstViewLayoutInput', () => {
  it('is the whole graph when the draft places too few nodes', () => {
    const g = pairs(3);
    expect(firstViewLayoutInput(g, {})).toBe(g);
    // Two of six placed: too few for the rest to be placed beside them.
    expect(
      firstViewLayoutInput(g, { [g.nodes[0]!.id]: { x: 0, y: 0 }, [g.nodes[1]!.id]: { x: 0, y: 80 } }),
    ).toBe(g);
  });

  it('is nothing when the draft places half the nodes or more, or there are none', () => {
    const g = pairs(2);
    const manual = { [g.nodes[0]!.id]: { x: 0, y: 0 }, [g.nodes[3]!.id]: { x: 300, y: 0 } };
    expect(firstViewLayoutInput(g, manual)).toBeUndefined();
    expect(firstViewLayoutInput({ nodes: [], edges: [] }, {})).toBeUndefined();
  });

  it('is the grouped overview above GROUP_ABOVE nodes, groups at their size, even with a placed draft', () => {
    const g = pairs(GROUP_ABOVE / 2 + 1);
    const manual = Object.fromEntries(g.nodes.map((n, i) => [n.id, { x: i, y: i }]));
    const input = firstViewLayoutInput(g, manual)!;
    const grouping = groupGraph(g);
    expect(input.nodes.length).toBeLessThan(g.nodes.length);
    const groups = input.nodes.filter((n) => n.width === GROUP_WIDTH && n.height === GROUP_HEIGHT);
    expect(groups.map((n) => n.id).sort()).toEqual(grouping.groups.map((x) => x.id).sort());
    expect(groups.length).toBeGreaterThan(0);
  });
});

describe('packPositions / unpackPositions', () => {
  it('round-trips whole pixels', () => {
    const p = { a: { x: 1.4, y: -2 }, 'b/c': { x: 300, y: 40.6 } };
    expect(unpackPositions(JSON.parse(JSON.stringify(packPositions(p))))).toEqual({
      a: { x: 1, y: -2 },
      'b/c': { x: 300, y: 41 },
    });
  });

  it('refuses anything but three arrays of the same length of ids and finite numbers', () => {
    for (const bad of [
      null,
      {},
      [[], []],
      [['a'], [1], []],
      [['a'], ['1'], [2]],
      [[1], [1], [2]],
      [['a'], [null], [2]],
      'a',
    ])
      expect(unpackPositions(bad)).toBeUndefined();
    expect(unpackPositions([['a'], [1], [2]])).toEqual({ a: { x: 1, y: 2 } });
  });
});
