import { describe, expect, it } from 'vitest';
import type { Severity } from '../model/diagnostic';
import { compileDraft } from './compileDraft';
import { groupedView, groupGraph, groupSubgraph, overviewGraph, placeExpanded } from './groupGraph';
import type { GraphEdge, GraphEdgeKind, GraphNode, GraphNodeKind, MeshGraph } from './meshGraph';
import { exampleDraft } from './testDrafts.testutil';

function node(kind: GraphNodeKind, ns: string, name: string, errors: Partial<Record<Severity, number>> = {}) {
  const n: GraphNode = {
    id: kind === 'Proxy' ? `Pod/${ns}/${name}` : `${kind}/${ns}/${name}`,
    kind,
    name,
    namespace: ns,
    detail: '',
    diagnostics: [],
    counts: { error: 0, warning: 0, info: 0, ...errors },
  };
  return n;
}

function edge(source: string, target: string, kind: GraphEdgeKind = 'rule'): GraphEdge {
  return { id: `${source}->${target}:${kind}`, source, target, kind };
}

/** Namespace `big` holds `services` chains VS -> Route -> Target, each VS on proxy gw-<i % 2>; `small` one chain. */
function mesh(services: number): Pick<MeshGraph, 'nodes' | 'edges'> {
  const nodes: GraphNode[] = [node('Proxy', 'big', 'gw-0'), node('Proxy', 'big', 'gw-1')];
  const edges: GraphEdge[] = [];
  for (let i = 0; i < services; i++) {
    const [vs, r, t] = [
      node('VirtualService', 'big', `vs-${i}`),
      node('Route', 'big', `r-${i}`, i === 3 ? { warning: 2 } : {}),
      node('Target', 'big', `t-${i}`, i === 3 ? { error: 1 } : {}),
    ];
    nodes.push(vs, r, t);
    edges.push(
      edge(vs.id, r.id),
      edge(r.id, t.id, 'destination'),
      edge(vs.id, `Pod/big/gw-${i % 2}`, 'selects'),
    );
  }
  nodes.push(node('Service', 'big', 'lonely-a'), node('Service', 'big', 'lonely-b'));
  const s = [node('VirtualService', 'small', 'front'), node('Route', 'small', 'r')];
  nodes.push(...s);
  edges.push(edge(s[0]!.id, s[1]!.id), edge(s[1]!.id, 'Target/big/t-0', 'destination'));
  edges.push(edge(s[1]!.id, 'Target/big/t-1', 'ingress'));
  return { nodes, edges };
}

describe('groupGraph', () => {
  it('makes one group per namespace while namespaces are small, with counts and the worst severity', () => {
    const g = groupGraph(mesh(4));
    expect(g.groups.map((x) => [x.id, x.members.length, x.worst])).toEqual([
      ['Group:ns/big', 14, 'error'],
      ['Group:ns/small', 2, undefined],
    ]);
    expect(g.groups[0]).toMatchObject({
      by: 'namespace',
      kinds: { VirtualService: 4, Route: 4, Target: 4, Service: 2 },
      diagnostics: { error: 1, warning: 2, info: 0 },
    });
    // Proxies are shared hubs: they stay themselves.
    expect(g.groupOf['Pod/big/gw-0']).toBeUndefined();
    const overview = overviewGraph(mesh(4), g);
    expect(overview.nodes.map((n) => n.id)).toEqual([
      'Group:ns/big',
      'Group:ns/small',
      'Pod/big/gw-0',
      'Pod/big/gw-1',
    ]);
    expect(overview.edges.map((e) => `${e.source} -> ${e.target} x${e.count}`)).toEqual([
      'Group:ns/big -> Pod/big/gw-0 x2',
      'Group:ns/big -> Pod/big/gw-1 x2',
      'Group:ns/small -> Group:ns/big x2',
    ]);
  });

  it('splits a namespace that is too large by service, named after its VirtualService; loose objects go together', () => {
    const g = groupGraph(mesh(50), { maxGroupSize: 100 });
    const big = g.groups.filter((x) => x.namespace === 'big');
    expect(big).toHaveLength(51);
    expect(big.find((x) => x.id === 'Group:VirtualService/big/vs-3')).toMatchObject({
      by: 'service',
      service: 'vs-3',
      members: ['Route/big/r-3', 'Target/big/t-3', 'VirtualService/big/vs-3'],
      worst: 'error',
    });
    expect(big.find((x) => x.by === 'other')!.members).toEqual([
      'Service/big/lonely-a',
      'Service/big/lonely-b',
    ]);
    // The small namespace is still one group, and every node is in at most one group.
    expect(g.groupOf['Route/small/r']).toBe('Group:ns/small');
    expect(Object.keys(g.groupOf)).toHaveLength(50 * 3 + 2 + 2);
    // Many proxies of a namespace are folded as well.
    const many = groupGraph(mesh(50), { maxGroupSize: 100, maxLooseProxies: 1 });
    expect(many.groupOf['Pod/big/gw-1']).toBe('Group:proxies/big');
  });

  it('shows an expanded group as its members with their own edges; the rest stays folded', () => {
    const graph = mesh(50);
    const g = groupGraph(graph, { maxGroupSize: 100 });
    const v = groupedView(graph, g, new Set(['Group:VirtualService/big/vs-1']));
    expect(v.expanded.map((x) => x.id)).toEqual(['Group:VirtualService/big/vs-1']);
    expect(v.collapsed).toHaveLength(g.groups.length - 1);
    expect(v.nodes.map((n) => n.id)).toEqual([
      'Pod/big/gw-0',
      'Pod/big/gw-1',
      'VirtualService/big/vs-1',
      'Route/big/r-1',
      'Target/big/t-1',
    ]);
    const ids = (src: string) =>
      v.edges.filter((e) => e.source === src).map((e) => `${e.target} ${e.kind} x${e.count}`);
    // Real edges between shown nodes keep their graph edge (so they can be selected and deleted).
    expect(ids('VirtualService/big/vs-1')).toEqual(['Pod/big/gw-1 selects x1', 'Route/big/r-1 rule x1']);
    expect(v.edges.find((e) => e.target === 'Route/big/r-1')!.edge).toBeDefined();
    expect(ids('Group:ns/small')).toEqual([
      'Group:VirtualService/big/vs-0 aggregate x1',
      'Target/big/t-1 aggregate x1',
    ]);
    expect(groupSubgraph(graph, g, 'Group:VirtualService/big/vs-1').edges).toHaveLength(2);
  });

  it('groups a compiled draft: seed Example 1 as one namespace group around its two proxies', () => {
    const { graph } = compileDraft(exampleDraft('seed-example-1'));
    const g = groupGraph(graph);
    expect(g.groups.map((x) => [x.id, x.members.length, x.worst])).toEqual([
      ['Group:ns/default', 10, 'warning'],
    ]);
    const v = groupedView(graph, g, new Set());
    expect(v.nodes.map((n) => n.kind)).toEqual(['Proxy', 'Proxy']);
    expect(v.edges.every((e) => e.source === 'Group:ns/default' && e.kind === 'aggregate')).toBe(true);
  });
});

describe('placeExpanded', () => {
  const size = () => ({ width: 100, height: 50 });
  const overlaps = (a: { x: number; y: number; w: number; h: number }, b: typeof a) =>
    a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;

  it('grows expanded groups in place and moves what is right of and below them, never into an overlap', () => {
    const overview: Record<string, { x: number; y: number }> = {};
    for (let c = 0; c < 6; c++)
      for (let r = 0; r < 6; r++) overview[`n${c}-${r}`] = { x: c * 150, y: r * 80 };
    const grow = [
      { id: 'n1-1', width: 400, height: 300 },
      { id: 'n3-4', width: 250, height: 120 },
      { id: 'n1-3', width: 120, height: 60 },
    ];
    const { positions, frames } = placeExpanded(overview, size, grow);
    expect(frames['n1-1']).toEqual({ x: 150, y: 80, width: 400, height: 300 });
    // Above and left of the first expansion nothing moved.
    expect(positions['n0-0']).toEqual({ x: 0, y: 0 });
    expect(positions['n1-0']).toEqual({ x: 150, y: 0 });
    const boxes = Object.entries(positions).map(([id, p]) => ({
      id,
      x: p.x,
      y: p.y,
      w: frames[id]?.width ?? 100,
      h: frames[id]?.height ?? 50,
    }));
    for (const a of boxes)
      for (const b of boxes)
        if (a.id < b.id) expect([a.id, b.id, overlaps(a, b)]).toEqual([a.id, b.id, false]);
    for (const [id, f] of Object.entries(frames)) expect(positions[id]).toEqual({ x: f.x, y: f.y });
  });
});
