/**
 * The mTLS ADS server against gRPC Go's own xDS client (testing/grpcGoClient.ts), the real client that
 * presents a certificate: `meshdeck xds serve`'s path (serveXdsDir) on examples/grpc-canary over mTLS,
 * the client's files from writeProxyBootstrap (what `meshdeck xds bootstrap` writes: its gRPC bootstrap
 * with gRFC A65 `tls` credentials is otherwise only checked for shape), real backends on the example's
 * pod addresses (moved to .81/.82 so serveXdsDir.test's can run beside). The control plane is in this
 * process, the client in its own.
 */
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MeshMetrics } from '../metrics/MeshMetrics';
import { sample } from '../metrics/testing/promText';
import { CertificateManager } from './CertificateManager';
import { serveXdsDir, type XdsDirServer } from './serveXdsDir';
import { type Backend, startBackend } from './testing/children';
import { grpcGoClientBinary, runGrpcGoClient } from './testing/grpcGoClient';
import { writeProxyBootstrap } from './writeProxyBootstrap';
import { evenGrpcCanarySplit } from './testing/evenGrpcCanary';

const N = 1000;
const CLIENT = 'default/grpc-client';

let dir: string;
let served: XdsDirServer | undefined;
const backends: Backend[] = [];
const warnings: string[] = [];
const metrics = new MeshMetrics({ version: '0.0.0-test', mode: 'local', processMetrics: false });

beforeAll(async () => {
  await grpcGoClientBinary();
  dir = await mkdtemp(path.join(os.tmpdir(), 'meshdeck-xds-go-'));
  const mesh = path.join(dir, 'mesh');
  await cp(path.resolve(__dirname, '../../examples/grpc-canary'), mesh, { recursive: true });
  for (const f of await readdir(mesh)) {
    const file = path.join(mesh, f);
    const text = await readFile(file, 'utf8');
    await writeFile(file, text.replaceAll('127.0.0.71', '127.0.0.81').replaceAll('127.0.0.72', '127.0.0.82'));
  }
  backends.push(await startBackend('echo-v1', '127.0.0.81:50051'));
  backends.push(await startBackend('echo-v2', '127.0.0.82:50051'));
  served = await serveXdsDir({
    dir: mesh,
    host: '127.0.0.1',
    port: 0,
    tlsDir: path.join(dir, 'ca'),
    logger: { info: () => {}, warn: (m) => warnings.push(m) },
    metrics,
  });
}, 600_000);

afterAll(async () => {
  await served?.stop();
  await Promise.all(backends.map((b) => b.stop()));
  if (dir) await rm(dir, { recursive: true, force: true });
}, 20_000);

describe('gRPC Go over mTLS ADS, configured by `meshdeck xds bootstrap` files', () => {
  it('connects with its certificate and splits 80/20 (±5 points) over 1,000 calls, then 50/50 after an edit', async () => {
    const files = await writeProxyBootstrap({
      nodeId: CLIENT,
      caDir: path.join(dir, 'ca'),
      out: path.join(dir, 'client'),
      xds: { host: '127.0.0.1', port: served!.port },
      validityMs: 3600_000,
    });
    const first = await runGrpcGoClient({ bootstrap: files.files.grpc, target: 'xds:///echo', count: N });
    expect(first.errors, first.stderr).toEqual([]);
    expect(first.code).toBe(0);
    expect(Math.abs((first.byBackend['echo-v1'] ?? 0) / N - 0.8)).toBeLessThanOrEqual(0.05);
    expect((first.byBackend['echo-v1'] ?? 0) + (first.byBackend['echo-v2'] ?? 0)).toBe(N);

    const meshFile = path.join(dir, 'mesh', 'mesh.yaml');
    await evenGrpcCanarySplit(meshFile);
    await served!.reload();
    const after = await runGrpcGoClient({ bootstrap: files.files.grpc, target: 'xds:///echo', count: N });
    expect(after.errors, after.stderr).toEqual([]);
    expect(Math.abs((after.byBackend['echo-v1'] ?? 0) / N - 0.5)).toBeLessThanOrEqual(0.05);
    expect(warnings).toEqual([]);
  }, 120_000);

  it('reports its load (LRS) to the ADS server over the same mTLS: every call, counted by its cluster', async () => {
    const files = path.join(dir, 'client', 'grpc-bootstrap.json');
    const count = async (backend: string) =>
      sample((await metrics.scrape()).body, 'meshdeck_xds_client_requests_total', {
        cluster: `echo-split.default.target.cluster.local/${backend}`,
        result: 'success',
      }) ?? 0;
    const before = { v1: await count('echo-v1'), v2: await count('echo-v2') };
    // The server asks for a report every 2 s: hold the channel open past one.
    const r = await runGrpcGoClient({ bootstrap: files, target: 'xds:///echo', count: 300, holdMs: 4500 });
    expect(r.errors, r.stderr).toEqual([]);
    const reported = { v1: (await count('echo-v1')) - before.v1, v2: (await count('echo-v2')) - before.v2 };
    expect(reported).toEqual({ v1: r.byBackend['echo-v1'] ?? 0, v2: r.byBackend['echo-v2'] ?? 0 });
  }, 60_000);

  it('gets nothing with a certificate from another CA: every call fails, no backend answers', async () => {
    const rogueCa = path.join(dir, 'rogue-ca');
    await new CertificateManager({ dir: rogueCa }).root();
    const rogue = await writeProxyBootstrap({
      nodeId: CLIENT,
      caDir: rogueCa,
      out: path.join(dir, 'rogue'),
      xds: { host: '127.0.0.1', port: served!.port },
      validityMs: 3600_000,
    });
    // Trusting the real server (its root), presenting the rogue certificate: the server must refuse.
    const realRoot = await readFile(path.join(dir, 'ca', 'root.crt'));
    await writeFile(rogue.files.rootCa, realRoot);
    const r = await runGrpcGoClient({
      bootstrap: rogue.files.grpc,
      target: 'xds:///echo',
      count: 2,
      timeoutMs: 4000,
    });
    expect(r.byBackend).toEqual({});
    expect(r.code).toBe(1);
    expect(r.errors).toHaveLength(2);
    expect(r.errors[0]).toMatch(/DeadlineExceeded|Unavailable/);
  }, 60_000);
});
