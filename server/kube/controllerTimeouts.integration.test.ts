/**
 * KubeController against an API server that stops answering: a real kube-apiserver behind
 * testing/tcpRelay.ts, cut as in a partition. @kubernetes/client-node sets no timeout, so without the
 * controller's own a status write that gets no answer would hold every later status pass behind it (and
 * stop() behind that) for as long as the connection stays open.
 */
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeController } from './KubeController';
import { GROUP, installCrds, type Obj, PLURAL, until } from './replicasTestKit';
import { type KubeApiServer, startKubeApiServer } from './testing/kubeApiServer';
import { kubeConfigVia, type TcpRelay, tcpRelay } from './testing/tcpRelay';

let kube: KubeApiServer;
let custom: k8s.CustomObjectsApi;
const relays: TcpRelay[] = [];
const controllers: KubeController[] = [];

beforeAll(async () => {
  kube = await startKubeApiServer();
  const kc = kubeConfigVia(kube.admin.kubeconfigPath);
  custom = kc.makeApiClient(k8s.CustomObjectsApi);
  await installCrds(kube, kc);
}, 240_000);

afterAll(async () => {
  await Promise.all(controllers.map((c) => c.stop()));
  await Promise.all(relays.map((r) => r.close()));
  await kube?.stop();
});

/** A namespace with one VirtualService that has no status yet (no controller has written one). */
async function namespaceWithVirtualService(ns: string): Promise<void> {
  const core = kubeConfigVia(kube.admin.kubeconfigPath).makeApiClient(k8s.CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: ns } } });
  await until(`${PLURAL.VirtualService} served in ${ns}`, () =>
    custom.listNamespacedCustomObject({ ...GROUP, namespace: ns, plural: PLURAL.VirtualService! }),
  );
  await custom.createNamespacedCustomObject({
    ...GROUP,
    namespace: ns,
    plural: PLURAL.VirtualService!,
    body: {
      apiVersion: 'msm.l7mp.io/v1',
      kind: 'VirtualService',
      metadata: { name: 'vs', namespace: ns },
      spec: {
        selector: { serviceName: 'svc' },
        udp: { port: 9100 },
        rules: [{ action: { route: 'nowhere' } }],
      },
    },
  });
}

/** A controller of `ns` through a fresh relay, synced and not yet active (it has written nothing). */
async function controllerVia(ns: string, requestTimeoutMs: number) {
  const relay = await tcpRelay(kube.url);
  relays.push(relay);
  const logs: string[] = [];
  const controller = KubeController.start({
    kubeConfig: kubeConfigVia(kube.admin.kubeconfigPath, relay.url),
    namespace: ns,
    active: false,
    source: { requestTimeoutMs, backoff: { baseMs: 200, capMs: 1000 } },
    statusCoalesceMs: 20,
    logger: { info: () => {}, warn: (m: string) => logs.push(m), error: (m: string) => logs.push(m) },
  });
  controllers.push(controller);
  await controller.whenSynced(30_000);
  return { relay, controller, logs };
}

const statusOf = async (ns: string) =>
  (
    (await custom.getNamespacedCustomObject({
      ...GROUP,
      namespace: ns,
      plural: PLURAL.VirtualService!,
      name: 'vs',
    })) as Obj
  ).status as Obj | undefined;

describe('KubeController when the API server stops answering (real kube-apiserver behind a TCP relay)', () => {
  it('a status write that gets no answer fails after requestTimeoutMs and is retried: it lands once the server answers', async () => {
    await namespaceWithVirtualService('timeouts-a');
    const { relay, controller, logs } = await controllerVia('timeouts-a', 1500);
    relay.cut();
    controller.setActive(true);
    await until(
      'a status write timed out',
      () => logs.find((l) => l.includes('cannot write the status') && l.includes('no answer within 1500 ms')),
      20_000,
    );
    expect(await statusOf('timeouts-a')).toBeUndefined();
    // New connections forward again; the ones cut stay open and silent, holding the writes sent on them.
    relay.heal();
    const status = await until(
      'the status is written',
      async () => (await statusOf('timeouts-a'))?.conditions,
      20_000,
    );
    expect((status as Obj[]).map((c) => c.type)).toContain('ResolvedRefs');
  });

  it('stop() does not wait for a status write the API server never answers', async () => {
    await namespaceWithVirtualService('timeouts-b');
    // A request timeout far beyond the stop's own bound: only that bound can end the wait.
    const { relay, controller, logs } = await controllerVia('timeouts-b', 600_000);
    relay.cut();
    controller.setActive(true);
    // The write is in flight once the cut relay has been handed its bytes.
    await until('a status write in flight', () => relay.swallowed() > 0, 20_000);
    let guard: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      controller.stop().then(() => 'stopped'),
      new Promise<string>(
        (resolve) => (guard = setTimeout(() => resolve('still stopping after 30 s'), 30_000)),
      ),
    ]);
    clearTimeout(guard);
    expect(outcome).toBe('stopped');
    expect(logs.join('\n')).toContain(
      'stopping without them: the last status writes and events: no answer within',
    );
  });
});
