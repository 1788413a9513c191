/**
 * Meshdeck's Prometheus alerting rules, over the series of server/metrics/MeshMetrics.ts: the one source
 * of deploy/monitoring/meshdeck.rules.yaml (Prometheus's `rule_files`) and prometheus-rule.yaml (the
 * Prometheus Operator's PrometheusRule), written by `npm run gen:monitoring`. Each alert says what is
 * wrong and where the console shows the detail, since no series is labelled per proxy.
 * deploy/monitoring/meshdeck.rules.test.yaml holds promtool unit tests for every alert. Pure.
 */
import { stringify } from 'yaml';

export interface AlertRule {
  alert: string;
  expr: string;
  /** How long the condition must hold before the alert fires (Prometheus `for`). */
  for?: string;
  severity: 'critical' | 'warning' | 'info';
  summary: string;
  description: string;
}

export interface RuleGroup {
  name: string;
  rules: AlertRule[];
}

/** Every alert, by the part of Meshdeck it watches. */
export const ALERT_GROUPS: readonly RuleGroup[] = [
  {
    name: 'meshdeck-proxies',
    rules: [
      {
        alert: 'MeshdeckL7mpProxiesNotInSync',
        expr: 'sum(meshdeck_l7mp_proxies{phase=~"failed|unreachable"}) > 0',
        for: '5m',
        severity: 'warning',
        summary: '{{ $value }} l7mp proxies are failed or unreachable',
        description:
          "Meshdeck could not give {{ $value }} l7mp proxies the mesh's config for 5 minutes: a push the proxy rejected, or its REST API unreachable. They run their last config. The console's Proxies page (only not in sync) shows each one's last error.",
      },
      {
        alert: 'MeshdeckL7mpProxiesRestarting',
        expr: 'sum(increase(meshdeck_l7mp_pushes_total{trigger="restart"}[15m])) > 3',
        severity: 'warning',
        summary: 'l7mp proxies restarted {{ $value | humanize }} times in 15 minutes',
        description:
          "Meshdeck found l7mp proxies restarted (their config gone) and pushed it again more than 3 times in 15 minutes: a proxy is crash-looping. Look at its pod (kubectl logs --previous) or, on the local mesh, the console's proxy log.",
      },
      {
        alert: 'MeshdeckXdsConfigRejected',
        expr: 'sum by (type) (meshdeck_xds_sync{status="NACKED"}) > 0',
        for: '5m',
        severity: 'warning',
        summary: '{{ $value }} xDS clients reject the {{ $labels.type }} config',
        description:
          "Envoy or proxyless gRPC clients NACKed the {{ $labels.type }} resources Meshdeck sent and keep their last good config. The console's Proxies page shows the NACK message (error_detail) per client.",
      },
      {
        alert: 'MeshdeckXdsSlowAcks',
        expr: 'histogram_quantile(0.99, sum by (le) (rate(meshdeck_xds_push_to_ack_seconds_bucket[5m]))) > 1',
        for: '15m',
        severity: 'warning',
        summary: 'xDS clients take {{ $value | humanizeDuration }} (p99) to apply a change',
        description:
          'The 99th percentile from an xDS response written to its ACK has been over 1 second for 15 minutes: clients (or the control plane) are overloaded, or the network is slow.',
      },
      {
        alert: 'MeshdeckXdsStreamsRefused',
        expr: 'sum by (code) (increase(meshdeck_xds_refused_streams_total[10m])) > 0',
        severity: 'warning',
        summary: 'Meshdeck refused {{ $value | humanize }} ADS streams ({{ $labels.code }})',
        description:
          'ADS streams were refused in the last 10 minutes because of {{ $labels.code }}: a client without a valid certificate identity, or whose node id disagrees with its certificate. It gets no config.',
      },
      {
        alert: 'MeshdeckXdsCaFailing',
        expr: 'sum by (result) (increase(meshdeck_xds_ca_requests_total{result=~"unavailable|failed"}[10m])) > 0',
        severity: 'warning',
        summary: "Pods' agents could not get {{ $value | humanize }} certificates ({{ $labels.result }})",
        description:
          "The xDS CA's signing service could not answer pods' certificate requests in the last 10 minutes: unavailable = their tokens could not be checked (the API server, or the TokenReview right), failed = signing failed (the controller's log says why). New proxies get no certificate, and running ones none renewed.",
      },
      {
        alert: 'MeshdeckXdsClientCertificateEnding',
        // An agent's certificate is renewed in the pod while the stream keeps the one of its handshake:
        // only certificates an operator issued need someone.
        expr: 'sum by (ends) (meshdeck_xds_client_certificates{renewal="manual", ends=~"expired|within-1d"}) > 0',
        for: '10m',
        severity: 'warning',
        summary: "{{ $value }} xDS clients' certificates: {{ $labels.ends }}",
        description:
          "Open ADS streams presented client certificates issued by hand (meshdeck xds bootstrap) that have ended or end within a day ({{ $labels.ends }}). A certificate is checked at the handshake only: the proxy keeps its stream but is refused at its next reconnect. The console's Proxies page shows which proxies (the xDS column); meshdeck xds bootstrap NAMESPACE/POD --force issues a new certificate.",
      },
    ],
  },
  {
    name: 'meshdeck-mesh',
    rules: [
      {
        alert: 'MeshdeckMeshHasErrors',
        expr: 'max(meshdeck_mesh_diagnostics{severity="error"}) > 0',
        for: '15m',
        severity: 'warning',
        summary: 'The mesh has {{ $value }} errors',
        description:
          "The mesh's resources have had errors for 15 minutes (a dangling reference, a port clash): the objects concerned are not programmed. `meshdeck check` and the console's diagnostics list name each object and field; in Kubernetes mode so do the objects' Accepted and ResolvedRefs conditions.",
      },
      {
        alert: 'MeshdeckMeshReloadFailing',
        expr: 'sum(increase(meshdeck_mesh_reloads_total{result="failed"}[15m])) > 0',
        severity: 'warning',
        summary: 'The mesh directory could not be read and rendered',
        description:
          'A reload of the mesh directory failed in the last 15 minutes; the control plane keeps serving the last mesh it read. The console shows the error.',
      },
      {
        alert: 'MeshdeckApplyFailed',
        expr: 'sum by (target) (increase(meshdeck_console_applies_total{result="failed"}[30m])) > 0',
        severity: 'info',
        summary: 'An apply to the {{ $labels.target }} failed',
        description:
          "An apply from the console failed part-way in the last 30 minutes. The console's apply history (H) shows who applied what, and which objects or proxies took it.",
      },
    ],
  },
  {
    name: 'meshdeck-gitops',
    rules: [
      {
        alert: 'MeshdeckGitOutOfSync',
        expr: 'max by (state) (meshdeck_gitops_objects{state!="synced"}) > 0',
        for: '15m',
        severity: 'warning',
        summary: '{{ $value }} objects are {{ $labels.state }} against the GitOps base branch',
        description:
          'What runs has not been what the GitOps base branch says for 15 minutes ({{ $labels.state }}: modified = differs, missing = in Git but not running, extra = running but not in Git). The console\'s "Git: N out of sync" dialog names each object and field, with Git\'s version one click from a draft.',
      },
      {
        alert: 'MeshdeckGitSyncHeld',
        expr: 'sum by (result) (increase(meshdeck_gitops_syncs_total{result=~"held|failed"}[30m])) > 0',
        severity: 'warning',
        summary: 'A sync from Git was {{ $labels.result }}',
        description:
          'A commit of the GitOps base branch was not synced to what runs in the last 30 minutes: held = the engine found errors in it (nothing was written; the last good version keeps running), failed = writing it failed. It is not tried again until a new commit. The console\'s "What runs vs. Git" dialog shows the commit and its errors.',
      },
      {
        alert: 'MeshdeckGitCompareFailing',
        expr: 'meshdeck_gitops_compare_ok == 0',
        for: '15m',
        severity: 'warning',
        summary: 'Meshdeck cannot compare what runs with the GitOps repository',
        description:
          "The comparison with the GitOps base branch has failed (or its fetch has) for 15 minutes: the repository's remote is unreachable or refuses Meshdeck's credentials. The console's Commit / PR panel shows the error.",
      },
      {
        alert: 'MeshdeckGitCompareStale',
        expr: 'time() - meshdeck_gitops_compare_timestamp_seconds > 900',
        for: '5m',
        severity: 'warning',
        summary: 'No comparison with the GitOps base branch for {{ $value | humanizeDuration }}',
        description:
          'Meshdeck compares what runs with Git every 180 seconds (MESHDECK_GIT_SYNC_INTERVAL_S); the last comparison is over 15 minutes old, so "what runs vs. Git" is out of date.',
      },
    ],
  },
  {
    name: 'meshdeck-rollouts',
    rules: [
      {
        alert: 'MeshdeckRolloutRolledBack',
        expr: 'sum by (result) (increase(meshdeck_rollouts_total{result=~"rolled-back|failed"}[1h])) > 0',
        severity: 'warning',
        summary: 'A progressive rollout was {{ $labels.result }}',
        description:
          "A progressive rollout ended {{ $labels.result }} in the last hour: rolled-back = a step failed its analysis (the probes or the webhook) or could not be applied, and the split went back to its weights before the rollout; failed = that rollback failed too, and the split is left where the failed step put it. The console's rollout panel shows each step's analysis and why; the apply history has every step as a diff.",
      },
    ],
  },
  {
    name: 'meshdeck-kubernetes',
    rules: [
      {
        alert: 'MeshdeckNoLeader',
        expr: 'sum(meshdeck_leader) == 0',
        for: '2m',
        severity: 'critical',
        summary: 'No Meshdeck replica holds the lease',
        description:
          "Every Meshdeck replica reports that it does not lead (Lease meshdeck-controller) for 2 minutes: nobody pushes config to the l7mp proxies or writes the resources' status. xDS is still served. Look at the replicas' logs and their access to the Lease.",
      },
      {
        alert: 'MeshdeckSeveralLeaders',
        expr: 'sum(meshdeck_leader) > 1',
        for: '1m',
        severity: 'critical',
        summary: '{{ $value }} Meshdeck replicas believe they lead',
        description:
          "More than one replica has reported holding the lease for a minute: they may push conflicting config. Check the replicas' clocks and their access to the API server.",
      },
      {
        alert: 'MeshdeckInformerNotWatching',
        expr: 'meshdeck_kube_informer_watching == 0',
        for: '5m',
        severity: 'warning',
        summary: 'Meshdeck does not watch {{ $labels.kind }} objects',
        description:
          "The {{ $labels.kind }} informer has not had its list and watch open for 5 minutes: the control plane acts on an old view of the cluster. GET /api/ready says why; the replica's log has the API server's error.",
      },
      {
        alert: 'MeshdeckInformerRestarting',
        expr: 'increase(meshdeck_kube_informer_restarts_total[15m]) > 3',
        severity: 'warning',
        summary: 'The {{ $labels.kind }} informer restarted {{ $value | humanize }} times in 15 minutes',
        description:
          "Lists or watches of {{ $labels.kind }} keep failing (the API server down or refusing Meshdeck, a watch cut): see the replica's log.",
      },
      {
        alert: 'MeshdeckReplicaUnreachable',
        expr: 'max(meshdeck_xds_replica_peers{state="unreachable"}) > 0',
        for: '5m',
        severity: 'warning',
        summary: 'A Meshdeck replica cannot follow {{ $value }} other replicas',
        description:
          'A replica has not been able to follow the xDS clients of {{ $value }} other replicas for 5 minutes (their Leases meshdeck-replica-<pod> name the address): the clients streaming from those replicas are missing from its console and, if it leads, from the Programmed conditions and rollout analyses. Its log names the replica and the error (a network policy between the pods on the ADS port, or a certificate from another CA).',
      },
      {
        alert: 'MeshdeckAdmissionFailing',
        expr: 'sum(rate(meshdeck_admission_reviews_total{result="failed"}[5m])) > 0',
        for: '10m',
        severity: 'warning',
        summary: 'The admission webhook fails on reviews',
        description:
          'The validating webhook answered reviews with an error of its own for 10 minutes. With failurePolicy Ignore (deploy/webhook.yaml) those objects are stored unchecked.',
      },
    ],
  },
  {
    name: 'meshdeck-process',
    rules: [
      {
        alert: 'MeshdeckEventLoopLag',
        // Any Node.js process exports nodejs_*: only Meshdeck's (the targets that export its build info).
        expr: 'nodejs_eventloop_lag_p99_seconds > 0.5 and on (job, instance) meshdeck_build_info',
        for: '10m',
        severity: 'warning',
        summary: "Meshdeck's event loop lags {{ $value | humanizeDuration }} (p99)",
        description:
          'The control plane process has been too busy to answer promptly for 10 minutes (pushes, xDS and the console wait): give it more CPU, or look at what it is doing (a very large mesh, many xDS clients).',
      },
    ],
  },
];

/** The rule groups as Prometheus's rule file has them (`groups:`), each alert labelled and annotated. */
export function ruleGroups(): { name: string; rules: Record<string, unknown>[] }[] {
  return ALERT_GROUPS.map((g) => ({
    name: g.name,
    rules: g.rules.map((r) => ({
      alert: r.alert,
      expr: r.expr,
      ...(r.for ? { for: r.for } : {}),
      labels: { severity: r.severity },
      annotations: { summary: r.summary, description: r.description },
    })),
  }));
}

const HEADER =
  '# Generated by `npm run gen:monitoring` from lib/monitoring/alertRules.ts: edit that, not this.\n';

/** deploy/monitoring/meshdeck.rules.yaml: for Prometheus's `rule_files`. */
export function rulesFileYaml(): string {
  return HEADER + stringify({ groups: ruleGroups() }, { lineWidth: 0 });
}

/** deploy/monitoring/prometheus-rule.yaml: the same groups as a Prometheus Operator PrometheusRule. */
export function prometheusRuleYaml(): string {
  return (
    HEADER +
    stringify(
      {
        apiVersion: 'monitoring.coreos.com/v1',
        kind: 'PrometheusRule',
        metadata: {
          name: 'meshdeck',
          namespace: 'meshdeck-system',
          labels: { 'app.kubernetes.io/name': 'meshdeck', 'app.kubernetes.io/part-of': 'meshdeck' },
        },
        spec: { groups: ruleGroups() },
      },
      { lineWidth: 0 },
    )
  );
}
