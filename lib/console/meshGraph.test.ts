import { describe, expect, it } from 'vitest';
import { compileDraft } from './compileDraft';
import { applyCommand } from './draftCommands';
import type { DraftDoc } from './draftDoc';
import { graphHash, shareById, shareGraph } from './meshGraph';
import { exampleDraft } from './testDrafts.testutil';

const ex1 = exampleDraft('seed-example-1');
const canary = exampleDraft('canary');

function edgesOf(draft: DraftDoc) {
  return compileDraft(draft).graph.edges.map(
    (e) => `${e.source} -${e.kind}${e.label ? `(${e.label})` : ''}-> ${e.target}`,
  );
}

describe('meshGraph', () => {
  it('draws seed Example 1: VirtualServices, inline routes and targets, generated objects, services and proxies', () => {
    const { graph } = compileDraft(ex1);
    const nodes = Object.fromEntries(graph.nodes.map((n) => [n.id, [n.kind, n.generated ?? 'user']]));
    expect(nodes).toEqual({
      'Pod/default/gateway-0': ['Proxy', 'user'],
      'Pod/default/transcoder-0': ['Proxy', 'user'],
      'Service/default/gateway-svc': ['Service', 'user'],
      'Service/default/worker-svc': ['Service', 'user'],
      'Target/default/transcoder-vsvc': ['Target', 'virtualservice'],
      'Target/default/worker-svc': ['Target', 'virtualservice'],
      'VirtualService/default/gateway-vsvc': ['VirtualService', 'user'],
      'VirtualService/default/gateway-vsvc#spec.rules[0].action.route': ['Route', 'inline'],
      'VirtualService/default/transcoder-vsvc': ['VirtualService', 'user'],
      'VirtualService/default/transcoder-vsvc#spec.rules[0].action.route': ['Route', 'inline'],
      'VirtualService/default/transcoder-vsvc#spec.rules[0].action.route.destination': ['Target', 'inline'],
      'VirtualService/default/worker-svc': ['VirtualService', 'naked-service'],
    });
    expect(edgesOf(ex1)).toEqual(
      expect.arrayContaining([
        'VirtualService/default/gateway-vsvc -rule(rule 0)-> VirtualService/default/gateway-vsvc#spec.rules[0].action.route',
        'VirtualService/default/gateway-vsvc#spec.rules[0].action.route -destination-> Target/default/worker-svc',
        'VirtualService/default/gateway-vsvc#spec.rules[0].action.route -ingress(in 1)-> Target/default/transcoder-vsvc',
        'Target/default/worker-svc -endpoints-> VirtualService/default/worker-svc',
        'VirtualService/default/worker-svc -selects-> Service/default/worker-svc',
        'VirtualService/default/gateway-vsvc -selects-> Pod/default/gateway-0',
      ]),
    );
    const worker = graph.nodes.find((n) => n.id === 'Target/default/worker-svc')!;
    expect(worker).toMatchObject({ endpoints: 2, detail: 'udp :9999 · 2 endpoints' });
    // The dialect warnings sit on the objects that have them.
    expect(graph.nodes.find((n) => n.id === 'VirtualService/default/transcoder-vsvc')!.counts).toEqual({
      error: 0,
      warning: 3,
      info: 0,
    });
    expect(graph.clusterNodes['worker-svc.default.target.cluster.local']).toBe('Target/default/worker-svc');
    // The l7mp listeners and their rules (the naked worker-svc has no listener).
    expect(graph.listeners).toEqual({
      'gateway-vsvc.default.virtualservice.cluster.local': {
        node: 'VirtualService/default/gateway-vsvc',
        rules: [0],
      },
      'transcoder-vsvc.default.virtualservice.cluster.local': {
        node: 'VirtualService/default/transcoder-vsvc',
        rules: [0],
      },
    });
  });

  it('labels split edges with weights and shares, and chains with their order and direction', () => {
    const withChain = applyCommand(canary, {
      type: 'setField',
      key: 'Route/default/echo-route',
      path: ['spec', 'egress'],
      value: ['echo-v1', 'echo-v2'],
    });
    if (!withChain.ok) throw new Error(withChain.error);
    const { graph } = compileDraft(withChain.draft);
    const split = graph.edges.filter((e) => e.kind === 'split');
    expect(split.map((e) => [e.target, e.weight, e.percent, e.order])).toEqual([
      ['VirtualService/default/echo-v1', 80, 80, 0],
      ['VirtualService/default/echo-v2', 20, 20, 1],
    ]);
    const egress = graph.edges.filter((e) => e.kind === 'egress');
    expect(egress.map((e) => [e.target, e.order, e.direction])).toEqual([
      ['Target/default/echo-v1', 0, 'out'],
      ['Target/default/echo-v2', 1, 'out'],
    ]);
  });

  it('draws a dangling reference to a Missing node and marks the node that wrote it', () => {
    const r = applyCommand(canary, {
      type: 'setField',
      key: 'Route/default/echo-route',
      path: ['spec', 'destination'],
      value: 'nowhere',
    });
    if (!r.ok) throw new Error(r.error);
    const { graph, markers } = compileDraft(r.draft);
    const route = graph.nodes.find((n) => n.id === 'Route/default/echo-route')!;
    expect(route.counts.error).toBeGreaterThan(0);
    expect(route.diagnostics.map((d) => d.code)).toContain('unresolved-reference');
    expect(graph.nodes.find((n) => n.id === 'Missing/default/nowhere')).toMatchObject({ kind: 'Missing' });
    expect(graph.edges.map((e) => e.id)).toContain(
      'Route/default/echo-route->Missing/default/nowhere:destination',
    );
    // The YAML marker sits on the destination line.
    const marker = markers['mesh.yaml']!.find((m) => m.diagnostic.code === 'unresolved-reference')!;
    expect(r.draft.files['mesh.yaml']!.split('\n')[marker.line - 1]).toContain('destination: nowhere');
  });

  it('shows an object the schema rejects as an invalid node carrying its errors', () => {
    const r = applyCommand(canary, {
      type: 'setField',
      key: 'Route/default/echo-route',
      path: ['spec', 'bogus'],
      value: 1,
    });
    if (!r.ok) throw new Error(r.error);
    const route = compileDraft(r.draft).graph.nodes.find((n) => n.id === 'Route/default/echo-route')!;
    expect(route).toMatchObject({ invalid: true });
    expect(route.diagnostics[0]).toMatchObject({ code: 'schema', message: 'unknown field "bogus"' });
  });

  it('graphHash gives the values it always gave (layouts are stored and shared under them)', () => {
    expect(graphHash({ nodes: [], edges: [] })).toBe('811c9dc501000193');
    expect(graphHash({ nodes: [{ id: 'a' }], edges: [{ source: 'a', target: 'b', kind: 'rule' }] })).toBe(
      '40e16112ec1e6d94',
    );
  });

  it('graphHash follows structure only', () => {
    const a = compileDraft(canary).graph;
    const reversed = { nodes: [...a.nodes].reverse(), edges: [...a.edges].reverse() };
    expect(graphHash(reversed)).toBe(graphHash(a));
    const renamed = applyCommand(canary, {
      type: 'renameObject',
      key: 'Route/default/echo-route',
      name: 'r',
    });
    if (!renamed.ok) throw new Error(renamed.error);
    expect(graphHash(compileDraft(renamed.draft).graph)).not.toBe(graphHash(a));
    const reweighted = applyCommand(canary, {
      type: 'setField',
      key: 'Target/default/echo-canary',
      path: ['spec', 'split', 0, 'weight'],
      value: 50,
    });
    if (!reweighted.ok) throw new Error(reweighted.error);
    expect(graphHash(compileDraft(reweighted.draft).graph)).toBe(graphHash(a));
  });

  it('shareGraph keeps the objects of nodes and edges an edit did not change', () => {
    const before = compileDraft(canary).graph;
    expect(shareGraph(before, compileDraft(canary).graph)).toBe(before);
    const r = applyCommand(canary, {
      type: 'setField',
      key: 'Route/default/echo-route',
      path: ['spec', 'destination'],
      value: 'nowhere',
    });
    if (!r.ok) throw new Error(r.error);
    const next = compileDraft(r.draft).graph;
    const shared = shareGraph(before, next);
    // The same content as the new graph, in the same order.
    expect(shared.nodes).toEqual(next.nodes);
    expect(shared.edges).toEqual(next.edges);
    expect(shared.clusterNodes).toEqual(next.clusterNodes);
    expect(shared.listeners).toEqual(next.listeners);
    const old = new Map(before.nodes.map((n) => [n.id, n]));
    const changed = shared.nodes.filter((n) => n !== old.get(n.id)).map((n) => n.id);
    // The route (now with an error) and the new Missing node are new objects; nothing else.
    expect(changed).toContain('Route/default/echo-route');
    expect(changed).toContain('Missing/default/nowhere');
    expect(changed.length).toBeLessThan(before.nodes.length / 2);
    for (const n of shared.nodes) if (!changed.includes(n.id)) expect(n).toBe(old.get(n.id));
    const oldEdges = new Set(before.edges);
    expect(shared.edges.filter((e) => oldEdges.has(e)).length).toBeGreaterThan(0);
    expect(shared.edges.map((e) => e.id)).toContain(
      'Route/default/echo-route->Missing/default/nowhere:destination',
    );
  });

  it('shareById returns the previous array when every item is equal, and new items where they differ', () => {
    const prev = [
      { id: 'a', v: [1] },
      { id: 'b', v: [2] },
    ];
    expect(
      shareById(prev, [
        { id: 'a', v: [1] },
        { id: 'b', v: [2] },
      ]),
    ).toBe(prev);
    const next = shareById(prev, [
      { id: 'b', v: [2] },
      { id: 'a', v: [3] },
      { id: 'c', v: [] },
    ]);
    expect(next).toEqual([
      { id: 'b', v: [2] },
      { id: 'a', v: [3] },
      { id: 'c', v: [] },
    ]);
    expect(next[0]).toBe(prev[1]);
    expect(next[1]).not.toBe(prev[0]);
    // Same items in another order: a new array (the order is what React Flow draws).
    expect(
      shareById(prev, [
        { id: 'b', v: [2] },
        { id: 'a', v: [1] },
      ]),
    ).not.toBe(prev);
  });
});
