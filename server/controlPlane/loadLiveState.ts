/**
 * Proxyless gRPC clients' load reports (LRS) in live state: the AdsServer's 'load' events folded into
 * a LoadReportStore, and `ProxyLiveState.load` of each client (role `grpc`) set from the store's view.
 * Shared by the local mesh's ControlPlane and Kubernetes mode's console adapter.
 *
 * A client reports every interval (2 s by default), 2,000 clients a thousand reports a second: live
 * state is patched at most once per flush (1 s) per client with new reports, and once more when a
 * client's view goes silent (nothing reported in the window), so the console stops showing traffic
 * that ended.
 */
import type { ClusterLoadReport, ProxyLoadLiveState } from '@/lib/xds/loadReports';
import { LoadReportStore } from '../xds/LoadReportStore';
import type { LiveStateStore } from './liveState';

export interface LoadLiveFeedOptions {
  /** Least time between two patches of a client's `load` (default 1000 ms). */
  flushMs?: number;
  /** The clock (ms since the epoch); reports are stamped by the AdsServer with Date.now(). */
  now?: () => number;
}

/** Feeds `ProxyLiveState.load` from an AdsServer's load reports (see the module comment). */
/** What emits clients' load reports as AdsServer's 'load' events. */
export interface LoadSource {
  on(event: 'load', fn: (nodeId: string, reports: ClusterLoadReport[], atMs: number) => void): unknown;
  off(event: 'load', fn: (nodeId: string, reports: ClusterLoadReport[], atMs: number) => void): unknown;
}

export class LoadLiveFeed {
  readonly store = new LoadReportStore();
  /** Clients with reports since the last flush. */
  private readonly dirty = new Set<string>();
  /** What live state shows for each client with a view. */
  private readonly shown = new Map<string, ProxyLoadLiveState>();
  private timer: NodeJS.Timeout | undefined;
  private readonly servers = new Set<LoadSource>();
  private readonly flushMs: number;
  private readonly now: () => number;
  private stopped = false;

  private readonly onLoad = (nodeId: string, reports: ClusterLoadReport[], atMs: number) => {
    this.store.record(nodeId, reports, atMs);
    this.dirty.add(nodeId);
    this.schedule();
  };

  constructor(
    private readonly live: LiveStateStore,
    options: LoadLiveFeedOptions = {},
  ) {
    this.flushMs = options.flushMs ?? 1000;
    this.now = options.now ?? Date.now;
  }

  /** Follows 'load' events: an AdsServer's, or the other replicas' clients' (ReplicaPeers). */
  attach(server: LoadSource): void {
    server.on('load', this.onLoad);
    this.servers.add(server);
  }

  /** The view live state shows for a client: an entry rebuilt by a recompute keeps it. */
  get(nodeId: string): ProxyLoadLiveState | undefined {
    return this.shown.get(nodeId);
  }

  /** Stops following the servers and ends the timer (the store keeps what it has). */
  stop(): void {
    this.stopped = true;
    for (const s of this.servers) s.off('load', this.onLoad);
    this.servers.clear();
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    if (this.timer || this.stopped) return;
    this.timer = setTimeout(this.flush, this.flushMs);
    this.timer.unref();
  }

  /** Patches the clients with new reports, and the shown ones whose window went silent. */
  readonly flush = (): void => {
    this.timer = undefined;
    const now = this.now();
    this.store.prune(now);
    const proxies = this.live.get().proxies;
    for (const id of new Set([...this.dirty, ...this.shown.keys()])) {
      const fresh = this.dirty.has(id);
      const view = this.store.view(id, now);
      // Only a client's own reports change its view; between them the old one stands until silence.
      if (!fresh && view) continue;
      if (proxies[id]?.role !== 'grpc') {
        this.shown.delete(id);
        continue;
      }
      if (view) this.shown.set(id, view);
      else if (!this.shown.delete(id)) continue;
      this.live.updateProxy(id, { load: view });
    }
    this.dirty.clear();
    if (this.shown.size) this.schedule();
  };
}
