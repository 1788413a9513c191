// Meshdeck's alerting rules and dashboard queries (lib/monitoring/) checked by the REAL promtool (Debian's
// prometheus package; .ci/run installs it): the rule file loads, every dashboard query parses, and each
// alert fires on the series that should set it off (after its `for`), stays quiet before, and renders
// its summary and description as written here (`promtool test rules`); and Meshdeck's own exposition
// passes `promtool check metrics` (its lint of names, types and units).
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ALERT_GROUPS, rulesFileYaml } from '@/lib/monitoring/alertRules';
import { dashboardQueries } from '@/lib/monitoring/grafanaDashboard';
import { MeshMetrics } from './MeshMetrics';

const run = promisify(execFile);
const PROMTOOL = process.env.PROMTOOL ?? '/usr/bin/promtool';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'md-promtool-'));
  await writeFile(path.join(dir, 'meshdeck.rules.yaml'), rulesFileYaml());
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** promtool with these arguments (and a file as its stdin, for `check metrics`): its exit code and output. */
async function promtool(args: string[], stdinFile?: string): Promise<{ code: number; out: string }> {
  // A file on stdin goes through the shell; `exec "$0" "$@"` keeps the arguments unparsed.
  const [cmd, argv] = stdinFile
    ? ['/bin/sh', ['-c', `exec "$0" "$@" < ${stdinFile}`, PROMTOOL, ...args]]
    : [PROMTOOL, args];
  try {
    const r = await run(cmd, argv, { cwd: dir, timeout: 60_000 });
    return { code: 0, out: r.stdout + r.stderr };
  } catch (e) {
    const err = e as { code?: number | string; stdout?: string; stderr?: string; message: string };
    if (err.code === 'ENOENT' || err.code === 127)
      throw new Error(`${PROMTOOL} not found: install Debian's prometheus package (.ci/run does)`);
    return {
      code: typeof err.code === 'number' ? err.code : -1,
      out: `${err.stdout ?? ''}${err.stderr ?? ''}`,
    };
  }
}

/** One alert's test: input series, when it must be quiet, when it fires and with what. */
interface Scenario {
  alert: string;
  series: Record<string, string>;
  quietAt: string;
  firesAt: string;
  /** The firing alerts: their labels besides `severity`, their value as rendered, their summary. */
  fires: { labels?: Record<string, string>; value: string; summary: string }[];
}

const I = 'job="meshdeck", instance="10.0.0.1:3000"';
const I2 = 'job="meshdeck", instance="10.0.0.2:3000"';

const SCENARIOS: Scenario[] = [
  {
    alert: 'MeshdeckL7mpProxiesNotInSync',
    series: {
      [`meshdeck_l7mp_proxies{phase="synced", ${I}}`]: '3x20',
      [`meshdeck_l7mp_proxies{phase="failed", ${I}}`]: '0 0 1x18',
      [`meshdeck_l7mp_proxies{phase="unreachable", ${I}}`]: '0x4 1x16',
    },
    // Failed from 2m: not yet 5 minutes at 6m.
    quietAt: '6m',
    firesAt: '10m',
    fires: [{ value: '2', summary: '2 l7mp proxies are failed or unreachable' }],
  },
  {
    alert: 'MeshdeckL7mpProxiesRestarting',
    series: {
      // One restart a minute: 15 in the 15 minutes before 20m; none before 5m (counter flat).
      [`meshdeck_l7mp_pushes_total{result="ok", trigger="restart", ${I}}`]: '0x5 1+1x20',
      [`meshdeck_l7mp_pushes_total{result="ok", trigger="change", ${I}}`]: '0+10x25',
    },
    quietAt: '4m',
    firesAt: '20m',
    fires: [{ value: '15', summary: 'l7mp proxies restarted 15 times in 15 minutes' }],
  },
  {
    alert: 'MeshdeckXdsConfigRejected',
    series: {
      [`meshdeck_xds_sync{type="CDS", status="NACKED", ${I}}`]: '0 2x20',
      [`meshdeck_xds_sync{type="CDS", status="NACKED", ${I2}}`]: '0 1x20',
      [`meshdeck_xds_sync{type="LDS", status="SYNCED", ${I}}`]: '5x20',
    },
    quietAt: '3m',
    firesAt: '8m',
    fires: [{ labels: { type: 'CDS' }, value: '3', summary: '3 xDS clients reject the CDS config' }],
  },
  {
    alert: 'MeshdeckXdsSlowAcks',
    series: {
      // Every ACK in the (1 s, 2.5 s] bucket: p99 interpolates to 1 + 1.5 × 0.99 = 2.485 s.
      [`meshdeck_xds_push_to_ack_seconds_bucket{type="EDS", le="1", ${I}}`]: '0x40',
      [`meshdeck_xds_push_to_ack_seconds_bucket{type="EDS", le="2.5", ${I}}`]: '0+10x40',
      [`meshdeck_xds_push_to_ack_seconds_bucket{type="EDS", le="+Inf", ${I}}`]: '0+10x40',
    },
    quietAt: '10m',
    firesAt: '25m',
    fires: [{ value: '2.485', summary: 'xDS clients take 2.485s (p99) to apply a change' }],
  },
  {
    alert: 'MeshdeckXdsStreamsRefused',
    series: {
      [`meshdeck_xds_refused_streams_total{code="UNAUTHENTICATED", ${I}}`]: '0x10 1+1x10',
    },
    quietAt: '9m',
    firesAt: '20m',
    fires: [
      {
        labels: { code: 'UNAUTHENTICATED' },
        value: '10',
        summary: 'Meshdeck refused 10 ADS streams (UNAUTHENTICATED)',
      },
    ],
  },
  {
    alert: 'MeshdeckXdsCaFailing',
    series: {
      // Refused tokens and bad CSRs are the callers' doing: no alert.
      [`meshdeck_xds_ca_requests_total{result="unauthenticated", ${I}}`]: '0+5x30',
      [`meshdeck_xds_ca_requests_total{result="invalid-csr", ${I}}`]: '0+1x30',
      [`meshdeck_xds_ca_requests_total{result="issued", ${I}}`]: '0+3x30',
      [`meshdeck_xds_ca_requests_total{result="unavailable", ${I}}`]: '0x14 1+1x15',
    },
    quietAt: '12m',
    firesAt: '25m',
    fires: [
      {
        labels: { result: 'unavailable' },
        value: '10',
        summary: "Pods' agents could not get 10 certificates (unavailable)",
      },
    ],
  },
  {
    alert: 'MeshdeckXdsClientCertificateEnding',
    series: {
      // Streams are per replica: their certificates add up.
      [`meshdeck_xds_client_certificates{ends="within-1d", renewal="manual", ${I}}`]: '0 1x30',
      [`meshdeck_xds_client_certificates{ends="within-1d", renewal="manual", ${I2}}`]: '0 2x30',
      [`meshdeck_xds_client_certificates{ends="later", renewal="manual", ${I}}`]: '40x30',
      [`meshdeck_xds_client_certificates{ends="expired", renewal="manual", ${I}}`]: '0x30',
      // Agents renew their own: 50 streams on a certificate that ended (long-lived streams) are fine.
      [`meshdeck_xds_client_certificates{ends="expired", renewal="agent", ${I}}`]: '50x30',
      [`meshdeck_xds_client_certificates{ends="within-1d", renewal="agent", ${I2}}`]: '70x30',
    },
    quietAt: '8m',
    firesAt: '15m',
    fires: [{ labels: { ends: 'within-1d' }, value: '3', summary: "3 xDS clients' certificates: within-1d" }],
  },
  {
    alert: 'MeshdeckMeshHasErrors',
    series: {
      // Every replica computes the same mesh: max, not sum.
      [`meshdeck_mesh_diagnostics{severity="error", ${I}}`]: '0 2x30',
      [`meshdeck_mesh_diagnostics{severity="error", ${I2}}`]: '0 2x30',
      [`meshdeck_mesh_diagnostics{severity="warning", ${I}}`]: '7x30',
    },
    quietAt: '10m',
    firesAt: '20m',
    fires: [{ value: '2', summary: 'The mesh has 2 errors' }],
  },
  {
    alert: 'MeshdeckMeshReloadFailing',
    series: {
      [`meshdeck_mesh_reloads_total{result="ok", ${I}}`]: '0+1x30',
      [`meshdeck_mesh_reloads_total{result="failed", ${I}}`]: '0x20 1x10',
    },
    quietAt: '19m',
    firesAt: '25m',
    fires: [{ value: '1', summary: 'The mesh directory could not be read and rendered' }],
  },
  {
    alert: 'MeshdeckApplyFailed',
    series: {
      [`meshdeck_console_applies_total{target="cluster", result="failed", ${I}}`]: '0x30 1x30',
      [`meshdeck_console_applies_total{target="cluster", result="applied", ${I}}`]: '0+1x60',
    },
    quietAt: '29m',
    firesAt: '45m',
    fires: [{ labels: { target: 'cluster' }, value: '1', summary: 'An apply to the cluster failed' }],
  },
  {
    alert: 'MeshdeckGitOutOfSync',
    series: {
      [`meshdeck_gitops_objects{state="synced", ${I}}`]: '7x40',
      [`meshdeck_gitops_objects{state="modified", ${I}}`]: '0x5 2x35',
      [`meshdeck_gitops_objects{state="modified", ${I2}}`]: '0x5 2x35',
      [`meshdeck_gitops_objects{state="missing", ${I}}`]: '0x40',
    },
    quietAt: '15m',
    firesAt: '25m',
    fires: [
      {
        labels: { state: 'modified' },
        value: '2',
        summary: '2 objects are modified against the GitOps base branch',
      },
    ],
  },
  {
    alert: 'MeshdeckGitSyncHeld',
    series: {
      [`meshdeck_gitops_syncs_total{trigger="new-commit", result="held", ${I}}`]: '0x30 1x30',
      [`meshdeck_gitops_syncs_total{trigger="new-commit", result="synced", ${I}}`]: '0+1x60',
    },
    quietAt: '29m',
    firesAt: '45m',
    fires: [{ labels: { result: 'held' }, value: '1', summary: 'A sync from Git was held' }],
  },
  {
    alert: 'MeshdeckRolloutRolledBack',
    series: {
      [`meshdeck_rollouts_total{result="rolled-back", ${I}}`]: '0x30 1x60',
      [`meshdeck_rollouts_total{result="succeeded", ${I}}`]: '0+1x90',
      [`meshdeck_rollouts_total{result="aborted", ${I}}`]: '0x10 1x80',
    },
    // An abort is a user's choice, not an alert; the rollback at 31m is.
    quietAt: '29m',
    firesAt: '75m',
    fires: [
      { labels: { result: 'rolled-back' }, value: '1', summary: 'A progressive rollout was rolled-back' },
    ],
  },
  {
    alert: 'MeshdeckGitCompareFailing',
    series: { [`meshdeck_gitops_compare_ok{${I}}`]: '1x5 0x30' },
    quietAt: '15m',
    firesAt: '25m',
    fires: [
      {
        labels: { job: 'meshdeck', instance: '10.0.0.1:3000' },
        value: '0',
        summary: 'Meshdeck cannot compare what runs with the GitOps repository',
      },
    ],
  },
  {
    alert: 'MeshdeckGitCompareStale',
    // Compared at 0, 180 s and 360 s, then never again: over 900 s old from 21m, for 5 minutes at 26m+.
    series: { [`meshdeck_gitops_compare_timestamp_seconds{${I}}`]: '0x2 180x3 360x40' },
    quietAt: '24m',
    firesAt: '30m',
    fires: [
      {
        labels: { job: 'meshdeck', instance: '10.0.0.1:3000' },
        value: '1440',
        summary: 'No comparison with the GitOps base branch for 24m 0s',
      },
    ],
  },
  {
    alert: 'MeshdeckNoLeader',
    series: {
      [`meshdeck_leader{${I}}`]: '1x3 0x10',
      [`meshdeck_leader{${I2}}`]: '0x13',
    },
    quietAt: '5m',
    firesAt: '8m',
    fires: [{ value: '0', summary: 'No Meshdeck replica holds the lease' }],
  },
  {
    alert: 'MeshdeckReplicaUnreachable',
    series: {
      // One replica cannot reach one peer; the other follows everyone.
      [`meshdeck_xds_replica_peers{state="unreachable", ${I}}`]: '0x5 1x20',
      [`meshdeck_xds_replica_peers{state="unreachable", ${I2}}`]: '0x25',
      [`meshdeck_xds_replica_peers{state="following", ${I2}}`]: '1x25',
    },
    quietAt: '8m',
    firesAt: '15m',
    fires: [{ value: '1', summary: 'A Meshdeck replica cannot follow 1 other replicas' }],
  },
  {
    alert: 'MeshdeckSeveralLeaders',
    series: {
      [`meshdeck_leader{${I}}`]: '1x10',
      [`meshdeck_leader{${I2}}`]: '0x3 1x7',
    },
    quietAt: '3m',
    firesAt: '6m',
    fires: [{ value: '2', summary: '2 Meshdeck replicas believe they lead' }],
  },
  {
    alert: 'MeshdeckInformerNotWatching',
    series: {
      [`meshdeck_kube_informer_watching{kind="Route", ${I}}`]: '1x2 0x10',
      [`meshdeck_kube_informer_watching{kind="Pod", ${I}}`]: '1x12',
    },
    quietAt: '6m',
    firesAt: '9m',
    fires: [
      {
        labels: { kind: 'Route', job: 'meshdeck', instance: '10.0.0.1:3000' },
        value: '0',
        summary: 'Meshdeck does not watch Route objects',
      },
    ],
  },
  {
    alert: 'MeshdeckInformerRestarting',
    series: { [`meshdeck_kube_informer_restarts_total{kind="EndpointSlice", ${I}}`]: '0x5 1+1x20' },
    quietAt: '4m',
    firesAt: '20m',
    fires: [
      {
        labels: { kind: 'EndpointSlice', job: 'meshdeck', instance: '10.0.0.1:3000' },
        value: '15',
        summary: 'The EndpointSlice informer restarted 15 times in 15 minutes',
      },
    ],
  },
  {
    alert: 'MeshdeckAdmissionFailing',
    series: {
      [`meshdeck_admission_reviews_total{kind="Route", operation="CREATE", result="failed", ${I}}`]:
        '0x5 0+1x30',
      [`meshdeck_admission_reviews_total{kind="Route", operation="CREATE", result="allowed", ${I}}`]:
        '0+5x35',
    },
    quietAt: '12m',
    firesAt: '25m',
    fires: [{ value: '0.016666666666666666', summary: 'The admission webhook fails on reviews' }],
  },
  {
    alert: 'MeshdeckEventLoopLag',
    series: {
      [`nodejs_eventloop_lag_p99_seconds{${I}}`]: '0.01x5 0.8x20',
      [`meshdeck_build_info{version="0.1.0", mode="kubernetes", ${I}}`]: '1x25',
      // Another Node.js program's lag is not Meshdeck's.
      ['nodejs_eventloop_lag_p99_seconds{job="other-app", instance="10.0.0.9:9000"}']: '3x25',
    },
    quietAt: '12m',
    firesAt: '20m',
    fires: [
      {
        labels: { job: 'meshdeck', instance: '10.0.0.1:3000' },
        value: '0.8',
        summary: "Meshdeck's event loop lags 800ms (p99)",
      },
    ],
  },
];

const RULES = new Map(ALERT_GROUPS.flatMap((g) => g.rules.map((r) => [r.alert, r] as const)));

/** The description as Prometheus renders it here: `$labels.x` and a plain `$value` (no pipes in them). */
function rendered(template: string, labels: Record<string, string>, value: string): string {
  return template
    .replace(/\{\{ \$labels\.(\w+) \}\}/g, (_, k: string) => labels[k] ?? '')
    .replace(/\{\{ \$value \}\}/g, value);
}

describe('alerting rules and dashboard queries (real promtool)', () => {
  it('the rule file loads: every expression parses and every alert has a severity', async () => {
    const r = await promtool(['check', 'rules', 'meshdeck.rules.yaml']);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain(`SUCCESS: ${RULES.size} rules found`);
  });

  it('every dashboard query parses (as a recording rule, with the variables Grafana fills in)', async () => {
    const rules = dashboardQueries().map((q, i) => ({
      record: `meshdeck_dashboard:query${i}`,
      expr: q.expr.replaceAll('$job', '.+').replaceAll('$__rate_interval', '2m'),
    }));
    expect(rules.length).toBeGreaterThan(15);
    await writeFile(
      path.join(dir, 'dashboard.rules.yaml'),
      stringify({ groups: [{ name: 'dashboard', rules }] }),
    );
    const r = await promtool(['check', 'rules', 'dashboard.rules.yaml']);
    expect(r.code, r.out).toBe(0);
  });

  it('a broken expression is refused (the check above can fail)', async () => {
    await writeFile(
      path.join(dir, 'broken.rules.yaml'),
      stringify({ groups: [{ name: 'b', rules: [{ alert: 'X', expr: 'sum(meshdeck_leader' }] }] }),
    );
    const r = await promtool(['check', 'rules', 'broken.rules.yaml']);
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/unclosed|parse error/i);
  });

  it('every alert has a scenario', () => {
    expect(SCENARIOS.map((s) => s.alert).sort()).toEqual([...RULES.keys()].sort());
  });

  it('each alert is quiet before its condition has held for its `for`, then fires with its summary and description', async () => {
    const tests = SCENARIOS.map((s) => {
      const rule = RULES.get(s.alert)!;
      return {
        interval: '1m',
        input_series: Object.entries(s.series).map(([series, values]) => ({ series, values })),
        alert_rule_test: [
          { eval_time: s.quietAt, alertname: s.alert, exp_alerts: [] },
          {
            eval_time: s.firesAt,
            alertname: s.alert,
            exp_alerts: s.fires.map((f) => ({
              exp_labels: { severity: rule.severity, ...f.labels },
              exp_annotations: {
                summary: f.summary,
                description: rendered(rule.description, f.labels ?? {}, f.value),
              },
            })),
          },
        ],
      };
    });
    await writeFile(
      path.join(dir, 'meshdeck.rules.test.yaml'),
      stringify({ rule_files: ['meshdeck.rules.yaml'], evaluation_interval: '1m', tests }, { lineWidth: 0 }),
    );
    const r = await promtool(['test', 'rules', 'meshdeck.rules.test.yaml']);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain('SUCCESS');
  });
});

describe("Meshdeck's series (real promtool check metrics)", () => {
  it('follow the exposition rules and the naming conventions (counters _total, base units)', async () => {
    // Every family with samples: Kubernetes mode, each source given, each counter and histogram used.
    const m = new MeshMetrics({ version: '0.1.0', mode: 'kubernetes', processMetrics: false });
    m.setSources({
      syncStates: () => [],
      diagnostics: () => [{ severity: 'error' }],
      leading: () => true,
      informers: () => [{ kind: 'Route', running: true, restarts: 1, lists: 2 }] as never,
      gitSync: () =>
        ({ ok: true, at: Date.now(), counts: { synced: 7, modified: 1, missing: 0, extra: 0 } }) as never,
      xds: () => undefined,
    });
    m.applied('cluster', 'applied');
    m.rolloutEnded('rolled-back');
    m.rolloutAnalysed('failed');
    m.admitted('warned', 'Route', 'CREATE');
    m.ads.sent('CDS');
    m.ads.replied('CDS', true, 12);
    m.ads.replied('EDS', false, 30);
    m.ads.refused('UNAUTHENTICATED');
    m.pushed({ ok: true, applied: [], durationMs: 40 }, 'change');
    await m.timeReload(async () => undefined);
    const text = await m.registry.metrics();
    expect(text).toContain('meshdeck_xds_push_to_ack_seconds_bucket');
    const file = path.join(dir, 'metrics.txt');
    await writeFile(file, text);
    const r = await promtool(['check', 'metrics'], 'metrics.txt');
    expect(r.out.trim()).toBe('');
    expect(r.code).toBe(0);
  });

  it('the check can fail: a gauge named like a counter is reported', async () => {
    await writeFile(path.join(dir, 'bad.txt'), '# HELP x_total A gauge.\n# TYPE x_total gauge\nx_total 1\n');
    const r = await promtool(['check', 'metrics'], 'bad.txt');
    expect(r.code).not.toBe(0);
    expect(r.out).toContain('non-counter metrics should not have "_total" suffix');
  });
});
