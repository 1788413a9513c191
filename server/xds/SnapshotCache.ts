/**
 * Immutable per-proxy xDS snapshots (node id -> per type URL: a version and the resources by name).
 *
 * - Each resource gets a content hash; a type's version is a hash over its (name, hash) pairs, so the
 *   same content always has the same version, whoever computed it.
 * - Each distinct resource content is encoded into `google.protobuf.Any` bytes once and the bytes are
 *   shared by every node and stream that serves it (note pitfall 8).
 * - `setSnapshot` validates (encoding with the strict field check + cross-reference consistency) and
 *   throws on failure, leaving the previous snapshot in place. Accepted snapshots are staged and
 *   published in bursts: a change that arrives when nothing was published for `coalesceMs` goes out
 *   at the end of the current event-loop turn (with everything else staged in that turn: one render
 *   for 2,000 proxies is one flush), so a lone edit waits for no timer; changes that follow within
 *   `coalesceMs` of a flush are a burst: published once it has been quiet for `coalesceMs`, and at
 *   most `maxDelayMs` after its first change. Only nodes whose versions changed are announced ('change').
 */
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { type EncodedAny, encodeResource, TypeUrls, XDS_TYPE_URLS, type XdsTypeUrl } from './envoyProtos';

/** Envoy v3 resources as proto3-JSON-shaped plain objects (snake_case). */
export type XdsResource = Record<string, unknown>;

export interface SnapshotInput {
  listeners: XdsResource[];
  routes: XdsResource[];
  clusters: XdsResource[];
  endpoints: XdsResource[];
}

export interface CachedResource {
  name: string;
  /** Content hash (16 hex). */
  hash: string;
  /** The encoded Any, shared; never mutate. */
  any: EncodedAny;
  /** The input object (frozen). */
  object: Readonly<XdsResource>;
}

export interface TypeSnapshot {
  version: string;
  resources: ReadonlyMap<string, CachedResource>;
}

export interface NodeSnapshot {
  nodeId: string;
  /** When this snapshot was published (ms since epoch). */
  publishedAt: number;
  types: Readonly<Record<XdsTypeUrl, TypeSnapshot>>;
}

export interface SnapshotCacheOptions {
  /** Quiet period before publishing a burst (default 10 ms). */
  coalesceMs?: number;
  /** Longest a staged snapshot waits (default 50 ms). */
  maxDelayMs?: number;
}

export class SnapshotConsistencyError extends Error {
  constructor(
    readonly nodeId: string,
    readonly dangling: { routes: string[]; endpoints: string[]; duplicates: string[] },
  ) {
    const parts: string[] = [];
    if (dangling.routes.length)
      parts.push(`RDS names referenced by listeners but missing: ${dangling.routes.join(', ')}`);
    if (dangling.endpoints.length)
      parts.push(`EDS service names referenced by clusters but missing: ${dangling.endpoints.join(', ')}`);
    if (dangling.duplicates.length) parts.push(`duplicate resource names: ${dangling.duplicates.join(', ')}`);
    super(`inconsistent snapshot for ${nodeId}: ${parts.join('; ')}`);
    this.name = 'SnapshotConsistencyError';
  }
}

const INPUT_KEYS: Record<XdsTypeUrl, keyof SnapshotInput> = {
  [TypeUrls.listener]: 'listeners',
  [TypeUrls.route]: 'routes',
  [TypeUrls.cluster]: 'clusters',
  [TypeUrls.endpoint]: 'endpoints',
};

/** JSON with sorted keys (content hashing must not depend on key order). */
export function stableStringify(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map(stableStringify).join(',')}]`;
  const entries = Object.entries(v as Record<string, unknown>)
    .filter(([, x]) => x !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${stableStringify(x)}`).join(',')}}`;
}

function hash(s: string): string {
  return createHash('sha256').update(s).digest('hex').slice(0, 16);
}

/** Content hashes of frozen inputs (a frozen object cannot change, so its hash can be remembered). */
const frozenHashes = new WeakMap<object, string>();

function contentHash(r: XdsResource): string {
  const known = frozenHashes.get(r);
  if (known) return known;
  const h = hash(stableStringify(r));
  if (Object.isFrozen(r)) frozenHashes.set(r, h);
  return h;
}

export function resourceName(typeUrl: string, r: XdsResource): string {
  const n = typeUrl === TypeUrls.endpoint ? r.cluster_name : r.name;
  if (typeof n !== 'string' || !n) {
    throw new Error(
      `${typeUrl === TypeUrls.endpoint ? 'cluster_name' : 'name'} missing in a ${typeUrl} resource`,
    );
  }
  return n;
}

/** A frozen input whose lists are frozen too (deepFreeze's result): safe to remember by identity. */
function isDeepFrozenInput(input: SnapshotInput): boolean {
  return Object.isFrozen(input) && Object.values(input).every((list) => Object.isFrozen(list));
}

export function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object' && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o)) deepFreeze(v);
  }
  return o;
}

/** The HCMs of a listener: its api_listener and its filter chains' network filters. */
function listenerHcms(listener: XdsResource): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const consider = (any: unknown) => {
    if (
      any &&
      typeof any === 'object' &&
      (any as Record<string, unknown>)['@type'] === TypeUrls.httpConnectionManager
    )
      out.push(any as Record<string, unknown>);
  };
  consider((listener.api_listener as Record<string, unknown> | undefined)?.api_listener);
  const chains = [
    ...((listener.filter_chains as unknown[] | undefined) ?? []),
    ...(listener.default_filter_chain ? [listener.default_filter_chain] : []),
  ] as Record<string, unknown>[];
  for (const chain of chains)
    for (const f of (chain.filters as Record<string, unknown>[] | undefined) ?? []) consider(f.typed_config);
  return out;
}

/** RDS names a listener references. */
export function referencedRouteNames(listener: XdsResource): string[] {
  return listenerHcms(listener)
    .map((hcm) => (hcm.rds as Record<string, unknown> | undefined)?.route_config_name)
    .filter((n): n is string => typeof n === 'string');
}

/** The EDS service name an EDS cluster references (service_name, else the cluster name). */
export function referencedEdsName(cluster: XdsResource): string | undefined {
  if (cluster.type !== 'EDS' && cluster.type !== 3) return undefined;
  const eds = cluster.eds_cluster_config as Record<string, unknown> | undefined;
  const sn = eds?.service_name;
  return typeof sn === 'string' && sn ? sn : (cluster.name as string);
}

interface EncodedEntry {
  any: EncodedAny;
  /** A frozen copy of the first input with this content, shared like the bytes. */
  object: Readonly<XdsResource>;
  refs: number;
}

export class SnapshotCache extends EventEmitter<{
  change: [nodeId: string, snapshot: NodeSnapshot | undefined, changedTypes: XdsTypeUrl[]];
}> {
  private readonly published = new Map<string, NodeSnapshot>();
  private readonly staged = new Map<string, NodeSnapshot | undefined>();
  /** typeUrl + content hash -> encoded bytes, reference-counted by published+staged snapshots. */
  private readonly encoded = new Map<string, EncodedEntry>();
  private timer: NodeJS.Timeout | undefined;
  /** A leading flush due at the end of this event-loop turn (see stage). */
  private immediate: NodeJS.Immediate | undefined;
  private lastFlushAt = -Infinity;
  private firstStagedAt = 0;
  private lastStagedAt = 0;
  /** The encoded-entry keys a type snapshot holds (released with it), computed once per snapshot. */
  private readonly typeKeys = new WeakMap<TypeSnapshot, string[]>();
  /** Frozen inputs already validated: one render shared by many nodes is checked once. */
  private readonly consistent = new WeakSet<SnapshotInput>();
  /** Per-type results of frozen input lists, so one render shared by many nodes is hashed once. */
  private readonly typeMemo = new WeakMap<readonly XdsResource[], { keys: string[]; type: TypeSnapshot }>();
  private readonly coalesceMs: number;
  private readonly maxDelayMs: number;
  /** Encodes performed (for tests/benches: each distinct content is encoded once). */
  encodeCount = 0;

  constructor(options: SnapshotCacheOptions = {}) {
    super();
    this.coalesceMs = options.coalesceMs ?? 10;
    this.maxDelayMs = options.maxDelayMs ?? 50;
  }

  /** The published snapshot of a node. */
  getSnapshot(nodeId: string): NodeSnapshot | undefined {
    return this.published.get(nodeId);
  }

  nodeIds(): string[] {
    return [...this.published.keys()];
  }

  /**
   * Validates, encodes and stages a node's snapshot; it is published (and watchers notified) with the
   * next flush. Throws `SnapshotConsistencyError` or `ResourceEncodeError`; the previous snapshot stays.
   * Returns the per-type versions. Passing deep-frozen resource objects (e.g. one frozen render
   * shared by many proxies) lets their content hashes be remembered instead of recomputed.
   */
  setSnapshot(nodeId: string, input: SnapshotInput): Record<XdsTypeUrl, string> {
    const types = this.setSnapshotOfNodes([nodeId], input)!;
    return Object.fromEntries(XDS_TYPE_URLS.map((t) => [t, types[t].version])) as Record<XdsTypeUrl, string>;
  }

  /**
   * `setSnapshot` of one input for several nodes (replicas sharing one render): validated and encoded
   * once, one frozen per-type record shared by their snapshots, each resource referenced once per
   * node. Throws as setSnapshot does (naming the first node), staging none of them. Returns the
   * per-type snapshots (undefined for no nodes).
   */
  setSnapshotOfNodes(
    nodeIds: readonly string[],
    input: SnapshotInput,
  ): Readonly<Record<XdsTypeUrl, TypeSnapshot>> | undefined {
    if (nodeIds.length === 0) return undefined;
    if (!this.consistent.has(input)) this.checkConsistency(nodeIds[0]!, input);
    const types = Object.freeze(this.encodeTypes(input));
    // encodeTypes took one reference on each resource, for the first node; the others take theirs.
    if (nodeIds.length > 1) {
      for (const t of XDS_TYPE_URLS) {
        for (const k of this.typeKeys.get(types[t])!) this.encoded.get(k)!.refs += nodeIds.length - 1;
      }
    }
    for (const nodeId of nodeIds) this.stage(nodeId, Object.freeze({ nodeId, publishedAt: 0, types }));
    return types;
  }

  /** Every RDS/EDS name referenced by LDS/CDS exists and no name repeats; throws otherwise. */
  private checkConsistency(nodeId: string, input: SnapshotInput): void {
    const duplicates: string[] = [];
    const names: Record<string, Set<string>> = {};
    for (const t of XDS_TYPE_URLS) {
      names[t] = new Set();
      for (const r of input[INPUT_KEYS[t]] ?? []) {
        const n = resourceName(t, r);
        if (names[t].has(n)) duplicates.push(`${INPUT_KEYS[t]}/${n}`);
        names[t].add(n);
      }
    }
    const routes = new Set<string>();
    for (const l of input.listeners ?? []) for (const n of referencedRouteNames(l)) routes.add(n);
    const eps = new Set<string>();
    for (const c of input.clusters ?? []) {
      const n = referencedEdsName(c);
      if (n) eps.add(n);
    }
    const dangling = {
      routes: [...routes].filter((n) => !names[TypeUrls.route]!.has(n)).sort(),
      endpoints: [...eps].filter((n) => !names[TypeUrls.endpoint]!.has(n)).sort(),
      duplicates,
    };
    if (dangling.routes.length || dangling.endpoints.length || duplicates.length)
      throw new SnapshotConsistencyError(nodeId, dangling);
    if (isDeepFrozenInput(input)) this.consistent.add(input);
  }

  /** Encodes (or reuses) every resource of `input`, taking a reference on each; all or nothing. */
  private encodeTypes(input: SnapshotInput): Record<XdsTypeUrl, TypeSnapshot> {
    const taken: string[] = [];
    const types = {} as Record<XdsTypeUrl, TypeSnapshot>;
    try {
      for (const t of XDS_TYPE_URLS) {
        const list = input[INPUT_KEYS[t]] ?? [];
        const known = Object.isFrozen(list) ? this.typeMemo.get(list) : undefined;
        if (known && known.keys.every((k) => this.encoded.has(k))) {
          // The same frozen list as an earlier call (identical replicas share one render): its
          // resources and version are already known.
          for (const k of known.keys) {
            this.encoded.get(k)!.refs++;
            taken.push(k);
          }
          types[t] = known.type;
          continue;
        }
        const keys: string[] = [];
        const resources = new Map<string, CachedResource>();
        const parts: string[] = [];
        for (const r of input[INPUT_KEYS[t]] ?? []) {
          const name = resourceName(t, r);
          const h = contentHash(r);
          const key = `${t}|${h}`;
          let entry = this.encoded.get(key);
          if (!entry) {
            entry = { any: encodeResource(t, r), object: deepFreeze(structuredClone(r)), refs: 0 };
            this.encodeCount++;
            this.encoded.set(key, entry);
          }
          entry.refs++;
          taken.push(key);
          keys.push(key);
          resources.set(name, { name, hash: h, any: entry.any, object: entry.object });
          parts.push(`${name}=${h}`);
        }
        parts.sort();
        types[t] = { version: hash(parts.join('\n')), resources };
        this.typeKeys.set(types[t], keys);
        if (Object.isFrozen(list)) this.typeMemo.set(list, { keys, type: types[t] });
      }
    } catch (e) {
      this.release(taken);
      throw e;
    }
    return types;
  }

  /** Removes a node's snapshot (published with the next flush). */
  clearSnapshot(nodeId: string): void {
    if (!this.published.has(nodeId) && !this.staged.get(nodeId)) return;
    this.stage(nodeId, undefined);
  }

  /** Publishes everything staged now. */
  flush(): void {
    this.cancelTimer();
    this.lastFlushAt = Date.now();
    const staged = [...this.staged];
    this.staged.clear();
    const now = Date.now();
    for (const [nodeId, snap] of staged) {
      const prev = this.published.get(nodeId);
      const changed = XDS_TYPE_URLS.filter((t) => prev?.types[t].version !== snap?.types[t].version);
      if (prev) this.releaseSnapshot(prev);
      if (snap) {
        const pub: NodeSnapshot = Object.freeze({ ...snap, publishedAt: now });
        this.published.set(nodeId, pub);
        if (changed.length) this.emit('change', nodeId, pub, changed);
      } else {
        this.published.delete(nodeId);
        this.emit('change', nodeId, undefined, [...XDS_TYPE_URLS]);
      }
    }
  }

  /** Resolves after the next flush (immediately when nothing is staged). */
  async settled(): Promise<void> {
    while (this.timer || this.immediate) await new Promise((r) => setTimeout(r, this.coalesceMs));
  }

  /** Distinct encoded resources held. */
  encodedCount(): number {
    return this.encoded.size;
  }

  close(): void {
    this.cancelTimer();
  }

  private cancelTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
    this.timer = this.immediate = undefined;
  }

  private stage(nodeId: string, snap: NodeSnapshot | undefined): void {
    const replaced = this.staged.get(nodeId);
    if (replaced) this.releaseSnapshot(replaced);
    this.staged.set(nodeId, snap);
    const now = Date.now();
    this.lastStagedAt = now;
    // One timer per burst, not one per call: a push to 2,000 nodes stages 2,000 snapshots.
    if (this.timer || this.immediate) return;
    this.firstStagedAt = now;
    if (now - this.lastFlushAt >= this.coalesceMs) {
      // Quiet until now: publish at the end of this turn instead of waiting for a burst that may not come.
      this.immediate = setImmediate(() => this.flush());
      this.immediate.unref?.();
    } else this.arm(this.coalesceMs);
  }

  /** Flushes once the burst has been quiet for coalesceMs, or maxDelayMs after it began. */
  private arm(delay: number): void {
    this.timer = setTimeout(() => {
      const now = Date.now();
      const quietFor = now - this.lastStagedAt;
      const left = this.firstStagedAt + this.maxDelayMs - now;
      if (quietFor < this.coalesceMs && left > 0) this.arm(Math.min(this.coalesceMs - quietFor, left));
      else this.flush();
    }, delay);
    this.timer.unref?.();
  }

  private releaseSnapshot(snap: NodeSnapshot): void {
    for (const t of XDS_TYPE_URLS) {
      const type = snap.types[t];
      this.release(this.typeKeys.get(type) ?? [...type.resources.values()].map((r) => `${t}|${r.hash}`));
    }
  }

  private release(keys: string[]): void {
    for (const k of keys) {
      const e = this.encoded.get(k);
      if (e && --e.refs <= 0) this.encoded.delete(k);
    }
  }
}
