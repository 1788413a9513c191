import { getViewportForBounds } from '@xyflow/react';
import { describe, expect, it } from 'vitest';
import { syntheticDraft } from '@/bench/syntheticMesh';
import { draftFirstView } from './draftFirstView';
import { GROUP_HEIGHT, GROUP_WIDTH, NODE_HEIGHT, NODE_WIDTH } from './elkLayout';
import {
  firstViewPicture,
  PICTURE_EDGE_STRIDE,
  PICTURE_EDGE_VARS,
  PICTURE_GENERATED,
  PICTURE_GROUP,
  PICTURE_NODE_STRIDE,
  PICTURE_NODE_VARS,
  pictureFit,
} from './firstViewPicture';

describe('firstViewPicture', () => {
  it('draws each placed node with its kind and size, groups as frames, and the edges between them', () => {
    const graph = {
      nodes: [
        { id: 'VirtualService/default/a', kind: 'VirtualService' as const },
        { id: 'Target/default/b', kind: 'Target' as const, generated: 'virtualservice' as const },
        { id: 'Route/default/c', kind: 'Route' as const },
      ],
    };
    const input = {
      nodes: [
        { id: 'VirtualService/default/a' },
        { id: 'Target/default/b' },
        { id: 'Route/default/c' },
        // As overviewLayoutInput gives a collapsed group: an id the graph does not have, and a size.
        { id: 'group:ns/x', width: GROUP_WIDTH, height: GROUP_HEIGHT },
      ],
      edges: [
        { id: 'e1', source: 'VirtualService/default/a', target: 'Target/default/b', kind: 'rule' },
        { id: 'e2', source: 'Target/default/b', target: 'group:ns/x', kind: 'aggregate' },
        { id: 'e3', source: 'VirtualService/default/a', target: 'Route/default/c', kind: 'egress' },
      ],
    };
    // Route/default/c has no place: left out, with its edge.
    const positions = {
      'VirtualService/default/a': { x: 0, y: 10 },
      'Target/default/b': { x: 240, y: 10 },
      'group:ns/x': { x: 480, y: 0 },
    };
    const p = firstViewPicture(graph, input, positions, 'h1');
    expect(p.hash).toBe('h1');
    expect(p.nodes).toEqual([
      0,
      10,
      NODE_WIDTH,
      NODE_HEIGHT,
      PICTURE_NODE_VARS.indexOf('--kind-vs'),
      0,
      240,
      10,
      NODE_WIDTH,
      NODE_HEIGHT,
      PICTURE_NODE_VARS.indexOf('--kind-target'),
      PICTURE_GENERATED,
      480,
      0,
      GROUP_WIDTH,
      GROUP_HEIGHT,
      PICTURE_NODE_VARS.indexOf(''),
      PICTURE_GROUP,
    ]);
    expect(p.edges).toEqual([
      0,
      1,
      PICTURE_EDGE_VARS.indexOf('--kind-vs'),
      1,
      2,
      PICTURE_EDGE_VARS.indexOf('--text-muted'),
    ]);
  });

  it('draws the grouped overview of a large draft with its collapsed groups as frames', () => {
    // 400 synthetic services: about 2,000 nodes, over the 1,500 at which the canvas starts grouped.
    const view = draftFirstView(syntheticDraft(400), { localMesh: true })!;
    const positions = Object.fromEntries(view.input.nodes.map((n, i) => [n.id, { x: i * 10, y: 0 }]));
    const p = firstViewPicture(view.graph, view.input, positions, view.hash);
    const flags = [];
    for (let i = 5; i < p.nodes.length; i += PICTURE_NODE_STRIDE) flags.push(p.nodes[i]!);
    expect(flags.length).toBe(view.input.nodes.length);
    expect(flags.filter((f) => f & PICTURE_GROUP).length).toBe(400);
  });

  it("fits a picture into a pane exactly as the canvas's fitView does (padding 0.08, zoom 0.02-1)", () => {
    const view = draftFirstView(syntheticDraft(40), { localMesh: true })!;
    const positions = Object.fromEntries(
      view.input.nodes.map((n, i) => [n.id, { x: (i % 9) * 250, y: Math.floor(i / 9) * 80 }]),
    );
    const big = firstViewPicture(view.graph, view.input, positions, view.hash);
    const small = firstViewPicture(
      view.graph,
      { nodes: view.input.nodes.slice(0, 2), edges: [] },
      positions,
      'x',
    );
    for (const p of [big, small]) {
      expect(p.nodes.length % PICTURE_NODE_STRIDE).toBe(0);
      expect(p.edges.length % PICTURE_EDGE_STRIDE).toBe(0);
      let x0 = Infinity,
        y0 = Infinity,
        x1 = -Infinity,
        y1 = -Infinity;
      for (let i = 0; i < p.nodes.length; i += PICTURE_NODE_STRIDE) {
        x0 = Math.min(x0, p.nodes[i]!);
        y0 = Math.min(y0, p.nodes[i + 1]!);
        x1 = Math.max(x1, p.nodes[i]! + p.nodes[i + 2]!);
        y1 = Math.max(y1, p.nodes[i + 1]! + p.nodes[i + 3]!);
      }
      for (const [w, h] of [
        [1200, 700],
        [640, 900],
        [3000, 2000],
      ] as const) {
        const v = getViewportForBounds(
          { x: x0, y: y0, width: x1 - x0, height: y1 - y0 },
          w,
          h,
          0.02,
          1,
          0.08,
        );
        const [x, y, k] = pictureFit(p, w, h);
        expect(k).toBeCloseTo(v.zoom, 9);
        expect(x).toBeCloseTo(v.x, 6);
        expect(y).toBeCloseTo(v.y, 6);
      }
    }
  });
});
