import { EventEmitter } from 'node:events';
import type { LiveSession } from '@/lib/l7mp/liveSession';
import type { Diagnostic } from '@/lib/model/diagnostic';
import type { ProxyLoadLiveState } from '@/lib/xds/loadReports';
import { jsonEqual } from '@/lib/util/jsonEqual';
import type { ProxyRecord, ProxyStatus, SyncStatus, TypeSyncState } from '../xds/AdsServer';

export type { LiveSession };

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
  /** The replica the stream is open at, when not this one (Kubernetes mode, replicaStreams.ts). */
  replica?: string;
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
  /** A proxyless gRPC client's RPC load per xDS cluster over the last 10 s, from its load reports (LRS). */
  load?: ProxyLoadLiveState;
}

export interface ServiceLiveState {
  id: string;
  endpoints: { address: string; pod?: string; ready: boolean }[];
}

/** Everything the console shows about the running mesh. */
export interface MeshLiveState {
  version: number;
  /**
   * Where the mesh comes from: a local mesh directory (`meshdeck serve DIR`), or a Kubernetes cluster
   * (`meshdeck serve --kubeconfig`), where the console applies with server-side apply instead.
   */
  mesh: {
    source: string;
    mode: 'local' | 'kubernetes';
    loadedAt: string;
    /**
     * Kubernetes mode: the API server, the namespace watched (absent: all), and who leads; `mirroredAt`:
     * when the console's mirror of the cluster last wrote a change to the mesh objects (server/kube/
     * clusterMirror.ts), so the console asks again whether its draft is behind the cluster.
     */
    cluster?: { server: string; namespace?: string; leader?: string; leading?: boolean; mirroredAt?: string };
  };
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

  constructor(source: string, mode: MeshLiveState['mesh']['mode'] = 'local') {
    super();
    this.setMaxListeners(200);
    this.state = {
      version: 0,
      mesh: { source, mode, loadedAt: new Date().toISOString() },
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

  /** Records the cluster's connection and leadership (Kubernetes mode; announced as a mesh event). */
  setCluster(cluster: MeshLiveState['mesh']['cluster']): void {
    if (jsonEqual(cluster, this.state.mesh.cluster)) return;
    this.state = {
      ...this.state,
      version: this.state.version + 1,
      mesh: { ...this.state.mesh, ...(cluster ? { cluster } : {}) },
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
