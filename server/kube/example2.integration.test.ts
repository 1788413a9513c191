// Seed Example 2 (the IMS media plane: a gateway and two workers with JSONSocket sidecars) as custom
// resources in a REAL kube-apiserver, through KubeController to REAL l7mp processes: each proxy gets the
// golden file's operations and runs its config, as Example 1 does in controller.integration.test.ts. The
// proxies' pod addresses are loopback addresses of the l7mp processes started here and every listener port
// is moved to a free one (the golden file with them). No EndpointSlices: the workers' endpoints come from
// their pods, as when the golden file was made.
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalL7mpConfig } from '@/lib/l7mp/canonicalL7mp';
import type { L7mpOperation } from '@/lib/model/l7mp';
import { MeshXdsPublisher } from '../xds/meshXds';
import { freePort, type L7mpProcess, startL7mp } from '../testing/startL7mp';
import { KubeController } from './KubeController';
import { applySeed, golden, installCrds, live, localizer, NS, until } from './replicasTestKit';
import { type KubeApiServer, startKubeApiServer } from './testing/kubeApiServer';

/** Golden pod address -> the loopback address an l7mp process of this test answers on. */
const PROXIES: Record<string, { pod: string; goldenIp: string; ip: string }> = {
  [`${NS}/gateway-0`]: { pod: 'gateway-0', goldenIp: '10.0.1.1', ip: '127.0.0.2' },
  [`${NS}/worker-0`]: { pod: 'worker-0', goldenIp: '10.0.4.1', ip: '127.0.0.4' },
  [`${NS}/worker-1`]: { pod: 'worker-1', goldenIp: '10.0.4.2', ip: '127.0.0.5' },
};

let kube: KubeApiServer;
let kc: k8s.KubeConfig;
const procs: Record<string, L7mpProcess> = {};
let localize: <T>(v: T) => T;
let controller: KubeController;
const xds = new MeshXdsPublisher();
const pushes: { id: string; applied: L7mpOperation[]; ok: boolean }[] = [];
const logs: string[] = [];
const context = () => `controller log:\n${logs.slice(-30).join('\n')}`;

beforeAll(async () => {
  const ids = Object.keys(PROXIES);
  const started = await Promise.all([startKubeApiServer(), ...ids.map(() => startL7mp())]);
  kube = started[0] as KubeApiServer;
  ids.forEach((id, i) => (procs[id] = started[i + 1] as L7mpProcess));
  // The gateway's UDP listeners and the workers' JSONSocket listener (both workers bind it: l7mp's UDP
  // listeners set SO_REUSEADDR) and the transcoder port the workers send to.
  const ports: Record<number, number> = {};
  for (const p of [8001, 8002, 19000, 19001]) ports[p] = await freePort('udp', '0.0.0.0');
  localize = localizer(Object.fromEntries(Object.values(PROXIES).map((p) => [p.goldenIp, p.ip])), ports);
  kc = new k8s.KubeConfig();
  kc.loadFromFile(kube.admin.kubeconfigPath);
  await installCrds(kube, kc);
  await applySeed(
    kc,
    'seed-example-2',
    localize,
    Object.fromEntries(ids.map((id) => [PROXIES[id]!.pod, procs[id]!.apiPort])),
  );
  controller = KubeController.start({
    kubeConfig: kc,
    xds,
    reconciler: { driftIntervalMs: 1000 },
    statusCoalesceMs: 50,
    logger: {
      info: (m) => logs.push(`info ${m}`),
      warn: (m) => logs.push(`warn ${m}`),
      error: (m) => logs.push(`error ${m}`),
    },
  });
  controller.reconciler.on('pushed', (id, r) => pushes.push({ id, applied: r.applied, ok: r.ok }));
  await controller.whenSynced(30_000);
}, 240_000);

afterAll(async () => {
  await controller?.stop();
  xds.cache.close();
  await Promise.all(Object.values(procs).map((p) => p.stop()));
  await kube?.stop();
});

describe('seed Example 2 as custom resources through KubeController', () => {
  it('configures the gateway and both workers with the golden file operations and config', async () => {
    const want = golden('seed-example-2', localize);
    const ids = Object.keys(PROXIES).sort();
    expect(Object.keys(want).sort()).toEqual(ids);
    await until(
      'all three proxies in sync',
      () => {
        const s = controller.syncStates();
        return s.length === 3 && s.every((x) => x.inSync && x.phase === 'synced');
      },
      30_000,
      context,
    );
    expect(controller.syncStates().map((s) => [s.id, s.apiUrl])).toEqual(
      ids.map((id) => [id, `http://${PROXIES[id]!.ip}:${procs[id]!.apiPort}`]),
    );
    for (const id of ids) {
      // One push to an empty proxy: exactly the golden operations, in order.
      const mine = pushes.filter((p) => p.id === id);
      expect(mine, id).toHaveLength(1);
      expect(mine[0]!.ok, id).toBe(true);
      expect(mine[0]!.applied.map((op) => ({ [`${op.method} ${op.path}`]: op.body ?? null }))).toEqual(
        want[id]!.operations,
      );
      // And the proxy, read back over its REST API, runs the golden config.
      expect(canonicalL7mpConfig(await live(procs[id]!, PROXIES[id]!.ip))).toEqual(
        canonicalL7mpConfig(want[id]!.config),
      );
    }
    expect(controller.compiled!.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(xds.cache.nodeIds().sort()).toEqual(ids);
  });
});
