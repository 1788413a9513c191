/**
 * The MSM API seed's rules, one assertion each, on the golden inputs in testdata/. The golden files pin
 * every byte; these tests say what matters, in the seed's words, so a regenerated golden file cannot
 * quietly change a rule.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseManifests } from '../parse/parseManifests';
import { compileMesh } from './compileMesh';
import { l7mpRingCounts } from './l7mpHashRing';
import { MeshEngine } from './meshEngine';
import { longName, parseRef } from './names';
import { SEED } from './resolveMesh';

function compileCase(name: string) {
  const content = readFileSync(path.join(__dirname, 'testdata', `${name}.in.yaml`), 'utf8');
  return compileMesh(parseManifests([{ path: name, content }]));
}
const codes = (c: ReturnType<typeof compileCase>) =>
  c.diagnostics.map((d) => `${d.code} ${d.object.name} ${d.path ?? ''}`.trim());
const ruleDestinations = (c: ReturnType<typeof compileCase>, proxy: string, listener: string) =>
  c.l7mp.proxies[proxy]!.config.listeners.find((l) => l.name === listener)!.rules.map((r) =>
    typeof r.action.route === 'string' ? r.action.route : r.action.route.destination,
  );

describe('names', () => {
  it('"use the fully specified name": name.namespace.<kind>.cluster.local', () => {
    expect(longName('worker', 'media', 'virtualservice')).toBe('worker.media.virtualservice.cluster.local');
    expect(parseRef('worker.media.virtualservice.cluster.local', 'edge')).toEqual({
      name: 'worker',
      namespace: 'media',
      kind: 'virtualservice',
    });
    expect(parseRef('store.media.svc.cluster.local', 'edge')).toEqual({
      name: 'store',
      namespace: 'media',
      kind: 'service',
    });
    expect(parseRef('a.b', 'edge')).toEqual({ name: 'a.b', namespace: 'edge' });
  });

  it('"a short name ... is assumed to be in the same namespace"; long names cross namespaces', () => {
    const c = compileCase('names-short-and-long');
    expect(ruleDestinations(c, 'edge/gw-0', 'gw.edge.virtualservice.cluster.local')).toEqual([
      'local-target.edge.target.cluster.local',
      'relay.media.target.cluster.local',
      'store.media.target.cluster.local',
    ]);
    expect(codes(c)).toContain('unresolved-reference gw spec.rules[3].action.route.destination');
    // A naked Service's pods are reached on the Service's targetPort.
    const store = c.l7mp.proxies['edge/gw-0']!.config.clusters.find(
      (x) => x.name === 'store.media.target.cluster.local',
    )!;
    expect(store.spec).toEqual({ protocol: 'TCP', port: 8080 });
  });
});

describe('string references: Target, else VirtualService, else naked Service, else error', () => {
  const c = compileCase('reference-order');
  it(SEED.refOrder, () => {
    expect(ruleDestinations(c, 'default/front-0', 'front.default.virtualservice.cluster.local')).toEqual([
      'both.default.target.cluster.local', // the named Target wins over the VirtualService "both"
      'backend-vsvc.default.target.cluster.local', // generated for the VirtualService
      'plain-svc.default.target.cluster.local', // generated for the naked Service, via a generated VirtualService
    ]);
    expect(c.mesh.targets['both.default.target.cluster.local']!.origin).toBe('named');
    expect(c.mesh.targets['backend-vsvc.default.target.cluster.local']!.origin).toBe('virtualservice');
    expect(c.mesh.virtualServices['plain-svc.default.virtualservice.cluster.local']!.generated).toBe(
      'naked-service',
    );
    expect(codes(c)).toContain('unresolved-reference front spec.rules[3].action.route.destination');
  });
  it("the generated Target carries the VirtualService's protocol, port and endpoint IPs", () => {
    const t = c.l7mp.proxies['default/front-0']!.config.clusters.find(
      (x) => x.name === 'backend-vsvc.default.target.cluster.local',
    )!;
    expect(t.spec).toEqual({ protocol: 'WebSocket', port: 8080 });
    expect(t.endpoints!.map((e) => e.spec.address)).toEqual(['10.3.0.2', '10.3.0.3']);
  });
});

describe('rendezvous', () => {
  it('named Targets are one cluster per proxy, shared by all routes; inline ones are their own', () => {
    const c = compileCase('rendezvous-named-target');
    for (const p of ['default/media-0', 'default/media-1']) {
      const cfg = c.l7mp.proxies[p]!.config;
      const meet = 'meet.default.target.cluster.local';
      expect(cfg.clusters.filter((x) => x.name === meet)).toHaveLength(1);
      expect(cfg.listeners.filter((l) => ruleDestinations(c, p, l.name).includes(meet))).toHaveLength(2);
      expect(cfg.clusters.map((x) => x.name)).toContain(
        'media-c.default.virtualservice.cluster.local/rules/0/destination',
      );
    }
  });
});

describe('endpoints', () => {
  const c = compileCase('endpoints-sources');
  const cluster = (n: string) => c.l7mp.proxies['default/edge-0']!.config.clusters.find((x) => x.name === n)!;
  it('EndpointSlices (ready endpoints) are preferred to pod IPs', () => {
    expect(cluster('api-target.default.target.cluster.local').endpoints!.map((e) => e.spec.address)).toEqual([
      '10.5.0.2',
      '10.5.0.3',
    ]);
  });
  it('label selectors give the IPs of running pods', () => {
    expect(
      cluster('cache-target.default.target.cluster.local').endpoints!.map((e) => e.spec.address),
    ).toEqual(['10.5.1.1', '10.5.1.2']);
  });
  it(SEED.verbatim, () => {
    const ext = cluster('ext.default.target.cluster.local');
    expect(ext.endpoints).toEqual([
      { name: 'ext.default.target.cluster.local@10.7.0.9', spec: { address: '10.7.0.9' } },
      {
        name: 'ext.default.target.cluster.local@dns',
        spec: { address: 'kube-dns.kube-system.svc.cluster.local' },
        weight: 3,
      },
    ]);
    expect(c.mesh.targets['ext.default.target.cluster.local']!.managed).toBe(false);
  });
});

describe('canary split', () => {
  const c = compileCase('canary-split');
  it("80/20 over 2 and 1 endpoints becomes per-endpoint weights that give 80/20 on l7mp's hash ring", () => {
    const cl = c.l7mp.proxies['default/gateway-0']!.config.clusters.find(
      (x) => x.name === 'echo-canary.default.target.cluster.local',
    )!;
    expect(cl.endpoints!.map((e) => e.spec.address)).toEqual(['10.6.1.1', '10.6.1.2', '10.6.2.1']);
    expect(cl.loadbalancer).toEqual({ policy: 'ConsistentHash' });
    // What the real ring (reproduced exactly, see l7mpHashRing.test.ts) does with these weights.
    const counts = l7mpRingCounts(cl.endpoints!.map((e) => ({ address: e.spec.address, weight: e.weight! })));
    const v1 = (counts.get('10.6.1.1')! + counts.get('10.6.1.2')!) / 10;
    expect(Math.abs(v1 - 80)).toBeLessThanOrEqual(1);
    const split = c.mesh.targets['echo-canary.default.target.cluster.local']!.split!;
    expect(split.map((s) => s.percent)).toEqual([80, 20, 0]);
    expect(split[0]!.predictedPercent).toBe(v1);
  });
  it('a split over different ports is an error and its route is dropped', () => {
    expect(codes(c)).toContain('invalid-split bad-split spec.split[1].serviceName');
    expect(c.l7mp.proxies['default/gateway-0']!.config.listeners[0]!.rules).toHaveLength(1);
  });
});

describe('canary split in a mesh without l7mp proxies', () => {
  const example = (gateway: boolean) =>
    parseManifests(
      ['mesh.yaml', 'cluster.yaml'].map((f) => {
        const content = readFileSync(path.join(__dirname, '../../examples/grpc-canary', f), 'utf8');
        // The same mesh with one pod running l7mp: a gateway beside the gRPC client.
        const extra = `---\napiVersion: v1\nkind: Pod\nmetadata: { name: gw-0, namespace: default, labels: { msm.l7mp.io/proxy: gateway } }\nstatus: { podIP: 127.0.0.80 }\n`;
        return { path: f, content: gateway && f === 'cluster.yaml' ? `${content}\n${extra}` : content };
      }),
    );
  const TARGET = 'echo-split.default.target.cluster.local';
  const note = (c: ReturnType<typeof compileMesh>) =>
    c.diagnostics.find((d) => d.code === 'canary-split')!.message;

  it('proxyless gRPC clients only: no l7mp hash ring reads the weights, so none is calibrated', () => {
    const c = compileMesh(example(false));
    expect(c.mesh.targets[TARGET]!.split!.map((s) => s.predictedPercent)).toEqual([undefined, undefined]);
    expect(note(c)).toContain('per-endpoint weights are the share of each entry divided by its endpoints');
    // One l7mp proxy in the mesh and the weights are calibrated to its ring again.
    const withGateway = compileMesh(example(true));
    const predicted = withGateway.mesh.targets[TARGET]!.split!.map((s) => s.predictedPercent!);
    // One endpoint each: the ring's 1,000 keys come as close to 80/20 as its geometry allows.
    expect(Math.abs(predicted[0]! - 80)).toBeLessThanOrEqual(3);
    expect(predicted[0]! + predicted[1]!).toBeCloseTo(100, 5);
    expect(note(withGateway)).toContain(`l7mp 0.5.7's hash ring gives ${predicted[0]}% / ${predicted[1]}%`);
  });

  it('an endpoint change on the incremental path decides it as a full compile does', () => {
    for (const gateway of [false, true]) {
      const engine = new MeshEngine(example(gateway));
      const slice = (ip: string) => ({
        apiVersion: 'discovery.k8s.io/v1' as const,
        kind: 'EndpointSlice' as const,
        metadata: {
          name: 'echo-v2-x',
          namespace: 'default',
          labels: { 'kubernetes.io/service-name': 'echo-v2' },
        },
        addressType: 'IPv4' as const,
        endpoints: [{ addresses: [ip], conditions: { ready: true } }],
        ports: [{ port: 50051, protocol: 'TCP' as const }],
      });
      // The Service's first slice recompiles; the next one moves its endpoint on the fast path.
      engine.setServiceEndpointSlices('default', 'echo-v2', [slice('127.0.2.8')]);
      expect(engine.setServiceEndpointSlices('default', 'echo-v2', [slice('127.0.2.9')]).incremental).toBe(
        true,
      );
      const full = compileMesh(engine.snapshot);
      expect(JSON.stringify(engine.current.mesh.targets)).toBe(JSON.stringify(full.mesh.targets));
      expect(JSON.stringify(engine.current.diagnostics)).toBe(JSON.stringify(full.diagnostics));
      expect(engine.current.mesh.targets[TARGET]!.endpoints.map((e) => e.address)).toContain('127.0.2.9');
    }
  });
});

describe('naked services', () => {
  const c = compileCase('naked-and-proxied-services');
  it(SEED.nakedProxy, () => {
    expect(codes(c)).toContain('proxy-vsvc-on-naked-service bad-proxy spec.rules');
    expect(Object.values(c.l7mp.proxies).flatMap((p) => p.config.listeners.map((l) => l.name))).not.toContain(
      'bad-proxy.default.virtualservice.cluster.local',
    );
  });
  it(SEED.manualVsvc, () => {
    expect(codes(c)).toContain('vsvc-required-for-proxied-service sidecar-svc');
    expect(codes(c)).toContain('stub-on-proxy stub spec.rules');
  });
  it('"never generates sidecar config for such services": naked pods get nothing', () => {
    expect(Object.keys(c.l7mp.proxies)).toEqual(['default/entry-0', 'default/sc-0']);
    expect(c.l7mp.proxies['default/sc-0']!.config).toEqual({ listeners: [], routes: [], clusters: [] });
  });
});

describe('delete cascades, declaratively', () => {
  const c = compileCase('cascade-deletes');
  const cfg = c.l7mp.proxies['default/px-0']!.config;
  it(SEED.targetCascade, () => {
    expect(codes(c)).toContain('route-dropped broken-route spec');
    expect(cfg.routes.map((r) => r.name)).toEqual(['good-route.default.route.cluster.local']);
  });
  it(SEED.routeCascade, () => {
    expect(codes(c)).toContain('rule-dropped mixed spec.rules[0]');
    expect(codes(c)).toContain('rule-dropped mixed spec.rules[2]');
    expect(ruleDestinations(c, 'default/px-0', 'mixed.default.virtualservice.cluster.local')).toEqual([
      'good-route.default.route.cluster.local',
    ]);
  });
  it(SEED.lastRule, () => {
    expect(codes(c)).toContain('listener-dropped only-broken spec.rules');
    expect(cfg.listeners.map((l) => l.name)).toEqual(['mixed.default.virtualservice.cluster.local']);
  });
});

describe('port clashes', () => {
  const c = compileCase('port-clashes');
  it(SEED.ports, () => {
    const clashes = c.diagnostics.filter((d) => d.code === 'port-clash').map((d) => d.object.name);
    expect(clashes).toEqual(['a', 'api-clash', 'b', 'json-clash', 'udp-7100']);
    expect(c.l7mp.proxies['default/gw-0']!.config.listeners.map((l) => l.name)).toEqual([
      'tcp-7000.default.virtualservice.cluster.local',
    ]);
    expect(c.l7mp.proxies['default/other-0']!.config.listeners.map((l) => l.name)).toEqual([
      'other-proxy.default.virtualservice.cluster.local',
    ]);
  });
});

describe('bad input', () => {
  const c = compileCase('bad-input');
  it('every problem names the object, the field path and the line', () => {
    const find = (code: string, name: string) =>
      c.diagnostics.find((d) => d.code === code && d.object.name === name)!;
    expect(find('unknown-kind', 'nope')).toMatchObject({
      severity: 'error',
      path: 'kind',
      source: { line: 6 },
    });
    expect(find('schema', 'typo-route')).toMatchObject({
      path: 'spec',
      message: 'unknown field "destinaton"',
    });
    expect(find('schema', 'bad-port')).toMatchObject({ path: 'spec.udp.port', source: { line: 34 } });
    expect(find('duplicate-name', 'sink')).toMatchObject({ severity: 'error' });
    expect(find('circular-selector', 'loop-a')).toMatchObject({
      severity: 'error',
      path: 'spec.selector.serviceName',
    });
    expect(find('unresolved-reference', 'uses-typo-route').message).toBe(
      'Route default/typo-route is invalid (see its errors)',
    );
  });
  it('loses nothing else: the valid VirtualService is still rendered', () => {
    expect(c.l7mp.proxies['default/px-0']!.config.listeners.map((l) => l.name)).toEqual([
      'fine.default.virtualservice.cluster.local',
    ]);
  });
  it('malformed YAML names the file and line, and other files still load', () => {
    const snap = parseManifests([
      { path: 'broken.yaml', content: 'apiVersion: v1\nkind: Pod\nmetadata: {name: x\n' },
      {
        path: 'ok.yaml',
        content: 'apiVersion: v1\nkind: Pod\nmetadata: {name: y}\nstatus: {podIP: 10.0.0.1}\n',
      },
    ]);
    expect(snap.diagnostics[0]).toMatchObject({
      severity: 'error',
      code: 'yaml-syntax',
      object: { kind: 'File', name: 'broken.yaml' },
    });
    expect(snap.diagnostics[0]!.source!.line).toBeGreaterThanOrEqual(3);
    expect(snap.pods.map((p) => p.metadata.name)).toEqual(['y']);
  });
});

describe('JSONSocket on the real proxy', () => {
  const c = compileCase('jsonsocket-adaptations');
  const back = c.l7mp.proxies['default/back-0']!.config;
  it('labels reach the next hop through the JSONSocket header; Sync queries read /JSONSocket', () => {
    const byName = Object.fromEntries(back.clusters.map((x) => [x.name.split('.')[0], x.spec]));
    expect(byName['app-target']!.header).toEqual([{ path: { from: '/JSONSocket/labels', to: '/labels' } }]);
    expect(byName['custom-header']!.header).toEqual([{ set: { key: '/labels/kind', value: 'audio' } }]);
    expect(byName['room']).toEqual({ protocol: 'Sync', query: '/JSONSocket/labels/room' });
    const front = c.l7mp.proxies['default/front-0']!.config;
    expect(front.clusters[0]!.spec.header).toEqual([{ path: { from: '/labels', to: '/labels' } }]);
    expect(back.listeners[0]!.rules[0]!.match).toEqual({
      op: 'test',
      path: '/JSONSocket/labels/room',
      value: '7',
    });
  });
});
