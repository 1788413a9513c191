// The validating admission webhook as users run it: two replicas of `meshdeck serve --kubeconfig ...
// --webhook-listen` (node bin/meshdeck.mjs, child processes) and a REAL kube-apiserver that calls both
// for every write of a mesh object (a ValidatingWebhookConfiguration with one webhook per replica, by URL,
// failurePolicy Fail: a replica whose certificate the API server did not trust would fail every write).
// The replicas share one CA through a Secret and write the caBundle themselves.
import { type ChildProcess, spawn } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../testing/startL7mp';
import { ADMISSION_PATH } from './admissionWebhook';
import { ClusterApply } from './clusterApply';
import { ClusterClient } from './clusterClient';
import { WEBHOOK_CA_SECRET } from './kubeControlPlaneServe';
import { installCrds, NS, until } from './replicasTestKit';
import { type KubeApiServer, kubeRequest, startKubeApiServer } from './testing/kubeApiServer';
import * as k8s from '@kubernetes/client-node';

const BIN = path.resolve(__dirname, '../../bin/meshdeck.mjs');
const MESH = `/apis/msm.l7mp.io/v1/namespaces/${NS}`;
const VWC = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
const CONFIG = 'meshdeck-validator-test';

interface Replica {
  id: string;
  port: number;
  child: ChildProcess;
  out: string;
  exit?: number | null;
}

let kube: KubeApiServer;
const replicas: Replica[] = [];
const tmpDirs: string[] = [];

const req = (method: string, p: string, body?: unknown) => kubeRequest(kube.url, kube.admin, method, p, body);
const context = () =>
  replicas.map((r) => `--- ${r.id}:\n${r.out.slice(-3000)}`).join('\n') + `\n${kube.logs().slice(-3000)}`;

async function start(id: string, port: number): Promise<Replica> {
  const stateDir = await mkdtemp(path.join(os.tmpdir(), `md-webhook-${id}-`));
  tmpDirs.push(stateDir);
  const child = spawn(
    process.execPath,
    [
      BIN,
      'serve',
      '--kubeconfig',
      kube.admin.kubeconfigPath,
      '--namespace',
      NS,
      '--no-xds',
      '--port',
      String(await freePort('tcp')),
      '--webhook-listen',
      `127.0.0.1:${port}`,
      '--webhook-config',
      CONFIG,
      '--webhook-names',
      '127.0.0.1,localhost',
    ],
    {
      env: { ...process.env, POD_NAME: id, POD_NAMESPACE: NS, MESHDECK_STATE_DIR: stateDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const r: Replica = { id, port, child, out: '' };
  child.stdout!.on('data', (d: Buffer) => (r.out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (r.out += d.toString()));
  child.on('exit', (code) => (r.exit = code));
  replicas.push(r);
  return r;
}

const route = (name: string, spec: unknown) => ({
  apiVersion: 'msm.l7mp.io/v1',
  kind: 'Route',
  metadata: { name, namespace: NS },
  spec,
});
const target = (name: string) => ({
  apiVersion: 'msm.l7mp.io/v1',
  kind: 'Target',
  metadata: { name, namespace: NS },
  spec: {
    selector: { serviceName: 'worker-svc' },
    endpoints: [{ spec: { address: '127.0.0.1' } }],
    udp: { port: 9999 },
  },
});

beforeAll(async () => {
  kube = await startKubeApiServer();
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kube.admin.kubeconfigPath);
  await installCrds(kube, kc);
  const ports = [await freePort('tcp'), await freePort('tcp')];
  // The configuration exists before the replicas start, without a caBundle: they write it.
  const res = await req('POST', VWC, {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: CONFIG },
    webhooks: ports.map((p, i) => ({
      name: `replica-${i}.validate.msm.l7mp.io`,
      admissionReviewVersions: ['v1'],
      sideEffects: 'None',
      failurePolicy: 'Fail',
      timeoutSeconds: 10,
      clientConfig: { url: `https://127.0.0.1:${p}${ADMISSION_PATH}` },
      rules: [
        {
          apiGroups: ['msm.l7mp.io'],
          apiVersions: ['v1'],
          operations: ['CREATE', 'UPDATE', 'DELETE'],
          resources: ['virtualservices', 'routes', 'targets'],
        },
      ],
    })),
  });
  if (res.status !== 201) throw new Error(`ValidatingWebhookConfiguration: HTTP ${res.status} ${res.text}`);
  await start('replica-a', ports[0]!);
  await start('replica-b', ports[1]!);
  await until(
    'both replicas serving the webhook with the informers synced',
    () =>
      replicas.every(
        (r) =>
          /admission webhook: https:\/\/127\.0\.0\.1:\d+\/validate/.test(r.out) &&
          /informers: 6\/6 synced/.test(r.out),
      ),
    120_000,
    context,
    100,
  );
}, 300_000);

afterAll(async () => {
  for (const r of replicas) if (r.exit === undefined) r.child.kill('SIGKILL');
  await kube?.stop();
  for (const d of tmpDirs) await rm(d, { recursive: true, force: true });
});

describe('meshdeck serve --webhook-listen against a real kube-apiserver', () => {
  it('the replicas share one CA from a Secret and write it into the caBundle of every webhook', async () => {
    const secret = await req('GET', `/api/v1/namespaces/${NS}/secrets/${WEBHOOK_CA_SECRET}`);
    expect(secret.status, secret.text).toBe(200);
    const data = (secret.body as { data: Record<string, string> }).data;
    const ca = Buffer.from(data['ca.crt']!, 'base64');
    expect(new X509Certificate(ca).ca).toBe(true);
    const vwc = await req('GET', `${VWC}/${CONFIG}`);
    const bundles = (vwc.body as { webhooks: { clientConfig: { caBundle?: string } }[] }).webhooks.map(
      (w) => w.clientConfig.caBundle,
    );
    expect(bundles).toEqual([data['ca.crt'], data['ca.crt']]);
    for (const r of replicas) {
      expect(r.out).toMatch(
        new RegExp(`caBundle of ValidatingWebhookConfiguration ${CONFIG} (already )?set`),
      );
      // The CA's key is in the Secret, never in a log.
      expect(r.out).not.toContain('PRIVATE KEY');
    }
  });

  it('refuses an object the CRD schema takes but the MSM API does not, naming the field (both replicas asked)', async () => {
    // `destination` is "a name or an inline Target": the structural schema cannot type it.
    const res = await req('POST', `${MESH}/routes`, route('bad-route', { destination: 42 }));
    expect(res.status, res.text).toBe(422);
    const message = (res.body as { message: string }).message;
    expect(message).toMatch(/admission webhook "replica-\d\.validate\.msm\.l7mp\.io" denied the request/);
    expect(message).toContain(`Route ${NS}/bad-route does not match the MSM API schema`);
    expect(message).toContain('spec.destination: expected string or object, received number');
    expect((await req('GET', `${MESH}/routes/bad-route`)).status).toBe(404);
  });

  it('refuses it the same in a server-side dry run (what the console checks before an apply)', async () => {
    const res = await req('POST', `${MESH}/routes?dryRun=All`, route('bad-dry', { destination: 42 }));
    expect(res.status, res.text).toBe(422);
    expect((res.body as { message: string }).message).toContain('spec.destination:');
  });

  it('stores a valid object whose reference dangles, with the problem as a warning', async () => {
    const res = await req('POST', `${MESH}/routes`, route('r1', { destination: 'no-such-target' }));
    expect(res.status, res.text).toBe(201);
    expect(res.warnings[0]).toMatch(
      new RegExp(`^error: Route ${NS}/r1 spec\\.destination: .*no-such-target`),
    );
  });

  it('warns on a delete that leaves a reference dangling, and deletes', async () => {
    expect((await req('POST', `${MESH}/targets`, target('t1'))).status).toBe(201);
    const r2 = await req('POST', `${MESH}/routes`, route('r2', { destination: 't1' }));
    expect(r2.status, r2.text).toBe(201);
    // The Route resolves: no warning about it. Each replica knows of t1 once its informer has it.
    await until(
      'both replicas know t1',
      async () => {
        const again = await req('PUT', `${MESH}/routes/r2`, {
          ...route('r2', { destination: 't1' }),
          metadata: {
            name: 'r2',
            namespace: NS,
            resourceVersion: (
              (await req('GET', `${MESH}/routes/r2`)).body as { metadata: { resourceVersion: string } }
            ).metadata.resourceVersion,
          },
        });
        return again.status === 200 && again.warnings.length === 0;
      },
      20_000,
      context,
      200,
    );
    await until(
      'both replicas know r2',
      async () => {
        const dry = await req('DELETE', `${MESH}/targets/t1?dryRun=All`);
        return dry.status === 200 && dry.warnings.some((w) => w.includes(`Route ${NS}/r2`));
      },
      20_000,
      context,
      200,
    );
    const res = await req('DELETE', `${MESH}/targets/t1`);
    expect(res.status, res.text).toBe(200);
    expect(res.warnings[0]).toMatch(
      new RegExp(`^after the delete, error: Route ${NS}/r2 spec\\.destination: .*t1`),
    );
    expect((await req('GET', `${MESH}/targets/t1`)).status).toBe(404);
  });

  it("the console's dry run shows the refusal on its object and the warnings as kubectl prints them", async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(kube.admin.kubeconfigPath);
    const apply = new ClusterApply(new ClusterClient(kc), { user: 'alice', groups: ['system:masters'] });
    const yaml = [
      route('console-bad', { destination: 42 }),
      route('console-dangling', { destination: 'nope' }),
    ]
      .map((o) => JSON.stringify(o))
      .join('\n---\n');
    const plan = await apply.dryRun({ 'default/mesh.yaml': yaml });
    expect(plan.ok).toBe(false);
    const rows = Object.fromEntries(plan.objects.map((o) => [o.ref.name, o]));
    expect(rows['console-bad']).toMatchObject({ action: 'error' });
    expect(rows['console-bad']!.error?.message).toContain(
      'spec.destination: expected string or object, received number',
    );
    expect(rows['console-dangling']!.action).toBe('create');
    // The text alone, one entry per warning (not `299 - "..."`, not joined with ", ").
    expect(rows['console-dangling']!.warnings[0]).toMatch(
      new RegExp(`^error: Route ${NS}/console-dangling spec\\.destination: .*nope`),
    );
    expect(rows['console-dangling']!.warnings.length).toBeGreaterThan(1);
    for (const w of rows['console-dangling']!.warnings) expect(w).not.toMatch(/^299 /);
  });

  it('with a replica gone, failurePolicy decides (Fail here): the write is refused, not let through unchecked', async () => {
    const b = replicas[1]!;
    b.child.kill('SIGTERM');
    await until('replica-b exited', () => b.exit !== undefined, 20_000, context);
    expect(b.exit).toBe(0);
    const res = await req('POST', `${MESH}/routes`, route('r3', { destination: 'no-such-target' }));
    expect(res.status, res.text).toBe(500);
    expect((res.body as { message: string }).message).toMatch(
      /failed calling webhook "replica-1\.validate\.msm\.l7mp\.io"/,
    );
  });
});
