/**
 * The control plane's metrics against real parts: seed Example 1 on the local mesh (real l7mp
 * processes, one killed to see its exit and restart counted) and examples/grpc-canary's ADS server with
 * raw SotW streams that ACK, NACK and are refused. Every figure is read back from the exposition text,
 * as Prometheus would read it.
 */
import { cp as copyDir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ControlPlane } from '../controlPlane/ControlPlane';
import { freePort } from '../testing/startL7mp';
import { withoutDemoApps } from '../testing/withoutDemoApps';
import { TypeUrls } from '../xds/envoyProtos';
import { waitFor } from '../xds/testing/children';
import { connectRawAds, type RawAdsClient } from '../xds/testing/rawAdsClient';
import { MeshMetrics } from './MeshMetrics';
import { sample, samples } from './testing/promText';

const REPO = path.resolve(__dirname, '..', '..');
const quiet = { info: () => {}, warn: () => {}, error: () => {} };

async function copyExample(name: string): Promise<string> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), `md-metrics-${name}-`));
  await copyDir(path.join(REPO, 'examples', name), path.join(tmp, 'mesh'), { recursive: true });
  return tmp;
}

/** grpc-canary's demo apps would open an ADS stream of their own and bind addresses other tests use. */
async function dropDemoApps(meshDir: string): Promise<void> {
  const file = path.join(meshDir, 'cluster.yaml');
  const text = withoutDemoApps(await readFile(file, 'utf8'));
  expect(text).not.toMatch(/^[^#]*meshdeck\.l7mp\.io\/app/m);
  await writeFile(file, text);
}

const total = (text: string, name: string, labels: Record<string, string> = {}) =>
  samples(text, name)
    .filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((a, s) => a + s.value, 0);

describe('metrics of seed Example 1 on the local mesh (real l7mp proxies)', () => {
  let tmp: string;
  let cp: ControlPlane | undefined;
  const metrics = new MeshMetrics({ version: '0.0.0-test', mode: 'local' });
  const scrape = async () => (await metrics.scrape()).body;

  beforeAll(async () => {
    tmp = await copyExample('seed-example-1');
    cp = await ControlPlane.startLocal({
      meshDir: path.join(tmp, 'mesh'),
      stateDir: path.join(tmp, 'state'),
      driftIntervalMs: 1000,
      logger: quiet,
      watch: false,
      metrics,
    });
    await waitFor(
      'every proxy in sync',
      () => cp!.syncStates().length > 0 && cp!.syncStates().every((s) => s.inSync),
      120_000,
    );
  }, 180_000);

  afterAll(async () => {
    await cp?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  }, 30_000);

  it('counts the first pushes, each timed, and shows every proxy synced and the mesh diagnostics', async () => {
    const proxies = cp!.syncStates().length;
    const t = await scrape();
    expect(sample(t, 'meshdeck_build_info', { mode: 'local' })).toBe(1);
    expect(sample(t, 'meshdeck_l7mp_proxies', { phase: 'synced' })).toBe(proxies);
    expect(total(t, 'meshdeck_l7mp_proxies')).toBe(proxies);
    expect(
      sample(t, 'meshdeck_l7mp_pushes_total', { result: 'ok', trigger: 'change' }),
    ).toBeGreaterThanOrEqual(proxies);
    expect(total(t, 'meshdeck_l7mp_push_duration_seconds_count')).toBe(
      total(t, 'meshdeck_l7mp_pushes_total'),
    );
    // Every proxy got its listeners, clusters and rules from nothing: at least one operation each.
    expect(total(t, 'meshdeck_l7mp_push_operations_total')).toBeGreaterThanOrEqual(proxies);
    const diagnostics = cp!.live.get().diagnostics;
    for (const severity of ['error', 'warning', 'info'] as const)
      expect(sample(t, 'meshdeck_mesh_diagnostics', { severity })).toBe(
        diagnostics.filter((d) => d.severity === severity).length,
      );
    expect(sample(t, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it('a killed proxy counts as an unexpected exit, and its re-push after the restart as a restart push', async () => {
    const before = await scrape();
    expect(sample(before, 'meshdeck_l7mp_process_exits_total')).toBe(0);
    const restarts = () => total(before, 'meshdeck_l7mp_pushes_total', { trigger: 'restart' });
    const restartsBefore = restarts();
    expect(cp!.processes.kill('default/gateway-0', 'SIGKILL')).toBe(true);
    const after = await waitFor(
      'the restart pushed and every proxy synced again',
      async () => {
        const t = await scrape();
        return total(t, 'meshdeck_l7mp_pushes_total', { trigger: 'restart' }) > restartsBefore &&
          sample(t, 'meshdeck_l7mp_proxies', { phase: 'synced' }) === cp!.syncStates().length
          ? t
          : undefined;
      },
      30_000,
    );
    expect(sample(after, 'meshdeck_l7mp_process_exits_total')).toBe(1);
  }, 60_000);

  it('times a reload of the mesh directory', async () => {
    expect(total(await scrape(), 'meshdeck_mesh_reloads_total')).toBe(0);
    await cp!.reload();
    const t = await scrape();
    expect(sample(t, 'meshdeck_mesh_reloads_total', { result: 'ok' })).toBe(1);
    expect(sample(t, 'meshdeck_mesh_reload_duration_seconds_count')).toBe(1);
    expect(sample(t, 'meshdeck_mesh_reload_duration_seconds_sum')).toBeGreaterThan(0);
  }, 30_000);
});

describe('xDS metrics of examples/grpc-canary (raw ADS streams, plaintext)', () => {
  const CLIENT = 'default/grpc-client';
  const ROUTE = 'echo.default.virtualservice.cluster.local';
  let tmp: string;
  let port: number;
  let cp: ControlPlane | undefined;
  const clients: RawAdsClient[] = [];
  const metrics = new MeshMetrics({ version: '0.0.0-test', mode: 'local', processMetrics: false });
  const scrape = async () => (await metrics.scrape()).body;
  const connect = (nodeId: string, nack?: string) => {
    const c = connectRawAds({
      address: `127.0.0.1:${port}`,
      nodeId,
      subscriptions: [
        [TypeUrls.listener, ['echo']],
        [TypeUrls.route, [ROUTE]],
      ],
      ...(nack ? { nack: (r) => (r.typeUrl === TypeUrls.route ? nack : undefined) } : {}),
    });
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    tmp = await copyExample('grpc-canary');
    await dropDemoApps(path.join(tmp, 'mesh'));
    port = await freePort();
    cp = await ControlPlane.startLocal({
      meshDir: path.join(tmp, 'mesh'),
      stateDir: path.join(tmp, 'state'),
      logger: quiet,
      watch: false,
      xds: { host: '127.0.0.1', port, insecure: true },
      metrics,
    });
  }, 120_000);

  afterAll(async () => {
    for (const c of clients) c.close();
    await cp?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  }, 30_000);

  it('a stream that ACKs: counted open, its responses and ACKs (timed), and SYNCED per type', async () => {
    expect(sample(await scrape(), 'meshdeck_xds_streams', { protocol: 'sotw' })).toBe(0);
    connect(CLIENT);
    const t = await waitFor(
      'LDS and RDS ACKed',
      async () => {
        const t = await scrape();
        return sample(t, 'meshdeck_xds_sync', { type: 'LDS', status: 'SYNCED' }) === 1 &&
          sample(t, 'meshdeck_xds_sync', { type: 'RDS', status: 'SYNCED' }) === 1
          ? t
          : undefined;
      },
      15_000,
    );
    expect(sample(t, 'meshdeck_xds_streams', { protocol: 'sotw' })).toBe(1);
    expect(sample(t, 'meshdeck_xds_streams', { protocol: 'delta' })).toBe(0);
    expect(sample(t, 'meshdeck_xds_sync', { type: 'CDS', status: 'NOT SENT' })).toBe(1);
    for (const type of ['LDS', 'RDS']) {
      expect(sample(t, 'meshdeck_xds_pushes_total', { type })).toBe(1);
      expect(sample(t, 'meshdeck_xds_acks_total', { type })).toBe(1);
      expect(sample(t, 'meshdeck_xds_push_to_ack_seconds_count', { type })).toBe(1);
      expect(sample(t, 'meshdeck_xds_push_to_ack_seconds_sum', { type })).toBeGreaterThan(0);
    }
  }, 30_000);

  it('a stream that NACKs its routes is counted as a NACK and as NACKED', async () => {
    connect(CLIENT, 'test: rejected on purpose');
    const t = await waitFor(
      'the RDS NACK counted',
      async () => {
        const t = await scrape();
        return sample(t, 'meshdeck_xds_rejects_total', { type: 'RDS' }) === 1 ? t : undefined;
      },
      15_000,
    );
    expect(sample(t, 'meshdeck_xds_streams', { protocol: 'sotw' })).toBe(2);
    expect(sample(t, 'meshdeck_xds_sync', { type: 'RDS', status: 'NACKED' })).toBe(1);
    expect(sample(t, 'meshdeck_xds_sync', { type: 'RDS', status: 'SYNCED' })).toBe(1);
    // The NACK is not timed as a convergence.
    expect(sample(t, 'meshdeck_xds_push_to_ack_seconds_count', { type: 'RDS' })).toBe(1);
  }, 30_000);

  it('a stream without a node id is refused and counted by its status code; closed streams leave the gauge', async () => {
    const refused = connect('');
    const end = await refused.ended;
    expect(end.details).toContain('node.id');
    const t = await scrape();
    expect(sample(t, 'meshdeck_xds_refused_streams_total', { code: 'INVALID_ARGUMENT' })).toBe(1);
    expect(sample(t, 'meshdeck_xds_streams', { protocol: 'sotw' })).toBe(2);
    for (const c of clients.splice(0)) c.close();
    await waitFor(
      'no stream open',
      async () => sample(await scrape(), 'meshdeck_xds_streams', { protocol: 'sotw' }) === 0,
      15_000,
    );
  }, 30_000);
});
