// The Programmed condition of a proxyless gRPC client's mesh objects in Kubernetes mode, with real parts
// only: a REAL kube-apiserver and etcd (server/kube/testing/kubeApiServer.ts) holding examples/grpc-canary
// as custom resources, Services and Pods; the controller's ADS server; a REAL
// @grpc/grpc-js-xds client in its own process (node id default/grpc-client) dialling xds:///echo; real
// gRPC backends on the example's pod addresses (free ports). Nothing binds a fixed port: no lock needed.
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MeshCondition } from '@/lib/kube/meshStatus';
import { AdsServer } from '../xds/AdsServer';
import { MeshXdsPublisher } from '../xds/meshXds';
import type { XdsResource } from '../xds/SnapshotCache';
import { snapshotFromRendered } from '../xds/snapshotFromRendered';
import { type Backend, type Child, forkXdsClient, startBackend } from '../xds/testing/children';
import { KubeController } from './KubeController';
import { GROUP, installCrds, merge, NS, type Obj } from './replicasTestKit';
import {
  applyGrpcCanary,
  GRPC_CANARY_CLIENT as CLIENT,
  programmed,
  programmedBecomes as programmedOf,
} from './testing/grpcCanaryKube';
import { type KubeApiServer, startKubeApiServer } from './testing/kubeApiServer';

let kube: KubeApiServer;
let kc: k8s.KubeConfig;
let custom: k8s.CustomObjectsApi;
let controller: KubeController;
let ads: AdsServer;
let adsPort: number;
let client: Child | undefined;
const xds = new MeshXdsPublisher();
const backends: Backend[] = [];
const logs: string[] = [];
const logger = {
  info: (m: string) => logs.push(`info ${m}`),
  warn: (m: string) => logs.push(`warn ${m}`),
  error: (m: string) => logs.push(`error ${m}`),
};
const context = () => `log:\n${logs.slice(-30).join('\n')}`;

/**
 * The two backends on the example's pod addresses and one port (a split's entries must share it): a
 * free one on 127.0.0.71, taken on 127.0.0.72 too, retried a few times if someone holds it there.
 */
async function startBackends(): Promise<Backend[]> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 5; attempt++) {
    const v1 = await startBackend('echo-v1', '127.0.0.71:0');
    try {
      return [v1, await startBackend('echo-v2', `127.0.0.72:${v1.port}`)];
    } catch (e) {
      lastError = e;
      await v1.stop();
    }
  }
  throw lastError;
}

/** Waits until the object's Programmed condition has `status` (and the message passes `message`). */
function programmedBecomes(
  kind: string,
  name: string,
  status: MeshCondition['status'],
  message: (m: string) => boolean = () => true,
): Promise<MeshCondition> {
  return programmedOf(custom, kind, name, status, message, context);
}

async function calls(n: number): Promise<{ byBackend: Record<string, number>; failures: string[] }> {
  return client!.request('call', { n, concurrency: 4, deadlineMs: 10_000 }, 60_000);
}

beforeAll(async () => {
  [kube] = await Promise.all([startKubeApiServer(), startBackends().then((b) => backends.push(...b))]);
  kc = new k8s.KubeConfig();
  kc.loadFromFile(kube.admin.kubeconfigPath);
  custom = kc.makeApiClient(k8s.CustomObjectsApi);
  await installCrds(kube, kc);
  ads = new AdsServer({ cache: xds.cache, logger });
  adsPort = await ads.listen({ host: '127.0.0.1', port: 0, insecure: true });
  await applyGrpcCanary(kc, backends[0]!.port);
  controller = KubeController.start({
    kubeConfig: kc,
    xds,
    xdsServer: ads,
    source: { backoff: { baseMs: 200, capMs: 2000 } },
    statusCoalesceMs: 50,
    logger,
  });
  await controller.whenSynced(30_000);
}, 240_000);

afterAll(async () => {
  await client?.kill();
  await controller?.stop();
  await ads?.stop();
  xds.cache.close();
  await Promise.all(backends.map((b) => b.stop()));
  await kube?.stop();
}, 60_000);

describe('Programmed of a proxyless gRPC client follows its ADS stream (real kube-apiserver, real grpc-js-xds)', () => {
  it('before the client dials: Accepted and ResolvedRefs True, Programmed Unknown (no ADS stream from it)', async () => {
    const p = await programmedBecomes('VirtualService', 'echo', 'Unknown');
    expect(p).toMatchObject({
      reason: 'NotConnected',
      message: `not connected over xDS: ${CLIENT}: no ADS stream from it`,
    });
    const o = (await custom.getNamespacedCustomObject({
      ...GROUP,
      namespace: NS,
      plural: 'virtualservices',
      name: 'echo',
    })) as Obj;
    const byType = Object.fromEntries((o.status.conditions as MeshCondition[]).map((c) => [c.type, c]));
    expect(byType.Accepted?.status).toBe('True');
    expect(byType.ResolvedRefs?.status).toBe('True');
    expect((await programmed(custom, 'Target', 'echo-split'))?.status).toBe('Unknown');
  });

  it('the client dials xds:///echo, its RPCs reach both backends, it ACKs: Programmed True naming it', async () => {
    client = await forkXdsClient(adsPort, CLIENT, 'xds:///echo');
    const r = await calls(40);
    expect(r.failures).toEqual([]);
    expect(Object.keys(r.byBackend).sort()).toEqual(['echo-v1', 'echo-v2']);
    for (const [kind, name] of [
      ['VirtualService', 'echo'],
      ['Target', 'echo-split'],
    ] as const) {
      const p = await programmedBecomes(kind, name, 'True');
      expect(p).toMatchObject({ reason: 'Programmed', message: `programmed on ${CLIENT}` });
    }
  });

  it('a config the client NACKs: Programmed False with its error_detail; the next mesh change heals it', async () => {
    // Our renderer never emits an lb_policy grpc-js-xds refuses, so the refused config is written into the
    // cache directly (as a buggy render would): the NACK itself is the real client's.
    const good = xds.last!.snapshots[CLIENT]!;
    const bad = structuredClone(good) as unknown as Record<string, XdsResource[]>;
    expect(bad.clusters!.length).toBe(2);
    for (const c of bad.clusters!) (c as Obj).lb_policy = 'LEAST_REQUEST';
    xds.cache.setSnapshot(CLIENT, snapshotFromRendered(bad));
    for (const [kind, name] of [
      ['VirtualService', 'echo'],
      ['Target', 'echo-split'],
    ] as const) {
      // Programmed is False/Pending ("waiting for …") while the bad config is out and not yet answered:
      // wait for the NACK itself.
      const p = await programmedBecomes(kind, name, 'False', (m) => m.includes('NACKed'));
      expect(p.reason).toBe('ProxyError');
      expect(p.message).toMatch(new RegExp(`^${CLIENT}: NACKed CDS \\S+: xDS response validation errors: `));
      expect(p.message).toContain('unsupported lb_policy: LEAST_REQUEST');
    }
    // After the NACK the client keeps routing with its last good config.
    expect((await calls(10)).failures).toEqual([]);

    // A mesh change: the controller renders and publishes a good config again, which the client ACKs.
    await custom.patchNamespacedCustomObject(
      {
        ...GROUP,
        namespace: NS,
        plural: 'targets',
        name: 'echo-split',
        body: {
          spec: {
            split: [
              { serviceName: 'echo-v1', weight: 50 },
              { serviceName: 'echo-v2', weight: 50 },
            ],
          },
        },
      },
      merge,
    );
    const healed = await programmedBecomes('VirtualService', 'echo', 'True');
    expect(healed.message).toBe(`programmed on ${CLIENT}`);
    const t = await programmedBecomes('Target', 'echo-split', 'True');
    expect(t.observedGeneration).toBe(2);
    expect((await calls(10)).failures).toEqual([]);
  });

  it('the client goes away: Programmed Unknown, saying its ADS stream closed', async () => {
    await client!.kill();
    client = undefined;
    const p = await programmedBecomes('VirtualService', 'echo', 'Unknown');
    expect(p).toMatchObject({
      reason: 'NotConnected',
      message: `not connected over xDS: ${CLIENT}: its ADS stream closed (it keeps the config it had, if any)`,
    });
    // Each object's status is its own write: the Target's may land just after the VirtualService's.
    expect((await programmedBecomes('Target', 'echo-split', 'Unknown')).reason).toBe('NotConnected');
  });
});
