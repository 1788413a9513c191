import { describe, expect, it } from 'vitest';
import { compileDraft } from './compileDraft';
import type { GraphEdge, GraphNode, MeshGraph } from './meshGraph';
import { pathThrough } from './pathThrough';
import { exampleDraft } from './testDrafts.testutil';

function graphOf(edges: [string, string][], extra: string[] = []): Pick<MeshGraph, 'nodes' | 'edges'> {
  const ids = new Set([...edges.flat(), ...extra]);
  return {
    nodes: [...ids].map((id) => ({ id, kind: id.startsWith('proxy') ? 'Proxy' : 'Route' }) as GraphNode),
    edges: edges.map(
      ([source, target]) =>
        ({
          id: `${source}>${target}`,
          source,
          target,
          kind: target.startsWith('proxy') ? 'selects' : 'rule',
        }) as GraphEdge,
    ),
  };
}

const sorted = (s: Set<string> | undefined) => [...(s ?? [])].sort();

describe('pathThrough', () => {
  it('keeps what the node reaches and what reaches it, not the branches of its neighbours', () => {
    // vs selects proxy (drawn vs -> proxy, traffic proxy -> vs) -> route -> target -> backend;
    // other-route -> target;  vs -> route2 -> target2
    const g = graphOf(
      [
        ['vs', 'proxy'],
        ['vs', 'route'],
        ['route', 'target'],
        ['target', 'backend'],
        ['other-route', 'target'],
        ['vs', 'route2'],
        ['route2', 'target2'],
      ],
      ['alone'],
    );
    const p = pathThrough(g, 'route')!;
    expect(sorted(p.nodes)).toEqual(['backend', 'proxy', 'route', 'target', 'vs']);
    expect(sorted(p.edges)).toEqual(['route>target', 'target>backend', 'vs>proxy', 'vs>route']);
    // A proxy: what it runs, all of it.
    expect(sorted(pathThrough(g, 'proxy')!.nodes)).toEqual([
      'backend',
      'proxy',
      'route',
      'route2',
      'target',
      'target2',
      'vs',
    ]);
    // The Target: both routes that send to it, and what is upstream of each.
    expect(sorted(pathThrough(g, 'target')!.nodes)).toEqual([
      'backend',
      'other-route',
      'proxy',
      'route',
      'target',
      'vs',
    ]);
    expect(sorted(pathThrough(g, 'alone')!.nodes)).toEqual(['alone']);
    expect(pathThrough(g, 'nowhere')).toBeUndefined();
  });

  it('ends on cycles and self loops', () => {
    const g = graphOf([
      ['a', 'b'],
      ['b', 'c'],
      ['c', 'a'],
      ['c', 'c'],
      ['x', 'a'],
    ]);
    const p = pathThrough(g, 'b')!;
    expect(sorted(p.nodes)).toEqual(['a', 'b', 'c', 'x']);
    expect(p.edges.size).toBe(5);
  });

  it('on seed Example 1: the transcoder proxy runs the path to the workers, not the gateway', () => {
    const { graph } = compileDraft(exampleDraft('seed-example-1'), { xds: false });
    const p = pathThrough(graph, 'Pod/default/transcoder-0')!;
    expect(p.nodes.has('VirtualService/default/transcoder-vsvc')).toBe(true);
    // Its rule's inline route and that route's inline destination Target.
    expect(p.nodes.has('VirtualService/default/transcoder-vsvc#spec.rules[0].action.route.destination')).toBe(
      true,
    );
    expect(p.nodes.has('Pod/default/gateway-0')).toBe(false);
    expect(p.nodes.has('VirtualService/default/gateway-vsvc')).toBe(false);
    // The gateway's VirtualService: its proxy, and the whole chain behind it.
    const g = pathThrough(graph, 'VirtualService/default/gateway-vsvc')!;
    expect(g.nodes.has('Pod/default/gateway-0')).toBe(true);
    expect(g.nodes.has('Pod/default/transcoder-0')).toBe(false);
    for (const e of graph.edges)
      if (p.edges.has(e.id)) expect(p.nodes.has(e.source) && p.nodes.has(e.target)).toBe(true);
  });
});
