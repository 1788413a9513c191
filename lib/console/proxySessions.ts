/** The proxies page's sessions list: pure, so the table and its tests agree on what a row says. */
import type { LiveSession, ProxyLiveState } from '@/server/controlPlane/liveState';

/** "45s", "12m", "5h", "29d": a span of time as the console writes it. */
export function formatSpan(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}

/** "3s ago", "2m ago", "1h ago" from an ISO time; "–" when there is none. */
export function formatAgo(iso: string | undefined, now: number): string {
  if (!iso) return '–';
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return '–';
  return `${formatSpan(now - t)} ago`;
}

/** "12s", "3m", "2h": how long a session has existed. */
export function formatAge(iso: string | undefined, now: number): string {
  const ago = formatAgo(iso, now);
  return ago === '–' ? ago : ago.slice(0, -' ago'.length);
}

/** One row of a proxy's sessions list. */
export interface SessionRow {
  name: string;
  status: string;
  /** `client → listener` (either alone when the other is unknown). */
  source: string;
  /** `cluster (endpoint)`. */
  destination: string;
  route: string;
  age: string;
  lastEvent: string;
}

/** What the Sessions cell says: the count, "n/a" when l7mp cannot list them, "–" for a proxyless client. */
export function sessionsSummary(p: ProxyLiveState): string {
  if (!p.apiUrl) return '–';
  return p.sessions.available ? String(p.sessions.items.length) : 'n/a';
}

/** A proxy's sessions as rows, oldest first (then by name), or why l7mp could not list them. */
export function sessionRows(
  p: ProxyLiveState,
  now: number,
): { available: true; rows: SessionRow[] } | { available: false; reason: string } {
  if (!p.sessions.available) return { available: false, reason: p.sessions.reason };
  const rows = [...p.sessions.items].sort(byStart).map((s) => ({
    name: s.name,
    status: s.status || '–',
    source: [s.source, s.listener].filter((x) => x !== undefined).join(' → ') || '–',
    destination: s.destination ? `${s.destination}${s.endpoint ? ` (${s.endpoint})` : ''}` : '–',
    route: s.route ?? '–',
    age: formatAge(s.startedAt, now),
    lastEvent: s.lastEvent ?? '–',
  }));
  return { available: true, rows };
}

function byStart(a: LiveSession, b: LiveSession): number {
  // A session l7mp logged no event for yet sorts last.
  const ta = a.startedAt ?? '\uffff';
  const tb = b.startedAt ?? '\uffff';
  if (ta !== tb) return ta < tb ? -1 : 1;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}
