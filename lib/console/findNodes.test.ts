import { describe, expect, it } from 'vitest';
import { compileDraft } from './compileDraft';
import { findNodes } from './findNodes';
import type { GraphNode } from './meshGraph';
import { exampleDraft } from './testDrafts.testutil';

function node(
  kind: GraphNode['kind'],
  namespace: string,
  name: string,
  extra: Partial<GraphNode> = {},
): GraphNode {
  return {
    id: `${kind}/${namespace}/${name}`,
    kind,
    name,
    namespace,
    detail: '',
    diagnostics: [],
    counts: { error: 0, warning: 0, info: 0 },
    ...extra,
  };
}

const ids = (nodes: readonly GraphNode[], q: string, limit?: number) =>
  findNodes(nodes, q, limit).nodes.map((n) => n.id);

describe('findNodes', () => {
  it('ranks a whole name, then a prefix, then a word start, then anywhere, then namespace or kind', () => {
    const nodes = [
      node('Target', 'default', 'my-worker-target'),
      node('Service', 'default', 'coworker'),
      node('VirtualService', 'worker', 'gateway'),
      node('VirtualService', 'default', 'worker-svc'),
      node('Route', 'default', 'worker'),
    ];
    expect(ids(nodes, 'worker')).toEqual([
      'Route/default/worker',
      'VirtualService/default/worker-svc',
      'Target/default/my-worker-target',
      'Service/default/coworker',
      'VirtualService/worker/gateway',
    ]);
    // A prefix beats a word start however long the name; among equals the shorter name comes first.
    const more = [
      node('Route', 'a', 'x-worker'),
      node('Route', 'b', 'worker-with-a-long-name'),
      node('Route', 'c', 'workers'),
    ];
    expect(ids(more, 'worker')).toEqual([
      'Route/c/workers',
      'Route/b/worker-with-a-long-name',
      'Route/a/x-worker',
    ]);
    // The namespace (or kind) before the detail.
    const where = [node('Route', 'default', 'a', { detail: 'to edge' }), node('Route', 'edge', 'b')];
    expect(ids(where, 'edge')).toEqual(['Route/edge/b', 'Route/default/a']);
  });

  it('is case-insensitive, needs every word, and counts all matches beyond the limit', () => {
    const nodes = Array.from({ length: 30 }, (_, i) => node('Route', 'default', `route-${i}`));
    nodes.push(node('Target', 'prod', 'Route-Target'));
    const r = findNodes(nodes, 'ROUTE', 5);
    expect(r.total).toBe(31);
    expect(r.nodes).toHaveLength(5);
    expect(ids(nodes, 'route target')).toEqual(['Target/prod/Route-Target']);
    expect(ids(nodes, 'route-1 nothing-like-this')).toEqual([]);
  });

  it('filters by kind (a prefix or a short name), namespace and diagnostics', () => {
    const nodes = [
      node('VirtualService', 'default', 'a'),
      node('Service', 'default', 'a'),
      node('Route', 'prod', 'a', { counts: { error: 2, warning: 0, info: 0 } }),
      node('Proxy', 'prod', 'a-0', { counts: { error: 0, warning: 1, info: 0 }, generated: undefined }),
      node('VirtualService', 'prod', 'b', { generated: 'naked-service' }),
      node('Route', 'preprod', 'a'),
    ];
    expect(ids(nodes, 'kind:vs')).toEqual(['VirtualService/default/a', 'VirtualService/prod/b']);
    expect(ids(nodes, 'kind:virt a')).toEqual(['VirtualService/default/a']);
    expect(ids(nodes, 'kind:svc')).toEqual(['Service/default/a']);
    expect(ids(nodes, 'ns:prod a')).toEqual(['Route/prod/a', 'Proxy/prod/a-0']);
    expect(ids(nodes, 'is:error')).toEqual(['Route/prod/a']);
    expect(ids(nodes, 'is:warn')).toEqual(['Proxy/prod/a-0']);
    expect(ids(nodes, 'is:generated')).toEqual(['VirtualService/prod/b']);
    // A filter still being typed filters nothing; an unknown one matches nothing.
    expect(findNodes(nodes, 'kind:').total).toBe(0);
    expect(findNodes(nodes, 'kind: a').total).toBe(5);
    expect(findNodes(nodes, 'is:bogus').total).toBe(0);
  });

  it('matches the detail last and returns what the list shows', () => {
    const nodes = [
      node('VirtualService', 'default', 'edge', { detail: 'udp :9001' }),
      node('VirtualService', 'default', 'x-9001'),
    ];
    expect(ids(nodes, '9001')).toEqual(['VirtualService/default/x-9001', 'VirtualService/default/edge']);
    expect(findNodes(nodes, 'edge').nodes[0]).toEqual({
      id: 'VirtualService/default/edge',
      kind: 'VirtualService',
      name: 'edge',
      namespace: 'default',
      detail: 'udp :9001',
      errors: 0,
      warnings: 0,
    });
  });

  it('gives nothing for an empty query and is stable on ties', () => {
    const nodes = [node('Route', 'b', 'r'), node('Route', 'a', 'r')];
    expect(findNodes(nodes, '   ')).toEqual({ nodes: [], total: 0 });
    expect(ids(nodes, 'r')).toEqual(['Route/a/r', 'Route/b/r']);
  });

  it('finds seed Example 1 objects on its compiled graph', () => {
    const { graph } = compileDraft(exampleDraft('seed-example-1'), { xds: false });
    expect(ids(graph.nodes, 'gateway', 3)[0]).toMatch(/\/gateway/);
    const proxies = findNodes(graph.nodes, 'kind:proxy');
    expect(proxies.nodes.map((n) => n.name).sort()).toEqual(['gateway-0', 'transcoder-0']);
    expect(findNodes(graph.nodes, 'kind:target').total).toBe(
      graph.nodes.filter((n) => n.kind === 'Target').length,
    );
  });
});
