import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { MeshEngine } from '@/lib/engine/meshEngine';
import { coalescingRunner } from '@/lib/util/coalescingRunner';
import type { ProxyL7mpConfig } from '@/lib/engine/renderL7mp';
import {
  grpcClientAppDiagnostics,
  type PreparedLocalMesh,
  prepareLocalMesh,
} from '@/lib/localMesh/prepareLocalMesh';
import { renderLocalMesh } from '@/lib/localMesh/renderLocalMesh';
import { type Diagnostic, normalizeDiagnostics } from '@/lib/model/diagnostic';
import type { EndpointSlice } from '@/lib/model/kube';
import { SERVICE_NAME_LABEL } from '@/lib/model/kube';
import { parseManifests } from '@/lib/parse/parseManifests';
import type { ProxyXdsSnapshot } from '@/lib/xds/renderXds';
import { Reconciler } from '../l7mp/Reconciler';
import type { ProxySyncState } from '../l7mp/Reconciler';
import { startDemoApp } from '../localMesh/demoApps';
import { L7mpSupervisor } from '../localMesh/L7mpSupervisor';
import { readManifestDir } from '../manifestDir';
import type { MeshMetrics } from '../metrics/MeshMetrics';
import { AdsServer } from '../xds/AdsServer';
import { listenAds, MeshXdsPublisher } from '../xds/meshXds';
import { localMeshPodsDir, localMeshStateDir } from './localMeshPaths';
import { LiveStateStore, type ProxyLiveState, type ProxyXdsLiveState } from './liveState';
import { type ProbeRequest, type ProbeResult, probeListener } from './probe';
import { runTrafficTest } from './trafficTest';
import {
  l7mpProxyLiveState,
  readSessions,
  serviceLiveStates,
  sessionsPatch,
  syncStatePatch,
} from './proxyLiveState';
import { grpcProxyLiveState, grpcSyncFields } from './xdsLiveState';
import { XdsStreamTracker } from './xdsStreamTracker';
import { LoadLiveFeed } from './loadLiveState';
import type { LoadReportStore } from '../xds/LoadReportStore';
import { type TreeWatcher, watchTree } from './watchTree';
import { urlHost } from '@/lib/util/urlHost';
import type { TrafficTestRequest, TrafficTestResult } from '@/lib/console/trafficTest';

export interface ControlPlaneOptions {
  /** A mesh directory (resources + Services + Pods), as the CLI reads it. */
  meshDir: string;
  stateDir?: string;
  /** How often each proxy is re-read for drift (and live state). */
  driftIntervalMs?: number;
  logLevel?: 'error' | 'warn' | 'info';
  logger?: Pick<Console, 'info' | 'warn' | 'error'>;
  /** Reload when the mesh directory changes (default true). */
  watch?: boolean;
  /** Serve every proxy's xDS resources over ADS (proxyless gRPC clients, Envoy). */
  xds?: ControlPlaneXdsOptions;
  /** Where the control plane counts its pushes, reloads and xDS traffic (`GET /metrics`). */
  metrics?: MeshMetrics;
}

export interface ControlPlaneXdsOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Plaintext ADS: proxies are not authenticated and node ids are trusted (a warning is logged). */
  insecure?: boolean;
  /** The root CA of the mTLS ADS server (default `<stateDir>/xds-ca`; created when missing). */
  tlsDir?: string;
  /** How often proxyless gRPC clients report their load (LRS), ms; default 2000. */
  loadReportingIntervalMs?: number;
}

/** Where the control plane's ADS server listens. */
export interface XdsListening {
  /** `host:port` (IPv6 hosts bracketed). */
  listen: string;
  port: number;
  /** mTLS (client certificates required). */
  tls: boolean;
  /** The root CA's directory, with mTLS. */
  caDir?: string;
}

type DemoApp = Awaited<ReturnType<typeof startDemoApp>>;

/**
 * The control plane on the local mesh: reads a mesh directory, gives every pod a loopback address,
 * runs a real l7mp process per proxy pod and a demo app per annotated pod, computes each proxy's
 * config with the engine and keeps the proxies in sync through the reconciler. Live state (process,
 * sync, config, sessions) is kept in a LiveStateStore that the console streams.
 */
export class ControlPlane {
  readonly live: LiveStateStore;
  /** Proxyless gRPC clients' load reports (LRS), kept LOAD_KEEP_MS (empty without xDS). */
  readonly loadReports: LoadReportStore;
  private readonly loadFeed: LoadLiveFeed;
  private engine!: MeshEngine;
  private prepared!: PreparedLocalMesh;
  private desired: Record<string, ProxyL7mpConfig> = {};
  private diagnostics: Diagnostic[] = [];
  private readonly supervisor: L7mpSupervisor;
  private readonly reconciler: Reconciler;
  private readonly apps = new Map<string, DemoApp>();
  /** What each running demo app was started as, to tell a changed app after a reload. */
  private readonly appSpecs = new Map<string, PreparedLocalMesh['apps'][number]>();
  private readonly stateDir: string;
  private readonly podsDir: string;
  private readonly logger: Pick<Console, 'info' | 'warn' | 'error'>;
  private pollTimer: NodeJS.Timeout | undefined;
  private watcher: TreeWatcher | undefined;
  private stopped = false;
  private readonly xds: { publisher: MeshXdsPublisher; server: AdsServer } | undefined;
  private xdsListening: XdsListening | undefined;
  private xdsSnapshots: Record<string, ProxyXdsSnapshot> = {};
  private xdsDiagnostics: Diagnostic[] = [];
  private loggedXdsErrors = '';
  /** Which ADS stream live state shows for each node id. */
  private readonly xdsLive = new XdsStreamTracker(
    (nodeId, xds) => this.showXds(nodeId, xds),
    (nodeId) => !!this.live.get().proxies[nodeId],
  );

  private constructor(private readonly options: ControlPlaneOptions) {
    this.stateDir = options.stateDir ?? localMeshStateDir();
    this.podsDir = localMeshPodsDir(this.stateDir);
    this.logger = options.logger ?? console;
    this.live = new LiveStateStore(options.meshDir);
    this.supervisor = new L7mpSupervisor({ stateDir: path.join(this.stateDir, 'proxies') });
    this.reconciler = new Reconciler({
      driftIntervalMs: options.driftIntervalMs ?? 2000,
      logger: this.logger,
    });
    if (options.xds) {
      const publisher = new MeshXdsPublisher();
      const server = new AdsServer({
        cache: publisher.cache,
        logger: { info: (m) => this.logger.info(m), warn: (m) => this.logger.warn(m) },
        ...(options.metrics ? { metrics: options.metrics.ads } : {}),
        ...(options.xds.loadReportingIntervalMs
          ? { loadReportingIntervalMs: options.xds.loadReportingIntervalMs }
          : {}),
      });
      this.xds = { publisher, server };
    }
    this.loadFeed = new LoadLiveFeed(this.live);
    this.loadReports = this.loadFeed.store;
    if (this.xds) this.loadFeed.attach(this.xds.server);
    const metrics = options.metrics;
    if (metrics) {
      metrics.watchReconciler(this.reconciler);
      metrics.watchSupervisor(this.supervisor);
      metrics.setSources({
        diagnostics: () => this.live.get().diagnostics,
        ...(this.xds ? { xds: () => this.xds?.server.streamStats() } : {}),
      });
    }
  }

  /** Loads the mesh, starts proxies and apps, and begins reconciling. Resolves once processes are up. */
  static async startLocal(options: ControlPlaneOptions): Promise<ControlPlane> {
    const cp = new ControlPlane(options);
    try {
      await cp.start();
    } catch (e) {
      // A half-started mesh must not leave proxies or apps behind (their ports would block a retry).
      await cp.stop().catch(() => undefined);
      throw e;
    }
    return cp;
  }

  private async start(): Promise<void> {
    await mkdir(this.podsDir, { recursive: true });
    const files = await readManifestDir(this.options.meshDir);
    this.prepared = prepareLocalMesh(parseManifests(files));
    this.engine = new MeshEngine(this.prepared.snapshot);
    this.recompute();
    // Before any process starts: a taken ADS port fails the start without proxies to clean up.
    if (this.xds) await this.startXds(this.xds.server, this.options.xds!);

    this.reconciler.on('state', (s: ProxySyncState) => this.onSyncState(s));
    this.supervisor.on('ready', (e: { id: string }) => {
      this.reconciler.proxyRestarted(e.id);
      this.refreshProcess(e.id);
    });
    this.supervisor.on('exit', (e: { id: string }) => this.refreshProcess(e.id));

    await Promise.all(Object.values(this.desired).map((p) => this.startProxy(p)));
    for (const app of this.prepared.apps) await this.startApp(app);
    this.publishMesh();
    this.reconciler.setDesired(this.desiredMap());
    this.pollTimer = setInterval(() => void this.pollLive(), this.options.driftIntervalMs ?? 2000);
    this.pollTimer.unref();
    if (this.options.watch !== false) this.watchMeshDir();
  }

  private async startXds(server: AdsServer, o: ControlPlaneXdsOptions): Promise<void> {
    this.xdsLive.attach(server);
    const caDir = o.insecure ? undefined : (o.tlsDir ?? path.join(this.stateDir, 'xds-ca'));
    const { port, tls } = await listenAds(server, {
      host: o.host,
      port: o.port,
      ...(caDir ? { tlsDir: caDir } : { insecure: true }),
    });
    const host = urlHost(o.host);
    this.xdsListening = { listen: `${host}:${port}`, port, tls, ...(caDir ? { caDir } : {}) };
    this.live.setXds({ listen: this.xdsListening.listen, tls });
  }

  /** Where the ADS server listens, when the control plane serves xDS. */
  get xdsServer(): XdsListening | undefined {
    return this.xdsListening && { ...this.xdsListening };
  }

  /** Reloads when a file of the mesh directory changes (debounced): an edit is a model change. */
  private watchMeshDir(): void {
    let timer: NodeJS.Timeout | undefined;
    this.watcher = watchTree(
      this.options.meshDir,
      (file) => {
        if (!/\.(ya?ml|json)$/.test(file) && /\.[^/]*$/.test(file)) return;
        clearTimeout(timer);
        timer = setTimeout(() => {
          this.reload().catch((e: Error) =>
            this.logger.error(`meshdeck: reloading ${this.options.meshDir} failed: ${e.message}`),
          );
        }, 150);
      },
      { logger: this.logger },
    );
  }

  /** The last lines an l7mp process printed (stdout, stderr and the supervisor's own notes). */
  logs(proxy: string, tail = 200): { at: string; stream: string; line: string }[] {
    const id = Object.keys(this.desired).find((k) => k === proxy || k.endsWith(`/${proxy}`));
    return id
      ? this.supervisor.logs(id, { tail }).map((l) => ({ at: l.at, stream: l.stream, line: l.line }))
      : [];
  }

  private async startProxy(p: ProxyL7mpConfig): Promise<void> {
    await this.supervisor.start({
      id: p.proxy.id,
      apiPort: p.proxy.apiPort,
      logLevel: this.options.logLevel ?? 'warn',
    });
  }

  private async startApp(app: PreparedLocalMesh['apps'][number]): Promise<void> {
    const [ns, pod] = app.pod.split('/') as [string, string];
    let spec: Parameters<typeof startDemoApp>[0];
    if (app.kind === 'grpc-client') {
      // Without plaintext ADS it cannot connect: grpcClientAppDiagnostics says so on the Pod.
      const ads = this.xdsListening;
      if (!ads || ads.tls || !this.options.xds?.insecure) return;
      spec = {
        kind: app.kind,
        name: app.name,
        target: app.target!,
        ratePerSecond: app.rate!,
        ads: dialableAds(ads.listen),
        nodeId: app.pod,
      };
    } else if (app.path !== undefined) {
      spec = {
        kind: app.kind,
        name: app.name,
        path: path.join(this.podsDir, ns, pod, app.path),
      } as typeof spec;
    } else {
      spec = {
        kind: app.kind,
        name: app.name,
        address: app.address,
        port: app.port!,
        ...(app.failPercent !== undefined ? { failPercent: app.failPercent } : {}),
      } as typeof spec;
    }
    try {
      this.apps.set(app.pod, await startDemoApp(spec));
      this.appSpecs.set(app.pod, app);
    } catch (e) {
      this.logger.error(
        `meshdeck: demo app ${app.kind} of ${app.pod} did not start: ${(e as Error).message}`,
      );
    }
  }

  /** Recomputes every proxy's desired config (l7mp and xDS) from the engine's current result. */
  private recompute(): void {
    const local = renderLocalMesh(this.engine.current, { podsDir: this.podsDir, apps: this.prepared.apps });
    this.desired = local.proxies;
    this.publishXds();
    this.diagnostics = normalizeDiagnostics([
      ...this.prepared.diagnostics,
      ...grpcClientAppDiagnostics(this.prepared.apps, this.options.xds),
      ...local.diagnostics,
      ...this.xdsDiagnostics,
    ]);
  }

  /**
   * Renders every proxy's xDS resources into the snapshot cache (only proxies whose content changed
   * are pushed). The render's warnings count for proxyless gRPC clients only: l7mp proxies are
   * configured over REST, and what xDS cannot express for them would bury the mesh's own diagnostics.
   */
  private publishXds(): void {
    if (!this.xds) return;
    try {
      const r = this.xds.publisher.publish(this.engine.current.mesh, (p) => p.role === 'grpc');
      this.xdsSnapshots = r.snapshots;
      this.xdsDiagnostics = r.diagnostics;
    } catch (e) {
      // The l7mp side must keep working whatever happens here; proxies keep their last snapshot.
      this.xdsDiagnostics = [
        {
          severity: 'error',
          code: 'xds-render-failed',
          message: `rendering the xDS resources failed; ADS clients keep their previous config: ${(e as Error).message}`,
          object: { kind: 'File', name: this.options.meshDir },
        },
      ];
    }
    // Logged once per distinct set: a pod going unready recomputes too, and must not repeat them.
    const errors = this.xdsDiagnostics
      .filter((d) => d.severity === 'error')
      .map((d) => `${d.code}: ${d.message}`);
    const key = errors.join('\n');
    if (key !== this.loggedXdsErrors) for (const m of errors) this.logger.error(`meshdeck xDS: error: ${m}`);
    this.loggedXdsErrors = key;
  }

  private desiredMap(): Record<string, { apiUrl: string; config: ProxyL7mpConfig['config'] }> {
    return Object.fromEntries(
      Object.entries(this.desired).map(([id, p]) => [id, { apiUrl: p.proxy.apiUrl, config: p.config }]),
    );
  }

  /** The desired config of every proxy (what the local mesh pushes). */
  desiredConfigs(): Record<string, ProxyL7mpConfig> {
    return this.desired;
  }

  /** Sends one message through a listener and reports the echo, the path and the latency. */
  probe(req: ProbeRequest): Promise<ProbeResult> {
    return probeListener(this.desired, req);
  }

  /** Sends `count` probes through a listener and sums them up against the split the listener reaches. */
  trafficTest(req: TrafficTestRequest): Promise<TrafficTestResult> {
    return runTrafficTest({ proxies: this.desired, mesh: this.engine.current.mesh }, req);
  }

  /**
   * Takes pods out of (or back into) their Services' endpoints, as a pod going unready would: the
   * EndpointSlices change and only the proxies whose clusters follow those Services are re-pushed.
   */
  setPodReady(pod: string, ready: boolean): void {
    const slices = this.engine.snapshot.endpointSlices;
    const touched = new Map<string, EndpointSlice[]>();
    for (const s of slices) {
      const svc = s.metadata.labels?.[SERVICE_NAME_LABEL];
      if (!svc || !(s.endpoints ?? []).some((e) => e.targetRef?.name === pod)) continue;
      const next: EndpointSlice = {
        ...s,
        endpoints: (s.endpoints ?? []).map((e) =>
          e.targetRef?.name === pod ? { ...e, conditions: { ...(e.conditions ?? {}), ready } } : e,
        ),
      };
      const key = `${s.metadata.namespace ?? 'default'}/${svc}`;
      touched.set(key, [...(touched.get(key) ?? []), next]);
    }
    for (const [key, list] of touched) {
      const [ns, name] = key.split('/') as [string, string];
      this.engine.setServiceEndpointSlices(ns, name, list);
    }
    this.afterEngineChange();
  }

  /** Deletes a pod as Kubernetes would: its endpoints leave their Services and its demo app stops. */
  async removePod(pod: string): Promise<void> {
    this.setPodReady(pod, false);
    const key = [...this.apps.keys()].find((k) => k === pod || k.endsWith(`/${pod}`));
    if (key) {
      await this.apps.get(key)!.stop();
      this.apps.delete(key);
      this.appSpecs.delete(key);
    }
  }

  /** What a pod's demo app has received (oldest first), e.g. the JSONSocket labels that reached it. */
  appReceived(pod: string): ReturnType<DemoApp['received']> {
    const key = [...this.apps.keys()].find((k) => k === pod || k.endsWith(`/${pod}`));
    return key ? this.apps.get(key)!.received() : [];
  }

  /** Re-reads the mesh directory (after an edit) and pushes what changed. */
  reload(): Promise<void> {
    return this.reloadSerially();
  }

  // The file watcher and an apply from the console may both ask at once; overlapping reloads could
  // start the same new proxy twice.
  private readonly reloadSerially = coalescingRunner(() =>
    this.options.metrics ? this.options.metrics.timeReload(() => this.reloadOnce()) : this.reloadOnce(),
  );

  private async reloadOnce(): Promise<void> {
    const files = await readManifestDir(this.options.meshDir);
    this.prepared = prepareLocalMesh(parseManifests(files));
    this.engine.setSnapshot(this.prepared.snapshot);
    this.recompute();
    await this.reconcileProcesses();
    // Not recomputed again: a change while a proxy started (setPodReady) recomputed and published.
    this.publishDesired();
  }

  /**
   * After a reload, the running processes follow the mesh: proxies and demo apps of pods that are gone
   * (or changed their API port or app) are stopped, new ones started, unchanged ones left running.
   * Without this, applying another mesh and then the first one again found its proxies still running.
   */
  private async reconcileProcesses(): Promise<void> {
    const wanted = new Map(Object.values(this.desired).map((p) => [p.proxy.id, p]));
    for (const st of this.supervisor.statuses()) {
      if (st.state === 'stopped') continue;
      const want = wanted.get(st.id);
      if (!want || want.proxy.apiPort !== st.apiPort) {
        this.logger.info?.(
          `meshdeck: stopping proxy ${st.id} (${want ? 'API port changed' : 'gone from the mesh'})`,
        );
        await this.supervisor.stop(st.id);
      }
    }
    for (const p of wanted.values()) {
      const st = this.supervisor.status(p.proxy.id);
      // 'exited' and 'backoff' are crashes the supervisor restarts by itself.
      if (!st || st.state === 'stopped') await this.startProxy(p);
    }
    const apps = new Map(this.prepared.apps.map((a) => [a.pod, a]));
    for (const [pod, running] of [...this.apps]) {
      const want = apps.get(pod);
      if (!want || JSON.stringify(want) !== JSON.stringify(this.appSpecs.get(pod))) {
        await running.stop().catch(() => undefined);
        this.apps.delete(pod);
        this.appSpecs.delete(pod);
      }
    }
    for (const [pod, app] of apps) if (!this.apps.has(pod)) await this.startApp(app);
  }

  private afterEngineChange(): void {
    this.recompute();
    this.publishDesired();
  }

  private publishDesired(): void {
    this.publishMesh();
    this.reconciler.setDesired(this.desiredMap());
  }

  /** The supervisor, for fault injection in tests (kill a proxy). */
  get processes(): L7mpSupervisor {
    return this.supervisor;
  }

  /** Resolves when no reconcile is pending or running. */
  whenIdle(): Promise<void> {
    return this.reconciler.whenIdle();
  }

  syncStates(): ProxySyncState[] {
    return this.reconciler.states();
  }

  /** Stops reconciling, the apps and every proxy process. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.pollTimer);
    this.watcher?.close();
    if (this.xds) {
      // Closing every stream emits a disconnect each: nothing is left to show them to.
      this.xdsLive.detach(this.xds.server);
      this.loadFeed.stop();
      await this.xds.server.stop();
      this.xds.publisher.cache.close();
    }
    await this.reconciler.stop();
    await Promise.all([...this.apps.values()].map((a) => a.stop().catch(() => undefined)));
    await this.supervisor.stopAll();
  }

  // ------------------------------------------------------------------ live state

  private publishMesh(): void {
    const proxies: Record<string, ProxyLiveState> = {};
    const old = this.live.get().proxies;
    for (const [id, p] of Object.entries(this.desired)) {
      proxies[id] = l7mpProxyLiveState(p, old[id]);
      const xds = this.xdsLive.get(id);
      if (xds) proxies[id]!.xds = xds;
    }
    // Proxyless gRPC clients run no l7mp: listed with what xDS serves them and their ADS stream.
    for (const p of Object.values(this.engine.current.mesh.proxies)) {
      if (p.role !== 'grpc') continue;
      proxies[p.id] = grpcProxyLiveState(
        p,
        this.xdsSnapshots[p.id],
        this.xdsLive.get(p.id),
        !!this.xds,
        this.loadFeed.get(p.id),
      );
    }
    // Remembered streams of nodes that left the mesh and are gone are dropped (bounded memory).
    this.xdsLive.prune((id) => !!proxies[id]);
    const services = serviceLiveStates(this.engine.snapshot.endpointSlices);
    this.live.setMesh({ proxies, services, diagnostics: this.diagnostics });
    for (const id of Object.keys(proxies)) this.refreshProcess(id);
  }

  private showXds(nodeId: string, xds: ProxyXdsLiveState): void {
    const prev = this.live.get().proxies[nodeId];
    if (!prev) return;
    this.live.updateProxy(nodeId, prev.role === 'grpc' ? { xds, ...grpcSyncFields(xds, true) } : { xds });
  }

  private onSyncState(s: ProxySyncState): void {
    const prev = this.live.get().proxies[s.id];
    if (!prev) return;
    this.live.updateProxy(s.id, syncStatePatch(prev, s));
  }

  private refreshProcess(id: string): void {
    const st = this.supervisor.status(id);
    const prev = this.live.get().proxies[id];
    if (!st || !prev) return;
    this.live.updateProxy(id, {
      process: {
        pid: st.pid,
        state: st.state,
        restarts: st.restarts,
        startedAt: st.startedAt,
        lastExit: st.lastExit,
      },
      counters: { ...prev.counters, restarts: st.restarts },
    });
  }

  /** Reads sessions from every proxy; l7mp answers 422 while sessions with ingress/egress chains exist. */
  private async pollLive(): Promise<void> {
    await Promise.all(
      Object.values(this.desired).map(async (p) => {
        const sessions = await readSessions(p);
        const prev = this.live.get().proxies[p.proxy.id];
        if (prev) this.live.updateProxy(p.proxy.id, sessionsPatch(prev, sessions));
      }),
    );
  }
}

/** The ADS address a local client dials: an unspecified listen host (all interfaces) means loopback. */
function dialableAds(listen: string): string {
  const i = listen.lastIndexOf(':');
  const host = listen.slice(0, i);
  const port = listen.slice(i + 1);
  if (host === '0.0.0.0' || host === '') return `127.0.0.1:${port}`;
  if (host === '[::]') return `[::1]:${port}`;
  return listen;
}
