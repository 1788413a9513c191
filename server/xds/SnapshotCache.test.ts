import { describe, expect, it, vi } from 'vitest';
import { decodeResource, encodeResource, ResourceEncodeError, TypeUrls } from './envoyProtos';
import { deepFreeze, SnapshotCache, SnapshotConsistencyError } from './SnapshotCache';
import { applyRendered, snapshotFromRendered } from './snapshotFromRendered';
import { demoSnapshot } from './testing/demoSnapshot';

const snap = (wa: number, ports = [1001]) =>
  demoSnapshot({
    clusters: [
      { name: 'cluster-a', weight: wa, ports },
      { name: 'cluster-b', weight: 100 - wa, ports: [2001] },
    ],
  });

describe('envoyProtos', () => {
  it('encodes nested Anys, wrapper scalars, durations and enum names; decodes back', () => {
    const any = encodeResource(TypeUrls.route, {
      name: 'r',
      virtual_hosts: [
        {
          name: 'v',
          domains: ['*'],
          routes: [{ match: { prefix: '' }, route: { cluster: 'c', timeout: '1.5s' } }],
        },
      ],
    });
    expect(any.type_url).toBe(TypeUrls.route);
    const back = decodeResource(any) as any;
    expect(back.virtual_hosts[0].routes[0].route.timeout).toEqual({ seconds: '1', nanos: 500000000 });
    const l = decodeResource(encodeResource(TypeUrls.listener, snap(80).listeners[0])) as any;
    expect(l.api_listener.api_listener['@type']).toBe(TypeUrls.httpConnectionManager);
    expect(l.api_listener.api_listener.rds.route_config_name).toBe('demo-service-route');
  });

  it('refuses unknown fields (camelCase too), unknown enum values and oneof clashes, naming the paths', () => {
    let err: ResourceEncodeError | undefined;
    try {
      encodeResource(TypeUrls.cluster, {
        name: 'x',
        type: 'EDSX',
        edsClusterConfig: {},
        eds_cluster_config: { service_name: 'y', foo: 1 },
        load_assignment: { cluster_name: 'x', endpoints: [{ lb_endpoints: [{ endpoint: { adress: {} } }] }] },
      });
    } catch (e) {
      err = e as ResourceEncodeError;
    }
    expect(err).toBeInstanceOf(ResourceEncodeError);
    expect(err!.problems).toEqual([
      'type: unknown envoy.config.cluster.v3.Cluster.DiscoveryType value "EDSX"',
      'edsClusterConfig: unknown field of envoy.config.cluster.v3.Cluster',
      'eds_cluster_config.foo: unknown field of envoy.config.cluster.v3.Cluster.EdsClusterConfig',
      'load_assignment.endpoints[0].lb_endpoints[0].endpoint.adress: unknown field of envoy.config.endpoint.v3.Endpoint',
    ]);
    expect(() =>
      encodeResource(TypeUrls.route, {
        name: 'r',
        virtual_hosts: [{ name: 'v', domains: ['*'], routes: [{ match: { prefix: '', path: '/x' } }] }],
      }),
    ).toThrow(/oneof path_specifier already set by prefix/);
    expect(() =>
      encodeResource(TypeUrls.listener, {
        name: 'l',
        api_listener: {
          api_listener: { '@type': TypeUrls.httpConnectionManager, rds: { routeConfigName: 'x' } },
        },
      }),
    ).toThrow(/api_listener\.api_listener\.rds\.routeConfigName: unknown field/);
  });
});

describe('SnapshotCache', () => {
  it('coalesces a burst, notifies only changed nodes and types, and encodes each content once', async () => {
    const cache = new SnapshotCache({ coalesceMs: 10, maxDelayMs: 50 });
    const events: [string, string[]][] = [];
    cache.on('change', (n, _s, types) => events.push([n, types]));
    for (let i = 0; i < 100; i++) cache.setSnapshot(`ns/pod-${i}`, snap(80));
    expect(cache.getSnapshot('ns/pod-0')).toBeUndefined(); // staged, not published yet
    await cache.settled();
    expect(events.length).toBe(100);
    // 1 listener + 1 route + 2 clusters + 2 CLAs, shared by 100 nodes.
    expect(cache.encodeCount).toBe(6);
    expect(cache.encodedCount()).toBe(6);
    const a = cache.getSnapshot('ns/pod-0')!;
    const b = cache.getSnapshot('ns/pod-1')!;
    expect(a.types[TypeUrls.route].resources.get('demo-service-route')!.any).toBe(
      b.types[TypeUrls.route].resources.get('demo-service-route')!.any,
    );
    events.length = 0;
    // Same content again: no notification. An endpoint change on one node: only EDS of that node.
    cache.setSnapshot('ns/pod-0', snap(80));
    cache.setSnapshot('ns/pod-1', snap(80, [1001, 1002]));
    await cache.settled();
    expect(events).toEqual([['ns/pod-1', [TypeUrls.endpoint]]]);
    expect(cache.getSnapshot('ns/pod-0')!.types[TypeUrls.endpoint].version).not.toBe(
      cache.getSnapshot('ns/pod-1')!.types[TypeUrls.endpoint].version,
    );
    expect(cache.encodeCount).toBe(7);
    cache.close();
  });

  it('publishes a lone change at the end of the turn and caps a burst that follows (fake clock)', () => {
    vi.useFakeTimers();
    try {
      const cache = new SnapshotCache({ coalesceMs: 10, maxDelayMs: 50 });
      const at: number[] = [];
      const t0 = Date.now();
      cache.on('change', () => at.push(Date.now() - t0));
      // The first update after a quiet period waits for no timer: it goes out with this turn.
      cache.setSnapshot('ns/p', snap(1));
      expect(at).toEqual([]); // not synchronously: everything staged in this turn joins it
      vi.advanceTimersByTime(0);
      expect(at).toEqual([0]);
      // An update every 5 ms after it never leaves a 10 ms quiet period: the 50 ms cap drives publishing.
      for (let i = 2; i <= 31; i++) {
        vi.advanceTimersByTime(5);
        cache.setSnapshot('ns/p', snap(i));
      }
      expect(at).toEqual([0, 55, 105]);
      // Quiet again: the next lone update is published at once, and a second one 3 ms later waits
      // for the 10 ms quiet period.
      vi.advanceTimersByTime(100);
      at.length = 0;
      const t1 = Date.now() - t0;
      cache.setSnapshot('ns/p', snap(77));
      vi.advanceTimersByTime(3);
      expect(at).toEqual([t1]);
      cache.setSnapshot('ns/p', snap(78));
      vi.advanceTimersByTime(9);
      expect(at).toEqual([t1]);
      vi.advanceTimersByTime(1);
      expect(at).toEqual([t1, t1 + 13]);
      cache.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('checks a frozen input shared by many nodes once, and still refuses an inconsistent one', () => {
    const cache = new SnapshotCache();
    const shared = deepFreeze(snap(80));
    for (let i = 0; i < 50; i++) cache.setSnapshot(`ns/p-${i}`, shared);
    const bad = snap(80);
    bad.routes = [];
    const frozenBad = deepFreeze(bad);
    for (let i = 0; i < 2; i++)
      expect(() => cache.setSnapshot(`ns/p-${i}`, frozenBad)).toThrow(SnapshotConsistencyError);
    cache.flush();
    expect(cache.getSnapshot('ns/p-0')!.types[TypeUrls.route].resources.size).toBe(1);
    cache.close();
  });

  it('sets one input for many nodes at once, references counted per node, and refuses it whole', () => {
    const cache = new SnapshotCache();
    const shared = deepFreeze(snap(80));
    cache.setSnapshotOfNodes(['ns/a', 'ns/b', 'ns/c'], shared);
    cache.flush();
    expect(cache.nodeIds()).toEqual(['ns/a', 'ns/b', 'ns/c']);
    expect(cache.getSnapshot('ns/c')!.nodeId).toBe('ns/c');
    expect(cache.getSnapshot('ns/b')!.types).toBe(cache.getSnapshot('ns/a')!.types);
    expect(cache.encodedCount()).toBe(6);
    // Each node holds its own references: the resources stay until the last node lets them go.
    cache.setSnapshot('ns/a', snap(60));
    cache.clearSnapshot('ns/b');
    cache.flush();
    expect(cache.encodedCount()).toBe(7);
    cache.clearSnapshot('ns/c');
    cache.flush();
    expect(cache.encodedCount()).toBe(6);
    cache.clearSnapshot('ns/a');
    cache.flush();
    expect(cache.encodedCount()).toBe(0);
    const bad = snap(80);
    bad.routes = [];
    expect(() => cache.setSnapshotOfNodes(['ns/x', 'ns/y'], deepFreeze(bad))).toThrow(/ns\/x/);
    cache.flush();
    expect(cache.nodeIds()).toEqual([]);
    expect(cache.encodedCount()).toBe(0);
    // Through applyRendered, every replica of a refused render gets its own error.
    const errors = applyRendered(cache, {
      'ns/p': { ...snap(80), routes: [] },
      'ns/q': { ...snap(80), routes: [] },
    });
    expect([...errors].map(([n, e]) => [n, e.message.includes(n)])).toEqual([
      ['ns/p', true],
      ['ns/q', true],
    ]);
    cache.close();
  });

  it('refuses an inconsistent snapshot listing the dangling names, and keeps the previous one', async () => {
    const cache = new SnapshotCache();
    cache.setSnapshot('ns/p', snap(80));
    cache.flush();
    const bad = snap(50);
    bad.routes = [];
    bad.endpoints = bad.endpoints.slice(1);
    let err: SnapshotConsistencyError | undefined;
    try {
      cache.setSnapshot('ns/p', bad);
    } catch (e) {
      err = e as SnapshotConsistencyError;
    }
    expect(err).toBeInstanceOf(SnapshotConsistencyError);
    expect(err!.dangling).toEqual({
      routes: ['demo-service-route'],
      endpoints: ['cluster-a-eds'],
      duplicates: [],
    });
    expect(err!.message).toContain('RDS names referenced by listeners but missing: demo-service-route');
    // An encoding error is refused as well.
    const typo = snap(50);
    (typo.clusters[0] as any).lbPolicy = 'ROUND_ROBIN';
    expect(() => cache.setSnapshot('ns/p', typo)).toThrow(/lbPolicy: unknown field/);
    cache.flush();
    const kept = cache.getSnapshot('ns/p')!;
    expect(kept.types[TypeUrls.route].resources.size).toBe(1);
    expect(
      (kept.types[TypeUrls.route].resources.get('demo-service-route')!.object as any).virtual_hosts[0]
        .routes[0].route.weighted_clusters.clusters[0].weight,
    ).toEqual({ value: 80 });
    expect(cache.encodedCount()).toBe(6);
  });

  it('adapts the renderer shape (per proxy id) and clears proxies that disappeared', async () => {
    const cache = new SnapshotCache();
    expect(snapshotFromRendered({ listeners: [] })).toEqual({
      listeners: [],
      routes: [],
      clusters: [],
      endpoints: [],
    });
    const errors = applyRendered(cache, { 'ns/a': snap(80), 'ns/b': { ...snap(80), routes: [] } });
    expect([...errors.keys()]).toEqual(['ns/b']);
    cache.flush();
    expect(cache.nodeIds()).toEqual(['ns/a']);
    applyRendered(cache, {}, ['ns/a']);
    cache.flush();
    expect(cache.nodeIds()).toEqual([]);
  });

  it("gives replicas with the same rendered JSON one frozen copy: hashed and encoded once, the caller's objects left alone", () => {
    const cache = new SnapshotCache();
    const hashes = vi.spyOn(cache as unknown as { checkConsistency(): void }, 'checkConsistency');
    // Separate objects of equal content, as a render makes for replicas.
    const rendered = { 'ns/a': snap(80), 'ns/b': snap(80), 'ns/c': snap(80), 'ns/d': snap(60) };
    expect(applyRendered(cache, rendered).size).toBe(0);
    cache.flush();
    expect(cache.nodeIds().sort()).toEqual(['ns/a', 'ns/b', 'ns/c', 'ns/d']);
    // One check per distinct content, not per proxy.
    expect(hashes).toHaveBeenCalledTimes(2);
    // 6 resources of the 80/20 render; the 60/40 one differs in its route only.
    expect(cache.encodeCount).toBe(7);
    const a = cache.getSnapshot('ns/a')!;
    const b = cache.getSnapshot('ns/b')!;
    expect(b.types[TypeUrls.route]).toBe(a.types[TypeUrls.route]);
    expect(cache.getSnapshot('ns/d')!.types[TypeUrls.route].version).not.toBe(
      a.types[TypeUrls.route].version,
    );
    expect(Object.isFrozen(rendered['ns/a'].routes[0])).toBe(false);
    expect(Object.isFrozen(rendered['ns/a'])).toBe(false);
  });
});
