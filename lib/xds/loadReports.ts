/**
 * Load reports from proxyless gRPC clients (LRS, envoy.service.load_stats.v3): what the clients say
 * they sent to each cluster, read, kept for a short while and summarised. Pure and isomorphic: the
 * server folds reports in as they arrive, the console and the rollout analysis read the summaries.
 *
 * A gRPC client reports per cluster and per locality (one locality per cluster in what renderXds
 * makes), every `load_reporting_interval`, counts since its previous report; it leaves out a cluster
 * it sent nothing to in that interval, so silence means no traffic, and rates are taken over the
 * window, not over the reports that arrived.
 */

/** One cluster's counts in one report (a LoadStatsRequest's ClusterStats, summed over localities). */
export interface ClusterLoadReport {
  cluster: string;
  issued: number;
  succeeded: number;
  failed: number;
  /** RPCs still open when the report was sent (a gauge, not a count). */
  inProgress: number;
  dropped: number;
  /** The interval the counts cover, as the client measured it (load_report_interval), ms. */
  intervalMs: number;
}

/** One report of one cluster as kept: when it arrived (ms since the epoch) and its counts. */
export interface LoadSample {
  at: number;
  issued: number;
  succeeded: number;
  failed: number;
  dropped: number;
}

/** A proxy's recent reports, per cluster, oldest first; bounded in age (keepMs) and count. */
export interface LoadHistory {
  /** When the first report of this history arrived (ms since the epoch). */
  since: number;
  /** When the latest report arrived. */
  lastAt: number;
  /** The interval the first report covered (ms, as the client measured it; absent when unknown). */
  firstIntervalMs?: number;
  clusters: Record<string, { samples: LoadSample[]; inProgress: number }>;
}

export interface LoadTotals {
  issued: number;
  succeeded: number;
  failed: number;
  dropped: number;
}

/** What the console shows for one cluster of one client over the window. */
export interface ClusterLoadView extends LoadTotals {
  cluster: string;
  /** RPCs started per second over the window. */
  rps: number;
  /** succeeded / (succeeded + failed) in percent; null when no RPC finished in the window. */
  successPercent: number | null;
  inProgress: number;
}

/** `ProxyLiveState.load`: a proxyless gRPC client's load over the last `windowMs`. */
export interface ProxyLoadLiveState {
  /** ISO 8601 time of the latest report. */
  at: string;
  windowMs: number;
  /** Clusters with traffic in the window (or RPCs in progress), by name. */
  clusters: ClusterLoadView[];
  rps: number;
  successPercent: number | null;
}

/** How long reports are kept (the rollout analysis reads a step's window from them). */
export const LOAD_KEEP_MS = 10 * 60_000;
/** The console's window. */
export const LOAD_WINDOW_MS = 10_000;
/** A report naming more clusters than this is cut: a client cannot flood the server's memory. */
export const MAX_CLUSTERS_PER_REPORT = 256;
/** Samples kept per cluster, whatever the client's interval. */
export const MAX_SAMPLES_PER_CLUSTER = 1200;

/**
 * Reads a LoadStatsRequest (proto-loader JSON: keepCase, longs as strings) into per-cluster reports.
 * Never throws: what is not a well-formed ClusterStats is skipped; counts that are not non-negative
 * integers count as 0.
 */
export function readLoadStatsRequest(msg: unknown): ClusterLoadReport[] {
  const stats = isObject(msg) && Array.isArray(msg.cluster_stats) ? msg.cluster_stats : [];
  const out: ClusterLoadReport[] = [];
  for (const c of stats) {
    if (out.length >= MAX_CLUSTERS_PER_REPORT) break;
    if (!isObject(c) || typeof c.cluster_name !== 'string' || c.cluster_name === '') continue;
    const r: ClusterLoadReport = {
      cluster: c.cluster_name,
      issued: 0,
      succeeded: 0,
      failed: 0,
      inProgress: 0,
      dropped: count(c.total_dropped_requests),
      intervalMs: durationMs(c.load_report_interval),
    };
    const localities = Array.isArray(c.upstream_locality_stats) ? c.upstream_locality_stats : [];
    for (const l of localities) {
      if (!isObject(l)) continue;
      r.issued += count(l.total_issued_requests);
      r.succeeded += count(l.total_successful_requests);
      r.failed += count(l.total_error_requests);
      r.inProgress += count(l.total_requests_in_progress);
    }
    out.push(r);
  }
  return out;
}

/** Adds one report's clusters to a history (a new object; `history` is not changed). */
export function recordLoad(
  history: LoadHistory | undefined,
  reports: readonly ClusterLoadReport[],
  atMs: number,
  keepMs = LOAD_KEEP_MS,
): LoadHistory {
  const clusters: LoadHistory['clusters'] = {};
  const cutoff = atMs - keepMs;
  for (const [name, c] of Object.entries(history?.clusters ?? {})) {
    // Oldest first, so what expired is a prefix; an array with nothing expired is shared, not copied
    // (no history's arrays are ever changed): a report copies only the clusters it names.
    let expired = 0;
    while (expired < c.samples.length && c.samples[expired]!.at <= cutoff) expired++;
    if (expired === c.samples.length) continue;
    const samples = expired === 0 ? c.samples : c.samples.slice(expired);
    // A cluster left out of a report had nothing in progress worth showing any more.
    clusters[name] = { samples, inProgress: 0 };
  }
  for (const r of reports) {
    const prev = clusters[r.cluster]?.samples ?? [];
    const sample: LoadSample = {
      at: atMs,
      issued: r.issued,
      succeeded: r.succeeded,
      failed: r.failed,
      dropped: r.dropped,
    };
    const samples = prev.concat(sample);
    if (samples.length > MAX_SAMPLES_PER_CLUSTER) samples.splice(0, samples.length - MAX_SAMPLES_PER_CLUSTER);
    clusters[r.cluster] = { samples, inProgress: (clusters[r.cluster]?.inProgress ?? 0) + r.inProgress };
  }
  if (history) return { ...history, lastAt: atMs, clusters };
  const firstIntervalMs = Math.max(0, ...reports.map((r) => r.intervalMs));
  return { since: atMs, lastAt: atMs, ...(firstIntervalMs > 0 ? { firstIntervalMs } : {}), clusters };
}

/** The counts per cluster of the reports that arrived in (fromMs, toMs]. */
export function loadBetween(
  history: LoadHistory | undefined,
  fromMs: number,
  toMs: number,
): Record<string, LoadTotals> {
  const out: Record<string, LoadTotals> = {};
  for (const [name, c] of Object.entries(history?.clusters ?? {})) {
    for (const s of c.samples) {
      if (s.at <= fromMs || s.at > toMs) continue;
      const t = (out[name] ??= { issued: 0, succeeded: 0, failed: 0, dropped: 0 });
      t.issued += s.issued;
      t.succeeded += s.succeeded;
      t.failed += s.failed;
      t.dropped += s.dropped;
    }
  }
  return out;
}

/** Sums per-cluster totals (e.g. over every client). */
export function addLoadTotals(
  a: Record<string, LoadTotals>,
  b: Record<string, LoadTotals>,
): Record<string, LoadTotals> {
  return addLoadTotalsInto(addLoadTotalsInto({}, a), b);
}

/** Adds `source`'s per-cluster totals into `target` (changed in place, and returned). */
export function addLoadTotalsInto(
  target: Record<string, LoadTotals>,
  source: Record<string, LoadTotals>,
): Record<string, LoadTotals> {
  for (const [name, t] of Object.entries(source)) {
    const o = (target[name] ??= { issued: 0, succeeded: 0, failed: 0, dropped: 0 });
    o.issued += t.issued;
    o.succeeded += t.succeeded;
    o.failed += t.failed;
    o.dropped += t.dropped;
  }
  return target;
}

/** succeeded / (succeeded + failed) in percent, or null when nothing finished. */
export function successPercent(t: Pick<LoadTotals, 'succeeded' | 'failed'>): number | null {
  const done = t.succeeded + t.failed;
  return done === 0 ? null : (100 * t.succeeded) / done;
}

/**
 * The console's view of a history at `nowMs`: per cluster the RPCs per second and the success rate
 * over the last `windowMs` (or since the first report's interval began, when that is shorter);
 * undefined when the client reported nothing in the window.
 */
export function loadView(
  history: LoadHistory | undefined,
  nowMs: number,
  windowMs = LOAD_WINDOW_MS,
): ProxyLoadLiveState | undefined {
  if (!history || history.lastAt <= nowMs - windowMs) return undefined;
  const totals = loadBetween(history, nowMs - windowMs, nowMs);
  // The first report's counts began an interval before it arrived: dividing by the time since it
  // arrived would make a client's first rates its RPCs per millisecond. Without a known interval a
  // young history counts as one second.
  const covered = nowMs - history.since + (history.firstIntervalMs ?? 0);
  const seconds = Math.min(windowMs, Math.max(covered, history.firstIntervalMs ? 1 : 1000)) / 1000;
  const clusters: ClusterLoadView[] = [];
  for (const name of Object.keys(history.clusters).sort()) {
    const t = totals[name] ?? { issued: 0, succeeded: 0, failed: 0, dropped: 0 };
    const inProgress = history.clusters[name]!.inProgress;
    if (t.issued + t.succeeded + t.failed + t.dropped + inProgress === 0) continue;
    clusters.push({
      cluster: name,
      ...t,
      rps: round1(t.issued / seconds),
      successPercent: roundPercent(successPercent(t)),
      inProgress,
    });
  }
  const all = clusters.reduce(
    (s, c) => ({
      issued: s.issued + c.issued,
      succeeded: s.succeeded + c.succeeded,
      failed: s.failed + c.failed,
    }),
    { issued: 0, succeeded: 0, failed: 0 },
  );
  return {
    at: new Date(history.lastAt).toISOString(),
    windowMs,
    clusters,
    rps: round1(all.issued / seconds),
    successPercent: roundPercent(successPercent(all)),
  };
}

function round1(n: number): number {
  return Math.round(n * 10) / 10;
}

function roundPercent(n: number | null): number | null {
  return n === null ? null : Math.round(n * 10) / 10;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A uint64 as proto-loader gives it (a decimal string with longs: String) or a number. */
function count(v: unknown): number {
  const n = typeof v === 'string' && /^\d{1,15}$/.test(v) ? Number(v) : typeof v === 'number' ? v : 0;
  return Number.isSafeInteger(n) && n >= 0 ? n : 0;
}

/** A google.protobuf.Duration ({seconds: string|number, nanos: number}) in ms; 0 when malformed. */
function durationMs(v: unknown): number {
  if (!isObject(v)) return 0;
  const ms = count(v.seconds) * 1000 + count(v.nanos) / 1e6;
  return Number.isFinite(ms) ? Math.round(ms) : 0;
}

/** Where a reader (the rollout analysis) gets the load all clients reported in a window. */
export interface LoadTotalsSource {
  /** Per cluster, the counts of the reports every client sent that arrived in (fromMs, toMs]. */
  between(fromMs: number, toMs: number): Record<string, LoadTotals>;
}
