/** l7mp's session dump (GET /api/v1/sessions) trimmed to what the console shows; pure, for server and client. */
import { matchPredicate } from '@/lib/engine/matchPredicate';
import type { L7mpConfig } from '@/lib/model/l7mp';

/**
 * One live session as the proxy reports it (GET /api/v1/sessions), trimmed to what the console shows.
 * l7mp 0.5.7 dumps no per-session byte or packet counters (its StreamCounter is empty), so there are none.
 */
export interface LiveSession {
  name: string;
  status: string;
  /** The listener the session came in on. */
  listener?: string;
  /** The client's `address:port`, from the session metadata. */
  source?: string;
  /** The destination cluster. */
  destination?: string;
  endpoint?: string;
  /** The route the session took as configured: a named route, or `rule N (inline)` of its listener. */
  route?: string;
  /** The position of that rule in the listener's rules as pushed (the graph maps it to `spec.rules[i]`). */
  rule?: number;
  /** When l7mp created it (its first event). */
  startedAt?: string;
  /** The newest event l7mp logged for it (CONNECT, DISCONNECT, ...). */
  lastEvent?: string;
  labels?: Record<string, unknown>;
}

/**
 * Trims one session of l7mp's dump; `config` (the proxy's pushed config) names the route, which l7mp
 * does not dump: the first rule of the session's listener whose match holds for its metadata.
 */
export function toLiveSession(raw: unknown, config?: L7mpConfig): LiveSession {
  const s = raw as {
    name?: string;
    status?: string;
    metadata?: Record<string, unknown> & { labels?: Record<string, unknown> };
    source?: { origin?: string };
    destination?: { origin?: string; endpoint?: { spec?: { address?: string } } };
    events?: { event?: string; timestamp?: string }[];
  };
  const events = Array.isArray(s.events) ? s.events : [];
  const rule = config && s.source?.origin ? ruleOf(config, s.source.origin, s.metadata) : undefined;
  const session: LiveSession = {
    name: String(s.name ?? ''),
    status: String(s.status ?? ''),
    listener: s.source?.origin,
    source: clientAddress(s.metadata),
    destination: s.destination?.origin,
    endpoint: s.destination?.endpoint?.spec?.address,
    route: rule?.route,
    rule: rule?.index,
    startedAt: events[0]?.timestamp,
    lastEvent: events.at(-1)?.event,
    labels: s.metadata?.labels,
  };
  for (const k of Object.keys(session) as (keyof LiveSession)[])
    if (session[k] === undefined) delete session[k];
  return session;
}

function clientAddress(metadata: Record<string, unknown> | undefined): string | undefined {
  const ip = metadata?.IP as { src_addr?: unknown } | undefined;
  if (typeof ip?.src_addr !== 'string') return undefined;
  // Dual-stack sockets report IPv4 clients as IPv4-mapped IPv6.
  const address = ip.src_addr.replace(/^::ffff:(?=\d+\.)/, '');
  const transport = (metadata?.UDP ?? metadata?.TCP) as { src_port?: unknown } | undefined;
  return typeof transport?.src_port === 'number' ? `${address}:${transport.src_port}` : address;
}

/** The first rule of the listener whose match holds for the session's metadata, and its route. */
function ruleOf(
  config: L7mpConfig,
  listener: string,
  metadata: unknown,
): { index: number; route: string } | undefined {
  const l = config.listeners.find((x) => x.name === listener);
  if (!l) return undefined;
  for (const [i, rule] of l.rules.entries()) {
    // 'unknown' (an operation the explainer does not model) is taken as a hit rather than guessed past.
    if (matchPredicate(rule.match, metadata) === false) continue;
    return {
      index: i,
      route: typeof rule.action.route === 'string' ? rule.action.route : `rule ${i} (inline)`,
    };
  }
  return undefined;
}
