/**
 * The control plane in Kubernetes mode:
 *
 *   KubeSource (informers) ──Snapshot──> MeshEngine ──per-proxy l7mp config──> Reconciler ──REST──> l7mp
 *                                            │                                  (http://<podIP>:<api port>)
 *                                            ├──resolved mesh──> MeshXdsPublisher (ADS), when given
 *                                            └──diagnostics + proxy sync──> status conditions of the CRs
 *                                                  (l7mp: the Reconciler's; gRPC clients: their ADS streams')
 *
 * An EndpointSlice-only change takes the engine's incremental path. Status (Accepted, ResolvedRefs,
 * Programmed) goes through the status subresource, and only when it differs from what the object says.
 * Nothing here throws on input: a failure is logged and the last good state stays (proxies keep their
 * config). `active: false` (a replica that is not the leader) computes and serves xDS but neither
 * pushes to proxies nor writes status.
 */
import { EventEmitter } from 'node:events';
import os from 'node:os';
import * as k8s from '@kubernetes/client-node';
import type { CompiledMesh } from '@/lib/engine/compileMesh';
import { MeshEngine } from '@/lib/engine/meshEngine';
import {
  type KubeSnapshot,
  MESH_CRD_PLURALS,
  type MeshCrdKind,
  type MeshObjectInfo,
} from '@/lib/kube/kubeSnapshot';
import {
  conditionsEqual,
  type MeshCondition,
  meshStatusConditions,
  PROXY_PHASES,
  type ProxyPhase,
  type ProxyProgress,
  withTransitionTimes,
} from '@/lib/kube/meshStatus';
import { type EndpointSlice, SERVICE_NAME_LABEL } from '@/lib/model/kube';
import { conditionEvents, proxyEvent } from '@/lib/kube/meshEvents';
import { jsonEqual } from '@/lib/util/jsonEqual';
import { coalescingRunner } from '@/lib/util/coalescingRunner';
import { backoffDelay } from '../l7mp/backoffDelay';
import {
  type DesiredL7mpProxy,
  Reconciler,
  type ReconcilerOptions,
  type ProxySyncState,
} from '../l7mp/Reconciler';
import type { ProxyXdsLiveState } from '../controlPlane/liveState';
import { grpcSyncFields, xdsLiveState } from '../controlPlane/xdsLiveState';
import { newest, type XdsStreamSource, XdsStreamTracker } from '../controlPlane/xdsStreamTracker';
import type { AdsServer, ProxyStatus } from '../xds/AdsServer';
import type { MeshXdsPublisher } from '../xds/meshXds';
import { EventRecorder } from './eventRecorder';
import { withTimeout } from '@/lib/util/withTimeout';
import {
  describeError,
  type InformerState,
  KubeSource,
  type KubeSourceChange,
  type KubeSourceOptions,
  MESH_GROUP,
  MESH_VERSION,
} from './kubeSource';

export interface KubeControllerLogger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export interface KubeControllerOptions {
  kubeConfig: k8s.KubeConfig;
  /** Watch one namespace only (default: all). */
  namespace?: string;
  /** Push to proxies and write status (default true); false computes and serves xDS only. */
  active?: boolean;
  /** Also render every proxy's xDS resources into this publisher's cache. */
  xds?: MeshXdsPublisher;
  /**
   * The ADS server that serves `xds`: its streams' ACKs and NACKs become the proxyless gRPC clients'
   * progress in Programmed (without it their acknowledgements are not tracked).
   */
  xdsServer?: AdsServer;
  /**
   * The other replicas' ADS streams (ReplicaPeers): a client streaming from another replica makes
   * progress in Programmed too.
   */
  replicaStreams?: XdsStreamSource & { proxyStatus(): ProxyStatus[] };
  /** Options of the controller's own l7mp Reconciler (drift check interval, timeouts...). */
  reconciler?: ReconcilerOptions;
  /** Coalescing, restart backoff, idle-watch relist and request timeout of the informers. */
  source?: Pick<
    KubeSourceOptions,
    'coalesceMs' | 'coalesceMaxMs' | 'backoff' | 'watchIdleMs' | 'requestTimeoutMs'
  >;
  /** Quiet period before status is computed and written; default 100 ms. */
  statusCoalesceMs?: number;
  /** The field manager of status writes; default `meshdeck-controller`. */
  fieldManager?: string;
  /**
   * Kubernetes Events about condition changes and failed pushes (lib/kube/meshEvents.ts), reported as
   * this instance (default `<hostname>-<pid>`); false: none.
   */
  events?: { instance?: string } | false;
  logger?: KubeControllerLogger;
}

/** What one snapshot did. */
export interface KubeControllerUpdate {
  /** Proxies whose desired l7mp config changed. */
  changedProxies: string[];
  incremental: boolean;
  initial: boolean;
}

export interface KubeControllerEvents {
  update: [update: KubeControllerUpdate];
  /** A status write went through: `Kind/namespace/name` and the conditions written. */
  status: [key: string, conditions: MeshCondition[]];
  /** A status pass ended: how many objects it compared and which it wrote. */
  statusChecked: [checked: number, written: string[]];
}

interface Written {
  json: string;
  /** The object's resourceVersion before and after our write: the cache shows one of them until it sees another writer. */
  before?: string;
  after?: string;
}

type RawMeshObject = k8s.KubernetesObject & { status?: unknown };

const STATUS_WRITES_IN_FLIGHT = 8;

/** Informers -> engine -> l7mp proxies (and xDS), with status written back (see the module comment). */
export class KubeController extends EventEmitter<KubeControllerEvents> {
  readonly source: KubeSource;
  readonly reconciler: Reconciler;
  private readonly logger: KubeControllerLogger;
  private readonly custom: k8s.CustomObjectsApi;
  private readonly fieldManager: string;
  private readonly statusCoalesceMs: number;
  private engine: MeshEngine | undefined;
  private kube: KubeSnapshot | undefined;
  private desired: Record<string, DesiredL7mpProxy> = {};
  private active: boolean;
  private stopped = false;
  private loggedErrors = '';
  private statusTimer: NodeJS.Timeout | undefined;
  private statusRetries = 0;
  private readonly written = new Map<string, Written>();
  private readonly loggedWriteErrors = new Map<string, string>();
  private readonly statusPass = coalescingRunner(() => this.writeStatus());
  private readonly tracker: XdsStreamTracker | undefined;
  /** The gRPC clients' progress the last status pass used (JSON by id): an ADS event that changes none is no news. */
  private grpcSeen = new Map<string, string>();
  private readonly events: EventRecorder | undefined;
  /** A status or Event write that gets no answer for this long fails (the informers' request timeout). */
  private readonly requestTimeoutMs: number;
  /** Each l7mp proxy's phase as last told (while active): a proxy's event is about a change. */
  private readonly proxyPhases = new Map<string, string>();

  constructor(private readonly options: KubeControllerOptions) {
    super();
    this.logger = options.logger ?? console;
    this.active = options.active ?? true;
    this.fieldManager = options.fieldManager ?? 'meshdeck-controller';
    this.statusCoalesceMs = options.statusCoalesceMs ?? 100;
    this.requestTimeoutMs = options.source?.requestTimeoutMs ?? 30_000;
    this.custom = options.kubeConfig.makeApiClient(k8s.CustomObjectsApi);
    this.reconciler = new Reconciler({ logger: this.logger, ...options.reconciler });
    this.source = new KubeSource({
      kubeConfig: options.kubeConfig,
      ...(options.namespace ? { namespace: options.namespace } : {}),
      ...options.source,
      logger: this.logger,
    });
    this.source.on('snapshot', (ks, change) => this.onSnapshot(ks, change));
    // Someone else changed a status (or our own write came back): compare again.
    this.source.on('status', () => this.scheduleStatus());
    this.reconciler.on('state', (s) => {
      this.proxyStateEvent(s);
      this.scheduleStatus();
    });
    if (options.events !== false)
      this.events = new EventRecorder(options.kubeConfig, {
        instance: options.events?.instance ?? `${os.hostname()}-${process.pid}`,
        requestTimeoutMs: this.requestTimeoutMs,
        logger: this.logger,
      });
    if (options.xdsServer) {
      this.tracker = new XdsStreamTracker(
        (nodeId) => {
          const p = this.grpcProgress(nodeId);
          if (p && JSON.stringify(p) !== this.grpcSeen.get(nodeId)) this.scheduleStatus();
        },
        (nodeId) => this.isGrpcClient(nodeId),
      );
      this.tracker.attach(options.xdsServer);
      if (options.replicaStreams)
        this.tracker.attach(options.replicaStreams, 'peers', options.replicaStreams.proxyStatus());
    }
  }

  /** Creates a controller and starts its informers (see whenSynced). */
  static start(options: KubeControllerOptions): KubeController {
    const c = new KubeController(options);
    c.source.start();
    return c;
  }

  /** Resolves once the informers listed everything and the first result was computed. */
  whenSynced(timeoutMs: number): Promise<void> {
    return this.source.whenSynced(timeoutMs);
  }

  /** Becomes (or stops being) the replica that pushes to proxies and writes status. */
  setActive(active: boolean): void {
    if (this.stopped || active === this.active) return;
    this.active = active;
    this.written.clear();
    this.proxyPhases.clear();
    // Not active: stop managing proxies and leave their config alone for the replica that is.
    this.reconciler.setDesired(active ? this.desired : {});
    if (active) this.scheduleStatus();
    else clearTimeout(this.statusTimer);
  }

  get isActive(): boolean {
    return this.active;
  }

  /** The engine's current result (undefined before the first snapshot). */
  get compiled(): CompiledMesh | undefined {
    return this.engine?.current;
  }

  /** The snapshot the current result was computed from. */
  get snapshot(): KubeSnapshot | undefined {
    return this.kube;
  }

  /** What each l7mp proxy should run: its REST API and config. */
  desiredConfigs(): Readonly<Record<string, DesiredL7mpProxy>> {
    return this.desired;
  }

  syncStates(): ProxySyncState[] {
    return this.reconciler.states();
  }

  informerStates(): InformerState[] {
    return this.source.states();
  }

  /** Resolves when no l7mp push is pending or running (and, when not active, no status write either). */
  async whenIdle(): Promise<void> {
    // Not active: a status pass still running must end before a successor writes, so wait for it too
    // (the queued pass returns at once, and patchStatus skips writes once inactive).
    await Promise.all([
      this.reconciler.whenIdle(),
      this.active ? undefined : this.statusPass().catch(() => undefined),
    ]);
  }

  /** Stops the informers, the reconciler and status writes. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.statusTimer);
    if (this.tracker) {
      this.tracker.detach(this.options.xdsServer!);
      if (this.options.replicaStreams) this.tracker.detach(this.options.replicaStreams);
    }
    await this.source.stop();
    await this.reconciler.stop();
    // The last status pass and the Events still queued get a moment, not a say: an API server that does
    // not answer must not hold up a stop (a write in flight waits out its own requestTimeoutMs).
    const last = (async () => {
      await this.statusPass().catch(() => undefined);
      await this.events?.whenIdle();
    })();
    await withTimeout(last, STOP_WAIT_MS, 'the last status writes and events').catch((e: unknown) =>
      this.logger.warn(`meshdeck kube: stopping without them: ${(e as Error).message}`),
    );
  }

  // ------------------------------------------------------------------ snapshot -> engine -> proxies

  private onSnapshot(ks: KubeSnapshot, change: KubeSourceChange): void {
    if (this.stopped) return;
    let update: KubeControllerUpdate;
    try {
      update = this.updateEngine(ks, change);
    } catch (e) {
      this.logger.error(
        `meshdeck kube: the engine failed on the new snapshot; keeping the last good state: ${describeError(e)}`,
      );
      return;
    }
    this.kube = ks;
    this.publish();
    this.emit('update', update);
  }

  private updateEngine(ks: KubeSnapshot, change: KubeSourceChange): KubeControllerUpdate {
    if (!this.engine) {
      this.engine = new MeshEngine(ks.snapshot);
      return {
        changedProxies: Object.keys(this.engine.current.l7mp.proxies).sort(),
        incremental: false,
        initial: true,
      };
    }
    const prev = this.kube?.snapshot;
    const slicesOnly =
      !change.initial &&
      change.kinds.length === 1 &&
      change.kinds[0] === 'EndpointSlice' &&
      prev !== undefined &&
      jsonEqual(prev.rejected, ks.snapshot.rejected) &&
      jsonEqual(prev.diagnostics, ks.snapshot.diagnostics);
    if (!slicesOnly) {
      const u = this.engine.setSnapshot(ks.snapshot);
      return { ...u, initial: change.initial };
    }
    const bySvc = new Map<string, EndpointSlice[]>();
    for (const s of ks.snapshot.endpointSlices) {
      const svc = s.metadata.labels?.[SERVICE_NAME_LABEL];
      if (!svc) continue;
      const key = `${s.metadata.namespace ?? 'default'}/${svc}`;
      bySvc.set(key, [...(bySvc.get(key) ?? []), s]);
    }
    const changed = new Set<string>();
    let incremental = true;
    for (const key of change.endpointSliceServices) {
      const [ns, name] = key.split('/') as [string, string];
      const u = this.engine.setServiceEndpointSlices(ns, name, bySvc.get(key) ?? []);
      incremental &&= u.incremental;
      for (const p of u.changedProxies) changed.add(p);
    }
    return { changedProxies: [...changed].sort(), incremental, initial: false };
  }

  private publish(): void {
    const compiled = this.engine!.current;
    const desired: Record<string, DesiredL7mpProxy> = {};
    for (const [id, p] of Object.entries(compiled.l7mp.proxies)) {
      desired[id] = { apiUrl: p.proxy.apiUrl, config: p.config };
    }
    this.desired = desired;
    if (this.active) this.reconciler.setDesired(desired);
    if (this.options.xds) {
      try {
        this.options.xds.publish(compiled.mesh, (p) => p.role === 'grpc');
      } catch (e) {
        // The l7mp side must keep working whatever happens here; ADS clients keep their last snapshot.
        this.logger.error(`meshdeck kube: rendering the xDS resources failed: ${describeError(e)}`);
      }
    }
    const errors = compiled.diagnostics.filter((d) => d.severity === 'error');
    const key = errors.map(
      (d) =>
        `${d.code} ${d.object.kind} ${d.object.namespace}/${d.object.name}${d.path ? ` ${d.path}` : ''}: ${d.message}`,
    );
    const joined = key.join('\n');
    // Once per distinct set: an endpoint change recomputes too, and must not repeat them.
    if (joined !== this.loggedErrors) for (const m of key) this.logger.warn(`meshdeck kube: error: ${m}`);
    this.loggedErrors = joined;
    this.tracker?.prune((id) => this.isGrpcClient(id));
    this.scheduleStatus();
  }

  // ------------------------------------------------------------------ proxyless gRPC clients (ADS)

  private isGrpcClient(id: string): boolean {
    return this.engine?.current.mesh.proxies[id]?.role === 'grpc';
  }

  /**
   * A gRPC client's progress from its ADS stream (undefined when the ADS server is not followed): the
   * server's open streams when given (their status is computed against the snapshot the cache holds now,
   * and includes streams opened before the tracker attached), else what the tracker last saw; the tracker
   * also remembers a stream that closed.
   */
  private grpcProgress(id: string, open?: Map<string, ProxyXdsLiveState>): ProxyProgress | undefined {
    if (!this.tracker || !this.isGrpcClient(id)) return undefined;
    const xds = open?.get(id) ?? this.tracker.get(id);
    const f = grpcSyncFields(xds, this.options.xds !== undefined);
    const phase = (PROXY_PHASES as readonly string[]).includes(f.phase) ? (f.phase as ProxyPhase) : 'pending';
    const message = grpcMessage(phase, xds);
    return { phase, inSync: f.inSync, ...(message ? { message } : {}) };
  }

  /** The open streams of this replica's ADS server and the other replicas', the newest of each node id. */
  private openStreams(): Map<string, ProxyXdsLiveState> {
    const newestOf = new Map<string, ProxyStatus>();
    for (const s of [
      ...(this.options.xdsServer?.proxyStatus() ?? []),
      ...(this.options.replicaStreams?.proxyStatus() ?? []),
    ]) {
      const other = newestOf.get(s.nodeId);
      newestOf.set(s.nodeId, other ? newest([other, s])! : s);
    }
    return new Map([...newestOf].map(([nodeId, s]) => [nodeId, xdsLiveState(s)]));
  }

  /** A Pod event when an l7mp proxy's push fails, it cannot be reached, or it is in sync again (leader only). */
  private proxyStateEvent(s: ProxySyncState): void {
    if (!this.active || this.stopped || !this.events) return;
    const before = this.proxyPhases.get(s.id);
    this.proxyPhases.set(s.id, s.phase);
    const failure = pushFailure(s);
    const e = proxyEvent(before, { id: s.id, phase: s.phase, ...(failure ? { failure } : {}) });
    if (!e) return;
    const uid = this.source.raw('Pod', e.regarding.namespace, e.regarding.name)?.metadata?.uid;
    this.events.record(uid ? { ...e, regarding: { ...e.regarding, uid } } : e);
  }

  // ------------------------------------------------------------------ status

  private scheduleStatus(delayMs = this.statusCoalesceMs): void {
    if (this.stopped || !this.active) return;
    clearTimeout(this.statusTimer);
    this.statusTimer = setTimeout(() => {
      this.statusTimer = undefined;
      this.statusPass().catch((e) =>
        this.logger.error(`meshdeck kube: writing status failed: ${describeError(e)}`),
      );
    }, delayMs);
  }

  private async writeStatus(): Promise<void> {
    if (this.stopped || !this.active || !this.kube || !this.engine) return;
    const compiled = this.engine.current;
    const proxies: Record<string, ProxyProgress> = {};
    for (const s of this.reconciler.states()) {
      const message = pushFailure(s);
      proxies[s.id] = { phase: s.phase, inSync: s.inSync, ...(message ? { message } : {}) };
    }
    if (this.tracker) {
      const open = this.openStreams();
      const seen = new Map<string, string>();
      for (const [id, p] of Object.entries(compiled.mesh.proxies)) {
        if (p.role !== 'grpc') continue;
        const progress = this.grpcProgress(id, open);
        if (!progress) continue;
        proxies[id] = progress;
        seen.set(id, JSON.stringify(progress));
      }
      this.grpcSeen = seen;
    }
    const all = meshStatusConditions({
      meshObjects: this.kube.meshObjects,
      diagnostics: compiled.diagnostics,
      mesh: compiled.mesh,
      proxies,
    });
    const todo: [string, MeshObjectInfo, MeshCondition[], RawMeshObject][] = [];
    for (const [key, conditions] of Object.entries(all)) {
      const info = this.kube.meshObjects[key]!;
      const raw = this.source.raw(info.ref.kind, info.ref.namespace, info.ref.name) as
        RawMeshObject | undefined;
      // Gone, or changed since this snapshot: the next snapshot brings its status.
      if (!raw || (raw.metadata?.generation ?? undefined) !== info.generation) continue;
      if (conditionsEqual(conditions, raw.status)) continue;
      const json = JSON.stringify(conditions);
      const w = this.written.get(key);
      const rv = raw.metadata?.resourceVersion;
      if (w && w.json === json && (rv === w.before || rv === w.after)) continue; // our write, not seen yet
      todo.push([key, info, conditions, raw]);
    }
    let failed = false;
    const written: string[] = [];
    for (let i = 0; i < todo.length; i += STATUS_WRITES_IN_FLIGHT) {
      const batch = todo.slice(i, i + STATUS_WRITES_IN_FLIGHT);
      const results = await Promise.all(
        batch.map(([key, info, conditions, raw]) => this.patchStatus(key, info, conditions, raw)),
      );
      results.forEach((ok, j) => (ok ? written.push(batch[j]![0]) : (failed = true)));
    }
    this.emit('statusChecked', Object.keys(all).length, written);
    if (failed) {
      this.statusRetries++;
      this.scheduleStatus(Math.max(200, backoffDelay(this.statusRetries, { baseMs: 1000, capMs: 30_000 })));
    } else {
      this.statusRetries = 0;
    }
  }

  /** Writes one object's conditions through the status subresource; false when it should be retried. */
  private async patchStatus(
    key: string,
    info: MeshObjectInfo,
    conditions: MeshCondition[],
    raw: RawMeshObject,
  ): Promise<boolean> {
    if (this.stopped || !this.active) return true;
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    const body = { status: { conditions: withTransitionTimes(conditions, raw.status, now) } };
    try {
      // client-node sets no timeout: a write that gets no answer fails and is retried, instead of holding
      // every later status pass behind it for as long as the TCP stack keeps the connection.
      const res = (await withTimeout(
        this.custom.patchNamespacedCustomObjectStatus(
          {
            group: MESH_GROUP,
            version: MESH_VERSION,
            namespace: info.ref.namespace,
            plural: MESH_CRD_PLURALS[info.ref.kind as MeshCrdKind],
            name: info.ref.name,
            body,
            fieldManager: this.fieldManager,
          },
          k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
        ),
        this.requestTimeoutMs,
        `writing the status of ${key}`,
      )) as RawMeshObject;
      this.written.set(key, {
        json: JSON.stringify(conditions),
        before: raw.metadata?.resourceVersion,
        after: res.metadata?.resourceVersion,
      });
      this.loggedWriteErrors.delete(key);
      const regarding = {
        apiVersion: `${MESH_GROUP}/${MESH_VERSION}`,
        kind: info.ref.kind,
        namespace: info.ref.namespace,
        name: info.ref.name,
        ...(raw.metadata?.uid ? { uid: raw.metadata.uid } : {}),
      };
      for (const e of conditionEvents(regarding, raw.status, conditions)) this.events?.record(e);
      this.emit('status', key, body.status.conditions);
      return true;
    } catch (e) {
      if (e instanceof k8s.ApiException && e.code === 404) return true; // deleted meanwhile
      const message = describeError(e);
      if (this.loggedWriteErrors.get(key) !== message) {
        this.logger.warn(`meshdeck kube: cannot write the status of ${key}: ${message}; will retry`);
        this.loggedWriteErrors.set(key, message);
      }
      this.written.delete(key);
      return false;
    }
  }
}

/** How long stop() waits for the last status writes and the queued Events. */
const STOP_WAIT_MS = 5000;

/** A failed push in the proxy's own words: the operation, the HTTP status, the message. */
function pushFailure(s: ProxySyncState): string | undefined {
  const f = s.lastPush && !s.lastPush.ok ? s.lastPush.failed : undefined;
  return f
    ? `${f.op ? `${f.op.method} ${f.op.path}: ` : ''}${f.status ? `HTTP ${f.status}: ` : ''}${f.message}`
    : undefined;
}

/** Why a gRPC client is not in sync, in its own words where it gave any (a NACK's error_detail). */
function grpcMessage(phase: ProxyPhase, xds: ProxyXdsLiveState | undefined): string | undefined {
  switch (phase) {
    case 'nacked':
      return Object.entries(xds?.types ?? {})
        .filter(([, t]) => t.status === 'NACKED' && t.lastNack)
        .map(([name, t]) => `NACKed ${name} ${t.lastNack!.version}: ${t.lastNack!.errorDetail.message}`)
        .join('; ');
    case 'not-connected':
      return 'no ADS stream from it';
    case 'disconnected':
      return 'its ADS stream closed (it keeps the config it had, if any)';
    case 'xds-off':
      return 'this control plane serves no xDS';
    default:
      return undefined;
  }
}
