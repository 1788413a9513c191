/**
 * Load reports (LRS) with real parts: a @grpc/grpc-js-xds 1.14 client in its own process sends unary
 * RPCs to @grpc/grpc-js backends on 127.0.0.1 and reports its load to the real AdsServer (plaintext,
 * in this process, reporting every 200 ms), whose 'load' events feed a LoadReportStore. Raw LRS
 * streams send what the real client never does: clusters it is not served, malformed messages, and
 * (over mTLS) a node id its certificate does not name.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterLoadReport, LoadTotals } from '@/lib/xds/loadReports';
import { withTimeout } from '@/lib/util/withTimeout';
import { AdsServer } from './AdsServer';
import { CertificateManager, type Certificate } from './CertificateManager';
import { LoadReportStore } from './LoadReportStore';
import { SnapshotCache } from './SnapshotCache';
import { type Backend, type Child, forkXdsClient, startBackend, waitFor } from './testing/children';
import { demoSnapshot } from './testing/demoSnapshot';
import { clusterStats, connectRawLrs, type RawLrsClient } from './testing/rawLrsClient';

const NODE = 'demo/lrs-client';
const RAW = 'demo/raw-reporter';
const INTERVAL_MS = 200;

interface CallResult {
  byBackend: Record<string, number>;
  failures: string[];
}

function total(t: Record<string, LoadTotals>): LoadTotals {
  const out = { issued: 0, succeeded: 0, failed: 0, dropped: 0 };
  for (const c of Object.values(t)) {
    out.issued += c.issued;
    out.succeeded += c.succeeded;
    out.failed += c.failed;
    out.dropped += c.dropped;
  }
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('LRS from a real grpc-js-xds client (plaintext)', () => {
  let cache: SnapshotCache;
  let server: AdsServer;
  let port = 0;
  let client: Child | undefined;
  let a: Backend, b: Backend;
  let bFails = false;
  const store = new LoadReportStore();
  const events: { nodeId: string; reports: ClusterLoadReport[] }[] = [];
  const warnings: string[] = [];

  /** RPCs `n` (8 at a time); then waits (bounded) until the reports of all of them arrived. */
  const callAndReport = async (n: number) => {
    const from = Date.now();
    const r = await client!.request<CallResult>('call', { n, concurrency: 8, deadlineMs: 5000 }, 60_000);
    await waitFor(
      `reports of ${n} finished RPCs`,
      () => {
        const t = total(store.between(from, Date.now()));
        return t.succeeded + t.failed >= n;
      },
      15_000,
      50,
    );
    // A few more intervals: a report counting anything twice would arrive now.
    await sleep(3 * INTERVAL_MS);
    return { r, totals: store.between(from, Date.now()) };
  };

  beforeAll(async () => {
    [a, b] = await Promise.all([
      startBackend('backend-a'),
      startBackend('backend-b', undefined, () => bFails),
    ]);
    cache = new SnapshotCache();
    server = new AdsServer({
      cache,
      logger: { warn: (m) => warnings.push(m) },
      loadReportingIntervalMs: INTERVAL_MS,
    });
    server.on('load', (nodeId, reports, atMs) => {
      events.push({ nodeId, reports });
      store.record(nodeId, reports, atMs);
    });
    port = await server.listen({ insecure: true });
    cache.setSnapshot(
      NODE,
      demoSnapshot({
        clusters: [
          { name: 'cluster-a', weight: 80, ports: [a.port] },
          { name: 'cluster-b', weight: 20, ports: [b.port] },
        ],
        lrs: true,
      }),
    );
    cache.setSnapshot(
      RAW,
      demoSnapshot({ service: 'raw', clusters: [{ name: 'raw-a', weight: 1, ports: [a.port] }] }),
    );
    cache.flush();
    client = await forkXdsClient(port, NODE);
  }, 60_000);

  afterAll(async () => {
    await client?.kill();
    await server?.stop();
    cache?.close();
    await Promise.all([a?.stop(), b?.stop()]);
  });

  it('300 RPCs split 80/20: the reports sum to exactly 300 issued and succeeded, each cluster its share', async () => {
    const { r, totals } = await callAndReport(300);
    expect(r.failures).toEqual([]);
    expect(Object.keys(totals).sort()).toEqual(['cluster-a', 'cluster-b']);
    expect(total(totals)).toEqual({ issued: 300, succeeded: 300, failed: 0, dropped: 0 });
    // What the client saw answered, per backend, is what it reported per cluster.
    expect(totals['cluster-a']!.succeeded).toBe(r.byBackend['backend-a']);
    expect(totals['cluster-b']!.succeeded).toBe(r.byBackend['backend-b']);
    const shareA = (100 * totals['cluster-a']!.issued) / 300;
    expect(shareA).toBeGreaterThan(72);
    expect(shareA).toBeLessThan(88);
    expect(events.every((e) => e.nodeId === NODE)).toBe(true);
    // Idle intervals are not events: every one names a cluster with traffic.
    expect(events.every((e) => e.reports.length > 0)).toBe(true);
  }, 90_000);

  it('a backend answering errors shows as failed on its cluster', async () => {
    bFails = true;
    try {
      const { r, totals } = await callAndReport(200);
      expect(r.byBackend['backend-b']).toBeUndefined();
      expect(r.failures.length).toBeGreaterThan(0);
      expect(r.failures.every((f) => f.includes('backend-b fails on purpose'))).toBe(true);
      expect(totals['cluster-b']).toEqual({
        issued: r.failures.length,
        succeeded: 0,
        failed: r.failures.length,
        dropped: 0,
      });
      expect(totals['cluster-a']).toEqual({
        issued: r.byBackend['backend-a'],
        succeeded: r.byBackend['backend-a'],
        failed: 0,
        dropped: 0,
      });
    } finally {
      bFails = false;
    }
  }, 90_000);

  describe('a raw LRS stream', () => {
    let raw: RawLrsClient | undefined;

    afterAll(() => raw?.close());

    it('is answered once with send_all_clusters and the interval; clusters it is not served are not counted', async () => {
      raw = connectRawLrs({ address: `127.0.0.1:${port}` });
      raw.write({ node: { id: RAW }, cluster_stats: [] });
      await waitFor('the LoadStatsResponse', () => raw!.responses.length > 0, 5000);
      expect(raw.responses[0]).toMatchObject({
        send_all_clusters: true,
        load_reporting_interval: { seconds: '0', nanos: INTERVAL_MS * 1e6 },
      });
      raw.write({
        cluster_stats: [
          clusterStats('cluster-a', { issued: 1000, succeeded: 1000 }),
          clusterStats('raw-a', { issued: 5, succeeded: 4, failed: 1 }),
          clusterStats('made-up', { issued: 7, succeeded: 7 }),
        ],
      });
      await waitFor('the raw report', () => store.history(RAW), 5000);
      // cluster-a is NODE's cluster, not RAW's: a client cannot report load in another's clusters.
      expect(Object.keys(store.history(RAW)!.clusters)).toEqual(['raw-a']);
      expect(store.between(0, Date.now())['made-up']).toBeUndefined();
      expect(store.between(0, Date.now())['raw-a']).toEqual({
        issued: 5,
        succeeded: 4,
        failed: 1,
        dropped: 0,
      });
      expect(raw.responses).toHaveLength(1);
    });

    it('ignores a malformed message (warned once) and goes on reading the stream', async () => {
      const before = warnings.length;
      // Field 1 (node) as a varint: no LoadStatsRequest; then a truncated one.
      raw!.write(Buffer.from([0x08, 0x01]));
      raw!.write(Buffer.from([0x0a, 0x05, 0x0a]));
      raw!.write({ cluster_stats: [clusterStats('raw-a', { issued: 3, succeeded: 3 })] });
      await waitFor(
        'the report after the malformed ones',
        () => store.history(RAW)!.clusters['raw-a']!.samples.length === 2,
        5000,
      );
      expect(warnings.slice(before).filter((w) => w.includes('malformed'))).toHaveLength(1);
    });

    it('a stream whose first request names no node is refused (INVALID_ARGUMENT)', async () => {
      const anon = connectRawLrs({ address: `127.0.0.1:${port}` });
      try {
        anon.write({ cluster_stats: [clusterStats('raw-a', { issued: 1, succeeded: 1 })] });
        const end = await withTimeout(anon.ended, 5000, 'the refusal');
        expect(end.code).toBe(grpc.status.INVALID_ARGUMENT);
        expect(anon.responses).toEqual([]);
      } finally {
        anon.close();
      }
    });

    it('stop() ends LRS streams too', async () => {
      await server.stop();
      const end = await withTimeout(raw!.ended, 5000, 'the LRS stream to end');
      expect(end.code).toBe(grpc.status.OK);
    });
  });
});

describe('LRS over mTLS', () => {
  let dir: string;
  let cache: SnapshotCache;
  let server: AdsServer;
  let port = 0;
  let root: Certificate;
  let podA: Certificate;
  const store = new LoadReportStore();

  const connect = (c: Certificate) =>
    connectRawLrs({
      address: `127.0.0.1:${port}`,
      credentials: grpc.credentials.createSsl(root.certificateChain, c.privateKey, c.certificateChain),
      channelOptions: { 'grpc.ssl_target_name_override': 'localhost', 'grpc.default_authority': 'localhost' },
    });

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'meshdeck-lrs-ca-'));
    const cm = new CertificateManager({ dir: path.join(dir, 'ca'), defaultValidityMs: 600_000 });
    const cert = await cm.issue('meshdeck-system/xds-server', 600_000, ['DNS:localhost', 'IP:127.0.0.1']);
    podA = await cm.issue('ns1/pod-a');
    root = await cm.root();
    cache = new SnapshotCache();
    server = new AdsServer({ cache, logger: { warn: () => {} }, loadReportingIntervalMs: INTERVAL_MS });
    server.on('load', (nodeId, reports, atMs) => store.record(nodeId, reports, atMs));
    port = await server.listen({
      tls: { key: cert.privateKey, cert: cert.certificateChain, ca: root.certificateChain },
    });
    for (const pod of ['a', 'b'])
      cache.setSnapshot(
        `ns1/pod-${pod}`,
        demoSnapshot({ service: `svc-${pod}`, clusters: [{ name: `c-${pod}`, weight: 1, ports: [1] }] }),
      );
    cache.flush();
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    cache?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("a stream whose node id is not the certificate's proxy is refused (PERMISSION_DENIED), nothing counted", async () => {
    const s = connect(podA);
    try {
      s.write({
        node: { id: 'ns1/pod-b' },
        cluster_stats: [clusterStats('c-b', { issued: 9, succeeded: 9 })],
      });
      const end = await withTimeout(s.ended, 10_000, 'the refusal');
      expect(end.code).toBe(grpc.status.PERMISSION_DENIED);
      expect(end.details).toContain('ns1/pod-a');
      expect(s.responses).toEqual([]);
      expect(store.nodeIds()).toEqual([]);
    } finally {
      s.close();
    }
  });

  it("the certificate's own node id is admitted and its report counted (a reconnect's first request may carry stats)", async () => {
    const s = connect(podA);
    try {
      s.write({
        node: { id: 'ns1/pod-a' },
        cluster_stats: [clusterStats('c-a', { issued: 4, succeeded: 4 })],
      });
      await waitFor('the response', () => s.responses.length > 0, 10_000);
      await waitFor('the report', () => store.history('ns1/pod-a'), 5000);
      expect(store.between(0, Date.now())).toEqual({
        'c-a': { issued: 4, succeeded: 4, failed: 0, dropped: 0 },
      });
    } finally {
      s.close();
    }
  });
});
