// KubeController against a REAL kube-apiserver and etcd (server/kube/testing/kubeApiServer.ts) and REAL
// l7mp 0.5.7 processes. Seed Example 1 goes in as custom resources, Services, Pods (status.podIP set through
// the status subresource to the loopback address of an l7mp process started here) and EndpointSlices made
// as the endpoint controller would. Every proxy listener port of the example is moved to a free port (and
// the golden file with it), and each l7mp REST API listens on a free port named by the pod's
// msm.l7mp.io/api-port annotation: nothing here binds a fixed port, so no machine-wide lock is needed.
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalL7mpConfig } from '@/lib/l7mp/canonicalL7mp';
import type { L7mpOperation } from '@/lib/model/l7mp';
import { MeshXdsPublisher } from '../xds/meshXds';
import { freePort, type L7mpProcess, startL7mp } from '../testing/startL7mp';
import { EventRecorder } from './eventRecorder';
import { type KubeControllerUpdate, KubeController } from './KubeController';
import {
  applySeed,
  endpointSlice,
  endpointsOf,
  golden,
  GROUP,
  installCrds,
  live,
  localizer,
  merge,
  NS,
  type Obj,
  PLURAL,
  until as kitUntil,
} from './replicasTestKit';
import { type KubeApiServer, startKubeApiServer } from './testing/kubeApiServer';

/** The golden file's proxy pod addresses, and the loopback addresses the test's l7mp processes answer on. */
const GATEWAY_IP = '127.0.0.2';
const TRANSCODER_IP = '127.0.0.3';
const ADDRESSES: Record<string, string> = { '10.0.1.1': GATEWAY_IP, '10.0.2.1': TRANSCODER_IP };
const WORKER_CLUSTER = 'worker-svc.default.target.cluster.local';
const GATEWAY_ID = `${NS}/gateway-0`;
const WORKERS: [string, string][] = [
  ['worker-0', '10.0.3.1'],
  ['worker-1', '10.0.3.2'],
];
const TRANSCODER_ID = `${NS}/transcoder-0`;

let kube: KubeApiServer;
let kc: k8s.KubeConfig;
let discovery: k8s.DiscoveryV1Api;
let custom: k8s.CustomObjectsApi;
let gateway: L7mpProcess;
let transcoder: L7mpProcess;
let controller: KubeController;
const xds = new MeshXdsPublisher();
/** The example's listener ports -> free ones (UDP 9001 on the gateway, WebSocket 8888 on the transcoder). */
let ports: Record<number, number>;
let localize: <T>(v: T) => T;
const pushes: { id: string; at: number; applied: L7mpOperation[]; ok: boolean }[] = [];
const updates: (KubeControllerUpdate & { at: number })[] = [];
const logs: string[] = [];
const logger = {
  info: (m: string) => logs.push(`info ${m}`),
  warn: (m: string) => logs.push(`warn ${m}`),
  error: (m: string) => logs.push(`error ${m}`),
};

/** Polls until fn returns something truthy; the controller's log is in the message of a timeout. */
const until = <T>(what: string, fn: () => T | Promise<T>, timeoutMs = 20_000, everyMs = 25) =>
  kitUntil(what, fn, timeoutMs, () => `controller log:\n${logs.slice(-30).join('\n')}`, everyMs);

const opKey = (op: L7mpOperation) => ({ [`${op.method} ${op.path}`]: op.body ?? null });

function createMesh(body: Obj) {
  return custom.createNamespacedCustomObject({ ...GROUP, namespace: NS, plural: PLURAL[body.kind]!, body });
}

function getMesh(kind: string, name: string): Promise<Obj> {
  return custom.getNamespacedCustomObject({ ...GROUP, namespace: NS, plural: PLURAL[kind]!, name });
}

async function setWorkerEndpoints(pods: [string, string][]): Promise<void> {
  await discovery.replaceNamespacedEndpointSlice({
    name: 'worker-svc-abcde',
    namespace: NS,
    body: endpointSlice('worker-svc', 'abcde', 9999, pods),
  });
}

/** Seed Example 1 as the API server holds it: canonical mesh resources, Services, Pods, EndpointSlices. */
async function applyExample1(): Promise<void> {
  const apiPorts = { 'gateway-0': gateway.apiPort, 'transcoder-0': transcoder.apiPort };
  await applySeed(kc, 'seed-example-1', localize, apiPorts, async () => {
    // Only the workers get an EndpointSlice: the API server refuses loopback addresses in one ("may not be
    // in the loopback range"), so gateway-svc's endpoints come from its pod, the engine's fallback.
    await discovery.createNamespacedEndpointSlice({
      namespace: NS,
      body: endpointSlice('worker-svc', 'abcde', 9999, [
        ['worker-0', '10.0.3.1'],
        ['worker-1', '10.0.3.2'],
      ]),
    });
  });
}

/** The Events about one object, as `kubectl describe` finds them (by the object's uid), oldest first. */
async function eventsAbout(kind: string, name: string, uid?: string): Promise<k8s.EventsV1Event[]> {
  const list = await kc.makeApiClient(k8s.EventsV1Api).listNamespacedEvent({ namespace: NS });
  return list.items
    .filter(
      (e) => e.regarding?.kind === kind && e.regarding.name === name && (!uid || e.regarding.uid === uid),
    )
    .sort((a, b) => String(a.eventTime).localeCompare(String(b.eventTime)));
}

function conditions(o: Obj): Record<string, Obj> {
  return Object.fromEntries(((o.status?.conditions ?? []) as Obj[]).map((c) => [c.type, c]));
}

beforeAll(async () => {
  [kube, gateway, transcoder] = await Promise.all([startKubeApiServer(), startL7mp(), startL7mp()]);
  ports = { 9001: await freePort('udp', '0.0.0.0'), 8888: await freePort('tcp', '0.0.0.0') };
  kc = new k8s.KubeConfig();
  kc.loadFromFile(kube.admin.kubeconfigPath);
  discovery = kc.makeApiClient(k8s.DiscoveryV1Api);
  custom = kc.makeApiClient(k8s.CustomObjectsApi);
  localize = localizer(ADDRESSES, ports);
  await installCrds(kube, kc);
  await applyExample1();
  controller = KubeController.start({
    kubeConfig: kc,
    xds,
    reconciler: { driftIntervalMs: 1000 },
    source: { backoff: { baseMs: 200, capMs: 2000 } },
    statusCoalesceMs: 50,
    logger,
  });
  controller.reconciler.on('pushed', (id, r) =>
    pushes.push({ id, at: Date.now(), applied: r.applied, ok: r.ok }),
  );
  controller.on('update', (u) => updates.push({ ...u, at: Date.now() }));
  await controller.whenSynced(30_000);
}, 240_000);

afterAll(async () => {
  await controller?.stop();
  xds.cache.close();
  await Promise.all([gateway?.stop(), transcoder?.stop()]);
  await kube?.stop();
});

describe('KubeController on a real API server and real l7mp proxies', () => {
  it('configures each proxy of seed Example 1 with the golden file operations and config', async () => {
    const want = golden('seed-example-1', localize);
    await until('both proxies in sync', () => {
      const s = controller.syncStates();
      return s.length === 2 && s.every((x) => x.inSync && x.phase === 'synced');
    });
    expect(controller.syncStates().map((s) => [s.id, s.apiUrl])).toEqual([
      [GATEWAY_ID, `http://${GATEWAY_IP}:${gateway.apiPort}`],
      [TRANSCODER_ID, `http://${TRANSCODER_IP}:${transcoder.apiPort}`],
    ]);
    for (const [id, proc, ip] of [
      [GATEWAY_ID, gateway, GATEWAY_IP],
      [TRANSCODER_ID, transcoder, TRANSCODER_IP],
    ] as const) {
      // One push to an empty proxy: exactly the golden operations, in order.
      const mine = pushes.filter((p) => p.id === id);
      expect(mine).toHaveLength(1);
      expect(mine[0]!.ok).toBe(true);
      expect(mine[0]!.applied.map(opKey)).toEqual(want[id]!.operations);
      // And the proxy, read back over its REST API, runs the golden config.
      expect(canonicalL7mpConfig(await live(proc, ip))).toEqual(canonicalL7mpConfig(want[id]!.config));
    }
    expect(controller.compiled!.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    // The same result is rendered for the ADS server, one snapshot per proxy.
    expect(xds.cache.nodeIds().sort()).toEqual([GATEWAY_ID, TRANSCODER_ID]);
  });

  it('writes Accepted, ResolvedRefs and Programmed on the mesh resources once the proxies run them', async () => {
    for (const name of ['gateway-vsvc', 'transcoder-vsvc']) {
      const vs = await until(`${name} Programmed`, async () => {
        const o = await getMesh('VirtualService', name);
        return conditions(o).Programmed?.status === 'True' ? o : undefined;
      });
      const c = conditions(vs);
      expect(c.Accepted).toMatchObject({ status: 'True', reason: 'Accepted', observedGeneration: 1 });
      expect(c.ResolvedRefs).toMatchObject({ status: 'True', reason: 'ResolvedRefs', observedGeneration: 1 });
      expect(c.Programmed!.message).toContain(GATEWAY_ID);
      expect(c.Programmed!.lastTransitionTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    }
  });

  it('an EndpointSlice change updates the endpoints of the proxies that follow the Service, incrementally', async () => {
    const want = golden('seed-example-1', localize);
    const timings: number[] = [];
    const stages: [number, number][] = [];
    const sets: [string, string][][] = [
      [
        ['worker-0', '10.0.3.1'],
        ['worker-2', '10.0.3.3'],
      ],
      [['worker-2', '10.0.3.3']],
      [
        ['worker-0', '10.0.3.1'],
        ['worker-1', '10.0.3.2'],
        ['worker-2', '10.0.3.3'],
      ],
      [
        ['worker-0', '10.0.3.1'],
        ['worker-1', '10.0.3.2'],
      ],
    ];
    await until('both proxies in sync', () => {
      const s = controller.syncStates();
      return s.length === 2 && s.every((x) => x.inSync);
    });
    const transcoderPushes = pushes.filter((p) => p.id === TRANSCODER_ID).length;
    for (let round = 0; round < 3; round++) {
      for (const set of sets) {
        const expected = set.map(([, ip]) => ip).sort();
        const updatesBefore = updates.length;
        const t0 = Date.now();
        await setWorkerEndpoints(set);
        await until(
          `gateway endpoints ${expected.join(',')}`,
          async () =>
            JSON.stringify(endpointsOf(await live(gateway, GATEWAY_IP), WORKER_CLUSTER)) ===
            JSON.stringify(expected),
          20_000,
          5,
        );
        timings.push(Date.now() - t0);
        const u = updates.slice(updatesBefore);
        const pu = pushes.filter((p) => p.at >= t0);
        stages.push([u[0] ? u[0].at - t0 : -1, pu[0] ? pu[0].at - t0 : -1]);
        expect(u.length).toBeGreaterThan(0);
        expect(u.every((x) => x.incremental && x.changedProxies.join() === GATEWAY_ID)).toBe(true);
      }
    }
    // Back where it started: the golden config again, and the transcoder, which has no worker cluster, untouched.
    await until('gateway in sync', () => controller.syncStates().every((s) => s.inSync));
    expect(canonicalL7mpConfig(await live(gateway, GATEWAY_IP))).toEqual(
      canonicalL7mpConfig(want[GATEWAY_ID]!.config),
    );
    expect(pushes.filter((p) => p.id === TRANSCODER_ID)).toHaveLength(transcoderPushes);
    const sorted = [...timings].sort((a, b) => a - b);
    // A figure, not an assertion: EndpointSlice write -> the proxy's REST API shows the new endpoints.
    console.log(
      `[figure] EndpointSlice change -> l7mp proxy updated: n=${sorted.length} ` +
        `p50=${sorted[Math.floor(sorted.length / 2)]} ms max=${sorted.at(-1)} ms (includes polling every 5 ms)`,
    );
    console.log(
      `[figure] per change: [engine updated, push done] ms after the write: ${JSON.stringify(stages)}`,
    );
  });

  it('an invalid resource gets a status condition with the diagnostic; status is written only when it changes', async () => {
    await createMesh({
      apiVersion: 'msm.l7mp.io/v1',
      kind: 'VirtualService',
      metadata: { name: 'broken', namespace: NS },
      // The CRD's own rules refuse two protocol keys on a VirtualService; an inline Target sits in a
      // string-or-object field the CRD cannot type, so only the engine's schema finds this one.
      spec: {
        selector: { serviceName: 'gateway-svc' },
        udp: { port: 9101 },
        rules: [{ action: { route: { destination: { udp: { port: 1 }, tcp: { port: 2 } } } } }],
      },
    });
    await createMesh({
      apiVersion: 'msm.l7mp.io/v1',
      kind: 'VirtualService',
      metadata: { name: 'dangling', namespace: NS },
      spec: {
        selector: { serviceName: 'gateway-svc' },
        udp: { port: ports[9001]! + 1 },
        rules: [{ action: { route: { destination: 'no-such-target' } } }],
      },
    });
    const broken = await until('broken has status', async () => {
      const o = await getMesh('VirtualService', 'broken');
      return conditions(o).Accepted ? o : undefined;
    });
    expect(conditions(broken).Accepted).toMatchObject({
      status: 'False',
      reason: 'Invalid',
      observedGeneration: 1,
    });
    expect(conditions(broken).Accepted!.message).toContain(
      'spec.rules[0].action.route.destination: a Target takes at most one protocol key',
    );
    expect(conditions(broken).Programmed).toMatchObject({ status: 'False', reason: 'Invalid' });
    const dangling = await until('dangling has status', async () => {
      const o = await getMesh('VirtualService', 'dangling');
      return conditions(o).ResolvedRefs ? o : undefined;
    });
    expect(conditions(dangling).Accepted).toMatchObject({ status: 'True' });
    expect(conditions(dangling).ResolvedRefs).toMatchObject({ status: 'False', reason: 'InvalidReference' });
    expect(conditions(dangling).ResolvedRefs!.message).toContain('no-such-target');
    // `kubectl describe` shows why, as Events from the controller about each object (found by uid).
    const brokenEvents = await until('a Warning event about broken', async () => {
      const es = await eventsAbout('VirtualService', 'broken', broken.metadata.uid);
      return es.length ? es : undefined;
    });
    expect(brokenEvents).toEqual([
      expect.objectContaining({
        type: 'Warning',
        reason: 'Invalid',
        action: 'Validate',
        reportingController: 'msm.l7mp.io/meshdeck',
        note: expect.stringContaining('a Target takes at most one protocol key'),
      }),
    ]);
    const danglingEvents = await until('a Warning event about dangling', async () => {
      const es = await eventsAbout('VirtualService', 'dangling', dangling.metadata.uid);
      return es.some((e) => e.reason === 'InvalidReference') ? es : undefined;
    });
    expect(danglingEvents.find((e) => e.reason === 'InvalidReference')).toMatchObject({
      type: 'Warning',
      action: 'ResolveReferences',
      note: expect.stringContaining('no-such-target'),
    });
    // The proxies keep the valid mesh: the dangling listener is dropped, the broken object never seen.
    await until('in sync', () => controller.syncStates().every((s) => s.inSync));
    expect(canonicalL7mpConfig(await live(gateway, GATEWAY_IP))).toEqual(
      canonicalL7mpConfig(golden('seed-example-1', localize)[GATEWAY_ID]!.config),
    );

    // Something else changes, proxies are pushed and status is computed again: these two stay unwritten.
    const rv = { broken: broken.metadata.resourceVersion, dangling: dangling.metadata.resourceVersion };
    const written: string[] = [];
    const passes: number[] = [];
    const onPass = (_checked: number, keys: string[]) => {
      written.push(...keys);
      passes.push(Date.now());
    };
    controller.on('statusChecked', onPass);
    try {
      for (const set of [[['worker-0', '10.0.3.1']], WORKERS] as [string, string][][]) {
        await setWorkerEndpoints(set);
        await until(
          `gateway has ${set.length} workers`,
          async () => endpointsOf(await live(gateway, GATEWAY_IP), WORKER_CLUSTER).length === set.length,
        );
      }
      await until('in sync', () => controller.syncStates().every((s) => s.inSync));
      const synced = Date.now();
      await until('a status pass after the proxies synced', () => passes.some((t) => t > synced));
    } finally {
      controller.off('statusChecked', onPass);
    }
    expect(written).not.toContain('VirtualService/default/broken');
    expect(written).not.toContain('VirtualService/default/dangling');
    expect((await getMesh('VirtualService', 'broken')).metadata.resourceVersion).toBe(rv.broken);
    expect((await getMesh('VirtualService', 'dangling')).metadata.resourceVersion).toBe(rv.dangling);

    // Fixing the object: generation 2, Accepted with that generation.
    await custom.patchNamespacedCustomObject(
      { ...GROUP, namespace: NS, plural: 'virtualservices', name: 'broken', body: { spec: { rules: null } } },
      merge,
    );
    const fixed = await until('broken accepted at generation 2', async () => {
      const o = await getMesh('VirtualService', 'broken');
      return conditions(o).Accepted?.observedGeneration === 2 ? o : undefined;
    });
    expect(conditions(fixed).Accepted).toMatchObject({ status: 'True', reason: 'Accepted' });
    await until('a Normal event: broken is accepted now', async () =>
      (await eventsAbout('VirtualService', 'broken', broken.metadata.uid)).some(
        (e) => e.type === 'Normal' && e.reason === 'Accepted',
      ),
    );
    await custom.deleteNamespacedCustomObject({
      ...GROUP,
      namespace: NS,
      plural: 'virtualservices',
      name: 'broken',
    });
    await custom.deleteNamespacedCustomObject({
      ...GROUP,
      namespace: NS,
      plural: 'virtualservices',
      name: 'dangling',
    });
    await setWorkerEndpoints([
      ['worker-0', '10.0.3.1'],
      ['worker-1', '10.0.3.2'],
    ]);
  });
  it(
    'killing the API server and starting it again: the informers recover and no stale state remains',
    { timeout: 150_000 },
    async () => {
      const extraPort = await freePort('udp', '0.0.0.0');
      const extraListener = 'extra-vsvc.default.virtualservice.cluster.local';
      const listeners = async () => (await live(gateway, GATEWAY_IP)).listeners.map((l) => l.name);
      await createMesh({
        apiVersion: 'msm.l7mp.io/v1',
        kind: 'VirtualService',
        metadata: { name: 'extra-vsvc', namespace: NS },
        spec: {
          selector: { serviceName: 'gateway-svc' },
          udp: { port: extraPort },
          rules: [{ action: { route: { destination: 'worker-svc' } } }],
        },
      });
      await until('the gateway has the extra listener', async () =>
        (await listeners()).includes(extraListener),
      );

      await kube.killApiServer();
      await until('the informers notice', () => controller.informerStates().some((s) => !s.running), 30_000);
      // While the API server is down, the object is deleted behind the controller's back (straight from
      // etcd, as another API server instance would): no watch can deliver that event.
      const key = Buffer.from('/registry/msm.l7mp.io/virtualservices/default/extra-vsvc').toString('base64');
      const del = await fetch(`${kube.etcdUrl}/v3/kv/deleterange`, {
        method: 'POST',
        body: JSON.stringify({ key }),
        signal: AbortSignal.timeout(5000),
      });
      const deleted = (await del.json()) as { deleted?: string; header: { revision: string } };
      expect(deleted.deleted).toBe('1');
      // And etcd's history is compacted: the informers' resourceVersions are gone for good, so the API
      // server must answer 410 Gone and the informers must relist.
      const compact = await fetch(`${kube.etcdUrl}/v3/kv/compaction`, {
        method: 'POST',
        body: JSON.stringify({ revision: deleted.header.revision, physical: true }),
        signal: AbortSignal.timeout(5000),
      });
      expect(compact.status).toBe(200);
      const listsBefore = Object.fromEntries(controller.informerStates().map((s) => [s.kind, s.lists]));
      // The last good state stands meanwhile: the proxies are not emptied because the API server is gone.
      expect(await listeners()).toContain(extraListener);
      expect(logs.some((l) => l.startsWith('warn meshdeck kube:') && l.includes('informer failed'))).toBe(
        true,
      );

      await kube.restartApiServer();
      await until(
        'the extra listener is gone from the gateway',
        async () => !(await listeners()).includes(extraListener),
        60_000,
        100,
      );
      await until('every informer running again', () =>
        controller.informerStates().every((s) => s.running && s.attempts === 0),
      );
      for (const st of controller.informerStates())
        expect(st.lists, st.kind).toBeGreaterThan(listsBefore[st.kind]!);
      expect(Object.keys(controller.snapshot!.meshObjects).sort()).toEqual([
        'VirtualService/default/gateway-vsvc',
        'VirtualService/default/transcoder-vsvc',
      ]);
      // And the watches work again: a change after the restart reaches the proxy.
      await setWorkerEndpoints([['worker-1', '10.0.3.2']]);
      await until(
        'the gateway follows an EndpointSlice change after the restart',
        async () =>
          JSON.stringify(endpointsOf(await live(gateway, GATEWAY_IP), WORKER_CLUSTER)) === '["10.0.3.2"]',
      );
      await setWorkerEndpoints(WORKERS);
      await until(
        'in sync',
        async () =>
          JSON.stringify(endpointsOf(await live(gateway, GATEWAY_IP), WORKER_CLUSTER)) ===
          '["10.0.3.1","10.0.3.2"]',
      );
      await until('both proxies in sync', () => controller.syncStates().every((s) => s.inSync));
      for (const [id, proc, ip] of [
        [GATEWAY_ID, gateway, GATEWAY_IP],
        [TRANSCODER_ID, transcoder, TRANSCODER_IP],
      ] as const) {
        expect(canonicalL7mpConfig(await live(proc, ip))).toEqual(
          canonicalL7mpConfig(golden('seed-example-1', localize)[id]!.config),
        );
      }
    },
  );

  it('the event recorder: a repeat becomes a series on the first Event; an object past its burst gets no more', async () => {
    let now = Date.parse('2026-11-28T12:00:00Z');
    const recorder = new EventRecorder(kc, { instance: 'test-replica', burst: 2, now: () => now, logger });
    const regarding = { apiVersion: 'v1', kind: 'Pod', namespace: NS, name: 'recorder-test' };
    const event = {
      regarding,
      type: 'Warning' as const,
      reason: 'PushFailed',
      action: 'Push',
      note: 'HTTP 500',
    };
    recorder.record(event);
    now += 1000;
    recorder.record(event);
    now += 1000;
    recorder.record(event);
    await recorder.whenIdle();
    const [first, ...others] = await eventsAbout('Pod', 'recorder-test');
    expect(others).toEqual([]);
    expect(first).toMatchObject({
      reason: 'PushFailed',
      reportingInstance: 'test-replica',
      series: { count: 3, lastObservedTime: expect.anything() },
    });
    // Two other notes: the first takes the bucket's second token, the next finds it empty.
    recorder.record({ ...event, note: 'HTTP 502' });
    recorder.record({ ...event, note: 'HTTP 503' });
    await recorder.whenIdle();
    expect((await eventsAbout('Pod', 'recorder-test')).map((e) => e.note)).toEqual(['HTTP 500', 'HTTP 502']);
  });

  it('a proxy that stops answering: a ProxyUnreachable Warning on its Pod', async () => {
    const pod = (await kc
      .makeApiClient(k8s.CoreV1Api)
      .readNamespacedPod({ namespace: NS, name: 'transcoder-0' })) as k8s.V1Pod;
    await transcoder.stop();
    const events = await until(
      'an event about the transcoder Pod',
      async () => {
        const es = await eventsAbout('Pod', 'transcoder-0', pod.metadata!.uid);
        return es.some((e) => e.reason === 'ProxyUnreachable') ? es : undefined;
      },
      30_000,
    );
    expect(events.find((e) => e.reason === 'ProxyUnreachable')).toMatchObject({
      type: 'Warning',
      action: 'Push',
      regarding: { kind: 'Pod', name: 'transcoder-0', uid: pod.metadata!.uid },
    });
  });
});
