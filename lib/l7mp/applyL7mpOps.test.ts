import { describe, expect, it } from 'vitest';
import type { L7mpConfig, L7mpOperation } from '@/lib/model/l7mp';
import { applyL7mpOps } from './applyL7mpOps';

const empty: L7mpConfig = { listeners: [], routes: [], clusters: [] };

const op = (method: 'POST' | 'DELETE', path: string, body?: unknown): L7mpOperation => ({
  method,
  path,
  body,
  kind: 'cluster',
  name: '',
  reason: 'test',
});
const addCluster = (name: string, endpoints?: string[]) =>
  op('POST', '/api/v1/clusters', {
    cluster: {
      name,
      spec: { protocol: 'UDP', port: 1 },
      ...(endpoints ? { endpoints: endpoints.map((e) => ({ name: e, spec: { address: e } })) } : {}),
    },
  });

describe('applyL7mpOps', () => {
  it('adds clusters, endpoints, routes and listeners and keeps lists sorted by name', () => {
    const { config, errors } = applyL7mpOps(empty, [
      addCluster('c2', ['e1']),
      addCluster('c1'),
      op('POST', '/api/v1/clusters/c1/endpoints', {
        endpoint: { name: 'e2', spec: { address: 'a' }, weight: 3 },
      }),
      op('POST', '/api/v1/routes', { route: { name: 'r', destination: 'c1' } }),
      op('POST', '/api/v1/listeners', {
        listener: { name: 'l', spec: { protocol: 'UDP', port: 5 }, rules: [{ action: { route: 'r' } }] },
      }),
    ]);
    expect(errors).toEqual([]);
    expect(config.clusters.map((c) => c.name)).toEqual(['c1', 'c2']);
    expect(config.clusters[0]?.endpoints).toEqual([{ name: 'e2', spec: { address: 'a' }, weight: 3 }]);
    expect(config.clusters[1]?.endpoints?.map((e) => e.name)).toEqual(['e1']);
    expect(config.routes).toEqual([{ name: 'r', destination: 'c1' }]);
    expect(config.listeners).toEqual([
      { name: 'l', spec: { protocol: 'UDP', port: 5 }, rules: [{ action: { route: 'r' } }] },
    ]);
  });

  it('rejects a POST of an existing name with "already defined"', () => {
    const start: L7mpConfig = {
      listeners: [{ name: 'l', spec: { protocol: 'UDP', port: 5 }, rules: [] }],
      routes: [{ name: 'r', destination: 'c' }],
      clusters: [{ name: 'c', spec: { protocol: 'UDP', port: 1 } }],
    };
    const { config, errors } = applyL7mpOps(start, [
      addCluster('c'),
      op('POST', '/api/v1/routes', { route: { name: 'r', destination: 'other' } }),
      op('POST', '/api/v1/listeners', {
        listener: { name: 'l', spec: { protocol: 'TCP', port: 6 }, rules: [] },
      }),
    ]);
    expect(errors).toEqual([
      'POST /api/v1/clusters: Cannot add cluster: Cluster "c" already defined',
      'POST /api/v1/routes: Cannot add route: Route "r" already defined',
      'POST /api/v1/listeners: Cannot add listener: Listener "l" already defined',
    ]);
    expect(config).toEqual(start);
  });

  it('treats endpoint names as global per proxy', () => {
    const { config, errors } = applyL7mpOps(empty, [
      addCluster('a', ['e']),
      addCluster('b'),
      op('POST', '/api/v1/clusters/b/endpoints', { endpoint: { name: 'e', spec: { address: 'x' } } }),
      addCluster('c', ['e', 'f']),
    ]);
    expect(errors).toEqual([
      'POST /api/v1/clusters/b/endpoints: Cannot add endpoint: Endpoint "e" already defined',
      'POST /api/v1/clusters: Cannot add endpoint: Endpoint "e" already defined (inline: l7mp 0.5.7 crashes)',
    ]);
    // Like l7mp, the cluster itself is still added, without the duplicate endpoint.
    expect(config.clusters.find((c) => c.name === 'c')?.endpoints?.map((e) => e.name)).toEqual(['f']);
    expect(config.clusters.find((c) => c.name === 'b')?.endpoints).toBeUndefined();
  });

  it('refuses endpoints in clusters that cannot hold them (virtual clusters)', () => {
    const { config, errors } = applyL7mpOps(empty, [
      op('POST', '/api/v1/clusters', {
        cluster: {
          name: 's',
          spec: { protocol: 'Sync', query: '/x' },
          endpoints: [{ name: 'e', spec: { address: 'x' } }],
        },
      }),
      op('POST', '/api/v1/clusters/s/endpoints', { endpoint: { name: 'f', spec: { address: 'y' } } }),
    ]);
    expect(errors).toEqual([
      'POST /api/v1/clusters: Adding an endpoint to a cluster of type "Sync" is not supported (inline: l7mp 0.5.7 crashes)',
      'POST /api/v1/clusters/s/endpoints: Adding an endpoint to a cluster of type "Sync" is not supported',
    ]);
    expect(config.clusters).toEqual([{ name: 's', spec: { protocol: 'Sync', query: '/x' }, endpoints: [] }]);
  });

  it('fails to add an endpoint to an unknown cluster', () => {
    const { errors } = applyL7mpOps(empty, [
      op('POST', '/api/v1/clusters/nope/endpoints', { endpoint: { name: 'e', spec: { address: 'x' } } }),
    ]);
    expect(errors).toEqual(['POST /api/v1/clusters/nope/endpoints: Not Found']);
  });

  it('treats deletes of unknown objects as success ("already gone")', () => {
    const { config, errors } = applyL7mpOps(empty, [
      op('DELETE', '/api/v1/listeners/x'),
      op('DELETE', '/api/v1/listeners/x?recursive=true'),
      op('DELETE', '/api/v1/routes/x'),
      op('DELETE', '/api/v1/clusters/x'),
      op('DELETE', '/api/v1/endpoints/x'),
      op('DELETE', '/api/v1/rulelists/x'),
      op('DELETE', '/api/v1/rules/x'),
    ]);
    expect(errors).toEqual([]);
    expect(config).toEqual(empty);
  });

  it('deletes a cluster with its endpoints, but never the routes that refer to it', () => {
    const start: L7mpConfig = {
      ...empty,
      routes: [{ name: 'r', destination: 'c' }],
      clusters: [
        { name: 'c', spec: { protocol: 'UDP', port: 1 }, endpoints: [{ name: 'e', spec: { address: 'x' } }] },
      ],
    };
    const { config, errors } = applyL7mpOps(start, [
      op('DELETE', '/api/v1/clusters/c'),
      addCluster('d', ['e']),
    ]);
    expect(errors).toEqual([]);
    expect(config.routes).toEqual(start.routes);
    expect(config.clusters.map((c) => c.name)).toEqual(['d']);
  });

  it('deletes endpoints by their global name, and decodes names in paths', () => {
    const start: L7mpConfig = {
      ...empty,
      clusters: [
        {
          name: 'ns/c',
          spec: { protocol: 'UDP', port: 1 },
          endpoints: [
            { name: 'e/1', spec: { address: 'x' } },
            { name: 'e2', spec: { address: 'y' } },
          ],
        },
      ],
    };
    const { config } = applyL7mpOps(start, [op('DELETE', '/api/v1/endpoints/e%2F1')]);
    expect(config.clusters[0]?.endpoints?.map((e) => e.name)).toEqual(['e2']);
    const added = applyL7mpOps(start, [
      op('POST', '/api/v1/clusters/ns%2Fc/endpoints', { endpoint: { name: 'e3', spec: { address: 'z' } } }),
    ]);
    expect(added.errors).toEqual([]);
    expect(added.config.clusters[0]?.endpoints?.map((e) => e.name)).toEqual(['e/1', 'e2', 'e3']);
  });

  it('reports bodies l7mp would reject and unknown operations', () => {
    const { errors } = applyL7mpOps(empty, [
      op('POST', '/api/v1/clusters', { name: 'unwrapped', spec: { protocol: 'UDP' } }),
      op('POST', '/api/v1/listeners', {
        listener: { name: 'l', spec: { protocol: 'UDP', port: 1 }, rules: 3 },
      }),
      op('POST', '/api/v1/sessions', {}),
      op('DELETE', '/api/v1/listeners'),
      op('DELETE', '/nope'),
      op('DELETE', '/api/v1/routes/%E0%A4%A'),
    ]);
    expect(errors).toHaveLength(6);
    expect(errors[0]).toContain('missing property "cluster"');
    expect(errors[1]).toContain('422');
    expect(errors[4]).toContain('unknown API operation');
    expect(errors[5]).toContain('bad URL encoding');
  });

  it('does not mutate its input', () => {
    const start: L7mpConfig = {
      ...empty,
      clusters: [{ name: 'c', spec: { protocol: 'UDP', port: 1 }, endpoints: [] }],
    };
    const frozen = JSON.stringify(start);
    applyL7mpOps(start, [
      op('POST', '/api/v1/clusters/c/endpoints', { endpoint: { name: 'e', spec: { address: 'x' } } }),
      op('DELETE', '/api/v1/clusters/c'),
    ]);
    expect(JSON.stringify(start)).toBe(frozen);
  });
});
