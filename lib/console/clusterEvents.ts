/**
 * The Kubernetes Events about one object, as the console's Inspector shows them in Kubernetes mode (what
 * `kubectl describe` lists at its end): Meshdeck's own (condition changes, failed pushes: lib/kube/
 * meshEvents.ts) and everyone else's (the kubelet's on a proxy's Pod). GET /api/cluster/events answers
 * ClusterEvents; `eventOf` reads a core/v1 Event (events.k8s.io/v1 ones are stored as those too), and
 * `eventsSummary` says it in one line. Shared by the server and the console. Pure.
 */
import { z } from 'zod';

export const ClusterEvent = z.strictObject({
  type: z.string(),
  reason: z.string(),
  note: z.string(),
  /** How often it happened (a series counts its repeats). */
  count: z.number().int().positive(),
  /** First and last time (ISO 8601). */
  firstAt: z.string(),
  lastAt: z.string(),
  /** Who reported it: `msm.l7mp.io/meshdeck (replica)`, `kubelet (node)`. */
  from: z.string(),
});
export type ClusterEvent = z.infer<typeof ClusterEvent>;

/** GET /api/cluster/events?kind=&namespace=&name=: newest first. */
export const ClusterEvents = z.strictObject({ events: z.array(ClusterEvent) });
export type ClusterEvents = z.infer<typeof ClusterEvents>;

/** The most events answered (the newest). */
export const MAX_EVENTS = 50;

/** A core/v1 Event as the API server lists it, read leniently: undefined when it says nothing usable. */
export function eventOf(raw: unknown): ClusterEvent | undefined {
  if (!isRecord(raw) || typeof raw.reason !== 'string') return undefined;
  const series = isRecord(raw.series) ? raw.series : undefined;
  const source = isRecord(raw.source) ? raw.source : undefined;
  const meta = isRecord(raw.metadata) ? raw.metadata : {};
  const first = text(raw.eventTime) ?? text(raw.firstTimestamp) ?? text(meta.creationTimestamp);
  const last = text(series?.lastObservedTime) ?? text(raw.lastTimestamp) ?? first;
  if (!first || !last) return undefined;
  const count = num(series?.count) ?? num(raw.count) ?? 1;
  const who = text(raw.reportingComponent) || text(source?.component) || 'unknown';
  const where = text(raw.reportingInstance) || text(source?.host);
  return {
    type: text(raw.type) ?? 'Normal',
    reason: raw.reason,
    note: text(raw.message) ?? text(raw.note) ?? '',
    count: Math.max(1, Math.floor(count)),
    firstAt: first,
    lastAt: last,
    from: where ? `${who} (${where})` : who,
  };
}

/** The events newest first (by their last time), at most MAX_EVENTS. */
export function newestEvents(events: readonly ClusterEvent[]): ClusterEvent[] {
  return [...events].sort((a, b) => Date.parse(b.lastAt) - Date.parse(a.lastAt)).slice(0, MAX_EVENTS);
}

/** `2 warnings, 3 normal (latest: PushFailed 4m ago)` or `none`. */
export function eventsSummary(events: readonly ClusterEvent[], now: number): string {
  if (events.length === 0) return 'none';
  const warnings = events.filter((e) => e.type === 'Warning').length;
  const normal = events.length - warnings;
  const parts = [
    ...(warnings ? [`${warnings} warning${warnings === 1 ? '' : 's'}`] : []),
    ...(normal ? [`${normal} normal`] : []),
  ];
  const latest = newestEvents(events)[0]!;
  return `${parts.join(', ')} (latest: ${latest.reason} ${age(latest.lastAt, now)} ago)`;
}

/** `45s`, `12m`, `3h`, `2d`: how long ago, as kubectl prints ages. */
export function age(at: string, now: number): string {
  const s = Math.max(0, Math.round((now - Date.parse(at)) / 1000));
  if (!Number.isFinite(s)) return '?';
  if (s < 120) return `${s}s`;
  if (s < 120 * 60) return `${Math.round(s / 60)}m`;
  if (s < 48 * 3600) return `${Math.round(s / 3600)}h`;
  return `${Math.round(s / 86400)}d`;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function text(v: unknown): string | undefined {
  return typeof v === 'string' && v ? v : undefined;
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : undefined;
}
