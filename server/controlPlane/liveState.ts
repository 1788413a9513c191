import { EventEmitter } from 'node:events';
import { matchPredicate } from '@/lib/engine/matchPredicate';
import type { Diagnostic } from '@/lib/model/diagnostic';
import type { L7mpConfig } from '@/lib/model/l7mp';
import { jsonEqual } from '@/lib/util/jsonEqual';
import type { ProxyRecord, ProxyStatus, SyncStatus, TypeSyncState } from '../xds/AdsServer';

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
  const session: LiveSession = {
    name: String(s.name ?? ''),
    status: String(s.status ?? ''),
    listener: s.source?.origin,
    source: clientAddress(s.metadata),
    destination: s.destination?.origin,
    endpoint: s.destination?.endpoint?.spec?.address,
    route: config && s.source?.origin ? routeOf(config, s.source.origin, s.metadata) : undefined,
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

function routeOf(config: L7mpConfig, listener: string, metadata: unknown): string | undefined {
  const l = config.listeners.find((x) => x.name === listener);
  if (!l) return undefined;
  for (const [i, rule] of l.rules.entries()) {
    // 'unknown' (an operation the explainer does not model) is taken as a hit rather than guessed past.
    if (matchPredicate(rule.match, metadata) === false) continue;
    return typeof rule.action.route === 'string' ? rule.action.route : `rule ${i} (inline)`;
  }
  return undefined;
}

/** The short names of the resource types (LDS, RDS, CDS, EDS), as AdsServer.proxyStatus() has them. */
export type XdsTypeName = keyof ProxyStatus['status'];

/** One resource type of a proxy's ADS stream, as AdsServer.proxyStatus() reports it. */
export type XdsTypeLiveState = Omit<TypeSyncState, 'lastSentNonce'> & { status: SyncStatus };

/**
 * A proxy's xDS (ADS) sync state: the newest stream of its node id while one is open, else the last
 * one (`connected: false`). `lastNack` is the latest NACK of a type, kept after a later ACK.
 */
export type ProxyXdsLiveState = Omit<ProxyRecord, 'types' | 'streamId'> & {
  connected: boolean;
  /** When the last stream closed (only while not connected). */
  disconnectedAt?: string;
  types: Record<XdsTypeName, XdsTypeLiveState>;
};

/**
 * A proxy's live state: process, sync, what it has, and its sessions. A proxyless gRPC client (role
 * `grpc`) has no process, REST API or sessions: its listeners, routes and clusters are the xDS
 * resources it is served, and its phase follows its ADS stream (`xds-off`, `not-connected`,
 * `syncing`, `synced`, `nacked`, `disconnected`).
 */
export interface ProxyLiveState {
  id: string;
  pod: string;
  /** The l7mp REST API (absent for a proxyless gRPC client). */
  apiUrl?: string;
  role: string;
  address: string;
  process?: { pid?: number; state: string; restarts: number; startedAt?: string; lastExit?: unknown };
  reachable: boolean | null;
  inSync: boolean;
  phase: string;
  lastPush?: {
    at: string;
    ok: boolean;
    operations: number;
    durationMs: number;
    failed?: {
      op?: { method: string; path: string; kind: string; name: string; reason?: string };
      status?: number;
      message: string;
    };
  };
  attempts: number;
  nextRetryAt?: string;
  listeners: string[];
  routes: string[];
  clusters: {
    name: string;
    protocol: string;
    endpoints: { name: string; address: string; weight?: number }[];
  }[];
  /** Sessions, or why they cannot be listed (l7mp 0.5.7 answers 422 while chained sessions exist). */
  sessions: { available: true; items: LiveSession[] } | { available: false; reason: string };
  counters: { pushes: number; pushFailures: number; operations: number; restarts: number; sessions: number };
  /** Present once the proxy has opened an ADS stream to this control plane. */
  xds?: ProxyXdsLiveState;
}

export interface ServiceLiveState {
  id: string;
  endpoints: { address: string; pod?: string; ready: boolean }[];
}

/** Everything the console shows about the running mesh. */
export interface MeshLiveState {
  version: number;
  mesh: { source: string; mode: 'local'; loadedAt: string };
  proxies: Record<string, ProxyLiveState>;
  services: Record<string, ServiceLiveState>;
  diagnostics: Diagnostic[];
  /** The ADS server, when the control plane serves xDS: `host:port`, and whether it requires mTLS. */
  xds?: { listen: string; tls: boolean };
}

export type LiveEvent =
  | { type: 'proxy'; version: number; proxy: ProxyLiveState }
  | { type: 'mesh'; version: number; state: MeshLiveState };

/**
 * The live-state store: a versioned document of the mesh's state and a stream of changes. Every
 * update bumps the version, so a client can drop stale events; 'event' carries each change.
 */
export class LiveStateStore extends EventEmitter {
  private state: MeshLiveState;

  constructor(source: string) {
    super();
    this.setMaxListeners(200);
    this.state = {
      version: 0,
      mesh: { source, mode: 'local', loadedAt: new Date().toISOString() },
      proxies: {},
      services: {},
      diagnostics: [],
    };
  }

  /** The current state (a snapshot: callers must not mutate it). */
  get(): MeshLiveState {
    return this.state;
  }

  /** Replaces the mesh-level parts (after a load or reload): proxies not listed are dropped. */
  setMesh(parts: Pick<MeshLiveState, 'proxies' | 'services' | 'diagnostics'> & { source?: string }): void {
    this.state = {
      ...this.state,
      version: this.state.version + 1,
      mesh: {
        ...this.state.mesh,
        source: parts.source ?? this.state.mesh.source,
        loadedAt: new Date().toISOString(),
      },
      proxies: parts.proxies,
      services: parts.services,
      diagnostics: parts.diagnostics,
    };
    this.emit('event', { type: 'mesh', version: this.state.version, state: this.state } satisfies LiveEvent);
  }

  /** Records where the ADS server listens (announced as a mesh event). */
  setXds(xds: MeshLiveState['xds']): void {
    this.state = { ...this.state, version: this.state.version + 1, xds };
    this.emit('event', { type: 'mesh', version: this.state.version, state: this.state } satisfies LiveEvent);
  }

  /** Merges a change into one proxy's state; emits only when something changed. */
  updateProxy(id: string, patch: Partial<ProxyLiveState>): void {
    const prev = this.state.proxies[id];
    if (!prev) return;
    // Only the patched fields are compared: xDS status events arrive on every send and ACK, and a
    // proxy's whole state (clusters, sessions) is far larger than what one event changes.
    let changed = false;
    for (const k in patch) {
      const key = k as keyof ProxyLiveState;
      if (!jsonEqual(prev[key], patch[key])) {
        changed = true;
        break;
      }
    }
    if (!changed) return;
    const next = { ...prev, ...patch };
    this.state = {
      ...this.state,
      version: this.state.version + 1,
      proxies: { ...this.state.proxies, [id]: next },
    };
    this.emit('event', { type: 'proxy', version: this.state.version, proxy: next } satisfies LiveEvent);
  }
}
