/**
 * Meshdeck's Grafana dashboard (deploy/monitoring/meshdeck-dashboard.json, `npm run gen:monitoring`):
 * one row per part of Meshdeck (l7mp proxies, xDS, the mesh and GitOps, Kubernetes mode, the process),
 * over the series of server/metrics/MeshMetrics.ts. Variables: the Prometheus data source, and the
 * scrape jobs that export `meshdeck_build_info`. Pure.
 */

/** One query of a panel: PromQL (with `$job` and `$__rate_interval`) and its legend. */
export interface PanelQuery {
  expr: string;
  legend: string;
}

interface PanelSpec {
  title: string;
  description: string;
  unit: string;
  queries: PanelQuery[];
  /** Stacked areas (parts of a whole, e.g. proxies by phase). */
  stacked?: boolean;
}

interface RowSpec {
  title: string;
  panels: PanelSpec[];
}

const J = 'job=~"$job"';

const ROWS: readonly RowSpec[] = [
  {
    title: 'l7mp proxies',
    panels: [
      {
        title: 'Proxies by sync phase',
        description:
          'l7mp proxies by phase (pending, syncing, synced, failed, unreachable), as the leader sees them.',
        unit: 'short',
        stacked: true,
        queries: [{ expr: `max by (phase) (meshdeck_l7mp_proxies{${J}})`, legend: '{{phase}}' }],
      },
      {
        title: 'Pushes',
        description:
          'REST pushes to l7mp proxies per second, by result and by cause (change, retry, check = drift repaired, restart, resync).',
        unit: 'ops',
        queries: [
          {
            expr: `sum by (result, trigger) (rate(meshdeck_l7mp_pushes_total{${J}}[$__rate_interval]))`,
            legend: '{{result}} ({{trigger}})',
          },
        ],
      },
      {
        title: 'Push duration',
        description: 'How long a push to one l7mp proxy took, p50 and p99.',
        unit: 's',
        queries: [
          {
            expr: `histogram_quantile(0.5, sum by (le) (rate(meshdeck_l7mp_push_duration_seconds_bucket{${J}}[$__rate_interval])))`,
            legend: 'p50',
          },
          {
            expr: `histogram_quantile(0.99, sum by (le) (rate(meshdeck_l7mp_push_duration_seconds_bucket{${J}}[$__rate_interval])))`,
            legend: 'p99',
          },
        ],
      },
    ],
  },
  {
    title: 'xDS (Envoy and proxyless gRPC)',
    panels: [
      {
        title: 'ADS streams',
        description:
          'Open ADS streams per replica and protocol (sotw: state of the world, delta: incremental).',
        unit: 'short',
        queries: [
          {
            expr: `sum by (instance, protocol) (meshdeck_xds_streams{${J}})`,
            legend: '{{instance}} {{protocol}}',
          },
        ],
      },
      {
        title: 'Sync status',
        description:
          'Open streams by type and status, as istioctl proxy-status shows it (SYNCED, STALE, NACKED, NOT SENT).',
        unit: 'short',
        stacked: true,
        queries: [{ expr: `sum by (type, status) (meshdeck_xds_sync{${J}})`, legend: '{{type}} {{status}}' }],
      },
      {
        title: 'Push to ACK (p99)',
        description: 'From a response written to its ACK: how long clients take to apply a change, by type.',
        unit: 's',
        queries: [
          {
            expr: `histogram_quantile(0.99, sum by (le, type) (rate(meshdeck_xds_push_to_ack_seconds_bucket{${J}}[$__rate_interval])))`,
            legend: '{{type}}',
          },
        ],
      },
      {
        title: 'Responses, ACKs and NACKs',
        description: 'xDS responses sent, ACKed and rejected (NACK) per second.',
        unit: 'ops',
        queries: [
          { expr: `sum(rate(meshdeck_xds_pushes_total{${J}}[$__rate_interval]))`, legend: 'sent' },
          { expr: `sum(rate(meshdeck_xds_acks_total{${J}}[$__rate_interval]))`, legend: 'ACK' },
          {
            expr: `sum by (type) (rate(meshdeck_xds_rejects_total{${J}}[$__rate_interval]))`,
            legend: 'NACK {{type}}',
          },
        ],
      },
      {
        title: 'Refused streams',
        description:
          'ADS streams refused per second, by reason (no certificate identity, node id and certificate disagree, no node id).',
        unit: 'ops',
        queries: [
          {
            expr: `sum by (code) (rate(meshdeck_xds_refused_streams_total{${J}}[$__rate_interval]))`,
            legend: '{{code}}',
          },
        ],
      },
      {
        title: "xDS CA: pods' certificate requests",
        description:
          "Certificate signing requests from pods' agents (meshdeck xds agent) per second, by result: issued, unauthenticated (a refused token), invalid-csr, unavailable (the token could not be checked), failed.",
        unit: 'reqps',
        stacked: true,
        queries: [
          {
            expr: `sum by (result) (rate(meshdeck_xds_ca_requests_total{${J}}[$__rate_interval]))`,
            legend: '{{result}}',
          },
        ],
      },
      {
        title: 'Client certificates',
        description:
          "Client certificates of open ADS streams (mTLS) by when they end, and who renews them: a pod's agent (the stream keeps its handshake's certificate while the agent holds a newer one) or an operator (meshdeck xds bootstrap). A certificate is checked at the handshake only: a proxy whose certificate ended is refused at its next reconnect unless it has a new one (the Proxies page names the proxy).",
        unit: 'short',
        stacked: true,
        queries: [
          {
            expr: `sum by (ends, renewal) (meshdeck_xds_client_certificates{${J}})`,
            legend: '{{ends}} ({{renewal}})',
          },
        ],
      },
      {
        title: 'Proxyless gRPC client RPCs',
        description:
          "RPCs per second that proxyless gRPC clients report finishing (LRS), by xDS cluster and result (success, error; dropped by the client's load balancer).",
        unit: 'reqps',
        queries: [
          {
            expr: `sum by (cluster, result) (rate(meshdeck_xds_client_requests_total{${J}}[$__rate_interval]))`,
            legend: '{{cluster}} {{result}}',
          },
        ],
      },
    ],
  },
  {
    title: 'The mesh and GitOps',
    panels: [
      {
        title: 'Diagnostics',
        description:
          "The mesh's current diagnostics by severity (the console's list; `meshdeck check` prints them).",
        unit: 'short',
        queries: [{ expr: `max by (severity) (meshdeck_mesh_diagnostics{${J}})`, legend: '{{severity}}' }],
      },
      {
        title: 'What runs vs. Git',
        description:
          'Objects against the GitOps base branch at the last comparison: synced, modified, missing (in Git, not running), extra (running, not in Git).',
        unit: 'short',
        stacked: true,
        queries: [{ expr: `max by (state) (meshdeck_gitops_objects{${J}})`, legend: '{{state}}' }],
      },
      {
        title: 'Applies from the console',
        description:
          'Applies per hour by target (local-mesh, cluster) and result (applied, failed, refused).',
        unit: 'short',
        queries: [
          {
            expr: `sum by (target, result) (increase(meshdeck_console_applies_total{${J}}[1h]))`,
            legend: '{{target}} {{result}}',
          },
        ],
      },
      {
        title: 'Mesh reloads (local mesh)',
        description: 'The mesh directory read and rendered again per second, by result.',
        unit: 'ops',
        queries: [
          {
            expr: `sum by (result) (rate(meshdeck_mesh_reloads_total{${J}}[$__rate_interval]))`,
            legend: '{{result}}',
          },
        ],
      },
    ],
  },
  {
    title: 'Kubernetes mode',
    panels: [
      {
        title: 'Leader',
        description: 'Which replica holds the Lease meshdeck-controller and pushes (exactly one should).',
        unit: 'short',
        queries: [{ expr: `max by (instance) (meshdeck_leader{${J}})`, legend: '{{instance}}' }],
      },
      {
        title: 'Informers',
        description: 'Informers watching (1) per kind, and their restarts after errors per hour.',
        unit: 'short',
        queries: [
          { expr: `min by (kind) (meshdeck_kube_informer_watching{${J}})`, legend: 'watching {{kind}}' },
          {
            expr: `sum by (kind) (increase(meshdeck_kube_informer_restarts_total{${J}}[1h]))`,
            legend: 'restarts {{kind}}',
          },
        ],
      },
      {
        title: 'Replicas followed',
        description:
          'Per replica, the other replicas it follows for their xDS clients, and those it cannot reach (their clients are missing from its console and, on the leader, from status and rollouts).',
        unit: 'short',
        queries: [
          {
            expr: `max by (instance, state) (meshdeck_xds_replica_peers{${J}})`,
            legend: '{{instance}} {{state}}',
          },
        ],
      },
      {
        title: 'Admission reviews',
        description:
          "The validating webhook's answers per second, by result (allowed, warned, denied, malformed, failed).",
        unit: 'ops',
        queries: [
          {
            expr: `sum by (result) (rate(meshdeck_admission_reviews_total{${J}}[$__rate_interval]))`,
            legend: '{{result}}',
          },
        ],
      },
    ],
  },
  {
    title: 'The process',
    panels: [
      {
        title: 'CPU',
        description: 'CPU seconds per second of each replica.',
        unit: 'percentunit',
        queries: [
          { expr: `rate(process_cpu_seconds_total{${J}}[$__rate_interval])`, legend: '{{instance}}' },
        ],
      },
      {
        title: 'Memory',
        description: 'Resident memory of each replica.',
        unit: 'bytes',
        queries: [{ expr: `process_resident_memory_bytes{${J}}`, legend: '{{instance}}' }],
      },
      {
        title: 'Event loop lag (p99)',
        description: 'How long work waits for the event loop: pushes, xDS and the console all share it.',
        unit: 's',
        queries: [{ expr: `nodejs_eventloop_lag_p99_seconds{${J}}`, legend: '{{instance}}' }],
      },
    ],
  },
];

const DATASOURCE = { type: 'prometheus', uid: '${datasource}' };
const WIDTH = 24;
const PANEL_H = 8;

/** The dashboard's JSON model (Grafana 10 and later). */
export function meshdeckDashboard(): Record<string, unknown> {
  const panels: Record<string, unknown>[] = [];
  let id = 1;
  let y = 0;
  for (const row of ROWS) {
    panels.push({
      type: 'row',
      id: id++,
      title: row.title,
      collapsed: false,
      gridPos: { h: 1, w: WIDTH, x: 0, y },
      panels: [],
    });
    y += 1;
    const w = row.panels.length >= 3 ? WIDTH / 3 : WIDTH / row.panels.length;
    row.panels.forEach((p, i) => {
      const perRow = WIDTH / w;
      panels.push(
        timeseries(p, id++, { h: PANEL_H, w, x: (i % perRow) * w, y: y + Math.floor(i / perRow) * PANEL_H }),
      );
    });
    y += Math.ceil(row.panels.length / (WIDTH / w)) * PANEL_H;
  }
  return {
    title: 'Meshdeck',
    uid: 'meshdeck',
    description:
      'The Meshdeck control plane: l7mp pushes, xDS, the mesh, GitOps, Kubernetes mode (generated from lib/monitoring/grafanaDashboard.ts).',
    tags: ['meshdeck', 'service-mesh', 'l7mp', 'xds'],
    editable: true,
    schemaVersion: 39,
    version: 1,
    refresh: '30s',
    time: { from: 'now-6h', to: 'now' },
    timezone: 'browser',
    graphTooltip: 1,
    templating: {
      list: [
        {
          name: 'datasource',
          label: 'Data source',
          type: 'datasource',
          query: 'prometheus',
          current: {},
          hide: 0,
        },
        {
          name: 'job',
          label: 'Job',
          type: 'query',
          datasource: DATASOURCE,
          definition: 'label_values(meshdeck_build_info, job)',
          query: { query: 'label_values(meshdeck_build_info, job)', refId: 'job' },
          refresh: 2,
          includeAll: true,
          multi: true,
          allValue: '.+',
          current: {},
          hide: 0,
          sort: 1,
        },
      ],
    },
    annotations: { list: [] },
    panels,
  };
}

/** Every query of the dashboard, in panel order (for checks against Prometheus). */
export function dashboardQueries(): (PanelQuery & { panel: string })[] {
  return ROWS.flatMap((r) => r.panels.flatMap((p) => p.queries.map((q) => ({ ...q, panel: p.title }))));
}

/** deploy/monitoring/meshdeck-dashboard.json. */
export function dashboardJson(): string {
  return `${JSON.stringify(meshdeckDashboard(), null, 2)}\n`;
}

function timeseries(p: PanelSpec, id: number, gridPos: Record<string, number>): Record<string, unknown> {
  return {
    type: 'timeseries',
    id,
    title: p.title,
    description: p.description,
    datasource: DATASOURCE,
    gridPos,
    targets: p.queries.map((q, i) => ({
      datasource: DATASOURCE,
      expr: q.expr,
      legendFormat: q.legend,
      refId: String.fromCharCode(65 + i),
    })),
    fieldConfig: {
      defaults: {
        unit: p.unit,
        min: 0,
        custom: p.stacked
          ? { stacking: { mode: 'normal', group: 'A' }, fillOpacity: 40 }
          : { fillOpacity: 10 },
      },
      overrides: [],
    },
    options: {
      legend: { displayMode: 'list', placement: 'bottom' },
      tooltip: { mode: 'multi', sort: 'desc' },
    },
  };
}
