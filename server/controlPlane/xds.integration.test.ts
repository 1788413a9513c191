/**
 * The control plane's ADS server on the local mesh of examples/grpc-canary (a proxyless gRPC client
 * pod and two backend Services), with real parts only: a @grpc/grpc-js-xds client in its own process
 * dials xds:///echo, real gRPC backends answer on the example's pod addresses (on free ports written
 * into a copy of the example), raw ADS streams NACK and present certificates.
 */
import { X509Certificate } from 'node:crypto';
import { cp as copyDir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CertificateManager } from '../xds/CertificateManager';
import { TypeUrls } from '../xds/envoyProtos';
import { type Backend, type Child, forkXdsClient, startBackend, waitFor } from '../xds/testing/children';
import { connectRawAds, type RawAdsClient } from '../xds/testing/rawAdsClient';
import { runMeshdeck } from '../testing/runMeshdeck';
import { freePort } from '../testing/startL7mp';
import { withoutDemoApps } from '../testing/withoutDemoApps';
import { MeshMetrics } from '../metrics/MeshMetrics';
import { sample } from '../metrics/testing/promText';
import { ControlPlane } from './ControlPlane';
import type { ProxyLiveState, XdsTypeName } from './liveState';
import { xdsTransport } from '@/lib/console/xdsTransport';
import { withTimeout } from '@/lib/util/withTimeout';
import { evenGrpcCanarySplit } from '../xds/testing/evenGrpcCanary';

const REPO = path.resolve(__dirname, '..', '..');
const CLIENT = 'default/grpc-client';
const ROUTE = 'echo.default.virtualservice.cluster.local';
const TYPES: XdsTypeName[] = ['LDS', 'RDS', 'CDS', 'EDS'];

interface CallResult {
  byBackend: Record<string, number>;
  failures: string[];
}

/**
 * A copy of examples/grpc-canary whose backend Services target `port` (a free one, not 50051), without
 * its demo apps: this test brings its own client and backends (the apps would bind 127.0.0.71-72:50051,
 * which other tests use, and open a second ADS stream for the client's node id).
 */
async function canaryCopy(tmp: string, port?: number): Promise<string> {
  const dir = path.join(tmp, 'mesh');
  await copyDir(path.join(REPO, 'examples', 'grpc-canary'), dir, { recursive: true });
  const file = path.join(dir, 'cluster.yaml');
  let text = withoutDemoApps(await readFile(file, 'utf8'));
  expect(text).not.toMatch(/^[^#]*meshdeck\.l7mp\.io\/app/m);
  if (port !== undefined) {
    text = text.replaceAll('targetPort: 50051', `targetPort: ${port}`);
    expect(text.split(`targetPort: ${port}`)).toHaveLength(3);
  }
  await writeFile(file, text);
  return dir;
}

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

function recorder() {
  const lines: string[] = [];
  const push = (...a: unknown[]) => lines.push(a.map(String).join(' '));
  return { lines, logger: { info: () => {}, warn: push, error: push } };
}

describe('the control plane serves xDS to a proxyless gRPC client (plaintext ADS)', () => {
  let tmp: string;
  let dir: string;
  let cp: ControlPlane | undefined;
  let client: Child | undefined;
  let port: number;
  const backends: Backend[] = [];
  const log = recorder();
  const proxy = (): ProxyLiveState | undefined => cp!.live.get().proxies[CLIENT];
  const allSynced = () => {
    const x = proxy()?.xds;
    return x?.connected && TYPES.every((t) => x.types[t].status === 'SYNCED') ? x : undefined;
  };
  const share = async (n: number): Promise<number> => {
    const r = await client!.request<CallResult>('call', { n, concurrency: 8, deadlineMs: 10_000 }, 90_000);
    expect(r.failures).toEqual([]);
    return (r.byBackend['echo-v1'] ?? 0) / n;
  };

  beforeAll(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'md-xds-cp-'));
    // A free port on the example's pod addresses, never the 50051 other tests bind there.
    backends.push(...(await startBackends()));
    dir = await canaryCopy(tmp, backends[0]!.port);
    port = await freePort();
    cp = await ControlPlane.startLocal({
      meshDir: dir,
      stateDir: path.join(tmp, 'state'),
      logger: log.logger,
      xds: { host: '127.0.0.1', port, insecure: true },
    });
    client = await forkXdsClient(port, CLIENT, 'xds:///echo');
  }, 120_000);

  afterAll(async () => {
    await client?.kill();
    await cp?.stop();
    await Promise.all(backends.map((b) => b.stop()));
    if (tmp) await rm(tmp, { recursive: true, force: true });
  }, 30_000);

  it('lists the gRPC client pod with what xDS serves it, and says where ADS listens (plaintext, warned)', () => {
    const s = cp!.live.get();
    expect(s.xds).toEqual({ listen: `127.0.0.1:${port}`, tls: false });
    expect(cp!.xdsServer).toEqual({ listen: `127.0.0.1:${port}`, port, tls: false });
    const p = proxy()!;
    expect(p.role).toBe('grpc');
    expect(p.address).toBe('127.0.0.70');
    expect(p.process).toBeUndefined();
    expect(p.apiUrl).toBeUndefined();
    expect(p.listeners).toEqual(['echo']);
    expect(p.routes).toEqual([ROUTE]);
    expect(p.clusters).toEqual([
      {
        name: 'echo-split.default.target.cluster.local/echo-v1',
        protocol: 'gRPC',
        endpoints: [
          {
            name: `echo-split.default.target.cluster.local/echo-v1@127.0.0.71:${backends[0]!.port}`,
            address: `127.0.0.71:${backends[0]!.port}`,
          },
        ],
      },
      {
        name: 'echo-split.default.target.cluster.local/echo-v2',
        protocol: 'gRPC',
        endpoints: [
          {
            name: `echo-split.default.target.cluster.local/echo-v2@127.0.0.72:${backends[1]!.port}`,
            address: `127.0.0.72:${backends[1]!.port}`,
          },
        ],
      },
    ]);
    expect(s.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(log.lines.some((l) => l.includes('WITHOUT TLS'))).toBe(true);
  });

  it('the grpc-js-xds client gets answers split 80/20; its LDS, RDS, CDS and EDS show SYNCED', async () => {
    const v1 = await share(1000);
    expect(v1).toBeGreaterThan(0.74);
    expect(v1).toBeLessThan(0.86);
    const x = await waitFor('all four types SYNCED in the live state', allSynced, 10_000);
    expect(x.nodeId).toBe(CLIENT);
    expect(x.protocol).toBe('sotw');
    for (const t of TYPES) {
      expect(x.types[t].lastAckedVersion).toBe(x.types[t].lastSentVersion);
      expect(x.types[t].lastNack).toBeUndefined();
    }
    expect(x.types.LDS.subscribed).toEqual(['echo']);
    expect(x.types.RDS.subscribed).toEqual([ROUTE]);
    const p = proxy()!;
    expect([p.phase, p.inSync, p.reachable]).toEqual(['synced', true, true]);
  }, 120_000);

  it('an edit of the split weights is pushed as a new RDS version, ACKed, and followed by the client', async () => {
    const before = (await waitFor('synced before the edit', allSynced, 10_000)).types;
    const meshFile = path.join(dir, 'mesh.yaml');
    await evenGrpcCanarySplit(meshFile);

    const after = await waitFor(
      'a new RDS version ACKed',
      () => {
        const x = allSynced();
        return x && x.types.RDS.lastAckedVersion !== before.RDS.lastAckedVersion ? x.types : undefined;
      },
      30_000,
      50,
    );
    // Only the route changed: the cache pushed nothing else.
    for (const t of ['LDS', 'CDS', 'EDS'] as const)
      expect(after[t].lastAckedVersion).toBe(before[t].lastAckedVersion);
    const v1 = await share(1000);
    expect(v1).toBeGreaterThan(0.42);
    expect(v1).toBeLessThan(0.58);
  }, 120_000);

  it('a NACK shows as NACKED with its message; when the NACKing stream closes the client stream shows again', async () => {
    const message = 'test: this route is rejected on purpose';
    let raw: RawAdsClient | undefined;
    try {
      // A second stream with the client's node id (plaintext ADS trusts it): the newest is shown.
      raw = connectRawAds({
        address: `127.0.0.1:${port}`,
        nodeId: CLIENT,
        subscriptions: [
          [TypeUrls.listener, ['echo']],
          [TypeUrls.route, [ROUTE]],
        ],
        nack: (r) => (r.typeUrl === TypeUrls.route ? message : undefined),
      });
      const x = await waitFor(
        'RDS NACKED in the live state',
        () => {
          const s = proxy()?.xds;
          return s?.types.RDS.status === 'NACKED' ? s : undefined;
        },
        15_000,
      );
      expect(x.types.RDS.lastNack?.errorDetail).toEqual({ code: grpc.status.INVALID_ARGUMENT, message });
      expect(x.types.RDS.lastNack?.version).toBe(x.types.RDS.lastSentVersion);
      expect(x.types.RDS.lastAckedVersion).toBeUndefined();
      expect(x.types.LDS.status).toBe('SYNCED');
      expect([x.types.CDS.status, x.types.EDS.status]).toEqual(['NOT SENT', 'NOT SENT']);
      const p = proxy()!;
      expect([p.phase, p.inSync]).toEqual(['nacked', false]);
      expect(log.lines.some((l) => l.includes(`NACKed RDS`) && l.includes(message))).toBe(true);
    } finally {
      raw?.close();
    }
    const back = await waitFor('the grpc-js-xds stream shown again', allSynced, 15_000);
    expect(back.types.RDS.lastNack).toBeUndefined();
    expect(proxy()!.phase).toBe('synced');
  }, 60_000);

  it('a backend pod going unready takes its split entry out (pushed and ACKed), and back when ready', async () => {
    const before = (await waitFor('synced', allSynced, 10_000)).types;
    const clusters = () => proxy()!.clusters.map((c) => c.name.split('/')[1]);
    cp!.setPodReady('echo-v2-a', false);
    // The engine gives an empty split entry's share to the others: route, clusters and endpoints change.
    expect(clusters()).toEqual(['echo-v1']);
    const gone = await waitFor(
      'new RDS, CDS and EDS versions ACKed',
      () => {
        const x = allSynced();
        const changed = (['RDS', 'CDS', 'EDS'] as const).every(
          (t) => x?.types[t].lastAckedVersion !== before[t].lastAckedVersion,
        );
        return x && changed ? x.types : undefined;
      },
      15_000,
    );
    expect(gone.LDS.lastAckedVersion).toBe(before.LDS.lastAckedVersion);
    expect(await share(200)).toBe(1);

    cp!.setPodReady('echo-v2-a', true);
    expect(clusters()).toEqual(['echo-v1', 'echo-v2']);
    // The same content has the same versions: the client is back on exactly what it had.
    await waitFor(
      'the versions of before ACKed again',
      () => {
        const x = allSynced();
        return x && TYPES.every((t) => x.types[t].lastAckedVersion === before[t].lastAckedVersion);
      },
      15_000,
    );
    const v1 = await share(1000);
    expect(v1).toBeGreaterThan(0.42);
    expect(v1).toBeLessThan(0.58);
  }, 120_000);
});

describe('the control plane serves ADS over mTLS by default', () => {
  let tmp: string;
  let cp: ControlPlane | undefined;
  let port: number;
  const clients: RawAdsClient[] = [];
  const log = recorder();
  const metrics = new MeshMetrics({ version: '0.0.0-test', mode: 'local', processMetrics: false });
  const certificates = async (ends: string) =>
    sample((await metrics.scrape()).body, 'meshdeck_xds_client_certificates', { ends, renewal: 'manual' });

  beforeAll(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'md-xds-cp-tls-'));
    const dir = await canaryCopy(tmp);
    port = await freePort();
    cp = await ControlPlane.startLocal({
      meshDir: dir,
      stateDir: path.join(tmp, 'state'),
      logger: log.logger,
      xds: { host: '127.0.0.1', port },
      metrics,
    });
  }, 120_000);

  afterAll(async () => {
    for (const c of clients) c.close();
    await cp?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  }, 30_000);

  it('refuses a client without a certificate and serves one with a certificate from its CA', async () => {
    const caDir = path.join(tmp, 'state', 'xds-ca');
    expect(cp!.xdsServer).toEqual({ listen: `127.0.0.1:${port}`, port, tls: true, caDir });
    expect(cp!.live.get().xds).toEqual({ listen: `127.0.0.1:${port}`, tls: true });
    expect(log.lines.filter((l) => l.includes('WITHOUT TLS'))).toEqual([]);

    const cm = new CertificateManager({ dir: caDir });
    const root = await cm.root();
    const connect = (credentials: grpc.ChannelCredentials) => {
      const c = connectRawAds({
        address: `127.0.0.1:${port}`,
        credentials,
        // Verify the server certificate by its DNS SAN (an IP address as TLS ServerName is deprecated).
        channelOptions: {
          'grpc.ssl_target_name_override': 'localhost',
          'grpc.default_authority': 'localhost',
        },
        nodeId: CLIENT,
        subscriptions: [[TypeUrls.listener, []]],
        decodeNames: true,
      });
      clients.push(c);
      return c;
    };

    const noCert = connect(grpc.credentials.createSsl(root.certificateChain));
    const plaintext = connect(grpc.credentials.createInsecure());
    for (const c of [noCert, plaintext]) {
      const end = await withTimeout(c.ended, 15_000, 'a stream without a client certificate');
      expect(end.code).toBe(grpc.status.UNAVAILABLE);
      expect(c.latest.size).toBe(0);
    }
    expect(cp!.live.get().proxies[CLIENT]!.phase).toBe('not-connected');
    // No stream presented a certificate.
    expect(await certificates('later')).toBe(0);

    // The same server answers a client that presents a certificate for its node id, issued from the
    // server's own CA by `meshdeck xds bootstrap` as a user would.
    const out = path.join(tmp, 'bootstrap');
    const issued = await runMeshdeck(['xds', 'bootstrap', CLIENT, '--tls-dir', caDir, '--out', out]);
    expect(issued.stderr).toBe('');
    expect(issued.code).toBe(0);
    const [key, chain] = await Promise.all(['key.pem', 'cert.pem'].map((f) => readFile(path.join(out, f))));
    const good = connect(grpc.credentials.createSsl(root.certificateChain, key!, chain!));
    const lds = await waitFor('LDS over mTLS', () => good.latest.get(TypeUrls.listener), 15_000);
    expect(lds.names).toEqual(['echo']);
    const x = await waitFor(
      'LDS SYNCED in the live state',
      () => {
        const s = cp!.live.get().proxies[CLIENT]?.xds;
        return s?.types.LDS.status === 'SYNCED' ? s : undefined;
      },
      10_000,
    );
    expect(x.identity).toBe(CLIENT);
    // The live state names the certificate the stream presented, and the proxies page says when it ends.
    expect(x.certificate?.serialNumber).toBe(new X509Certificate(chain!).serialNumber);
    expect(x.certificate?.renewal).toBe('manual');
    // (Seen ten days before its end: the 30 days just started would read 29d or 30d by the millisecond.)
    const end = Date.parse(new X509Certificate(chain!).validTo);
    expect(end - Date.now()).toBeGreaterThan(29.9 * 24 * 3600_000);
    expect(xdsTransport(x, end - 10 * 24 * 3600_000)).toMatchObject({
      text: 'mTLS · certificate ends in 10d',
      tone: 'ok',
    });
    // Prometheus counts it by when it ends, for an alert before a reconnect would be refused.
    for (const [ends, n] of Object.entries({ expired: 0, 'within-1d': 0, 'within-7d': 0, later: 1 }))
      expect(await certificates(ends)).toBe(n);
  }, 60_000);
});
