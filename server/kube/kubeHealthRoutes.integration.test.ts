// The probe routes (app/api/health, app/api/ready) in Kubernetes mode, with a REAL KubeControlPlane against
// a REAL kube-apiserver (server/kube/testing/kubeApiServer.ts): readiness waits for every informer's first
// list and stays 200 while the API server is down (the replica serves its last state; health shows the
// outage), liveness stays 200 throughout. Both answer without a session and show nothing secret. Every wait is bounded.
import { randomBytes } from 'node:crypto';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GET as health } from '@/app/api/health/route';
import { GET as ready } from '@/app/api/ready/route';
import { getControlPlane } from '../controlPlane/registry';
import { KubeControlPlane } from './kubeControlPlane';
import { setKubeHealth } from './kubeHealthContext';
import { installCrds, until } from './replicasTestKit';
import { type KubeApiServer, startKubeApiServer } from './testing/kubeApiServer';

let kube: KubeApiServer;
let cp: KubeControlPlane | undefined;
const ns = `meshdeck-probe-${randomBytes(4).toString('hex')}`;
const logs: string[] = [];

type Json = Record<string, any>;

async function call(
  route: () => Response,
): Promise<{ status: number; body: Json; text: string; cache: string }> {
  const res = route();
  const text = await res.text();
  return {
    status: res.status,
    body: JSON.parse(text) as Json,
    text,
    cache: res.headers.get('cache-control') ?? '',
  };
}

const context = () => `${JSON.stringify(cp?.health(), null, 1)}\n${logs.slice(-30).join('\n')}`;

/** Nothing of the kubeconfig's credentials or the CA shows in a probe answer. */
function expectNoSecrets(text: string) {
  for (const pem of [kube.admin.tls.key, kube.admin.tls.cert, kube.admin.tls.ca]) {
    const body = pem.split('\n').find((l) => l.length > 40)!;
    expect(text).not.toContain(body);
  }
  expect(text).not.toMatch(/BEGIN|PRIVATE|client-key|certificate-authority|token/i);
}

beforeAll(async () => {
  kube = await startKubeApiServer();
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kube.admin.kubeconfigPath);
  await installCrds(kube, kc);
  await kc.makeApiClient(k8s.CoreV1Api).createNamespace({ body: { metadata: { name: ns } } });
});

afterAll(async () => {
  setKubeHealth(undefined);
  await cp?.stop();
  await kube?.stop();
});

describe('probe routes', () => {
  it('local mode: not ready until a control plane is registered; alive', async () => {
    expect(getControlPlane()).toBeUndefined();
    const r = await call(ready);
    expect(r.status).toBe(503);
    expect(r.body).toEqual({ ready: false, reason: 'the control plane is starting' });
    expect(r.cache).toBe('no-store');
    const h = await call(health);
    expect(h.status).toBe(200);
    expect(h.body).toMatchObject({ status: 'ok', mode: 'local' });
    expect(h.body.kube).toBeUndefined();
    expect(h.cache).toBe('no-store');
  });

  it('Kubernetes mode: ready once the informers listed; an API server outage shows in health, not readiness', async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(kube.admin.kubeconfigPath);
    const log = (level: string) => (m: string) => logs.push(`${level} ${m}`);
    setKubeHealth(() => cp?.health());
    // Registered before the control plane exists: Kubernetes mode, starting.
    const starting = await call(ready);
    expect(starting.status).toBe(503);
    expect(starting.body.reason).toBe('the Kubernetes control plane is starting');

    cp = KubeControlPlane.start({
      kubeConfig: kc,
      namespace: ns,
      leaseNamespace: ns,
      identity: 'replica-a',
      leaseDurationSeconds: 3,
      renewDeadlineMs: 2_000,
      retryPeriodMs: 500,
      controller: { source: { backoff: { baseMs: 100, capMs: 1_000 }, requestTimeoutMs: 5_000 } },
      logger: { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') },
    });
    await until('ready', async () => (await call(ready)).status === 200, 30_000, context);
    const r = await call(ready);
    expect(r.body).toEqual({ ready: true });
    expect(r.cache).toBe('no-store');

    await until('leading', () => cp!.health().leading, 20_000, context);
    const h = await call(health);
    expect(h.status).toBe(200);
    expect(h.cache).toBe('no-store');
    expect(h.body).toMatchObject({
      status: 'ok',
      mode: 'kubernetes',
      kube: { identity: 'replica-a', leading: true, leader: 'replica-a', informersHealthy: true },
    });
    expect((h.body.kube.informers as Json[]).map((i) => i.kind).sort()).toEqual(
      ['EndpointSlice', 'Pod', 'Route', 'Service', 'Target', 'VirtualService'].sort(),
    );
    expect((h.body.kube.informers as Json[]).every((i) => i.synced && i.running)).toBe(true);
    expectNoSecrets(h.text);

    await kube.killApiServer();
    // Liveness does not depend on the API server (restarting this pod would not bring it back), and
    // neither does readiness after the first sync: the replica keeps serving its last state.
    await until(
      'health shows the outage',
      async () => (await call(health)).body.kube?.informersHealthy === false,
      30_000,
      context,
    );
    const alive = await call(health);
    expect(alive.status).toBe(200);
    expect((alive.body.kube.informers as Json[]).some((i) => !i.running && i.lastError)).toBe(true);
    expectNoSecrets(alive.text);
    const still = await call(ready);
    expect(still.status).toBe(200);
    expect(still.body).toEqual({ ready: true });

    await kube.restartApiServer();
    await until(
      'healthy again',
      async () => (await call(health)).body.kube?.informersHealthy === true,
      60_000,
      context,
    );
    const back = await call(health);
    expect(back.body.kube.informersHealthy).toBe(true);
    expect((back.body.kube.informers as Json[]).every((i) => i.running && i.restarts > 0)).toBe(true);
  });
});
