/**
 * The console's view of Kubernetes mode: what the route handlers ask of a control plane
 * (ControlPlaneApi: live state, sync states, desired configs, probes) answered from a KubeControlPlane.
 * Proxies are the pods the engine found; their sync state is this replica's reconciler while it leads;
 * a replica that does not lead shows its proxies as `standby` (the leader pushes, not this one).
 */
import { CLUSTER_FILE } from '@/lib/kube/clusterDraftFiles';
import type { ProxyL7mpConfig } from '@/lib/engine/renderL7mp';
import type { TrafficTestRequest, TrafficTestResult } from '@/lib/console/trafficTest';
import { LiveStateStore, type MeshLiveState, type ProxyLiveState } from '../controlPlane/liveState';
import { type ProbeRequest, type ProbeResult, probeListener } from '../controlPlane/probe';
import { runTrafficTest } from '../controlPlane/trafficTest';
import {
  l7mpProxyLiveState,
  readSessions,
  serviceLiveStates,
  sessionsPatch,
  syncStatePatch,
} from '../controlPlane/proxyLiveState';
import type { ControlPlaneApi } from '../controlPlane/registry';
import { grpcProxyLiveState, grpcSyncFields } from '../controlPlane/xdsLiveState';
import { XdsStreamTracker } from '../controlPlane/xdsStreamTracker';
import { LoadLiveFeed } from '../controlPlane/loadLiveState';
import type { LoadReportStore } from '../xds/LoadReportStore';
import type { ProxySyncState } from '../l7mp/Reconciler';
import type { AdsServer } from '../xds/AdsServer';
import type { MeshXdsPublisher } from '../xds/meshXds';
import type { KubeControlPlane } from './kubeControlPlane';

export interface KubeConsoleOptions {
  cp: KubeControlPlane;
  /** The API server's URL and the namespace watched (absent: all), for the console's header. */
  server: string;
  namespace?: string;
  /** The ADS server and its publisher, when this replica serves xDS. */
  xds?: { server: AdsServer; publisher: MeshXdsPublisher; listen: string; tls: boolean };
  /** How often leadership and sessions are read again; default 2 s. */
  pollMs?: number;
}

/** ControlPlaneApi over a KubeControlPlane (see the module comment). */
export class KubeConsole implements ControlPlaneApi {
  readonly live: LiveStateStore;
  /** Proxyless gRPC clients' load reports (LRS) to this replica's ADS server. */
  readonly loadReports: LoadReportStore;
  private readonly loadFeed: LoadLiveFeed;
  private readonly cp: KubeControlPlane;
  private readonly tracker: XdsStreamTracker;
  private readonly timer: NodeJS.Timeout;
  private readonly onUpdate = () => this.publishMesh();
  private readonly onState = (s: ProxySyncState) => this.onSyncState(s);
  private leading: boolean;
  private stopped = false;
  private mirroredAt: string | undefined;

  constructor(private readonly options: KubeConsoleOptions) {
    this.cp = options.cp;
    this.live = new LiveStateStore(
      `${options.server}${options.namespace ? ` (namespace ${options.namespace})` : ''}`,
      'kubernetes',
    );
    this.leading = this.cp.controller.isActive;
    this.tracker = new XdsStreamTracker(
      (nodeId, xds) => {
        const prev = this.live.get().proxies[nodeId];
        if (prev)
          this.live.updateProxy(
            nodeId,
            prev.role === 'grpc' ? { xds, ...grpcSyncFields(xds, true) } : { xds },
          );
      },
      (nodeId) => !!this.live.get().proxies[nodeId],
    );
    this.loadFeed = new LoadLiveFeed(this.live);
    this.loadReports = this.loadFeed.store;
    if (options.xds) {
      this.tracker.attach(options.xds.server);
      // The clients streaming from the other replicas (Kubernetes mode shares them: replicaPeers.ts).
      if (this.cp.peers) {
        this.tracker.attach(this.cp.peers, 'peers', this.cp.peers.proxyStatus());
        this.loadFeed.attach(this.cp.peers);
      }
      this.loadFeed.attach(options.xds.server);
      this.live.setXds({ listen: options.xds.listen, tls: options.xds.tls });
    }
    this.cp.controller.on('update', this.onUpdate);
    this.cp.controller.reconciler.on('state', this.onState);
    this.showCluster();
    this.publishMesh();
    this.timer = setInterval(() => void this.poll(), options.pollMs ?? 2000);
    this.timer.unref();
  }

  /** What the engine computed for each l7mp proxy (every replica computes it; the leader pushes it). */
  desiredConfigs(): Record<string, ProxyL7mpConfig> {
    return this.cp.controller.compiled?.l7mp.proxies ?? {};
  }

  syncStates(): ProxySyncState[] {
    return this.cp.controller.syncStates();
  }

  whenIdle(): Promise<void> {
    return this.cp.controller.whenIdle();
  }

  /** The informers follow the cluster by themselves: there is nothing to re-read. */
  reload(): Promise<void> {
    return Promise.resolve();
  }

  probe(req: ProbeRequest): Promise<ProbeResult> {
    return probeListener(this.desiredConfigs(), req);
  }

  /** A traffic test on what the controller compiled (probes go on this host only, as `probe`'s). */
  trafficTest(req: TrafficTestRequest): Promise<TrafficTestResult> {
    return runTrafficTest({ proxies: this.desiredConfigs(), mesh: this.cp.controller.compiled?.mesh }, req);
  }

  /** Pods' logs are the cluster's (`kubectl logs`): this process runs no proxy. */
  logs(): { at: string; stream: string; line: string }[] {
    return [];
  }

  /** Stops following the control plane (which the caller stops itself). */
  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
    this.cp.controller.off('update', this.onUpdate);
    this.cp.controller.reconciler.off('state', this.onState);
    if (this.options.xds) this.tracker.detach(this.options.xds.server);
    if (this.cp.peers) this.tracker.detach(this.cp.peers);
    this.loadFeed.stop();
  }

  private publishMesh(): void {
    const compiled = this.cp.controller.compiled;
    if (!compiled || this.stopped) return;
    const old = this.live.get().proxies;
    const states = new Map(this.syncStates().map((s) => [s.id, s]));
    const proxies: Record<string, ProxyLiveState> = {};
    for (const [id, p] of Object.entries(compiled.l7mp.proxies)) {
      let entry = l7mpProxyLiveState(p, old[id]);
      const s = states.get(id);
      if (!this.leading) entry = { ...entry, ...STANDBY };
      else if (s) entry = { ...entry, ...syncStatePatch(entry, s) };
      const xds = this.tracker.get(id);
      proxies[id] = xds ? { ...entry, xds } : entry;
    }
    const snapshots = this.options.xds?.publisher.last?.snapshots ?? {};
    for (const p of Object.values(compiled.mesh.proxies)) {
      if (p.role !== 'grpc') continue;
      proxies[p.id] = grpcProxyLiveState(
        p,
        snapshots[p.id],
        this.tracker.get(p.id),
        !!this.options.xds,
        this.loadFeed.get(p.id),
      );
    }
    this.tracker.prune((id) => !!proxies[id]);
    const slices = this.cp.controller.snapshot?.snapshot.endpointSlices ?? [];
    this.live.setMesh({ proxies, services: serviceLiveStates(slices), diagnostics: compiled.diagnostics });
  }

  private onSyncState(s: ProxySyncState): void {
    const prev = this.live.get().proxies[s.id];
    if (prev && this.leading) this.live.updateProxy(s.id, syncStatePatch(prev, s));
  }

  /**
   * The console's mirror of the cluster wrote these files (clusterMirror.ts `onWritten`). Only the mesh
   * objects can put a draft behind the cluster (lib/console/clusterDrift.ts), so a write of `cluster.yaml`
   * files alone (endpoints moving) does not make the console ask again.
   */
  mirrored(paths: readonly string[]): void {
    if (!paths.some((p) => !p.endsWith(`/${CLUSTER_FILE}`))) return;
    this.mirroredAt = new Date().toISOString();
    this.showCluster();
  }

  private showCluster(): void {
    const h = this.cp.health();
    const cluster: NonNullable<MeshLiveState['mesh']['cluster']> = {
      server: this.options.server,
      ...(this.options.namespace ? { namespace: this.options.namespace } : {}),
      ...(h.leader ? { leader: h.leader } : {}),
      leading: h.leading,
      ...(this.mirroredAt ? { mirroredAt: this.mirroredAt } : {}),
    };
    this.live.setCluster(cluster);
  }

  private async poll(): Promise<void> {
    if (this.stopped) return;
    this.showCluster();
    const leading = this.cp.controller.isActive;
    if (leading !== this.leading) {
      this.leading = leading;
      this.publishMesh();
    }
    const desired = Object.values(this.desiredConfigs());
    await Promise.all(
      desired.map(async (p) => {
        const sessions = await readSessions(p);
        const prev = this.live.get().proxies[p.proxy.id];
        if (prev && !this.stopped) this.live.updateProxy(p.proxy.id, sessionsPatch(prev, sessions));
      }),
    );
  }
}

/** A replica that does not lead neither pushes nor checks proxies: it says so instead of guessing. */
const STANDBY: Pick<ProxyLiveState, 'phase' | 'reachable' | 'inSync' | 'attempts'> = {
  phase: 'standby',
  reachable: null,
  inSync: false,
  attempts: 0,
};
