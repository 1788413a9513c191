/**
 * Load reports (LRS) through the local mesh's control plane, with real parts only: a copy of
 * examples/grpc-canary (moved to addresses of its own, without its demo apps), a @grpc/grpc-js-xds
 * client in its own process calling xds:///echo at a steady rate, real gRPC backends, and the control
 * plane's plaintext ADS server asking for a report every 200 ms. The client's load shows in its live
 * state (`proxies[client].load`), in `cp.loadReports` and in meshdeck_xds_client_requests_total.
 */
import { cp as copyDir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoadTotals } from '@/lib/xds/loadReports';
import { MeshMetrics } from '../metrics/MeshMetrics';
import { sample } from '../metrics/testing/promText';
import { freePort } from '../testing/startL7mp';
import { withoutDemoApps } from '../testing/withoutDemoApps';
import { type Backend, type Child, forkXdsClient, startBackend, waitFor } from '../xds/testing/children';
import { ControlPlane } from './ControlPlane';
import type { ProxyLiveState } from './liveState';

const REPO = path.resolve(__dirname, '..', '..');
const CLIENT = 'default/grpc-client';
// 127.0.0.203-205: no other test uses them (the example's 127.0.0.70-72 are bound by other tests).
const CLIENT_POD = '127.0.0.203';
const V1 = '127.0.0.204';
const V2 = '127.0.0.205';
const V1_CLUSTER = 'echo-split.default.target.cluster.local/echo-v1';
const V2_CLUSTER = 'echo-split.default.target.cluster.local/echo-v2';
const RATE = 20;

interface CallResult {
  byBackend: Record<string, number>;
  failures: string[];
}

/** The two backends on one port (a split's entries share it), retried if someone holds it on V2. */
async function startBackends(v2Fails: () => boolean): Promise<Backend[]> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 5; attempt++) {
    const v1 = await startBackend('echo-v1', `${V1}:0`);
    try {
      return [v1, await startBackend('echo-v2', `${V2}:${v1.port}`, v2Fails)];
    } catch (e) {
      lastError = e;
      await v1.stop();
    }
  }
  throw lastError;
}

async function canaryCopy(tmp: string, port: number): Promise<string> {
  const dir = path.join(tmp, 'mesh');
  await copyDir(path.join(REPO, 'examples', 'grpc-canary'), dir, { recursive: true });
  const file = path.join(dir, 'cluster.yaml');
  const text = withoutDemoApps(await readFile(file, 'utf8'))
    .replaceAll('127.0.0.70', CLIENT_POD)
    .replaceAll('127.0.0.71', V1)
    .replaceAll('127.0.0.72', V2)
    .replaceAll('targetPort: 50051', `targetPort: ${port}`);
  expect(text.split(`targetPort: ${port}`)).toHaveLength(3);
  expect(text).toContain(V2);
  await writeFile(file, text);
  return dir;
}

/** A counter's value in the exposition text (0 when the series is not there). */
function counter(body: string, name: string, labels: Record<string, string>): number {
  return sample(body, name, labels) ?? 0;
}

describe('load reports through the control plane (plaintext ADS, real grpc-js-xds client)', () => {
  let tmp: string;
  let cp: ControlPlane | undefined;
  let client: Child | undefined;
  let v2Fails = false;
  const backends: Backend[] = [];
  const metrics = new MeshMetrics({ version: 'test', mode: 'local', processMetrics: false });
  const proxy = (): ProxyLiveState | undefined => cp!.live.get().proxies[CLIENT];
  const totals = (): Record<string, LoadTotals> => cp!.loadReports.between(0, Date.now());
  const done = (t: Record<string, LoadTotals>) =>
    Object.values(t).reduce((n, c) => n + c.succeeded + c.failed, 0);
  /** Waits (bounded) until no report adds a finished call for a few intervals: nothing is in flight. */
  const settled = async () => {
    let last = -1;
    await waitFor(
      'the reports to settle',
      () => {
        const now = done(totals());
        const same = now === last;
        last = now;
        return same;
      },
      15_000,
      800,
    );
  };

  beforeAll(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'md-lrs-cp-'));
    backends.push(...(await startBackends(() => v2Fails)));
    const dir = await canaryCopy(tmp, backends[0]!.port);
    const port = await freePort();
    cp = await ControlPlane.startLocal({
      meshDir: dir,
      stateDir: path.join(tmp, 'state'),
      logger: { info: () => {}, warn: () => {}, error: () => {} },
      metrics,
      xds: { host: '127.0.0.1', port, insecure: true, loadReportingIntervalMs: 200 },
    });
    client = await forkXdsClient(port, CLIENT, 'xds:///echo');
  }, 120_000);

  afterAll(async () => {
    await client?.kill();
    await cp?.stop();
    await Promise.all(backends.map((b) => b.stop()));
    if (tmp) await rm(tmp, { recursive: true, force: true });
  }, 30_000);

  it("shows the client's rps and success rate in its live state, per split cluster", async () => {
    expect(proxy()?.address).toBe(CLIENT_POD);
    expect(proxy()?.load).toBeUndefined();
    await client!.request('rate', { perSecond: RATE });
    const load = await waitFor(
      `the client's load at about ${RATE} RPCs a second over both clusters`,
      () => {
        const l = proxy()?.load;
        return l && l.clusters.length === 2 && Math.abs(l.rps - RATE) <= RATE * 0.3 ? l : undefined;
      },
      30_000,
      100,
    );
    expect(load.clusters.map((c) => c.cluster)).toEqual([V1_CLUSTER, V2_CLUSTER]);
    expect(load.successPercent).toBe(100);
    expect(load.clusters.every((c) => c.successPercent === 100 && c.failed === 0)).toBe(true);
    // The 80/20 split shows in the rates (loosely: a few seconds of calls).
    expect(load.clusters[0]!.rps).toBeGreaterThan(load.clusters[1]!.rps);

    // A recompute rebuilds the client's entry: the load it showed stays.
    cp!.setPodReady('echo-v1-a', true);
    expect(proxy()!.load).toEqual(load);
  }, 60_000);

  it('every call is counted once per cluster, in the store and in meshdeck_xds_client_requests_total', async () => {
    await client!.request('stop');
    await settled();
    const from = Date.now();
    const n = 200;
    const r = await client!.request<CallResult>('call', { n, concurrency: 8, deadlineMs: 5000 }, 60_000);
    expect(r.failures).toEqual([]);
    await waitFor(
      `reports of ${n} calls`,
      () => done(cp!.loadReports.between(from, Date.now())) >= n,
      20_000,
      50,
    );
    await settled();
    const t = cp!.loadReports.between(from, Date.now());
    expect(t).toEqual({
      [V1_CLUSTER]: {
        issued: r.byBackend['echo-v1'],
        succeeded: r.byBackend['echo-v1'],
        failed: 0,
        dropped: 0,
      },
      [V2_CLUSTER]: {
        issued: r.byBackend['echo-v2'],
        succeeded: r.byBackend['echo-v2'],
        failed: 0,
        dropped: 0,
      },
    });
    // The counter counts every report since the start, as the store does.
    const all = totals();
    const body = (await metrics.scrape()).body;
    const name = 'meshdeck_xds_client_requests_total';
    expect(counter(body, name, { cluster: V1_CLUSTER, result: 'success' })).toBe(all[V1_CLUSTER]!.succeeded);
    expect(counter(body, name, { cluster: V2_CLUSTER, result: 'success' })).toBe(all[V2_CLUSTER]!.succeeded);
    expect(all[V1_CLUSTER]!.succeeded).toBeGreaterThanOrEqual(r.byBackend['echo-v1']!);
    expect(counter(body, name, { cluster: V2_CLUSTER, result: 'error' })).toBe(0);
  }, 90_000);

  it('a failing canary shows as errors on its cluster: in live state and in the counter', async () => {
    v2Fails = true;
    try {
      await client!.request('rate', { perSecond: RATE });
      const load = await waitFor(
        'errors on the echo-v2 cluster in the live state',
        () => {
          const l = proxy()?.load;
          const v2 = l?.clusters.find((c) => c.cluster === V2_CLUSTER);
          return v2 && v2.failed > 0 ? l : undefined;
        },
        30_000,
        100,
      );
      expect(load.successPercent).toBeLessThan(100);
      expect(load.clusters.find((c) => c.cluster === V1_CLUSTER)!.failed).toBe(0);
      await client!.request('stop');
      await settled();
      const all = totals();
      expect(all[V1_CLUSTER]!.failed).toBe(0);
      expect(all[V2_CLUSTER]!.failed).toBeGreaterThan(0);
      const body = (await metrics.scrape()).body;
      const name = 'meshdeck_xds_client_requests_total';
      expect(counter(body, name, { cluster: V2_CLUSTER, result: 'error' })).toBe(all[V2_CLUSTER]!.failed);
      expect(counter(body, name, { cluster: V1_CLUSTER, result: 'error' })).toBe(0);
    } finally {
      v2Fails = false;
    }
  }, 90_000);
});
