import { describe, expect, it } from 'vitest';
import type { L7mpCluster, L7mpConfig, L7mpListener, L7mpOperation } from '@/lib/model/l7mp';
import { applyL7mpOps } from './applyL7mpOps';
import { canonicalL7mpConfig } from './canonicalL7mp';
import { diffL7mp } from './diffL7mp';

const empty: L7mpConfig = { listeners: [], routes: [], clusters: [] };

const worker: L7mpCluster = {
  name: 'worker-svc',
  spec: { protocol: 'UDP', port: 9999 },
  endpoints: [{ name: 'worker-svc.127.0.0.3', spec: { address: '127.0.0.3' } }],
};
const canary: L7mpCluster = {
  name: 'canary',
  spec: { protocol: 'UDP', port: 9000 },
  loadbalancer: { policy: 'ConsistentHash' },
  endpoints: [
    { name: 'canary.stable', spec: { address: '127.0.0.21' }, weight: 80 },
    { name: 'canary.canary', spec: { address: '127.0.0.22' }, weight: 20 },
  ],
};
const gateway: L7mpListener = {
  name: 'gateway-vsvc',
  spec: { protocol: 'UDP', port: 9001 },
  rules: [{ action: { route: { destination: 'worker-svc', ingress: ['transcoder'] } } }],
};
/** What the gateway listener reads back as, with the auto-generated parts l7mp made for it. */
const gatewayLive: L7mpListener = {
  ...gateway,
  options: { track: 0 },
  live: {
    rulelist: 'gateway-vsvc-RuleList-1',
    rules: ['gateway-vsvc-RuleList-1-Rule-1'],
    routes: ['gateway-vsvc-RuleList-1-Rule-1-Route-1'],
  },
};

const brief = (ops: L7mpOperation[]) => ops.map((op) => `${op.method} ${op.path}`);

/** The diff must also be correct when simulated: applying it to live gives desired. */
function expectConverges(live: L7mpConfig, desired: L7mpConfig): void {
  const { config, errors } = applyL7mpOps(live, diffL7mp(live, desired));
  expect(errors).toEqual([]);
  expect(canonicalL7mpConfig(config)).toEqual(canonicalL7mpConfig(desired));
}

describe('diffL7mp: no-ops', () => {
  it('returns nothing for identical configs', () => {
    const config: L7mpConfig = {
      listeners: [gateway],
      routes: [{ name: 'r', destination: 'worker-svc' }],
      clusters: [worker, canary],
    };
    expect(diffL7mp(config, config)).toEqual([]);
    expect(diffL7mp(empty, empty)).toEqual([]);
  });

  it('returns nothing when the live side only spells out l7mp defaults', () => {
    const desired: L7mpConfig = {
      listeners: [gateway],
      routes: [{ name: 'r', destination: 'worker-svc' }],
      clusters: [worker, canary],
    };
    const live: L7mpConfig = {
      listeners: [
        {
          ...gatewayLive,
          rules: [
            {
              match: { match: '*' },
              action: {
                rewrite: [],
                route: {
                  destination: 'worker-svc',
                  ingress: ['transcoder'],
                  egress: [],
                  retry: { retry_on: 'never', num_retries: 1, timeout: 2000 },
                },
              },
            },
          ],
        },
      ],
      routes: [
        {
          name: 'r',
          destination: 'worker-svc',
          ingress: [],
          egress: [],
          retry: { retry_on: 'never', num_retries: 1, timeout: 2000 },
        },
      ],
      clusters: [
        {
          ...canary,
          loadbalancer: { policy: 'HashRing', key: '<RANDOM>' },
          endpoints: [...(canary.endpoints ?? [])].reverse(),
        },
        {
          ...worker,
          loadbalancer: { policy: 'Trivial' },
          endpoints: [{ name: 'worker-svc.127.0.0.3', spec: { address: '127.0.0.3' }, weight: 1 }],
        },
      ],
    };
    expect(diffL7mp(live, desired)).toEqual([]);
  });
});

describe('diffL7mp: clusters', () => {
  it('adds a cluster with its endpoints inline', () => {
    const ops = diffL7mp(empty, { ...empty, clusters: [canary] });
    expect(ops).toEqual([
      {
        method: 'POST',
        path: '/api/v1/clusters',
        body: {
          cluster: {
            name: 'canary',
            spec: { protocol: 'UDP', port: 9000 },
            endpoints: [
              { name: 'canary.stable', spec: { address: '127.0.0.21' }, weight: 80 },
              { name: 'canary.canary', spec: { address: '127.0.0.22' }, weight: 20 },
            ],
            loadbalancer: { policy: 'ConsistentHash' },
          },
        },
        kind: 'cluster',
        name: 'canary',
        reason: 'cluster added',
      },
    ]);
  });

  it('deletes a removed cluster with a plain delete (its endpoints go with it)', () => {
    const ops = diffL7mp({ ...empty, clusters: [canary] }, empty);
    expect(ops).toEqual([
      {
        method: 'DELETE',
        path: '/api/v1/clusters/canary',
        kind: 'cluster',
        name: 'canary',
        reason: 'cluster removed',
      },
    ]);
  });

  it('deletes and re-adds a cluster whose spec changed', () => {
    const changed = { ...worker, spec: { protocol: 'UDP', port: 9998 } };
    const ops = diffL7mp({ ...empty, clusters: [worker] }, { ...empty, clusters: [changed] });
    expect(brief(ops)).toEqual(['DELETE /api/v1/clusters/worker-svc', 'POST /api/v1/clusters']);
    expect(ops[0]?.reason).toBe('cluster spec changed: port 9999 -> 9998');
    expect(ops[1]?.reason).toBe('cluster spec changed: port 9999 -> 9998');
    expect(ops[1]?.body).toEqual({ cluster: changed });
  });

  it('never sends endpoints for a virtual cluster (inline endpoints there make l7mp 0.5.7 exit)', () => {
    const sync: L7mpCluster = {
      name: 'sync',
      spec: { protocol: 'Sync', query: '/labels/id' },
      endpoints: [{ name: 'e', spec: { address: 'x' } }],
    };
    const ops = diffL7mp(empty, { ...empty, clusters: [sync] });
    expect(ops.map((o) => o.body)).toEqual([
      { cluster: { name: 'sync', spec: { protocol: 'Sync', query: '/labels/id' } } },
    ]);
    expect(
      diffL7mp({ ...empty, clusters: [{ ...sync, endpoints: [] }] }, { ...empty, clusters: [sync] }),
    ).toEqual([]);
  });

  it('re-adds the whole cluster when the load balancer changes, even if endpoints change too', () => {
    const changed: L7mpCluster = {
      ...canary,
      loadbalancer: { policy: 'ConsistentHash', key: '/labels/id' },
      endpoints: [],
    };
    const ops = diffL7mp({ ...empty, clusters: [canary] }, { ...empty, clusters: [changed] });
    expect(brief(ops)).toEqual(['DELETE /api/v1/clusters/canary', 'POST /api/v1/clusters']);
    expect(ops[0]?.reason).toBe('cluster loadbalancer changed: key <RANDOM> -> /labels/id');
  });
});

describe('diffL7mp: endpoint-only changes', () => {
  it('adds a new endpoint through the endpoint API', () => {
    const more: L7mpCluster = {
      ...worker,
      endpoints: [
        ...(worker.endpoints ?? []),
        { name: 'worker-svc.127.0.0.4', spec: { address: '127.0.0.4' }, weight: 2 },
      ],
    };
    const ops = diffL7mp({ ...empty, clusters: [worker] }, { ...empty, clusters: [more] });
    expect(ops).toEqual([
      {
        method: 'POST',
        path: '/api/v1/clusters/worker-svc/endpoints',
        body: { endpoint: { name: 'worker-svc.127.0.0.4', spec: { address: '127.0.0.4' }, weight: 2 } },
        kind: 'endpoint',
        name: 'worker-svc.127.0.0.4',
        reason: 'endpoint added to cluster worker-svc',
      },
    ]);
  });

  it('deletes a removed endpoint through the endpoint API', () => {
    const fewer: L7mpCluster = { ...canary, endpoints: canary.endpoints?.slice(0, 1) };
    const ops = diffL7mp({ ...empty, clusters: [canary] }, { ...empty, clusters: [fewer] });
    expect(ops).toEqual([
      {
        method: 'DELETE',
        path: '/api/v1/endpoints/canary.canary',
        kind: 'endpoint',
        name: 'canary.canary',
        reason: 'endpoint removed',
      },
    ]);
  });

  it('deletes and re-adds an endpoint whose weight changed', () => {
    const reweighted: L7mpCluster = {
      ...canary,
      endpoints: [
        { name: 'canary.stable', spec: { address: '127.0.0.21' }, weight: 50 },
        { name: 'canary.canary', spec: { address: '127.0.0.22' }, weight: 20 },
      ],
    };
    const ops = diffL7mp({ ...empty, clusters: [canary] }, { ...empty, clusters: [reweighted] });
    expect(ops).toEqual([
      {
        method: 'DELETE',
        path: '/api/v1/endpoints/canary.stable',
        kind: 'endpoint',
        name: 'canary.stable',
        reason: 'endpoint weight 80 -> 50',
      },
      {
        method: 'POST',
        path: '/api/v1/clusters/canary/endpoints',
        body: { endpoint: { name: 'canary.stable', spec: { address: '127.0.0.21' }, weight: 50 } },
        kind: 'endpoint',
        name: 'canary.stable',
        reason: 'endpoint weight 80 -> 50',
      },
    ]);
  });

  it('encodes cluster and endpoint names in endpoint paths', () => {
    const a: L7mpCluster = {
      name: 'ns/c@1:x',
      spec: { protocol: 'UDP', port: 1 },
      endpoints: [{ name: 'e/1', spec: { address: 'a' } }],
    };
    const b: L7mpCluster = { ...a, endpoints: [{ name: 'e@2', spec: { address: 'b' } }] };
    expect(brief(diffL7mp({ ...empty, clusters: [a] }, { ...empty, clusters: [b] }))).toEqual([
      'DELETE /api/v1/endpoints/e%2F1',
      'POST /api/v1/clusters/ns%2Fc%401%3Ax/endpoints',
    ]);
  });

  it('moves an endpoint name between kept clusters: the delete comes before the add', () => {
    const a1: L7mpCluster = {
      name: 'a',
      spec: { protocol: 'UDP', port: 1 },
      endpoints: [{ name: 'e', spec: { address: 'x' } }],
    };
    const b1: L7mpCluster = { name: 'b', spec: { protocol: 'UDP', port: 2 }, endpoints: [] };
    const live = { ...empty, clusters: [a1, b1] };
    const desired = {
      ...empty,
      clusters: [
        { ...a1, endpoints: [] },
        { ...b1, endpoints: [{ name: 'e', spec: { address: 'x' } }] },
      ],
    };
    expect(brief(diffL7mp(live, desired))).toEqual([
      'DELETE /api/v1/endpoints/e',
      'POST /api/v1/clusters/b/endpoints',
    ]);
    expectConverges(live, desired);
  });
});

describe('diffL7mp: routes', () => {
  it('adds, removes and re-adds routes', () => {
    const live: L7mpConfig = {
      ...empty,
      routes: [
        { name: 'gone', destination: 'c' },
        { name: 'r', destination: 'c' },
      ],
    };
    const desired: L7mpConfig = {
      ...empty,
      routes: [
        { name: 'new', destination: 'c', retry: { retry_on: 'always', num_retries: 3, timeout: 500 } },
        { name: 'r', destination: 'd' },
      ],
    };
    const ops = diffL7mp(live, desired);
    expect(ops.map((op) => [op.method, op.path, op.reason])).toEqual([
      ['DELETE', '/api/v1/routes/gone', 'route removed'],
      ['DELETE', '/api/v1/routes/r', 'route destination c -> d'],
      ['POST', '/api/v1/routes', 'route added'],
      ['POST', '/api/v1/routes', 'route destination c -> d'],
    ]);
    expect(ops[2]?.body).toEqual({
      route: { name: 'new', destination: 'c', retry: { retry_on: 'always', num_retries: 3, timeout: 500 } },
    });
    expect(ops[3]?.body).toEqual({ route: { name: 'r', destination: 'd' } });
  });

  it('explains the removal of an auto-generated route left behind by a deleted listener', () => {
    const ops = diffL7mp(
      { ...empty, routes: [{ name: 'gw-RuleList-3-Rule-4-Route-5', destination: 'c' }] },
      empty,
    );
    expect(ops[0]?.reason).toBe('auto-generated route left over from a deleted listener or rule removed');
  });
});

describe('diffL7mp: listeners', () => {
  it('adds a listener with a wrapped body, rules as an array and no live field', () => {
    const ops = diffL7mp(empty, { ...empty, listeners: [{ ...gatewayLive, options: { track: 5 } }] });
    expect(ops).toEqual([
      {
        method: 'POST',
        path: '/api/v1/listeners',
        body: {
          listener: {
            name: 'gateway-vsvc',
            spec: { protocol: 'UDP', port: 9001 },
            rules: [{ action: { route: { destination: 'worker-svc', ingress: ['transcoder'] } } }],
            options: { track: 5 },
          },
        },
        kind: 'listener',
        name: 'gateway-vsvc',
        reason: 'listener added',
      },
    ]);
  });

  it('deletes a listener plainly, then its auto-generated rulelist, rules and inline routes', () => {
    const live: L7mpConfig = {
      ...empty,
      listeners: [
        {
          ...gatewayLive,
          live: {
            rulelist: 'gw-RuleList-1',
            rules: ['gw-RuleList-1-Rule-1', 'gw-RuleList-1-Rule-2'],
            routes: ['gw-RuleList-1-Rule-1-Route-1'],
          },
        },
      ],
    };
    const ops = diffL7mp(live, empty);
    expect(ops.map((op) => [op.method, op.path, op.kind, op.name])).toEqual([
      ['DELETE', '/api/v1/listeners/gateway-vsvc', 'listener', 'gateway-vsvc'],
      ['DELETE', '/api/v1/rulelists/gw-RuleList-1', 'rulelist', 'gw-RuleList-1'],
      ['DELETE', '/api/v1/rules/gw-RuleList-1-Rule-1', 'rule', 'gw-RuleList-1-Rule-1'],
      ['DELETE', '/api/v1/rules/gw-RuleList-1-Rule-2', 'rule', 'gw-RuleList-1-Rule-2'],
      ['DELETE', '/api/v1/routes/gw-RuleList-1-Rule-1-Route-1', 'route', 'gw-RuleList-1-Rule-1-Route-1'],
    ]);
    expect(ops[0]?.reason).toBe('listener removed');
    expect(ops.every((op) => op.body === undefined)).toBe(true);
    expectConverges(live, empty);
  });

  it('deletes a removeOrphanSessions listener recursively, with no cleanup calls', () => {
    const live: L7mpConfig = {
      ...empty,
      listeners: [{ ...gatewayLive, options: { removeOrphanSessions: true } }],
    };
    const ops = diffL7mp(live, empty);
    expect(ops).toEqual([
      {
        method: 'DELETE',
        path: '/api/v1/listeners/gateway-vsvc?recursive=true',
        kind: 'listener',
        name: 'gateway-vsvc',
        reason: 'listener removed (removeOrphanSessions: recursive delete ends its sessions)',
      },
    ]);
  });

  it('decides recursive vs plain from the live listener, not the desired one', () => {
    const live: L7mpConfig = { ...empty, listeners: [gatewayLive] };
    const desired: L7mpConfig = {
      ...empty,
      listeners: [{ ...gateway, options: { removeOrphanSessions: true } }],
    };
    const ops = diffL7mp(live, desired);
    expect(ops[0]?.path).toBe('/api/v1/listeners/gateway-vsvc');
    expect(ops.at(-1)?.body).toEqual({ listener: { ...gateway, options: { removeOrphanSessions: true } } });
    expect(ops[0]?.reason).toBe(
      'listener options changed: removeOrphanSessions (none) -> true, track 0 -> (none)',
    );
    // removeOrphanSessions: false is not true: plain delete.
    const notRecursive = diffL7mp(
      { ...empty, listeners: [{ ...gatewayLive, options: { removeOrphanSessions: false } }] },
      empty,
    );
    expect(notRecursive[0]?.path).toBe('/api/v1/listeners/gateway-vsvc');
  });

  it('deletes and re-adds a changed listener, explaining the change', () => {
    const live: L7mpConfig = { ...empty, listeners: [gatewayLive] };
    const desired: L7mpConfig = {
      ...empty,
      listeners: [{ ...gateway, spec: { protocol: 'UDP', port: 9002 } }],
    };
    const ops = diffL7mp(live, desired);
    expect(brief(ops)).toEqual([
      'DELETE /api/v1/listeners/gateway-vsvc',
      'DELETE /api/v1/rulelists/gateway-vsvc-RuleList-1',
      'DELETE /api/v1/rules/gateway-vsvc-RuleList-1-Rule-1',
      'DELETE /api/v1/routes/gateway-vsvc-RuleList-1-Rule-1-Route-1',
      'POST /api/v1/listeners',
    ]);
    expect(ops[0]?.reason).toBe('listener spec changed: port 9001 -> 9002');
    expect(ops[4]?.reason).toBe('listener spec changed: port 9001 -> 9002');
  });

  it('treats rule order as significant', () => {
    const two: L7mpListener = { ...gateway, rules: [{ action: { route: 'a' } }, { action: { route: 'b' } }] };
    const swapped: L7mpListener = {
      ...gateway,
      rules: [{ action: { route: 'b' } }, { action: { route: 'a' } }],
    };
    const ops = diffL7mp({ ...empty, listeners: [two] }, { ...empty, listeners: [swapped] });
    expect(brief(ops)).toEqual(['DELETE /api/v1/listeners/gateway-vsvc', 'POST /api/v1/listeners']);
    expect(ops[0]?.reason).toBe('listener rules changed: [0].action.route a -> b, [1].action.route b -> a');
  });

  it('never cleans up a leftover name that the desired config keeps as a named route', () => {
    const live: L7mpConfig = {
      ...empty,
      routes: [{ name: 'shared', destination: 'c' }],
      listeners: [{ ...gatewayLive, live: { rules: [], routes: ['shared', 'inline-1'] } }],
    };
    const desired: L7mpConfig = { ...empty, routes: [{ name: 'shared', destination: 'c' }] };
    expect(brief(diffL7mp(live, desired))).toEqual([
      'DELETE /api/v1/listeners/gateway-vsvc',
      'DELETE /api/v1/routes/inline-1',
    ]);
  });

  it('encodes listener names', () => {
    const l: L7mpListener = { ...gateway, name: 'default/user-a@vsvc:1' };
    expect(diffL7mp({ ...empty, listeners: [l] }, empty)[0]?.path).toBe(
      '/api/v1/listeners/default%2Fuser-a%40vsvc%3A1',
    );
  });
});

describe('diffL7mp: order', () => {
  it('deletes listeners, routes, endpoints, clusters, then adds clusters, endpoints, routes, listeners, each by name', () => {
    const c = (name: string, port: number, endpoints: string[] = []): L7mpCluster => ({
      name,
      spec: { protocol: 'UDP', port },
      endpoints: endpoints.map((e) => ({ name: e, spec: { address: e } })),
    });
    const live: L7mpConfig = {
      listeners: [
        { name: 'l-b', spec: { protocol: 'UDP', port: 1 }, rules: [] },
        { name: 'l-a', spec: { protocol: 'UDP', port: 1 }, rules: [] },
        { name: 'l-keep', spec: { protocol: 'UDP', port: 3 }, rules: [] },
      ],
      routes: [
        { name: 'r-b', destination: 'x' },
        { name: 'r-a', destination: 'x' },
      ],
      clusters: [c('c-b', 1), c('c-a', 1), c('c-kept', 5, ['e-b', 'e-a'])],
    };
    const desired: L7mpConfig = {
      listeners: [
        { name: 'l-b', spec: { protocol: 'UDP', port: 2 }, rules: [] },
        { name: 'l-c', spec: { protocol: 'UDP', port: 2 }, rules: [] },
        { name: 'l-keep', spec: { protocol: 'UDP', port: 3 }, rules: [] },
      ],
      routes: [
        { name: 'r-c', destination: 'x' },
        { name: 'r-b', destination: 'y' },
      ],
      clusters: [c('c-c', 1), c('c-b', 2), c('c-kept', 5, ['e-d', 'e-c'])],
    };
    const ops = diffL7mp(live, desired);
    expect(ops.map((op) => `${op.method} ${op.kind} ${op.name}`)).toEqual([
      'DELETE listener l-a',
      'DELETE listener l-b',
      'DELETE route r-a',
      'DELETE route r-b',
      'DELETE endpoint e-a',
      'DELETE endpoint e-b',
      'DELETE cluster c-a',
      'DELETE cluster c-b',
      'POST cluster c-b',
      'POST cluster c-c',
      'POST endpoint e-c',
      'POST endpoint e-d',
      'POST route r-b',
      'POST route r-c',
      'POST listener l-b',
      'POST listener l-c',
    ]);
    expectConverges(live, desired);
  });
});
