// KubeSource against a REAL kube-apiserver (server/kube/testing/kubeApiServer.ts): an informer whose watch
// went half-open (its TCP connection silently dead: no error, no end) relists after `watchIdleMs` and
// catches up, and a relist that finds nothing new emits no snapshot. The half-open watch is made with a
// TCP relay that can black-hole the connections it already carries while forwarding new ones, as when a
// NAT or load balancer forgets a flow. Every wait is bounded; nothing asserts how long anything took.
import { randomBytes } from 'node:crypto';
import * as k8s from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { KubeSource, type KubeSourceChange } from './kubeSource';
import { installCrds, merge, until } from './replicasTestKit';
import { type KubeApiServer, startKubeApiServer } from './testing/kubeApiServer';
import { kubeConfigVia as kubeConfigViaRelay, tcpRelay } from './testing/tcpRelay';

let kube: KubeApiServer;
let admin: k8s.KubeConfig;
let core: k8s.CoreV1Api;
const ns = `meshdeck-src-${randomBytes(4).toString('hex')}`;
const sources: KubeSource[] = [];
const relays: { close(): Promise<void> }[] = [];

/** A relay (testing/tcpRelay.ts) closed after the test. */
async function halfOpenRelay(target: string) {
  const relay = await tcpRelay(target);
  relays.push(relay);
  return relay;
}

function kubeConfigVia(server?: string): k8s.KubeConfig {
  return kubeConfigViaRelay(kube.admin.kubeconfigPath, server);
}

/** A started source with its snapshots and log recorded. */
function source(kubeConfig: k8s.KubeConfig, watchIdleMs: number) {
  const log: string[] = [];
  const changes: KubeSourceChange[] = [];
  const s = new KubeSource({
    kubeConfig,
    namespace: ns,
    watchIdleMs,
    requestTimeoutMs: 5_000,
    logger: { info: (m) => log.push(m), warn: (m) => log.push(m), error: (m) => log.push(m) },
  });
  s.on('snapshot', (_snapshot, change) => changes.push(change));
  sources.push(s);
  s.start();
  return { s, log, changes, context: () => `${JSON.stringify(s.states(), null, 1)}\n${log.join('\n')}` };
}

function service(name: string, port: number): k8s.V1Service {
  return {
    metadata: { name, namespace: ns },
    spec: { ports: [{ name: 'udp', protocol: 'UDP', port }], selector: { app: name } },
  };
}

const portOf = (s: KubeSource, name: string) =>
  (s.raw('Service', ns, name) as k8s.V1Service | undefined)?.spec?.ports?.[0]?.port;

beforeAll(async () => {
  kube = await startKubeApiServer();
  admin = kubeConfigVia();
  core = admin.makeApiClient(k8s.CoreV1Api);
  await installCrds(kube, admin);
  await core.createNamespace({ body: { metadata: { name: ns } } });
  await core.createNamespacedService({ namespace: ns, body: service('quiet', 5000) });
});

afterEach(async () => {
  await Promise.all(sources.splice(0).map((s) => s.stop()));
  await Promise.all(relays.splice(0).map((r) => r.close()));
});

afterAll(async () => {
  await kube?.stop();
});

describe('KubeSource watch liveness', () => {
  it('relists idle watches without emitting a snapshot when nothing changed, and still sees changes', async () => {
    const src = source(kubeConfigVia(), 800);
    await src.s.whenSynced(20_000);
    expect(src.changes.map((c) => c.initial)).toEqual([true]);
    const listsBefore = src.s.states().map((x) => x.lists);
    // Nothing changes in the namespace: every informer's watch stays silent and relists, twice. Meanwhile
    // every informer counts as running (what readiness reads): a relist is not an outage.
    const notRunning = new Set<string>();
    await until(
      'every informer relisted twice',
      () => {
        const now = src.s.states();
        for (const x of now) if (!x.running) notRunning.add(`${x.kind} after ${x.idleRelists} relists`);
        return now.every((x) => x.idleRelists >= 2);
      },
      20_000,
      src.context,
      5,
    );
    expect([...notRunning]).toEqual([]);
    const states = src.s.states();
    states.forEach((x, i) => expect(x.lists, x.kind).toBeGreaterThanOrEqual(listsBefore[i]! + 2));
    expect(states.every((x) => x.restarts === 0 && x.synced)).toBe(true);
    // The measurement: relists that found the same objects emitted nothing.
    expect(src.changes).toHaveLength(1);

    await core.createNamespacedService({ namespace: ns, body: service('after-relists', 5001) });
    await until('the new Service', () => src.changes.length > 1, 20_000, src.context);
    expect(src.changes.slice(1).flatMap((c) => c.kinds)).toContain('Service');
    expect(portOf(src.s, 'after-relists')).toBe(5001);
  });

  it('a half-open watch relists after watchIdleMs and delivers the change it missed', async () => {
    const relay = await halfOpenRelay(kube.url);
    const resyncing = source(kubeConfigVia(relay.url), 1_500);
    // The control: the same black hole, but an idle timeout far beyond this test.
    const stale = source(kubeConfigVia(relay.url), 600_000);
    await resyncing.s.whenSynced(20_000);
    await stale.s.whenSynced(20_000);
    await until('every watch open', () =>
      [resyncing, stale].every((x) => x.s.states().every((st) => st.running)),
    );
    expect(portOf(resyncing.s, 'quiet')).toBe(5000);

    // Six watches per source, all open through the relay: they go half-open.
    expect(relay.blackholeExisting()).toBeGreaterThanOrEqual(12);
    const relistsBefore = resyncing.s.states().find((x) => x.kind === 'Service')!.idleRelists;
    await core.patchNamespacedService(
      {
        name: 'quiet',
        namespace: ns,
        body: { spec: { ports: [{ name: 'udp', protocol: 'UDP', port: 5002 }] } },
      },
      merge,
    );

    await until('the change arrives', () => portOf(resyncing.s, 'quiet') === 5002, 20_000, resyncing.context);
    const svc = resyncing.s.states().find((x) => x.kind === 'Service')!;
    expect(svc.idleRelists).toBeGreaterThan(relistsBefore);
    expect(svc.restarts).toBe(0); // a relist, not an error and a backoff
    expect(resyncing.changes.at(-1)?.kinds).toContain('Service');
    expect(resyncing.log.some((l) => /Service watch silent .*relisting/.test(l))).toBe(true);

    // The half-open watches really were dead: the source that does not relist soon still has the old port
    // although the other one relisted (so their silence lasted longer than its idle timeout) twice since.
    const relisted = svc.idleRelists;
    await until(
      'two more relists of the resyncing source',
      () => resyncing.s.states().find((x) => x.kind === 'Service')!.idleRelists >= relisted + 2,
      20_000,
      resyncing.context,
    );
    expect(portOf(stale.s, 'quiet')).toBe(5000);
    expect(stale.s.states().every((x) => x.running && x.idleRelists === 0)).toBe(true);
  });
});
