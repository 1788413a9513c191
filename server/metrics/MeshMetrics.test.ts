import { describe, expect, it } from 'vitest';
import { L7mpApiError, L7mpUnreachableError } from '../l7mp/L7mpRestClient';
import type { ProxySyncState } from '../l7mp/Reconciler';
import type { GitSyncSnapshot } from '../gitops/GitSyncWatcher';
import { MeshMetrics } from './MeshMetrics';
import { sample, samples } from './testing/promText';

const text = async (m: MeshMetrics) => (await m.scrape()).body;

function state(id: string, phase: ProxySyncState['phase']): ProxySyncState {
  return {
    id,
    apiUrl: 'http://127.0.0.1:1',
    phase,
    reachable: true,
    inSync: phase === 'synced',
    desiredVersion: 1,
    attempts: 0,
  };
}

describe('MeshMetrics', () => {
  it('says which Meshdeck runs, in the Prometheus text format, with process metrics unless turned off', async () => {
    const m = new MeshMetrics({ version: '1.2.3', mode: 'local' });
    const { contentType, body } = await m.scrape();
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(sample(body, 'meshdeck_build_info', { version: '1.2.3', mode: 'local' })).toBe(1);
    expect(sample(body, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    const bare = await text(new MeshMetrics({ version: '1.2.3', mode: 'kubernetes', processMetrics: false }));
    expect(sample(bare, 'process_resident_memory_bytes')).toBeUndefined();
    expect(sample(bare, 'meshdeck_build_info', { mode: 'kubernetes' })).toBe(1);
  });

  it('counts pushes by result and trigger, their durations and operations', async () => {
    const m = new MeshMetrics({ version: '0', mode: 'local', processMetrics: false });
    const op = { method: 'POST', path: '/api/v1/listeners' } as never;
    m.pushed({ ok: true, applied: [op, op, op], durationMs: 20 }, 'change');
    m.pushed({ ok: true, applied: [op], durationMs: 300 }, 'check');
    m.pushed(
      {
        ok: false,
        applied: [],
        durationMs: 2,
        failed: { error: new L7mpUnreachableError('http://127.0.0.1:1', 'connect ECONNREFUSED') },
      },
      'retry',
    );
    m.pushed(
      {
        ok: false,
        applied: [op],
        durationMs: 7,
        failed: { op, error: new L7mpApiError('http://127.0.0.1:1', 400, 'bad' as never, 'Bad Request', op) },
      },
      'change',
    );
    const t = await text(m);
    expect(sample(t, 'meshdeck_l7mp_pushes_total', { result: 'ok', trigger: 'change' })).toBe(1);
    expect(sample(t, 'meshdeck_l7mp_pushes_total', { result: 'ok', trigger: 'check' })).toBe(1);
    expect(sample(t, 'meshdeck_l7mp_pushes_total', { result: 'unreachable', trigger: 'retry' })).toBe(1);
    expect(sample(t, 'meshdeck_l7mp_pushes_total', { result: 'failed', trigger: 'change' })).toBe(1);
    expect(sample(t, 'meshdeck_l7mp_push_operations_total', { trigger: 'change' })).toBe(4);
    expect(sample(t, 'meshdeck_l7mp_push_operations_total', { trigger: 'check' })).toBe(1);
    expect(sample(t, 'meshdeck_l7mp_push_duration_seconds_count', { result: 'ok' })).toBe(2);
    expect(sample(t, 'meshdeck_l7mp_push_duration_seconds_sum', { result: 'ok' })).toBeCloseTo(0.32, 6);
    expect(sample(t, 'meshdeck_l7mp_push_duration_seconds_bucket', { result: 'ok', le: '0.025' })).toBe(1);
    expect(sample(t, 'meshdeck_l7mp_push_duration_seconds_bucket', { result: 'ok', le: '0.5' })).toBe(2);
  });

  it('reads the gauges from their sources at each scrape, every phase and severity listed', async () => {
    const m = new MeshMetrics({ version: '0', mode: 'kubernetes', processMetrics: false });
    let states = [state('a', 'synced'), state('b', 'synced'), state('c', 'failed')];
    let leading = false;
    const informer = (kind: 'Service' | 'Pod', running: boolean, restarts: number, lists: number) =>
      ({ kind, synced: true, running, restarts, attempts: 0, lists, idleRelists: 0 }) as never;
    m.setSources({
      informers: () => [informer('Service', true, 0, 1), informer('Pod', false, 3, 4)],
      syncStates: () => states,
      diagnostics: () => [{ severity: 'error' }, { severity: 'warning' }, { severity: 'warning' }],
      leading: () => leading,
      replicaPeers: () => [{ connected: true }, { connected: false }, { connected: true }],
    });
    let t = await text(m);
    expect(sample(t, 'meshdeck_xds_replica_peers', { state: 'following' })).toBe(2);
    expect(sample(t, 'meshdeck_xds_replica_peers', { state: 'unreachable' })).toBe(1);
    expect(samples(t, 'meshdeck_l7mp_proxies').map((s) => [s.labels.phase, s.value])).toEqual([
      ['pending', 0],
      ['syncing', 0],
      ['synced', 2],
      ['failed', 1],
      ['unreachable', 0],
    ]);
    expect(sample(t, 'meshdeck_mesh_diagnostics', { severity: 'error' })).toBe(1);
    expect(sample(t, 'meshdeck_mesh_diagnostics', { severity: 'warning' })).toBe(2);
    expect(sample(t, 'meshdeck_mesh_diagnostics', { severity: 'info' })).toBe(0);
    expect(sample(t, 'meshdeck_leader')).toBe(0);
    expect(sample(t, 'meshdeck_kube_informer_watching', { kind: 'Service' })).toBe(1);
    expect(sample(t, 'meshdeck_kube_informer_watching', { kind: 'Pod' })).toBe(0);
    expect(sample(t, 'meshdeck_kube_informer_restarts_total', { kind: 'Pod' })).toBe(3);
    expect(sample(t, 'meshdeck_kube_informer_lists_total', { kind: 'Service' })).toBe(1);
    expect(t).toContain('# TYPE meshdeck_kube_informer_restarts_total counter');
    states = [state('a', 'synced'), state('c', 'synced')];
    leading = true;
    t = await text(m);
    expect(sample(t, 'meshdeck_l7mp_proxies', { phase: 'synced' })).toBe(2);
    expect(sample(t, 'meshdeck_l7mp_proxies', { phase: 'failed' })).toBe(0);
    expect(sample(t, 'meshdeck_leader')).toBe(1);
    // No source, no series: a local mesh has no election, so no meshdeck_leader sample.
    const local = await text(new MeshMetrics({ version: '0', mode: 'local', processMetrics: false }));
    expect(sample(local, 'meshdeck_leader')).toBeUndefined();
    expect(sample(local, 'meshdeck_kube_informer_watching')).toBeUndefined();
    expect(sample(local, 'meshdeck_xds_replica_peers', { state: 'following' })).toBeUndefined();
    expect(sample(local, 'meshdeck_l7mp_proxies', { phase: 'synced' })).toBeUndefined();
  });

  it('counts xDS responses, ACKs with their latency, NACKs and refused streams', async () => {
    const m = new MeshMetrics({ version: '0', mode: 'local', processMetrics: false });
    m.ads.sent('LDS');
    m.ads.sent('LDS');
    m.ads.sent('RDS');
    m.ads.replied('LDS', true, 4);
    m.ads.replied('RDS', false, 9);
    m.ads.refused('UNAUTHENTICATED');
    const t = await text(m);
    expect(sample(t, 'meshdeck_xds_pushes_total', { type: 'LDS' })).toBe(2);
    expect(sample(t, 'meshdeck_xds_pushes_total', { type: 'RDS' })).toBe(1);
    expect(sample(t, 'meshdeck_xds_acks_total', { type: 'LDS' })).toBe(1);
    expect(sample(t, 'meshdeck_xds_rejects_total', { type: 'RDS' })).toBe(1);
    // A NACK is not a convergence: only ACKs are timed.
    expect(sample(t, 'meshdeck_xds_push_to_ack_seconds_count', { type: 'LDS' })).toBe(1);
    expect(sample(t, 'meshdeck_xds_push_to_ack_seconds_count', { type: 'RDS' })).toBe(0);
    expect(sample(t, 'meshdeck_xds_push_to_ack_seconds_bucket', { type: 'LDS', le: '0.0025' })).toBe(0);
    expect(sample(t, 'meshdeck_xds_push_to_ack_seconds_bucket', { type: 'LDS', le: '0.005' })).toBe(1);
    expect(sample(t, 'meshdeck_xds_refused_streams_total', { code: 'UNAUTHENTICATED' })).toBe(1);
    // Buckets are cumulative; an observation above the last bound counts in +Inf only.
    m.ads.replied('EDS', true, 0.5);
    m.ads.replied('EDS', true, 60_000);
    const u = await text(m);
    expect(u).toContain('# TYPE meshdeck_xds_push_to_ack_seconds histogram');
    expect(u).toContain('# TYPE meshdeck_xds_pushes_total counter');
    const eds = (le: string) => sample(u, 'meshdeck_xds_push_to_ack_seconds_bucket', { type: 'EDS', le });
    expect([eds('0.001'), eds('0.0025'), eds('10'), eds('+Inf')]).toEqual([1, 1, 1, 2]);
    expect(sample(u, 'meshdeck_xds_push_to_ack_seconds_sum', { type: 'EDS' })).toBeCloseTo(60.0005, 6);
    expect(sample(u, 'meshdeck_xds_push_to_ack_seconds_count', { type: 'EDS' })).toBe(2);
    expect(sample(u, 'meshdeck_xds_pushes_total', { type: 'EDS' })).toBe(0);
  });

  it("counts proxyless gRPC clients' reported RPCs by cluster and result; cluster labels are capped", async () => {
    const m = new MeshMetrics({ version: '0', mode: 'local', processMetrics: false });
    const r = (cluster: string, succeeded: number, failed: number, dropped: number) => ({
      cluster,
      issued: succeeded + failed,
      succeeded,
      failed,
      dropped,
      inProgress: 0,
      intervalMs: 2000,
    });
    m.ads.load!([r('t/a', 7, 1, 0), r('t/b', 3, 0, 2)]);
    m.ads.load!([r('t/a', 2, 0, 0)]);
    let t = await text(m);
    const name = 'meshdeck_xds_client_requests_total';
    expect(sample(t, name, { cluster: 't/a', result: 'success' })).toBe(9);
    expect(sample(t, name, { cluster: 't/a', result: 'error' })).toBe(1);
    expect(sample(t, name, { cluster: 't/b', result: 'dropped' })).toBe(2);
    // Nothing failed on t/b: no series rather than a 0 per cluster and result.
    expect(sample(t, name, { cluster: 't/b', result: 'error' })).toBeUndefined();
    m.ads.load!(Array.from({ length: 1100 }, (_, i) => r(`many/${i}`, 1, 0, 0)));
    t = await text(m);
    expect(new Set(samples(t, name).map((s) => s.labels.cluster)).size).toBe(1001);
    expect(sample(t, name, { cluster: '_other', result: 'success' })).toBe(102);
  });

  it('counts admission reviews by kind, operation and result in Kubernetes mode only', async () => {
    const m = new MeshMetrics({ version: '0', mode: 'kubernetes', processMetrics: false });
    m.admitted('denied', 'Route', 'CREATE');
    m.admitted('denied', 'Route', 'CREATE');
    m.admitted('warned', 'Target', 'DELETE');
    const body = await text(m);
    const name = 'meshdeck_admission_reviews_total';
    expect(sample(body, name, { kind: 'Route', operation: 'CREATE', result: 'denied' })).toBe(2);
    expect(sample(body, name, { kind: 'Target', operation: 'DELETE', result: 'warned' })).toBe(1);
    const local = new MeshMetrics({ version: '0', mode: 'local', processMetrics: false });
    local.admitted('denied', 'Route', 'CREATE');
    expect(await text(local)).not.toContain(name);
  });

  it('says whether what runs is what Git says, from the last comparison', async () => {
    const m = new MeshMetrics({ version: '0', mode: 'local', processMetrics: false });
    expect(await text(m)).not.toMatch(/^meshdeck_gitops_objects\{/m);
    let last: GitSyncSnapshot | undefined = {
      at: 1_700_000_000_000,
      ok: true,
      counts: { synced: 7, modified: 1, missing: 0, extra: 2 },
      fetchFailed: false,
    };
    m.setSources({ gitSync: () => last });
    let body = await text(m);
    expect(sample(body, 'meshdeck_gitops_objects', { state: 'modified' })).toBe(1);
    expect(sample(body, 'meshdeck_gitops_objects', { state: 'extra' })).toBe(2);
    expect(sample(body, 'meshdeck_gitops_compare_ok')).toBe(1);
    expect(sample(body, 'meshdeck_gitops_compare_timestamp_seconds')).toBe(1_700_000_000);
    // A failed fetch still compares (with the last tip), but is not ok; a failure keeps no counts.
    last = { ...last, fetchFailed: true };
    expect(sample(await text(m), 'meshdeck_gitops_compare_ok')).toBe(0);
    last = { at: 1_700_000_100_000, ok: false, error: 'no repository' };
    body = await text(m);
    expect(sample(body, 'meshdeck_gitops_compare_ok')).toBe(0);
    expect(sample(body, 'meshdeck_gitops_objects', { state: 'modified' })).toBeUndefined();
  });

  it('times reloads and counts them by result, passing the outcome through', async () => {
    const m = new MeshMetrics({ version: '0', mode: 'local', processMetrics: false });
    await expect(m.timeReload(async () => 7)).resolves.toBe(7);
    await expect(m.timeReload(() => Promise.reject(new Error('bad yaml')))).rejects.toThrow('bad yaml');
    m.applied('local-mesh', 'applied');
    m.applied('local-mesh', 'refused');
    m.applied('local-mesh', 'refused');
    const t = await text(m);
    expect(sample(t, 'meshdeck_mesh_reloads_total', { result: 'ok' })).toBe(1);
    expect(sample(t, 'meshdeck_mesh_reloads_total', { result: 'failed' })).toBe(1);
    expect(sample(t, 'meshdeck_mesh_reload_duration_seconds_count')).toBe(2);
    expect(sample(t, 'meshdeck_console_applies_total', { target: 'local-mesh', result: 'applied' })).toBe(1);
    expect(sample(t, 'meshdeck_console_applies_total', { target: 'local-mesh', result: 'refused' })).toBe(2);
  });
});
