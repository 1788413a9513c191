// Several Meshdeck replicas (kubeControlPlane: KubeController + LeaderElector) against a REAL kube-apiserver
// and REAL l7mp processes, on seed Example 1 (set up as in controller.integration.test.ts). Only the replica
// holding the Lease pushes to the proxies and writes status; every replica serves xDS. A graceful stop hands
// over at once; a killed leader (no release) is replaced once the lease expires. The lease is short (3 s,
// renew deadline 2 s, retry 0.5 s); waits are bounded, durations are reported, never asserted.
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalL7mpConfig } from '@/lib/l7mp/canonicalL7mp';
import type { L7mpOperation } from '@/lib/model/l7mp';
import { MeshXdsPublisher } from '../xds/meshXds';
import { freePort, type L7mpProcess, startL7mp } from '../testing/startL7mp';
import { KubeControlPlane } from './kubeControlPlane';
import {
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
  applySeed,
  until,
} from './replicasTestKit';
import { type KubeApiServer, startKubeApiServer } from './testing/kubeApiServer';

const GATEWAY_IP = '127.0.0.2';
const TRANSCODER_IP = '127.0.0.3';
const GATEWAY_ID = `${NS}/gateway-0`;
const TRANSCODER_ID = `${NS}/transcoder-0`;
const WORKER_CLUSTER = 'worker-svc.default.target.cluster.local';
const WORKERS: [string, string][] = [
  ['worker-0', '10.0.3.1'],
  ['worker-1', '10.0.3.2'],
];

let kube: KubeApiServer;
let kc: k8s.KubeConfig;
let discovery: k8s.DiscoveryV1Api;
let custom: k8s.CustomObjectsApi;
let gateway: L7mpProcess;
let transcoder: L7mpProcess;
let localize: <T>(v: T) => T;
let ports: Record<number, number>;
const logs: string[] = [];
const context = () => `log:\n${logs.slice(-40).join('\n')}`;

interface Replica {
  id: string;
  cp: KubeControlPlane;
  xds: MeshXdsPublisher;
  pushes: { id: string; at: number; applied: L7mpOperation[] }[];
  statusWrites: string[];
}
const replicas: Replica[] = [];

function startReplica(id: string): Replica {
  const prefix = `[${id}]`;
  const logger = {
    info: (m: string) => logs.push(`${prefix} info ${m}`),
    warn: (m: string) => logs.push(`${prefix} warn ${m}`),
    error: (m: string) => logs.push(`${prefix} error ${m}`),
  };
  const xds = new MeshXdsPublisher();
  const cp = KubeControlPlane.start({
    kubeConfig: kc,
    identity: id,
    leaseNamespace: NS,
    xds,
    leaseDurationSeconds: 3,
    renewDeadlineMs: 2000,
    retryPeriodMs: 500,
    controller: {
      reconciler: { driftIntervalMs: 1000 },
      source: { backoff: { baseMs: 200, capMs: 2000 } },
      statusCoalesceMs: 50,
    },
    logger,
  });
  const r: Replica = { id, cp, xds, pushes: [], statusWrites: [] };
  cp.controller.reconciler.on('pushed', (proxy, res) => {
    if (res.applied.length > 0) r.pushes.push({ id: proxy, at: Date.now(), applied: res.applied });
  });
  cp.controller.on('status', (key) => r.statusWrites.push(key));
  replicas.push(r);
  return r;
}

async function setWorkerEndpoints(pods: [string, string][]): Promise<void> {
  await discovery.replaceNamespacedEndpointSlice({
    name: 'worker-svc-abcde',
    namespace: NS,
    body: endpointSlice('worker-svc', 'abcde', 9999, pods),
  });
}

const gatewayWorkers = async () => endpointsOf(await live(gateway, GATEWAY_IP), WORKER_CLUSTER).join(',');

/** The single replica that leads, once every running replica agrees on it. */
async function oneLeader(running: Replica[], what: string): Promise<Replica> {
  return until(
    what,
    () => {
      const leading = running.filter((r) => r.cp.elector.isLeader());
      if (leading.length !== 1) return undefined;
      const l = leading[0]!;
      return running.every((r) => r.cp.health().leader === l.id) ? l : undefined;
    },
    20_000,
    context,
  );
}

beforeAll(async () => {
  [kube, gateway, transcoder] = await Promise.all([startKubeApiServer(), startL7mp(), startL7mp()]);
  ports = { 9001: await freePort('udp', '0.0.0.0'), 8888: await freePort('tcp', '0.0.0.0') };
  localize = localizer({ '10.0.1.1': GATEWAY_IP, '10.0.2.1': TRANSCODER_IP }, ports);
  kc = new k8s.KubeConfig();
  kc.loadFromFile(kube.admin.kubeconfigPath);
  discovery = kc.makeApiClient(k8s.DiscoveryV1Api);
  custom = kc.makeApiClient(k8s.CustomObjectsApi);
  await installCrds(kube, kc);
  await applySeed(
    kc,
    'seed-example-1',
    localize,
    { 'gateway-0': gateway.apiPort, 'transcoder-0': transcoder.apiPort },
    // Only the workers get an EndpointSlice: the API server refuses loopback addresses in one.
    async () => {
      await discovery.createNamespacedEndpointSlice({
        namespace: NS,
        body: endpointSlice('worker-svc', 'abcde', 9999, WORKERS),
      });
    },
  );
}, 240_000);

afterAll(async () => {
  await Promise.all(replicas.map((r) => r.cp.stop()));
  for (const r of replicas) r.xds.cache.close();
  await Promise.all([gateway?.stop(), transcoder?.stop()]);
  await kube?.stop();
});

describe('two Meshdeck replicas on a real API server and real l7mp proxies', () => {
  let a: Replica;
  let b: Replica;
  let c: Replica;

  it(
    'exactly one leads and only it pushes and writes status; both serve xDS',
    { timeout: 60_000 },
    async () => {
      a = startReplica('a');
      b = startReplica('b');
      await Promise.all([a.cp.controller.whenSynced(30_000), b.cp.controller.whenSynced(30_000)]);
      const leader = await oneLeader([a, b], 'one leader among a and b');
      const follower = leader === a ? b : a;
      const want = golden('seed-example-1', localize);
      await until(
        'the leader has both proxies in sync',
        () => {
          const s = leader.cp.controller.syncStates();
          return s.length === 2 && s.every((x) => x.inSync && x.phase === 'synced');
        },
        20_000,
        context,
      );
      // The leader pushed each empty proxy exactly the golden operations, and the proxies run the golden config.
      for (const [id, proc, ip] of [
        [GATEWAY_ID, gateway, GATEWAY_IP],
        [TRANSCODER_ID, transcoder, TRANSCODER_IP],
      ] as const) {
        const mine = leader.pushes.filter((p) => p.id === id);
        expect(mine).toHaveLength(1);
        expect(mine[0]!.applied.map((op) => ({ [`${op.method} ${op.path}`]: op.body ?? null }))).toEqual(
          want[id]!.operations,
        );
        expect(canonicalL7mpConfig(await live(proc, ip))).toEqual(canonicalL7mpConfig(want[id]!.config));
      }
      // Status comes from the leader only.
      const vs = await until(
        'gateway-vsvc Programmed',
        async () => {
          const o = (await custom.getNamespacedCustomObject({
            ...GROUP,
            namespace: NS,
            plural: 'virtualservices',
            name: 'gateway-vsvc',
          })) as Obj;
          return (o.status?.conditions as Obj[] | undefined)?.some(
            (x) => x.type === 'Programmed' && x.status === 'True',
          )
            ? o
            : undefined;
        },
        20_000,
        context,
      );
      expect(vs.metadata.managedFields.map((f: Obj) => f.manager)).toContain('meshdeck-controller');
      expect(leader.statusWrites.length).toBeGreaterThan(0);
      // The follower computed the same configs but pushed and wrote nothing, and manages no proxy.
      expect(follower.cp.controller.isActive).toBe(false);
      expect(Object.keys(follower.cp.controller.desiredConfigs()).sort()).toEqual([
        GATEWAY_ID,
        TRANSCODER_ID,
      ]);
      expect(follower.pushes).toEqual([]);
      expect(follower.statusWrites).toEqual([]);
      expect(follower.cp.controller.syncStates()).toEqual([]);
      // Both serve xDS: each publisher holds a snapshot per proxy.
      for (const r of [a, b]) expect(r.xds.cache.nodeIds().sort()).toEqual([GATEWAY_ID, TRANSCODER_ID]);
      for (const r of [a, b]) {
        const h = r.cp.health();
        expect(h.informersHealthy).toBe(true);
        expect(h.leader).toBe(leader.id);
        expect(h.leading).toBe(r === leader);
      }
      // An EndpointSlice change: still only the leader pushes.
      await setWorkerEndpoints([WORKERS[0]!]);
      await until(
        'the gateway follows',
        async () => (await gatewayWorkers()) === '10.0.3.1',
        20_000,
        context,
      );
      await setWorkerEndpoints(WORKERS);
      await until(
        'the gateway follows back',
        async () => (await gatewayWorkers()) === '10.0.3.1,10.0.3.2',
        20_000,
        context,
      );
      expect(leader.pushes.filter((p) => p.id === GATEWAY_ID).length).toBeGreaterThanOrEqual(3);
      expect(follower.pushes).toEqual([]);
      expect(follower.statusWrites).toEqual([]);
    },
  );

  it(
    'a graceful stop of the leader: the other takes over and pushes a change made afterwards',
    { timeout: 60_000 },
    async () => {
      const leader = a.cp.elector.isLeader() ? a : b;
      const other = leader === a ? b : a;
      expect(other.pushes).toEqual([]);
      const t0 = Date.now();
      await leader.cp.stop();
      const stoppedAt = Date.now();
      const leaderPushes = leader.pushes.length;
      const leaderWrites = leader.statusWrites.length;
      await oneLeader([other], 'the other replica leads after the release');
      const tookOver = Date.now();
      // It took the released lease; it did not wait for it to expire.
      expect(other.cp.health().election.acquiredBy).toBe('free');
      // A port edit made afterwards reaches the proxy through the new leader.
      const newPort = await freePort('tcp', '0.0.0.0');
      await custom.patchNamespacedCustomObject(
        {
          ...GROUP,
          namespace: NS,
          plural: 'virtualservices',
          name: 'transcoder-vsvc',
          body: { spec: { websocket: { port: newPort } } },
        },
        merge,
      );
      await until(
        `the transcoder listens on ${newPort}`,
        async () => JSON.stringify(await live(transcoder, TRANSCODER_IP)).includes(`"port":${newPort}`),
        20_000,
        context,
      );
      expect(other.pushes.some((p) => p.id === TRANSCODER_ID && p.at >= stoppedAt)).toBe(true);
      expect(leader.pushes.length).toBe(leaderPushes);
      expect(leader.statusWrites.length).toBe(leaderWrites);
      console.log(
        `[figure] graceful handover: stop took ${stoppedAt - t0} ms, the successor led ${tookOver - stoppedAt} ms later; ` +
          `port edit -> transcoder updated ${Date.now() - tookOver} ms after takeover (incl. the edit)`,
      );
    },
  );

  it(
    'a killed leader (no release): the other takes over after the lease duration and an edit made meanwhile arrives',
    { timeout: 60_000 },
    async () => {
      const leader = [a, b].find((r) => r.cp.elector.isLeader())!;
      c = startReplica('c');
      await c.cp.controller.whenSynced(30_000);
      expect(c.cp.elector.isLeader()).toBe(false);
      const leaderPushes = leader.pushes.length;
      const t0 = Date.now();
      await leader.cp.stop({ release: false });
      // Meanwhile, with nobody leading: an EndpointSlice edit.
      await setWorkerEndpoints([WORKERS[1]!]);
      await oneLeader([c], 'c leads after the lease expired');
      const tookOver = Date.now();
      expect(c.cp.health().election.acquiredBy).toBe('expired');
      await until(
        'the gateway has the edit',
        async () => (await gatewayWorkers()) === '10.0.3.2',
        20_000,
        context,
      );
      expect(c.pushes.some((p) => p.id === GATEWAY_ID)).toBe(true);
      expect(leader.pushes.length).toBe(leaderPushes);
      await until(
        'c has both proxies in sync',
        () => c.cp.controller.syncStates().every((s) => s.inSync),
        20_000,
        context,
      );
      console.log(
        `[figure] killed leader: successor led ${tookOver - t0} ms after the kill (lease 3 s); ` +
          `edit arrived ${Date.now() - tookOver} ms after takeover`,
      );
    },
  );

  it(
    'leadership ending mid status pass: writes stop, and whenIdle waits for the ones in flight',
    { timeout: 60_000 },
    async () => {
      const ctl = c.cp.controller;
      // Objects created while c is inactive, so that becoming active starts one pass with many writes.
      ctl.setActive(false);
      const names = Array.from({ length: 20 }, (_, i) => `idle-${i}`);
      for (const [i, name] of names.entries()) {
        await custom.createNamespacedCustomObject({
          ...GROUP,
          namespace: NS,
          plural: 'virtualservices',
          body: {
            apiVersion: 'msm.l7mp.io/v1',
            kind: 'VirtualService',
            metadata: { name, namespace: NS },
            spec: {
              selector: { serviceName: 'nobody-svc' },
              udp: { port: 41000 + i },
              rules: [{ action: { route: { destination: 'worker-svc' } } }],
            },
          },
        });
      }
      await until(
        'c sees them all',
        () => names.every((n) => ctl.snapshot?.meshObjects[`VirtualService/${NS}/${n}`]),
        20_000,
        context,
      );
      const written: string[] = [];
      let atIdle: number | undefined;
      const idle = new Promise<void>((resolve) => {
        ctl.on('status', (key) => {
          if (!key.includes('/idle-')) return;
          written.push(key);
          if (written.length > 1) return;
          // The first write of the pass: the rest of its batch is in flight.
          ctl.setActive(false);
          void ctl.whenIdle().then(() => {
            atIdle = written.length;
            resolve();
          });
        });
      });
      ctl.setActive(true);
      await Promise.race([idle, until('a status write', () => atIdle !== undefined, 20_000, context)]);
      // Nothing lands after whenIdle, and the writes not started when leadership ended never happen.
      await new Promise((r) => setTimeout(r, 1000));
      expect(written.length).toBe(atIdle);
      expect(written.length).toBeLessThan(names.length);
      const list = (await custom.listNamespacedCustomObject({
        ...GROUP,
        namespace: NS,
        plural: 'virtualservices',
      })) as { items: Obj[] };
      const withStatus = list.items.filter((o) => names.includes(o.metadata.name) && o.status?.conditions);
      expect(withStatus.length).toBe(atIdle);
      // Leading again, it writes the rest.
      ctl.setActive(true);
      await until(
        'every idle-* object has status',
        async () => {
          const l = (await custom.listNamespacedCustomObject({
            ...GROUP,
            namespace: NS,
            plural: 'virtualservices',
          })) as { items: Obj[] };
          return l.items.filter((o) => names.includes(o.metadata.name) && o.status?.conditions).length === 20;
        },
        20_000,
        context,
      );
      console.log(
        `[figure] status writes when leadership ended mid pass: ${atIdle} of ${names.length} landed`,
      );
    },
  );
});
