/**
 * serveXdsDir against a real grpc-js-xds client process: examples/grpc-canary served from a temp
 * dir, two real backends on the example's pod addresses, 80/20 then (after editing the mesh file)
 * 50/50, with no failed RPC. The client runs in its own process; the control plane in this one.
 */
import { cp, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as grpc from '@grpc/grpc-js';
import { CertificateManager } from './CertificateManager';
import { TypeUrls } from './envoyProtos';
import { type Backend, type Child, forkXdsClient, startBackend, waitFor } from './testing/children';
import { connectRawAds, type RawAdsClient } from './testing/rawAdsClient';
import { serveXdsDir, type XdsDirServer } from './serveXdsDir';
import { evenGrpcCanarySplit } from './testing/evenGrpcCanary';

interface CallResult {
  byBackend: Record<string, number>;
  failures: string[];
}

const N = 2000;

describe('serveXdsDir with a grpc-js-xds client', () => {
  let dir: string;
  let served: XdsDirServer | undefined;
  let client: Child | undefined;
  const backends: Backend[] = [];
  const warnings: string[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'meshdeck-xds-dir-'));
    await cp(path.resolve(__dirname, '../../examples/grpc-canary'), dir, { recursive: true });
    backends.push(await startBackend('echo-v1', '127.0.0.71:50051'));
    backends.push(await startBackend('echo-v2', '127.0.0.72:50051'));
    served = await serveXdsDir({
      dir,
      host: '127.0.0.1',
      port: 0,
      insecure: true,
      logger: { info: () => {}, warn: (m) => warnings.push(m) },
    });
    client = await forkXdsClient(served.port, 'default/grpc-client', 'xds:///echo');
  }, 60_000);

  afterAll(async () => {
    await client?.kill();
    await served?.stop();
    await Promise.all(backends.map((b) => b.stop()));
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 20_000);

  it('splits 80/20, then follows an edit of the mesh file to 50/50 with no failed RPC', async () => {
    expect(served!.cache).toBeDefined();
    // The first RPCs wait for the xDS config; bounded by the call deadline.
    const first = await client!.request<CallResult>(
      'call',
      { n: N, concurrency: 16, deadlineMs: 10_000 },
      60_000,
    );
    expect(first.failures).toEqual([]);
    const v1 = (first.byBackend['echo-v1'] ?? 0) / N;
    expect(v1).toBeGreaterThan(0.75);
    expect(v1).toBeLessThan(0.85);

    const meshFile = path.join(dir, 'mesh.yaml');

    // Keep calling across the edit: not one RPC may fail while the config changes.
    await client!.request('start', { concurrency: 4, deadlineMs: 5000 });
    await evenGrpcCanarySplit(meshFile);
    let settled: [number, string][] = [];
    const errors: string[] = [];
    await waitFor(
      'the client to follow 50/50',
      async () => {
        const recs = await client!.request<[number, string][]>('collect');
        errors.push(...recs.filter(([, b]) => b.startsWith('ERR:')).map(([, b]) => b));
        settled.push(...recs);
        // Look at the last 1,000 RPCs only once they are all after the change could have landed.
        if (settled.length > 4000) settled = settled.slice(-4000);
        const last = settled.slice(-1000);
        if (last.length < 1000) return false;
        const share = last.filter(([, b]) => b === 'echo-v1').length / last.length;
        return Math.abs(share - 0.5) <= 0.05;
      },
      20_000,
      200,
    );
    await client!.request('stop');
    const tail = await client!.request<[number, string][]>('collect');
    errors.push(...tail.filter(([, b]) => b.startsWith('ERR:')).map(([, b]) => b));
    expect(errors).toEqual([]);

    const after = await client!.request<CallResult>(
      'call',
      { n: N, concurrency: 16, deadlineMs: 5000 },
      60_000,
    );
    expect(after.failures).toEqual([]);
    const v1After = (after.byBackend['echo-v1'] ?? 0) / N;
    expect(v1After).toBeGreaterThan(0.45);
    expect(v1After).toBeLessThan(0.55);
    expect(warnings.filter((w) => !w.includes('WITHOUT TLS'))).toEqual([]);
  }, 120_000);
});

describe('serveXdsDir with TLS from a CertificateManager', () => {
  let dir: string;
  let served: XdsDirServer | undefined;
  let raw: RawAdsClient | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'meshdeck-xds-dir-tls-'));
    await cp(path.resolve(__dirname, '../../examples/grpc-canary'), path.join(dir, 'mesh'), {
      recursive: true,
    });
    served = await serveXdsDir({
      dir: path.join(dir, 'mesh'),
      host: '127.0.0.1',
      port: 0,
      tlsDir: path.join(dir, 'ca'),
      logger: { info: () => {}, warn: () => {} },
    });
  }, 60_000);

  afterAll(async () => {
    raw?.close();
    await served?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 20_000);

  it('serves a proxy presenting a certificate for its node id (issued from the same CA)', async () => {
    const cm = new CertificateManager({ dir: path.join(dir, 'ca') });
    const leaf = await cm.issue('default/grpc-client', 600_000);
    const root = await cm.root();
    raw = connectRawAds({
      address: `127.0.0.1:${served!.port}`,
      credentials: grpc.credentials.createSsl(root.certificateChain, leaf.privateKey, leaf.certificateChain),
      channelOptions: { 'grpc.ssl_target_name_override': 'localhost', 'grpc.default_authority': 'localhost' },
      nodeId: 'default/grpc-client',
      subscriptions: [[TypeUrls.listener, []]],
      decodeNames: true,
    });
    const lds = await waitFor('LDS over mTLS', () => raw!.latest.get(TypeUrls.listener), 10_000);
    expect(lds.names).toEqual(['echo']);
  }, 30_000);
});
