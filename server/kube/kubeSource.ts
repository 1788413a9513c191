/**
 * The engine's input from a Kubernetes API server: one informer (`@kubernetes/client-node` 1.4
 * `makeInformer`) each for VirtualServices, Routes, Targets (`msm.l7mp.io/v1`), Services, EndpointSlices
 * and Pods. Every change that alters what the engine reads is coalesced into a new Snapshot
 * (`snapshotFromKube`); changes it does not read (a CR's status, a Pod's conditions) are not.
 *
 * Failure handling: the informer itself relists on 410 Gone (an expired resourceVersion) and re-watches
 * when the server ends a watch. Any other error stops it (kubernetes-client/javascript `cache.ts`), so
 * the source restarts it with bounded exponential backoff and full jitter; a restart resumes from the
 * last resourceVersion, and the API server answers 410 (relist, with deletes for what vanished) when
 * that is too old. While an informer is down the last snapshot stands: proxies keep their config.
 *
 * Half-open watches: a watch whose TCP connection silently died (a NAT or load balancer forgot it) never
 * errors and never ends, so the informer would go stale for good (kubernetes-client/javascript#958). The
 * watches ask for bookmarks (kube-apiserver 1.36 sent an idle watch one every 1-2 min), and an
 * informer whose watch saw no event at all for `watchIdleMs` relists: its watch is aborted and made to
 * look like 410 Gone to the informer, which lists again and emits only what differs from its cache. A
 * list, or a watch that gets no answer, fails after `requestTimeoutMs` (the client sets no timeout).
 */
import { EventEmitter } from 'node:events';
import * as k8s from '@kubernetes/client-node';
import { withTimeout } from '@/lib/util/withTimeout';
import {
  KUBE_SOURCE_KINDS,
  type KubeObjects,
  type KubeSnapshot,
  type KubeSourceKind,
  type LeanKubeObject,
  leanKubeObject,
  MESH_CRD_PLURALS,
  type MeshCrdKind,
  snapshotFromKube,
} from '@/lib/kube/kubeSnapshot';
import { SERVICE_NAME_LABEL } from '@/lib/model/kube';
import { stableStringify } from '@/lib/util/stableStringify';
import { backoffDelay } from '../l7mp/backoffDelay';

/** The API group and version of the mesh custom resources. */
export const MESH_GROUP = 'msm.l7mp.io';
export const MESH_VERSION = 'v1';

export interface KubeSourceLogger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export interface KubeSourceOptions {
  kubeConfig: k8s.KubeConfig;
  /** Watch one namespace only (default: all namespaces). */
  namespace?: string;
  /** Quiet period that coalesces changes into one snapshot; default 20 ms. */
  coalesceMs?: number;
  /** Longest a change waits while changes keep coming; default 100 ms. */
  coalesceMaxMs?: number;
  /** Restart backoff after an informer error: the first within baseMs, doubling up to capMs. */
  backoff?: { baseMs: number; capMs: number };
  /**
   * Relist an informer whose open watch saw no event (bookmarks included) for this long; default 5 min.
   * Keep it above the API server's bookmark period (1-2 min measured), so a healthy idle watch never
   * relists.
   */
  watchIdleMs?: number;
  /** A list, or a watch request without response headers, fails after this long; default 30 s. */
  requestTimeoutMs?: number;
  random?: () => number;
  logger?: KubeSourceLogger;
}

/** What changed since the previous snapshot. */
export interface KubeSourceChange {
  /** The first snapshot, after every informer listed once. */
  initial: boolean;
  kinds: KubeSourceKind[];
  /** `namespace/service` of every Service whose EndpointSlices changed. */
  endpointSliceServices: string[];
}

/** One informer's health, for diagnostics and tests. */
export interface InformerState {
  kind: KubeSourceKind;
  /** Listed at least once. */
  synced: boolean;
  /**
   * Listed and watching: its watch is open, or being reopened after the server ended it or after an idle
   * relist (false after an error, while the first list runs and while waiting to restart).
   */
  running: boolean;
  /** Restarts after errors so far. */
  restarts: number;
  /** Consecutive failed starts. */
  attempts: number;
  /** Full lists so far: the first one, and every relist (410 Gone, a restart without a resourceVersion). */
  lists: number;
  /** Relists because the open watch saw no event for `watchIdleMs` (a half-open connection, likely). */
  idleRelists: number;
  /** Watch bookmarks received (the API server's sign of life on an idle watch). */
  bookmarks: number;
  /** When the open watch last delivered an event (bookmarks included), or opened. */
  lastEventAt?: string;
  lastError?: { at: string; message: string };
  nextRestartAt?: string;
  objects: number;
}

export interface KubeSourceEvents {
  snapshot: [snapshot: KubeSnapshot, change: KubeSourceChange];
  /** A mesh object changed only in what the engine does not read (its status): `Kind/namespace/name`. */
  status: [key: string];
}

interface Resource {
  kind: KubeSourceKind;
  informer: k8s.Informer<k8s.KubernetesObject> & k8s.ObjectCache<k8s.KubernetesObject>;
  watch: TrackedWatch;
  /** namespace/name -> lean object and its canonical JSON. */
  objects: Map<string, { lean: LeanKubeObject; json: string }>;
  synced: boolean;
  running: boolean;
  restarts: number;
  attempts: number;
  lists: number;
  idleRelists: number;
  bookmarks: number;
  /** Date.now() of the open watch's last event or opening. */
  lastEventAt?: number;
  /** The watch ended without an error (server timeout, 410, idle relist): the informer reopens it itself. */
  reconnecting: boolean;
  /** Counts errors, to tell whether a start attempt saw one. */
  errors: number;
  lastError?: { at: string; message: string };
  loggedError?: string;
  timer?: NodeJS.Timeout;
  nextRestartAt?: number;
}

const silent: KubeSourceLogger = { info: () => {}, warn: () => {}, error: () => {} };

/** Informers for the mesh CRDs, Services, EndpointSlices and Pods, feeding coalesced Snapshots. */
export class KubeSource extends EventEmitter<KubeSourceEvents> {
  private readonly resources: Resource[];
  private readonly logger: KubeSourceLogger;
  private readonly coalesceMs: number;
  private readonly coalesceMaxMs: number;
  private readonly backoff: { baseMs: number; capMs: number };
  private readonly random: () => number;
  private readonly watchIdleMs: number;
  private readonly requestTimeoutMs: number;
  private idleTimer: NodeJS.Timeout | undefined;
  private changedKinds = new Set<KubeSourceKind>();
  private changedServices = new Set<string>();
  private flushTimer: NodeJS.Timeout | undefined;
  private firstChangeAt: number | undefined;
  private last: KubeSnapshot | undefined;
  private started = false;
  private stopped = false;
  private readonly syncWaiters: (() => void)[] = [];

  constructor(private readonly options: KubeSourceOptions) {
    super();
    this.logger = options.logger ?? silent;
    this.coalesceMs = options.coalesceMs ?? 20;
    this.coalesceMaxMs = Math.max(options.coalesceMaxMs ?? 100, this.coalesceMs);
    this.backoff = options.backoff ?? { baseMs: 250, capMs: 30_000 };
    this.random = options.random ?? Math.random;
    this.watchIdleMs = options.watchIdleMs ?? 300_000;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    if (!(this.watchIdleMs > 0) || !(this.requestTimeoutMs > 0))
      throw new Error('KubeSource: watchIdleMs and requestTimeoutMs must be positive');
    this.resources = KUBE_SOURCE_KINDS.map((kind) => this.makeResource(kind));
  }

  /** Starts every informer; resolves at once (see whenSynced). Errors never reject: they restart. */
  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    for (const r of this.resources) void this.run(r);
    // Checked a few times per idle period, so a stale watch relists within 1.25 × watchIdleMs.
    this.idleTimer = setInterval(() => this.relistIdle(), Math.min(this.watchIdleMs / 4, 30_000));
    this.idleTimer.unref?.();
  }

  /** Resolves once the first snapshot was emitted; rejects after `timeoutMs` with what is missing. */
  whenSynced(timeoutMs: number): Promise<void> {
    if (this.last) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const i = this.syncWaiters.indexOf(done);
        if (i >= 0) this.syncWaiters.splice(i, 1);
        const missing = this.resources
          .filter((r) => !r.synced)
          .map((r) => `${r.kind}${r.lastError ? ` (${r.lastError.message})` : ''}`);
        reject(new Error(`informers not synced within ${timeoutMs} ms: ${missing.join(', ')}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      this.syncWaiters.push(done);
    });
  }

  /** The last snapshot emitted (undefined before the first). */
  get current(): KubeSnapshot | undefined {
    return this.last;
  }

  /** The object as the informer holds it (status included), or undefined. */
  raw(kind: KubeSourceKind, namespace: string, name: string): k8s.KubernetesObject | undefined {
    return this.resource(kind).informer.get(name, namespace);
  }

  /** The lean objects of every kind as the informers hold them now (what the next snapshot is built from). */
  leanObjects(): KubeObjects {
    return Object.fromEntries(
      this.resources.map((r) => [r.kind, [...r.objects.values()].map((o) => o.lean)]),
    ) as unknown as KubeObjects;
  }

  /** Every informer's health. */
  states(): InformerState[] {
    return this.resources.map((r) => ({
      kind: r.kind,
      synced: r.synced,
      running: r.running && (r.watch.open || r.reconnecting),
      restarts: r.restarts,
      attempts: r.attempts,
      lists: r.lists,
      idleRelists: r.idleRelists,
      bookmarks: r.bookmarks,
      ...(r.lastEventAt !== undefined ? { lastEventAt: new Date(r.lastEventAt).toISOString() } : {}),
      ...(r.lastError ? { lastError: { ...r.lastError } } : {}),
      ...(r.nextRestartAt !== undefined ? { nextRestartAt: new Date(r.nextRestartAt).toISOString() } : {}),
      objects: r.objects.size,
    }));
  }

  /** Stops every informer and timer. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.flushTimer);
    clearInterval(this.idleTimer);
    for (const r of this.resources) clearTimeout(r.timer);
    await Promise.all(this.resources.map((r) => r.informer.stop().catch(() => undefined)));
  }

  // ------------------------------------------------------------------ informers

  private makeResource(kind: KubeSourceKind): Resource {
    const kc = this.options.kubeConfig;
    const ns = this.options.namespace;
    let path: string;
    let list: () => Promise<k8s.KubernetesListObject<k8s.KubernetesObject>>;
    if (kind === 'VirtualService' || kind === 'Route' || kind === 'Target') {
      const plural = MESH_CRD_PLURALS[kind as MeshCrdKind];
      const custom = kc.makeApiClient(k8s.CustomObjectsApi);
      const group = { group: MESH_GROUP, version: MESH_VERSION, plural };
      path = ns
        ? `/apis/${MESH_GROUP}/${MESH_VERSION}/namespaces/${ns}/${plural}`
        : `/apis/${MESH_GROUP}/${MESH_VERSION}/${plural}`;
      list = async () =>
        (ns
          ? await custom.listNamespacedCustomObject({ ...group, namespace: ns })
          : await custom.listClusterCustomObject(group)) as k8s.KubernetesListObject<k8s.KubernetesObject>;
    } else if (kind === 'EndpointSlice') {
      const discovery = kc.makeApiClient(k8s.DiscoveryV1Api);
      path = ns
        ? `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`
        : '/apis/discovery.k8s.io/v1/endpointslices';
      list = () =>
        ns
          ? discovery.listNamespacedEndpointSlice({ namespace: ns })
          : discovery.listEndpointSliceForAllNamespaces();
    } else {
      const core = kc.makeApiClient(k8s.CoreV1Api);
      const plural = kind === 'Service' ? 'services' : 'pods';
      path = ns ? `/api/v1/namespaces/${ns}/${plural}` : `/api/v1/${plural}`;
      list =
        kind === 'Service'
          ? () => (ns ? core.listNamespacedService({ namespace: ns }) : core.listServiceForAllNamespaces())
          : () => (ns ? core.listNamespacedPod({ namespace: ns }) : core.listPodForAllNamespaces());
    }
    const counted = () => {
      r.lists++;
      return withTimeout(list(), this.requestTimeoutMs, `listing ${path}`);
    };
    // makeInformer(kc, path, list) is exactly this ListWatch, but with a Watch we cannot observe.
    const watch = new TrackedWatch(kc, this.requestTimeoutMs, {
      opened: () => {
        r.lastEventAt = Date.now();
        r.reconnecting = false;
      },
      closed: (reconnecting) => {
        r.reconnecting = reconnecting;
      },
      event: (type) => {
        r.lastEventAt = Date.now();
        if (type === 'BOOKMARK') r.bookmarks++;
      },
    });
    const informer = new k8s.ListWatch(path, watch, counted, false);
    const r: Resource = {
      kind,
      informer,
      watch,
      objects: new Map(),
      synced: false,
      running: false,
      restarts: 0,
      attempts: 0,
      lists: 0,
      idleRelists: 0,
      bookmarks: 0,
      reconnecting: false,
      errors: 0,
    };
    informer.on('add', (o) => this.upsert(r, o));
    informer.on('update', (o) => this.upsert(r, o));
    informer.on('delete', (o) => this.remove(r, o));
    informer.on('error', (e) => this.failed(r, e));
    return r;
  }

  private resource(kind: KubeSourceKind): Resource {
    return this.resources.find((r) => r.kind === kind)!;
  }

  /** One start attempt: list (unless resuming) and watch. Success is a start that saw no error. */
  private async run(r: Resource): Promise<void> {
    r.timer = undefined;
    r.nextRestartAt = undefined;
    if (this.stopped) return;
    const errors = r.errors;
    r.running = true;
    try {
      await r.informer.start();
    } catch (e) {
      // start() reports most failures through the error callback; a throw is one more way.
      this.failed(r, e);
      return;
    }
    if (this.stopped || r.errors !== errors) return;
    if (r.attempts > 0 || r.lastError) {
      this.logger.info(`meshdeck kube: ${r.kind} informer running again (after ${r.attempts} failed starts)`);
    }
    r.attempts = 0;
    r.loggedError = undefined;
    if (!r.synced) {
      r.synced = true;
      if (this.resources.every((x) => x.synced)) this.flushNow(true);
    }
  }

  /** Relists every informer whose open watch has been silent for watchIdleMs. */
  private relistIdle(): void {
    if (this.stopped) return;
    const now = Date.now();
    for (const r of this.resources) {
      if (!r.running || !r.watch.open || r.lastEventAt === undefined) continue;
      const idle = now - r.lastEventAt;
      if (idle < this.watchIdleMs) continue;
      this.logger.info(
        `meshdeck kube: ${r.kind} watch silent for ${Math.round(idle / 1000)} s (no event, no bookmark); relisting`,
      );
      r.idleRelists++;
      r.lastEventAt = now;
      r.watch.relist();
    }
  }

  private failed(r: Resource, err: unknown): void {
    if (this.stopped) return;
    r.errors++;
    r.running = false;
    r.reconnecting = false;
    const message = describeError(err);
    r.lastError = { at: new Date().toISOString(), message };
    if (r.timer) return; // a restart is already scheduled
    r.attempts++;
    r.restarts++;
    const delay = Math.max(50, backoffDelay(r.attempts, this.backoff, this.random));
    // Once per distinct error: a server that stays down would otherwise log every retry.
    if (r.loggedError !== message) {
      this.logger.warn(
        `meshdeck kube: ${r.kind} informer failed (${message}); restarting with backoff, keeping the last state`,
      );
      r.loggedError = message;
    }
    r.nextRestartAt = Date.now() + delay;
    r.timer = setTimeout(() => void this.run(r), delay);
    r.timer.unref?.();
  }

  private upsert(r: Resource, obj: k8s.KubernetesObject): void {
    const lean = leanKubeObject(r.kind, obj);
    if (!lean) return;
    const key = `${lean.metadata.namespace}/${lean.metadata.name}`;
    const json = stableStringify(lean);
    const prev = r.objects.get(key);
    if (prev?.json === json) {
      if (r.kind === 'VirtualService' || r.kind === 'Route' || r.kind === 'Target') {
        this.emit('status', `${r.kind}/${key}`);
      }
      return;
    }
    r.objects.set(key, { lean, json });
    this.changed(r.kind, prev?.lean, lean);
  }

  private remove(r: Resource, obj: k8s.KubernetesObject): void {
    const key = `${obj.metadata?.namespace || 'default'}/${obj.metadata?.name ?? ''}`;
    const prev = r.objects.get(key);
    if (!prev) return;
    r.objects.delete(key);
    this.changed(r.kind, prev.lean, undefined);
  }

  private changed(kind: KubeSourceKind, before?: LeanKubeObject, after?: LeanKubeObject): void {
    this.changedKinds.add(kind);
    if (kind === 'EndpointSlice') {
      for (const s of [before, after]) {
        const svc = (s?.metadata as { labels?: Record<string, string> } | undefined)?.labels?.[
          SERVICE_NAME_LABEL
        ];
        if (s && svc) this.changedServices.add(`${s.metadata.namespace}/${svc}`);
      }
    }
    if (!this.last) return; // the first snapshot waits for every informer's list
    const now = Date.now();
    this.firstChangeAt ??= now;
    clearTimeout(this.flushTimer);
    const wait = Math.min(this.coalesceMs, Math.max(0, this.firstChangeAt + this.coalesceMaxMs - now));
    this.flushTimer = setTimeout(() => this.flushNow(false), wait);
  }

  private flushNow(initial: boolean): void {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    this.firstChangeAt = undefined;
    if (this.stopped) return;
    const objects = Object.fromEntries(
      this.resources.map((r) => [r.kind, [...r.objects.values()].map((o) => o.lean)]),
    ) as unknown as KubeObjects;
    const change: KubeSourceChange = {
      initial,
      kinds: KUBE_SOURCE_KINDS.filter((k) => initial || this.changedKinds.has(k)),
      endpointSliceServices: [...this.changedServices].sort(),
    };
    this.changedKinds = new Set();
    this.changedServices = new Set();
    let snapshot: KubeSnapshot;
    try {
      snapshot = snapshotFromKube(objects);
    } catch (e) {
      // snapshotFromKube never throws on input; if it ever does, the last snapshot stands.
      this.logger.error(`meshdeck kube: building the snapshot failed: ${describeError(e)}`);
      return;
    }
    this.last = snapshot;
    this.emit('snapshot', snapshot, change);
    for (const w of this.syncWaiters.splice(0)) w();
  }
}

interface WatchHooks {
  /** The server answered 200: the watch is open. */
  opened(): void;
  /** An event arrived on the open watch (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR). */
  event(type: string): void;
  /** The open watch ended; `reconnecting` when without an error, so the informer reopens it by itself. */
  closed(reconnecting: boolean): void;
}

/**
 * The client's Watch with bookmarks on, its events observed, a deadline on the response headers (node-fetch
 * `timeout`, which does not cover the body, so a long watch is not cut), and relist(): abort the open
 * watch so that the informer sees 410 Gone, on which it relists by itself (no error, no backoff).
 */
class TrackedWatch extends k8s.Watch {
  private current: { controller: AbortController; relist: boolean } | undefined;

  constructor(
    kubeConfig: k8s.KubeConfig,
    connectTimeoutMs: number,
    private readonly hooks: WatchHooks,
  ) {
    // The watch asks its config for the fetch options: add the timeout there, and nothing else changes.
    const config = Object.create(kubeConfig) as k8s.KubeConfig;
    config.applyToFetchOptions = async (opts) => ({
      ...(await kubeConfig.applyToFetchOptions(opts)),
      timeout: connectTimeoutMs,
    });
    super(config);
  }

  /** Whether a watch request is open (the server answered and has not ended it). */
  get open(): boolean {
    return this.current !== undefined;
  }

  /** Ends the open watch so that the informer relists; false when none is open. */
  relist(): boolean {
    const current = this.current;
    if (!current) return false;
    current.relist = true;
    current.controller.abort();
    return true;
  }

  override async watch(
    path: string,
    queryParams: Record<string, string | number | boolean | undefined>,
    callback: (phase: string, apiObj: unknown, watchObj?: unknown) => void,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    const attempt: { controller?: AbortController; relist: boolean; ended: boolean } = {
      relist: false,
      ended: false,
    };
    const controller = await super.watch(
      path,
      { ...queryParams, allowWatchBookmarks: true },
      (phase, obj, data) => {
        if (!attempt.ended) this.hooks.event(phase);
        callback(phase, obj, data);
      },
      (err) => {
        const wasOpen = this.current === attempt;
        attempt.ended = true;
        if (wasOpen) {
          this.current = undefined;
          const e = err as { statusCode?: number; code?: number } | null | undefined;
          this.hooks.closed(attempt.relist || !e || e.statusCode === 410 || e.code === 410);
        }
        done(
          attempt.relist
            ? Object.assign(new Error('relist: the watch was silent'), { statusCode: 410 })
            : err,
        );
      },
    );
    // done() before this point: the request failed (or was answered with an error status).
    if (!attempt.ended) {
      attempt.controller = controller;
      this.current = attempt as { controller: AbortController; relist: boolean };
      this.hooks.opened();
    }
    return controller;
  }
}

/** A short description of an informer error: the HTTP status and the server's message when there is one. */
export function describeError(err: unknown): string {
  if (err instanceof k8s.ApiException) {
    let message = '';
    try {
      const status = JSON.parse(String(err.body)) as { message?: string };
      message = status.message ?? '';
    } catch {
      // A body that is not a Status: the code says enough.
    }
    return `HTTP ${err.code}${message ? `: ${message}` : ''}`;
  }
  const e = err as { statusCode?: number; code?: unknown; message?: string; cause?: { message?: string } };
  if (typeof e?.statusCode === 'number') return `HTTP ${e.statusCode}${e.message ? `: ${e.message}` : ''}`;
  const msg = e?.message ?? String(err);
  return e?.cause?.message && !msg.includes(e.cause.message) ? `${msg}: ${e.cause.message}` : msg;
}
