/**
 * Which ADS stream live state shows for each node id: its newest open stream, else the last one that
 * closed (marked disconnected). A reconnecting proxy may briefly have two streams; the newest is the
 * one it uses. Shared by the local mesh's ControlPlane and Kubernetes mode's console adapter.
 */
import type { AdsServer, ProxyRecord, ProxyStatus } from '../xds/AdsServer';
import type { ProxyXdsLiveState } from './liveState';
import { xdsLiveState } from './xdsLiveState';

export class XdsStreamTracker {
  private readonly streams = new Map<string, Map<number, ProxyStatus>>();
  private readonly shown = new Map<string, ProxyXdsLiveState>();
  private readonly onStatus = (s: ProxyStatus) => this.status(s);
  private readonly onDisconnect = (r: ProxyRecord) => this.disconnect(r);

  /**
   * @param show called with a node's new xDS state; `known(nodeId)` says whether live state lists the
   *   node (a disconnected stream of a node that is not listed is forgotten).
   */
  constructor(
    private readonly show: (nodeId: string, xds: ProxyXdsLiveState) => void,
    private readonly known: (nodeId: string) => boolean,
  ) {}

  /** Follows an ADS server's stream events. */
  attach(server: AdsServer): void {
    server.on('status', this.onStatus);
    server.on('disconnect', this.onDisconnect);
  }

  detach(server: AdsServer): void {
    server.off('status', this.onStatus);
    server.off('disconnect', this.onDisconnect);
  }

  /** What live state shows for a node id, if it ever opened a stream. */
  get(nodeId: string): ProxyXdsLiveState | undefined {
    return this.shown.get(nodeId);
  }

  /** Forgets nodes that left the mesh and have no open stream (bounded memory). */
  prune(listed: (nodeId: string) => boolean): void {
    for (const id of this.shown.keys()) if (!listed(id) && !this.streams.has(id)) this.shown.delete(id);
  }

  private status(s: ProxyStatus): void {
    let streams = this.streams.get(s.nodeId);
    if (!streams) this.streams.set(s.nodeId, (streams = new Map()));
    streams.set(s.streamId, s);
    if (newest(streams)!.streamId === s.streamId) this.set(s.nodeId, xdsLiveState(s));
  }

  private disconnect(r: ProxyRecord): void {
    const streams = this.streams.get(r.nodeId);
    if (!streams?.delete(r.streamId)) return;
    const next = newest(streams);
    if (next) return this.set(r.nodeId, xdsLiveState(next));
    this.streams.delete(r.nodeId);
    const last = this.shown.get(r.nodeId);
    if (!last) return;
    if (!this.known(r.nodeId)) {
      this.shown.delete(r.nodeId);
      return;
    }
    this.set(r.nodeId, { ...last, connected: false, disconnectedAt: new Date().toISOString() });
  }

  private set(nodeId: string, xds: ProxyXdsLiveState): void {
    this.shown.set(nodeId, xds);
    this.show(nodeId, xds);
  }
}

function newest(streams: Map<number, ProxyStatus>): ProxyStatus | undefined {
  let best: ProxyStatus | undefined;
  for (const s of streams.values()) if (!best || s.streamId > best.streamId) best = s;
  return best;
}
