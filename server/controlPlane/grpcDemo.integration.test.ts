/**
 * `npm run demo -- examples/grpc-canary` with real parts: the control plane on a copy of the example
 * (moved to addresses and a port of its own) starts the grpc-echo apps and the grpc-client app, a
 * grpc-js-xds child process that gets its routes from the control plane's plaintext ADS server and
 * calls xds:///echo; its calls are split 80/20, and a broken canary (fail percent 100) shows as errors.
 */
import { cp as copyDir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DemoRecord } from '../localMesh/demoApps';
import { freePort } from '../testing/startL7mp';
import { waitFor } from '../xds/testing/children';
import { ControlPlane } from './ControlPlane';

const REPO = path.resolve(__dirname, '..', '..');
// 127.0.0.93-95: no other test uses them; the example's 127.0.0.70-72:50051 are bound by other tests.
const CLIENT_POD = '127.0.0.93';
const V1 = '127.0.0.94';
const V2 = '127.0.0.95';
const N = 200;

function portFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen({ host, port, exclusive: true }, () => s.close(() => resolve(true)));
  });
}

/** A copy of examples/grpc-canary on this test's addresses, its backends on a port free on both. */
async function canaryCopy(tmp: string): Promise<{ dir: string; port: number }> {
  let port = 0;
  for (let attempt = 0; attempt < 20 && !port; attempt++) {
    const p = await freePort('tcp', V1);
    if (await portFree(V2, p)) port = p;
  }
  expect(port).toBeGreaterThan(0);
  const dir = path.join(tmp, 'mesh');
  await copyDir(path.join(REPO, 'examples', 'grpc-canary'), dir, { recursive: true });
  const file = path.join(dir, 'cluster.yaml');
  const text = await readFile(file, 'utf8');
  const edited = text
    .replaceAll('127.0.0.70', CLIENT_POD)
    .replaceAll('127.0.0.71', V1)
    .replaceAll('127.0.0.72', V2)
    .replaceAll('targetPort: 50051', `targetPort: ${port}`)
    .replaceAll("app-port: '50051'", `app-port: '${port}'`)
    // 200 calls in seconds rather than the example's 10 a second.
    .replaceAll("app-rate: '10'", "app-rate: '50'");
  // The example must still have what this test moves: two Services, two echo apps, three addresses.
  expect(edited.split(`targetPort: ${port}`)).toHaveLength(3);
  expect(edited.split(`app-port: '${port}'`)).toHaveLength(3);
  expect(edited).toContain("meshdeck.l7mp.io/app-rate: '50'");
  await writeFile(file, edited);
  return { dir, port };
}

function recorder() {
  const lines: string[] = [];
  const push = (...a: unknown[]) => lines.push(a.map(String).join(' '));
  return { lines, logger: { info: () => {}, warn: push, error: push } };
}

/** `n` of the client's records after the first `skip`, waiting (bounded) for them to arrive. */
async function nextCalls(cp: ControlPlane, skip: number, n: number): Promise<DemoRecord[]> {
  const r = await waitFor(
    `${n} calls of the grpc-client app after the first ${skip}`,
    () => {
      const all = cp.appReceived('grpc-client');
      return all.length >= skip + n ? all : undefined;
    },
    60_000,
    100,
  );
  return r.slice(skip, skip + n);
}

describe('npm run demo -- examples/grpc-canary (plaintext ADS): real gRPC traffic', () => {
  let tmp: string;
  let dir: string;
  let port: number;
  let cp: ControlPlane | undefined;
  const log = recorder();

  beforeAll(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'md-grpc-demo-'));
    ({ dir, port } = await canaryCopy(tmp));
    cp = await ControlPlane.startLocal({
      meshDir: dir,
      stateDir: path.join(tmp, 'state'),
      logger: log.logger,
      watch: false,
      xds: { host: '127.0.0.1', port: await freePort(), insecure: true },
    });
  }, 120_000);

  afterAll(async () => {
    await cp?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  }, 30_000);

  it('the client calls reach echo-v1-a and echo-v2-a about 80/20', async () => {
    expect(log.lines.filter((l) => l.includes('did not start'))).toEqual([]);
    expect(cp!.live.get().diagnostics.filter((d) => d.code.startsWith('local-app'))).toEqual([]);
    // Calls made before the xDS config arrived may fail: counted from the first answer on.
    await waitFor('a first answer', () => cp!.appReceived('grpc-client').some((r) => r.payload), 60_000, 100);
    const first = cp!.appReceived('grpc-client').findIndex((r) => r.payload);
    const calls = await nextCalls(cp!, first, N);
    expect(calls.filter((c) => c.error)).toEqual([]);
    const v1 = calls.filter((c) => c.payload === 'echo-v1-a');
    const v2 = calls.filter((c) => c.payload === 'echo-v2-a');
    expect(v1.length + v2.length).toBe(N);
    expect(v1.length / N).toBeGreaterThan(0.7);
    expect(v1.length / N).toBeLessThan(0.9);
    expect(new Set(v1.map((c) => c.from))).toEqual(new Set([`${V1}:${port}`]));
    expect(new Set(v2.map((c) => c.from))).toEqual(new Set([`${V2}:${port}`]));
    // The backends saw them too.
    expect(cp!.appReceived('echo-v1-a').length).toBeGreaterThanOrEqual(v1.length);
    expect(cp!.appReceived('echo-v2-a').length).toBeGreaterThanOrEqual(v2.length);
  }, 120_000);

  it('with fail percent 100 on echo-v2-a (a reload restarts its app), its share shows as errors', async () => {
    const file = path.join(dir, 'cluster.yaml');
    const text = await readFile(file, 'utf8');
    const v2Annotations = `annotations: { meshdeck.l7mp.io/app: grpc-echo, meshdeck.l7mp.io/app-port: '${port}' }\nstatus: { podIP: ${V2} }`;
    expect(text).toContain(v2Annotations);
    await writeFile(
      file,
      text.replace(
        v2Annotations,
        v2Annotations.replace(' }\n', ", meshdeck.l7mp.io/app-fail-percent: '100' }\n"),
      ),
    );
    await cp!.reload();
    // Counted from the first refusal of the restarted app: before it, calls reached the old one.
    const failing = (r: DemoRecord) => r.error?.includes('fails 100% of calls');
    await waitFor(
      'a call failed by the broken canary',
      () => cp!.appReceived('grpc-client').some(failing),
      30_000,
      100,
    );
    const first = cp!.appReceived('grpc-client').findIndex(failing);
    const calls = await nextCalls(cp!, first, N);
    const errors = calls.filter((c) => c.error);
    const ok = calls.filter((c) => !c.error);
    expect(new Set(ok.map((c) => c.payload))).toEqual(new Set(['echo-v1-a']));
    expect(new Set(errors.map((c) => c.from))).toEqual(new Set([`${V2}:${port}`]));
    expect(errors.every(failing)).toBe(true);
    expect(errors.length / N).toBeGreaterThan(0.1);
    expect(errors.length / N).toBeLessThan(0.3);
  }, 120_000);
});

describe('the grpc-client app needs plaintext ADS', () => {
  let tmp: string;
  let cp: ControlPlane | undefined;

  afterAll(async () => {
    await cp?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  }, 30_000);

  it('with mTLS (the default) it is not started, and a diagnostic on the Pod says to use --xds-insecure', async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'md-grpc-demo-tls-'));
    const { dir } = await canaryCopy(tmp);
    cp = await ControlPlane.startLocal({
      meshDir: dir,
      stateDir: path.join(tmp, 'state'),
      logger: recorder().logger,
      watch: false,
      xds: { host: '127.0.0.1', port: await freePort() },
    });
    const d = cp.live.get().diagnostics.filter((x) => x.code === 'local-app-not-started');
    expect(d).toEqual([
      expect.objectContaining({
        severity: 'warning',
        object: { kind: 'Pod', namespace: 'default', name: 'grpc-client' },
        path: 'metadata.annotations["meshdeck.l7mp.io/app"]',
        message: expect.stringMatching(/mTLS.*client certificate.*serve with --xds-insecure/),
      }),
    ]);
    // The echo apps run; the client does not (a reload does not start it either).
    await cp.reload();
    expect(cp.appReceived('grpc-client')).toEqual([]);
    expect(cp.live.get().proxies['default/grpc-client']?.xds?.connected ?? false).toBe(false);
  }, 120_000);
});
