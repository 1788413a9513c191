/**
 * The control plane's Prometheus metrics (`GET /metrics` on the console's port), in the spirit of
 * istiod's `pilot_*` series: what a platform team alerts on without opening the console. Every series
 * is bounded by the mesh's shape, never labelled by proxy: per-proxy detail is the console's proxies
 * page (at 2,000 proxies a per-proxy label would be thousands of series per metric).
 *
 * Counters and histograms are fed by events as they happen (the reconciler's `pushed`, the ADS
 * server's sink, the supervisor's unexpected exits, the console's applies); gauges are read from their
 * sources when Prometheus scrapes, so they cannot drift from what the console shows. Nothing secret is
 * exported: no addresses with credentials, tokens or config contents.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Diagnostic } from '@/lib/model/diagnostic';
import { L7mpUnreachableError } from '../l7mp/L7mpRestClient';
import type { ProxyReconcileResult } from '../l7mp/ProxyReconciler';
import type { ProxySyncPhase, ProxySyncState, Reconciler, ReconcileTrigger } from '../l7mp/Reconciler';
import type { L7mpSupervisor } from '../localMesh/L7mpSupervisor';
import type { AdsMetricsSink, AdsStreamStats, XdsShortType } from '../xds/AdsServer';
import type { CaRequestResult } from '../xds/certificateService';
import type { InformerState } from '../kube/kubeSource';
import type { GitSyncSnapshot } from '../gitops/GitSyncWatcher';
import { FixedCounter, FixedHistogram, registerCollected } from './fixedLabelMetrics';

const DAY_MS = 24 * 3600_000;

/** Seconds; an l7mp push is tens of REST calls, from ~10 ms to a timeout. */
const PUSH_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Seconds; an xDS response to its ACK is milliseconds on loopback, seconds for a loaded client. */
const ACK_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Seconds; reading, parsing and rendering the mesh directory. */
const RELOAD_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const PHASES: readonly ProxySyncPhase[] = ['pending', 'syncing', 'synced', 'failed', 'unreachable'];
const XDS_TYPES: readonly XdsShortType[] = ['LDS', 'RDS', 'CDS', 'EDS'];
const SEVERITIES = ['error', 'warning', 'info'] as const;
/**
 * Distinct `cluster` labels of meshdeck_xds_client_requests_total; later names count as `_other`.
 * Only clusters of published snapshots are reported, but every name a mesh ever had would stay a series.
 */
const MAX_CLIENT_CLUSTERS = 1000;

/** What the gauges read at scrape time; each source is optional (a mode may not have it). */
export interface MeshMetricsSources {
  /** Every l7mp proxy's sync state (the reconciler's `states()`). */
  syncStates?: () => readonly ProxySyncState[];
  /** The ADS server's open streams and their per-type sync status. */
  xds?: () => AdsStreamStats | undefined;
  /** The mesh's current diagnostics. */
  diagnostics?: () => readonly Pick<Diagnostic, 'severity'>[];
  /** Whether this replica leads (Kubernetes mode); undefined where there is no election. */
  leading?: () => boolean | undefined;
  /** Kubernetes mode: each informer's state (kinds are a fixed few). */
  informers?: () => readonly InformerState[];
  /** Kubernetes mode: the other replicas this one follows for their xDS clients (replicaPeers.ts). */
  replicaPeers?: () => readonly { connected: boolean }[] | undefined;
  /** The last comparison of what runs with the GitOps base branch. */
  gitSync?: () => GitSyncSnapshot | undefined;
}

export interface MeshMetricsOptions {
  version: string;
  mode: 'local' | 'kubernetes';
  /** Node.js process metrics (CPU, memory, event-loop lag, GC); default true. */
  processMetrics?: boolean;
}

/** One registry of the control plane's metrics; see the module comment. */
export class MeshMetrics {
  readonly registry = new Registry();
  private sources: MeshMetricsSources = {};
  private readonly pushes: Counter<'result' | 'trigger'>;
  private readonly pushSeconds: Histogram<'result'>;
  private readonly pushOperations: Counter<'trigger'>;
  private readonly processExits: Counter;
  private readonly xdsSent: FixedCounter<XdsShortType>;
  private readonly xdsAcks: FixedCounter<XdsShortType>;
  private readonly xdsNacks: FixedCounter<XdsShortType>;
  private readonly xdsAckSeconds: FixedHistogram<XdsShortType>;
  private readonly xdsRefused: Counter<'code'>;
  private readonly clientRequests: Counter<'cluster' | 'result'>;
  private readonly clientClusters = new Set<string>();
  private readonly reloads: Counter<'result'>;
  private readonly reloadSeconds: Histogram;
  private readonly applies: Counter<'target' | 'result'>;
  private readonly gitSyncs: Counter<'trigger' | 'result'>;
  private readonly rollouts: Counter<'result'>;
  private readonly rolloutAnalyses: Counter<'result'>;
  private admissions: Counter<'kind' | 'operation' | 'result'> | undefined;

  /** The sink to give the ADS server (`new AdsServer({metrics})`). */
  readonly ads: AdsMetricsSink;
  /** The xDS CA's signing service (Kubernetes mode): how each request ended. */
  readonly ca: { request(result: CaRequestResult): void };

  constructor(options: MeshMetricsOptions) {
    const registers = [this.registry];
    if (options.processMetrics !== false) collectDefaultMetrics({ register: this.registry });
    new Gauge({
      name: 'meshdeck_build_info',
      help: 'Always 1; the labels say which Meshdeck runs and in which mode.',
      labelNames: ['version', 'mode'],
      registers,
    }).set({ version: options.version, mode: options.mode }, 1);

    this.pushes = new Counter({
      name: 'meshdeck_l7mp_pushes_total',
      help: 'Reconciles of an l7mp proxy that sent operations or failed, by result (ok, failed, unreachable) and by what set them off (change, retry, check: a drift check that found drift, restart, resync).',
      labelNames: ['result', 'trigger'],
      registers,
    });
    this.pushSeconds = new Histogram({
      name: 'meshdeck_l7mp_push_duration_seconds',
      help: "One l7mp proxy's push: reading its live config, diffing and applying the operations over its REST API.",
      labelNames: ['result'],
      buckets: PUSH_BUCKETS,
      registers,
    });
    this.pushOperations = new Counter({
      name: 'meshdeck_l7mp_push_operations_total',
      help: 'l7mp REST operations that succeeded in pushes.',
      labelNames: ['trigger'],
      registers,
    });
    this.processExits = new Counter({
      name: 'meshdeck_l7mp_process_exits_total',
      help: 'l7mp proxy processes of the local mesh that exited unexpectedly (each is restarted).',
      registers,
    });
    const sources = () => this.sources;
    new Gauge({
      name: 'meshdeck_l7mp_proxies',
      help: 'l7mp proxies by sync phase (pending, syncing, synced, failed, unreachable).',
      labelNames: ['phase'],
      registers,
      collect() {
        const states = sources().syncStates?.();
        if (!states) return;
        const n = new Map<string, number>(PHASES.map((p) => [p, 0]));
        for (const s of states) n.set(s.phase, (n.get(s.phase) ?? 0) + 1);
        for (const [phase, count] of n) this.set({ phase }, count);
      },
    });

    this.xdsSent = new FixedCounter(
      this.registry,
      'meshdeck_xds_pushes_total',
      'xDS responses written to ADS streams, by type (LDS, RDS, CDS, EDS).',
      'type',
      XDS_TYPES,
    );
    this.xdsAcks = new FixedCounter(
      this.registry,
      'meshdeck_xds_acks_total',
      'ADS clients that ACKed the last response of a type.',
      'type',
      XDS_TYPES,
    );
    this.xdsNacks = new FixedCounter(
      this.registry,
      'meshdeck_xds_rejects_total',
      'ADS clients that NACKed (rejected) the last response of a type; the proxies page shows their messages.',
      'type',
      XDS_TYPES,
    );
    this.xdsAckSeconds = new FixedHistogram(
      this.registry,
      'meshdeck_xds_push_to_ack_seconds',
      'An xDS response written -> the client ACKed it (what a proxy takes to apply a change), by type.',
      'type',
      XDS_TYPES,
      ACK_BUCKETS,
    );
    this.xdsRefused = new Counter({
      name: 'meshdeck_xds_refused_streams_total',
      help: 'ADS streams refused at their first request, by gRPC status code name (UNAUTHENTICATED: no client certificate identity; PERMISSION_DENIED: node id and certificate disagree; INVALID_ARGUMENT: no node id).',
      labelNames: ['code'],
      registers,
    });
    this.clientRequests = new Counter({
      name: 'meshdeck_xds_client_requests_total',
      help: "RPCs proxyless gRPC clients reported finishing (load reports, LRS), by xDS cluster and result (success, error; dropped: dropped by the client's load balancer). Only clusters of the client's own snapshot count.",
      labelNames: ['cluster', 'result'],
      registers,
    });
    new Gauge({
      name: 'meshdeck_xds_streams',
      help: 'Open ADS streams that sent their node, by protocol (sotw: state of the world, delta: incremental).',
      labelNames: ['protocol'],
      registers,
      collect() {
        const x = sources().xds?.();
        if (!x) return;
        for (const [protocol, n] of Object.entries(x.streams)) this.set({ protocol }, n);
      },
    });
    new Gauge({
      name: 'meshdeck_xds_sync',
      help: 'Open ADS streams by type and sync status, as istioctl proxy-status shows it (SYNCED, STALE, NACKED, NOT SENT).',
      labelNames: ['type', 'status'],
      registers,
      collect() {
        const x = sources().xds?.();
        if (!x) return;
        for (const type of XDS_TYPES)
          for (const [status, n] of Object.entries(x.status[type])) this.set({ type, status }, n);
      },
    });

    new Gauge({
      name: 'meshdeck_xds_client_certificates',
      help: "Client certificates of open ADS streams (mTLS) by when they end (expired, within-1d, within-7d, later) and who renews them (renewal: agent, the pod's meshdeck xds agent; manual, an operator's meshdeck xds bootstrap). A certificate is checked at the handshake only: a proxy whose certificate ended is refused at its next reconnect unless it has a new one (the proxies page names it).",
      labelNames: ['ends', 'renewal'],
      registers,
      collect() {
        const x = sources().xds?.();
        if (!x) return;
        const counts = () => ({ expired: 0, 'within-1d': 0, 'within-7d': 0, later: 0 });
        const n = { agent: counts(), manual: counts() };
        const now = Date.now();
        for (const { end, renewal } of x.certificateEnds) {
          const left = end - now;
          n[renewal][
            left <= 0 ? 'expired' : left < DAY_MS ? 'within-1d' : left < 7 * DAY_MS ? 'within-7d' : 'later'
          ]++;
        }
        for (const [renewal, byEnd] of Object.entries(n))
          for (const [ends, count] of Object.entries(byEnd)) this.set({ ends, renewal }, count);
      },
    });

    this.reloads = new Counter({
      name: 'meshdeck_mesh_reloads_total',
      help: 'Times the control plane read and rendered the mesh again (a file changed, an apply), by result.',
      labelNames: ['result'],
      registers,
    });
    this.reloadSeconds = new Histogram({
      name: 'meshdeck_mesh_reload_duration_seconds',
      help: 'Reading, parsing and rendering the mesh again, up to the new config handed to the reconciler and the ADS server.',
      buckets: RELOAD_BUCKETS,
      registers,
    });
    new Gauge({
      name: 'meshdeck_mesh_diagnostics',
      help: "The mesh's current diagnostics by severity (the console's list; `meshdeck check` prints them).",
      labelNames: ['severity'],
      registers,
      collect() {
        const ds = sources().diagnostics?.();
        if (!ds) return;
        const n = new Map<string, number>(SEVERITIES.map((s) => [s, 0]));
        for (const d of ds) n.set(d.severity, (n.get(d.severity) ?? 0) + 1);
        for (const [severity, count] of n) this.set({ severity }, count);
      },
    });
    this.applies = new Counter({
      name: 'meshdeck_console_applies_total',
      help: 'Applies from the console, by target (local-mesh, cluster) and result (applied, failed, refused).',
      labelNames: ['target', 'result'],
      registers,
    });
    this.gitSyncs = new Counter({
      name: 'meshdeck_gitops_syncs_total',
      help: 'Syncs from Git (the base branch written to what runs), by trigger (new-commit, drift = self-heal, manual = Sync now) and result (synced; held = the commit has errors, nothing written; failed).',
      labelNames: ['trigger', 'result'],
      registers,
    });
    this.rollouts = new Counter({
      name: 'meshdeck_rollouts_total',
      help: 'Progressive rollouts that ended, by result (succeeded; rolled-back = a step failed its analysis or its apply; aborted by a user; failed = the rollback itself failed).',
      labelNames: ['result'],
      registers,
    });
    this.rolloutAnalyses = new Counter({
      name: 'meshdeck_rollout_analyses_total',
      help: "Analyses of a progressive rollout's steps (probes through the mesh, a webhook), by result (passed, failed).",
      labelNames: ['result'],
      registers,
    });
    const caRequests = new Counter({
      name: 'meshdeck_xds_ca_requests_total',
      help: "Certificate signing requests from pods' agents to the xDS CA (Kubernetes mode), by result: issued; unauthenticated (no token, or a token the API server or the pod check refused); invalid-csr; limited (a proxy asking for too many: 5, then one a minute); unavailable (the token could not be checked: the API server); failed (signing failed).",
      labelNames: ['result'],
      registers,
    });
    this.ca = { request: (result) => caRequests.inc({ result }) };
    this.gitSyncMetrics();
    if (options.mode === 'kubernetes') this.kubeMetrics();

    this.ads = {
      sent: (type) => this.xdsSent.inc(type),
      replied: (type, acked, ms) => {
        if (!acked) return this.xdsNacks.inc(type);
        this.xdsAcks.inc(type);
        this.xdsAckSeconds.observe(type, ms / 1000);
      },
      refused: (code) => this.xdsRefused.inc({ code }),
      load: (reports) => {
        for (const r of reports) {
          const cluster = this.clientClusterLabel(r.cluster);
          if (r.succeeded) this.clientRequests.inc({ cluster, result: 'success' }, r.succeeded);
          if (r.failed) this.clientRequests.inc({ cluster, result: 'error' }, r.failed);
          if (r.dropped) this.clientRequests.inc({ cluster, result: 'dropped' }, r.dropped);
        }
      },
    };
  }

  private clientClusterLabel(cluster: string): string {
    if (this.clientClusters.has(cluster)) return cluster;
    if (this.clientClusters.size >= MAX_CLIENT_CLUSTERS) return '_other';
    this.clientClusters.add(cluster);
    return cluster;
  }

  /** What runs against the GitOps base branch: the GitSyncWatcher's last comparison (both modes). */
  private gitSyncMetrics(): void {
    const registers = [this.registry];
    const last = () => this.sources.gitSync?.();
    new Gauge({
      name: 'meshdeck_gitops_objects',
      help: 'Objects of what runs against the GitOps base branch at the last comparison, by state (synced, modified, missing = in Git but not running, extra = running but not in Git).',
      labelNames: ['state'],
      registers,
      collect() {
        // A failed comparison knows no counts: the last ones must not linger.
        this.reset();
        const s = last();
        if (!s?.ok || !s.counts) return;
        for (const [state, n] of Object.entries(s.counts)) this.set({ state }, n);
      },
    });
    new Gauge({
      name: 'meshdeck_gitops_compare_ok',
      help: 'Whether the last comparison with the GitOps base branch worked with a fresh fetch (1) or not (0).',
      registers,
      collect() {
        const s = last();
        if (s) this.set(s.ok && !s.fetchFailed ? 1 : 0);
      },
    });
    new Gauge({
      name: 'meshdeck_gitops_compare_timestamp_seconds',
      help: 'When what runs was last compared with the GitOps base branch (Unix time).',
      registers,
      collect() {
        const s = last();
        if (s) this.set(s.at / 1000);
      },
    });
  }

  /** Kubernetes mode's series: the webhook's reviews, leadership and the informers (see MeshMetricsSources). */
  private kubeMetrics(): void {
    const registers = [this.registry];
    this.admissions = new Counter({
      name: 'meshdeck_admission_reviews_total',
      help: 'Admission reviews answered by the validating webhook (--webhook-listen), by kind, operation and result (allowed, warned, denied, malformed, failed).',
      labelNames: ['kind', 'operation', 'result'],
      registers,
    });
    const sources = () => this.sources;
    // Only where there is an election: an unlabelled gauge is exported (as 0) even when never set.
    new Gauge({
      name: 'meshdeck_leader',
      help: 'Kubernetes mode: 1 while this replica holds the lease and pushes, else 0.',
      registers,
      collect() {
        const leading = sources().leading?.();
        if (leading !== undefined) this.set(leading ? 1 : 0);
      },
    });
    new Gauge({
      name: 'meshdeck_xds_replica_peers',
      help: "Kubernetes mode: the other replicas this one follows for their xDS clients (their Leases meshdeck-replica-<pod>), by state: following, or unreachable (this replica's console and, on the leader, Programmed and rollouts miss the clients streaming from it).",
      labelNames: ['state'],
      registers,
      collect() {
        const peers = sources().replicaPeers?.();
        if (!peers) return;
        const following = peers.filter((p) => p.connected).length;
        this.set({ state: 'following' }, following);
        this.set({ state: 'unreachable' }, peers.length - following);
      },
    });
    // The informers keep their own totals (restarts, lists); they are read, as counters, at each scrape.
    const informers = (f: (s: InformerState) => number) => () =>
      (sources().informers?.() ?? []).map((s) => ({ labels: { kind: s.kind }, value: f(s) }));
    new Gauge({
      name: 'meshdeck_kube_informer_watching',
      help: 'Kubernetes mode: 1 while the informer of a kind has listed and its watch is open, else 0.',
      labelNames: ['kind'],
      registers,
      collect() {
        for (const s of sources().informers?.() ?? []) this.set({ kind: s.kind }, s.running ? 1 : 0);
      },
    });
    registerCollected(
      this.registry,
      'meshdeck_kube_informer_restarts_total',
      'Kubernetes mode: informer restarts after errors (the API server down, a watch refused), by kind.',
      'counter',
      informers((s) => s.restarts),
    );
    registerCollected(
      this.registry,
      'meshdeck_kube_informer_lists_total',
      'Kubernetes mode: full lists by kind: the first, and each relist (410 Gone, a restart, an idle watch).',
      'counter',
      informers((s) => s.lists),
    );
  }

  /** Where the scrape-time gauges read from (merged with earlier sources). */
  setSources(sources: MeshMetricsSources): void {
    this.sources = { ...this.sources, ...sources };
  }

  /** Counts a reconciler's pushes (its `pushed` events). */
  watchReconciler(reconciler: Reconciler): void {
    reconciler.on('pushed', (_id, result, trigger) => this.pushed(result, trigger));
    this.setSources({ syncStates: () => reconciler.states() });
  }

  /** Counts a local mesh supervisor's unexpected process exits (its `exit` events). */
  watchSupervisor(supervisor: L7mpSupervisor): void {
    supervisor.on('exit', () => this.processExits.inc());
  }

  /** One push's figures (see meshdeck_l7mp_pushes_total). */
  pushed(
    result: Pick<ProxyReconcileResult, 'ok' | 'applied' | 'failed' | 'durationMs'>,
    trigger: ReconcileTrigger,
  ): void {
    const outcome = result.ok
      ? 'ok'
      : result.failed?.error instanceof L7mpUnreachableError
        ? 'unreachable'
        : 'failed';
    this.pushes.inc({ result: outcome, trigger });
    this.pushSeconds.observe({ result: outcome }, result.durationMs / 1000);
    if (result.applied.length) this.pushOperations.inc({ trigger }, result.applied.length);
  }

  /** Times a reload of the mesh (resolves or rejects as `run` does). */
  async timeReload<T>(run: () => Promise<T>): Promise<T> {
    const end = this.reloadSeconds.startTimer();
    try {
      const out = await run();
      this.reloads.inc({ result: 'ok' });
      return out;
    } catch (e) {
      this.reloads.inc({ result: 'failed' });
      throw e;
    } finally {
      end();
    }
  }

  /** Counts one admission review of the webhook (Kubernetes mode with --webhook-listen). */
  admitted(result: string, kind: string, operation: string): void {
    this.admissions?.inc({ kind, operation, result });
  }

  /** Counts an apply from the console. */
  applied(target: 'local-mesh' | 'cluster', result: 'applied' | 'failed' | 'refused'): void {
    this.applies.inc({ target, result });
  }

  /** A sync from Git (server/gitops/GitAutoSync.ts): why it ran and how it ended. */
  gitSynced(trigger: 'new-commit' | 'drift' | 'manual', result: 'synced' | 'held' | 'failed'): void {
    this.gitSyncs.inc({ trigger, result });
  }

  /** A progressive rollout (server/rollout/RolloutRunner.ts) ended. */
  rolloutEnded(result: 'succeeded' | 'rolled-back' | 'aborted' | 'failed'): void {
    this.rollouts.inc({ result });
  }

  /** A step of a progressive rollout was judged. */
  rolloutAnalysed(result: 'passed' | 'failed'): void {
    this.rolloutAnalyses.inc({ result });
  }

  /** The exposition text and its content type, for `GET /metrics`. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
