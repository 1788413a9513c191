/**
 * Which ADS stream live state shows for each node id: its newest open stream, else the last one that
 * closed (marked disconnected). A reconnecting proxy may briefly have two streams; the newest is the
 * one it uses. Shared by the local mesh's ControlPlane and Kubernetes mode's console adapter. Streams
 * come from this replica's ADS server and, in Kubernetes mode, from the other replicas' (each source
 * attached under its own name: stream ids are only unique within one server); across sources the
 * newest is the one connected last.
 */
import type { ProxyRecord, ProxyStatus } from '../xds/AdsServer';
import type { ProxyXdsLiveState } from './liveState';
import { xdsLiveState } from './xdsLiveState';

/** What emits ADS stream events: an AdsServer, or the other replicas' (ReplicaPeers). */
export interface XdsStreamSource {
  on(event: 'status', fn: (s: ProxyStatus) => void): unknown;
  on(event: 'disconnect', fn: (r: ProxyRecord) => void): unknown;
  off(event: 'status', fn: (s: ProxyStatus) => void): unknown;
  off(event: 'disconnect', fn: (r: ProxyRecord) => void): unknown;
}

type Listeners = { status: (s: ProxyStatus) => void; disconnect: (r: ProxyRecord) => void };

export class XdsStreamTracker {
  /** Per node id, its streams by streamKey. */
  private readonly streams = new Map<string, Map<string, ProxyStatus>>();
  private readonly shown = new Map<string, ProxyXdsLiveState>();
  private readonly attached = new Map<XdsStreamSource, Listeners>();

  /**
   * @param show called with a node's new xDS state; `known(nodeId)` says whether live state lists the
   *   node (a disconnected stream of a node that is not listed is forgotten).
   */
  constructor(
    private readonly show: (nodeId: string, xds: ProxyXdsLiveState) => void,
    private readonly known: (nodeId: string) => boolean,
  ) {}

  /**
   * Follows a source's stream events; `name` tells its stream ids from another source's. `open`: the
   * streams it has open already (their 'status' came before this attach).
   */
  attach(source: XdsStreamSource, name = '', open: readonly ProxyStatus[] = []): void {
    if (this.attached.has(source)) return;
    for (const s of open) this.status(name, s);
    const listeners: Listeners = {
      status: (s) => this.status(name, s),
      disconnect: (r) => this.disconnect(name, r),
    };
    this.attached.set(source, listeners);
    source.on('status', listeners.status);
    source.on('disconnect', listeners.disconnect);
  }

  detach(source: XdsStreamSource): void {
    const listeners = this.attached.get(source);
    if (!listeners) return;
    this.attached.delete(source);
    source.off('status', listeners.status);
    source.off('disconnect', listeners.disconnect);
  }

  /** What live state shows for a node id, if it ever opened a stream. */
  get(nodeId: string): ProxyXdsLiveState | undefined {
    return this.shown.get(nodeId);
  }

  /** Forgets nodes that left the mesh and have no open stream (bounded memory). */
  prune(listed: (nodeId: string) => boolean): void {
    for (const id of this.shown.keys()) if (!listed(id) && !this.streams.has(id)) this.shown.delete(id);
  }

  private status(source: string, s: ProxyStatus): void {
    let streams = this.streams.get(s.nodeId);
    if (!streams) this.streams.set(s.nodeId, (streams = new Map()));
    streams.set(streamKey(source, s), s);
    if (newest(streams.values()) === s) this.set(s.nodeId, xdsLiveState(s));
  }

  private disconnect(source: string, r: ProxyRecord): void {
    const streams = this.streams.get(r.nodeId);
    if (!streams?.delete(streamKey(source, r))) return;
    const next = newest(streams.values());
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

/** A stream's key: stream ids are unique within one server, so the source and replica go with it. */
function streamKey(source: string, r: ProxyRecord & { replica?: string }): string {
  return `${source}#${r.replica ?? ''}#${r.streamId}`;
}

/** The stream connected last (within one source, the higher id on a tie). */
export function newest<T extends ProxyRecord>(streams: Iterable<T>): T | undefined {
  let best: T | undefined;
  for (const s of streams)
    if (
      !best ||
      s.connectedSince > best.connectedSince ||
      (s.connectedSince === best.connectedSince && s.streamId > best.streamId)
    )
      best = s;
  return best;
}
