/**
 * End to end with the real proxyless client: @grpc/grpc-js-xds 1.14.1 in its own process, the ADS
 * server in another (forked), unary RPCs to @grpc/grpc-js backends on 127.0.0.1 ephemeral ports.
 * Snapshots are built by hand (testing/demoSnapshot.ts), as in shared/notes/xds-grpc-js-xds.md §2.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProxyStatus } from './AdsServer';
import { TypeUrls } from './envoyProtos';
import {
  type Backend,
  type Child,
  forkAdsServer,
  forkXdsClient,
  startBackend,
  waitFor,
} from './testing/children';
import { demoSnapshot } from './testing/demoSnapshot';

const NODE = 'demo/client-1';

interface CallResult {
  byBackend: Record<string, number>;
  failures: string[];
}

describe('ADS server with a real grpc-js-xds client', () => {
  let ads: Child;
  let client: Child;
  let a: Backend, b: Backend, c: Backend;
  let adsPort = 0;

  const set = (weights: [number, number], bPorts?: number[]) =>
    ads.request<Record<string, string>>('set', {
      nodeId: NODE,
      snapshot: demoSnapshot({
        clusters: [
          { name: 'cluster-a', weight: weights[0], ports: [a.port] },
          { name: 'cluster-b', weight: weights[1], ports: bPorts ?? [b.port] },
        ],
      }),
    });
  const status = async () => (await ads.request<ProxyStatus[]>('status')).find((s) => s.nodeId === NODE);
  const synced = (versions: Record<string, string>, type: string) => async () => {
    const s = await status();
    const t = s?.types[type as keyof ProxyStatus['types']];
    return (
      t?.lastAckedVersion === versions[type] &&
      s?.status[type === TypeUrls.route ? 'RDS' : 'EDS'] === 'SYNCED'
    );
  };
  const call = (n: number) => client.request<CallResult>('call', { n, concurrency: 8 }, 30_000);

  beforeAll(async () => {
    [a, b, c] = await Promise.all([
      startBackend('backend-a'),
      startBackend('backend-b'),
      startBackend('backend-c'),
    ]);
    ads = await forkAdsServer();
    adsPort = await ads.request<number>('listen', { options: { insecure: true } });
    await set([80, 20]);
    client = await forkXdsClient(adsPort, NODE);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([client?.kill(), ads?.kill()]);
    await Promise.all([a?.stop(), b?.stop(), c?.stop()]);
  });

  it('splits 80/20 within ±5 points over 1,200 RPCs, and reports SYNCED', async () => {
    const r = await call(1200);
    expect(r.failures).toEqual([]);
    const share = (r.byBackend['backend-a'] ?? 0) / 1200;
    expect(share).toBeGreaterThan(0.75);
    expect(share).toBeLessThan(0.85);
    const s = await status();
    expect(s?.status).toEqual({ LDS: 'SYNCED', RDS: 'SYNCED', CDS: 'SYNCED', EDS: 'SYNCED' });
    expect(s?.identity).toBe(NODE);
  });

  it('follows a move to 50/50 within 1 s with no failed RPC', async () => {
    await client.request('collect');
    await client.request('start', { concurrency: 4 });
    await new Promise((r) => setTimeout(r, 200));
    const t0 = Date.now();
    const v = await set([50, 50]);
    await waitFor('RDS 50/50 ACKed', synced(v, TypeUrls.route), 1000, 10);
    const ackedAfter = Date.now() - t0;
    await new Promise((r) => setTimeout(r, 300));
    await client.request('stop');
    const records = await client.request<[number, string][]>('collect');
    expect(records.filter(([, x]) => x.startsWith('ERR')).slice(0, 3)).toEqual([]);
    expect(ackedAfter).toBeLessThan(1000);
    const errs = records.filter(([, x]) => x.startsWith('ERR')).length;
    console.info(
      `50/50: set -> RDS ACK ${ackedAfter} ms; ${records.length} RPCs during the change, ${errs} failed`,
    );
    const r = await call(1200);
    expect(r.failures).toEqual([]);
    const share = (r.byBackend['backend-a'] ?? 0) / 1200;
    expect(share).toBeGreaterThan(0.45);
    expect(share).toBeLessThan(0.55);
  });

  it('uses an added endpoint, then stops using it once removed', async () => {
    const v1 = await set([50, 50], [b.port, c.port]);
    await waitFor('EDS with backend-c ACKed', synced(v1, TypeUrls.endpoint), 2000, 10);
    const r1 = await call(600);
    expect(r1.failures).toEqual([]);
    expect(r1.byBackend['backend-c'] ?? 0).toBeGreaterThan(50);
    const v2 = await set([50, 50], [b.port]);
    await waitFor('EDS without backend-c ACKed', synced(v2, TypeUrls.endpoint), 2000, 10);
    await new Promise((r) => setTimeout(r, 50));
    const r2 = await call(600);
    expect(r2.failures).toEqual([]);
    expect(r2.byBackend['backend-c'] ?? 0).toBe(0);
    expect(r2.byBackend['backend-b'] ?? 0).toBeGreaterThan(200);
  });

  it('shows a NACK (weights summing to 0) with its error_detail; the client keeps the last good config', async () => {
    const good = (await status())!.types[TypeUrls.route]!.lastAckedVersion;
    const bad = await set([0, 0]);
    const s = await waitFor(
      'RDS NACKED',
      async () => {
        const x = await status();
        return x?.status.RDS === 'NACKED' ? x : undefined;
      },
      3000,
    );
    const rds = s.types[TypeUrls.route]!;
    expect(rds.lastSentVersion).toBe(bad[TypeUrls.route]);
    expect(rds.lastAckedVersion).toBe(good);
    expect(rds.lastNack?.version).toBe(bad[TypeUrls.route]);
    expect(rds.lastNack?.errorDetail.message).toContain('sum of weights is 0');
    // Not resent: the NACK stays the last word for this version.
    await new Promise((r) => setTimeout(r, 200));
    expect((await status())!.types[TypeUrls.route]!.lastSentNonce).toBe(rds.lastSentNonce);
    const r = await call(600);
    expect(r.failures).toEqual([]);
    const share = (r.byBackend['backend-a'] ?? 0) / 600;
    expect(share).toBeGreaterThan(0.4);
    expect(share).toBeLessThan(0.6);
    // A fixed version goes out and is ACKed.
    const fixed = await set([80, 20]);
    await waitFor('fixed RDS ACKed', synced(fixed, TypeUrls.route), 2000, 10);
  });

  it('refuses an inconsistent snapshot (dangling EDS name) and keeps the previous one', async () => {
    const snap = demoSnapshot({ clusters: [{ name: 'cluster-a', weight: 1, ports: [a.port] }] });
    snap.endpoints = [];
    await expect(ads.request('set', { nodeId: NODE, snapshot: snap })).rejects.toThrow(
      /EDS service names referenced by clusters but missing: cluster-a-eds/,
    );
    const r = await call(200);
    expect(r.failures).toEqual([]);
    expect(Object.keys(r.byBackend).sort()).toEqual(['backend-a', 'backend-b']);
  });

  it('after a server restart the client reconnects and converges', async () => {
    await ads.request('stop');
    // The client keeps its cached config while the server is gone.
    const during = await call(100);
    expect(during.failures).toEqual([]);
    await ads.request('listen', { options: { insecure: true, port: adsPort } });
    await waitFor('client reconnected', async () => (await status())?.status.LDS === 'SYNCED', 15_000, 50);
    const v = await set([0, 100]);
    await waitFor('RDS 0/100 ACKed', synced(v, TypeUrls.route), 2000, 10);
    const r = await call(300);
    expect(r.failures).toEqual([]);
    expect(r.byBackend).toEqual({ 'backend-b': 300 });
  }, 30_000);
});
