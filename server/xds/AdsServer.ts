/**
 * The Aggregated Discovery Service (xDS v3) over gRPC, serving the `SnapshotCache`.
 *
 * - `StreamAggregatedResources` (state of the world; what @grpc/grpc-js-xds speaks): per stream the
 *   node (sent only in the first request), per type URL the subscribed names (LDS/CDS: wildcard when
 *   empty on the first request), the last nonce sent. A request whose `response_nonce` is not the
 *   last one sent for its type is stale and ignored. A request with the current nonce is an ACK
 *   without `error_detail` and a NACK with one (never by comparing `version_info`, see
 *   shared/notes/xds-grpc-js-xds.md §4). A NACKed version is never resent; a new version is.
 *   A change of subscribed names triggers a response. LDS and CDS responses list every subscribed
 *   resource; RDS and EDS responses list the subscribed ones that exist.
 * - `DeltaAggregatedResources` (incremental, for Envoy): per type the subscribed names and the
 *   per-resource versions the client has; responses carry only changed and removed resources.
 * - A per-stream proxy record in the spirit of OSM's Proxy (last sent / acked version and nonce per
 *   type URL, last NACK), exposed by `proxyStatus()` with SYNCED / STALE / NACKED / NOT SENT per type
 *   (like `istioctl proxy-status`); 'status' is emitted after a record changes (at most once per
 *   stream per 50 ms, and after a push's writes).
 * - `StreamLoadStats` (LRS, envoy.service.load_stats.v3) on the same server: proxyless gRPC clients'
 *   per-cluster RPC counts, admitted like ADS streams, as 'load' events (see AdsServer.lrs).
 * - TLS: client certificates are required, the proxy identity is read from the peer certificate
 *   (URI SAN `spiffe://meshdeck/ns/<ns>/pod/<pod>`, else the CN) and a node id that does not name the
 *   same proxy is refused with PERMISSION_DENIED.
 */
import { EventEmitter } from 'node:events';
import * as grpc from '@grpc/grpc-js';
import { type ClusterLoadReport, readLoadStatsRequest } from '@/lib/xds/loadReports';
import {
  adsServiceDefinition,
  lrsServiceDefinition,
  TypeUrls,
  XDS_TYPE_URLS,
  type XdsTypeUrl,
  type EncodedAny,
} from './envoyProtos';
import type { NodeSnapshot, SnapshotCache, TypeSnapshot } from './SnapshotCache';
import { discoveryResponsePrefix, withNonce } from './discoveryResponseBytes';
import { leanDeserializer, scanDeltaDiscoveryRequest, scanDiscoveryRequest } from './leanDiscoveryRequest';
import { RotatingCertificates, type TlsMaterial } from './rotatingCertificates';
import { certificateServiceDefinition } from './certificateService';
import { identityFromCertificate } from './certificateIdentity';
import { AGENT_UNIT } from './CertificateManager';
import { stopGrpcServer } from '../stopGrpcServer';

export type SyncStatus = 'SYNCED' | 'STALE' | 'NACKED' | 'NOT SENT';

export interface NackRecord {
  version: string;
  nonce: string;
  errorDetail: { code: number; message: string };
  at: string;
}

export interface TypeSyncState {
  lastSentVersion?: string;
  lastSentNonce?: string;
  lastAckedVersion?: string;
  lastNack?: NackRecord;
  /** Names the client subscribed to; `['*']` for a wildcard subscription. */
  subscribed: string[];
}

export interface ProxyRecord {
  streamId: number;
  nodeId: string;
  /** The certificate's proxy name (`<ns>/<pod>`) with TLS, else the node id. */
  identity: string;
  peer: string;
  protocol: 'sotw' | 'delta';
  connectedSince: string;
  /** The client certificate the identity was read from (TLS only). */
  certificate?: {
    serialNumber: string;
    validTo: string;
    fingerprint256: string;
    /** `agent`: issued to a pod's agent, which renews it (OU=agent); `manual`: by an operator. */
    renewal: CertificateRenewal;
  };
  types: Partial<Record<XdsTypeUrl, TypeSyncState>>;
}

export type XdsShortType = 'LDS' | 'RDS' | 'CDS' | 'EDS';

export interface ProxyStatus extends ProxyRecord {
  /** Per type: SYNCED (acked the current version), STALE (sent or current version not acked yet),
   * NACKED (the last response was rejected), NOT SENT. */
  status: Record<XdsShortType, SyncStatus>;
}

/** What an ADS server reports as it goes, for metrics (server/metrics/MeshMetrics.ts). */
export interface AdsMetricsSink {
  /** A response was written to a stream. */
  sent(type: XdsShortType): void;
  /** A stream replied to the response last sent of a type: an ACK or a NACK, `ms` after it was written. */
  replied(type: XdsShortType, acked: boolean, ms: number): void;
  /** A stream was refused at its first request (the gRPC status code's name). */
  refused(code: string): void;
  /** A client's load report, only the clusters its snapshot has (see AdsServer 'load'). */
  load?(reports: readonly ClusterLoadReport[]): void;
}

/** Open (admitted) streams by protocol, and by sync status per type (see AdsServer.streamStats). */
export interface AdsStreamStats {
  streams: Record<'sotw' | 'delta', number>;
  status: Record<XdsShortType, Record<SyncStatus, number>>;
  /** The client certificates open streams presented (mTLS): when each ends (ms since the epoch), who renews it. */
  certificateEnds: { end: number; renewal: CertificateRenewal }[];
}

/** A gRPC service served on the ADS port beside ADS and LRS (replicaStreams.ts). */
export interface ExtraService {
  definition: grpc.ServiceDefinition;
  implementation: grpc.UntypedServiceImplementation;
}

export type ListenOptions = (
  | {
      host?: string;
      port?: number;
      tls: { key: Buffer | string; cert: Buffer | string; ca: Buffer | string };
      /**
       * Handlers of the CA's signing service (certificateService.ts) on the same port, for pods that
       * have no certificate yet: the TLS handshake then admits clients without one, and ADS and LRS
       * streams without a certificate from the CA are refused at the call instead.
       */
      certificateService?: grpc.UntypedServiceImplementation;
    }
  | { host?: string; port?: number; insecure: true }
) & { services?: ExtraService[] };

export interface AdsServerOptions {
  cache: SnapshotCache;
  /** Defaults to console.warn / console.error; pass `{}`-like no-ops to silence. */
  logger?: { info?: (msg: string) => void; warn?: (msg: string) => void };
  /** Longest a record change waits for its 'status' event (default 50 ms; see emitStatus). */
  statusCoalesceMs?: number;
  /** Told of every response, reply and refusal (metrics). */
  metrics?: AdsMetricsSink;
  /** How often proxyless gRPC clients send load reports (LRS), ms; default 2000. */
  loadReportingIntervalMs?: number;
}

const SHORT: Record<XdsTypeUrl, XdsShortType> = {
  [TypeUrls.listener]: 'LDS',
  [TypeUrls.route]: 'RDS',
  [TypeUrls.cluster]: 'CDS',
  [TypeUrls.endpoint]: 'EDS',
};

const WILDCARD_TYPES = new Set<string>([TypeUrls.listener, TypeUrls.cluster]);

/** Windows of statusCoalesceMs that statuses wait for a push's writes before going out anyway. */
const STATUS_MAX_DEFERRALS = 20;

/** Streams written per event-loop turn after a publish (see AdsServer.drain). */
const DRAIN_CHUNK = 64;

interface Node {
  id?: string;
  cluster?: string;
}

type ErrorDetail = { code?: number; message?: string } | null | undefined;

interface DiscoveryRequest {
  version_info?: string;
  node?: Node | null;
  resource_names?: string[];
  type_url?: string;
  response_nonce?: string;
  error_detail?: { code?: number; message?: string } | null;
}

interface DeltaDiscoveryRequest {
  node?: Node | null;
  type_url?: string;
  resource_names_subscribe?: string[];
  resource_names_unsubscribe?: string[];
  initial_resource_versions?: Record<string, string>;
  response_nonce?: string;
  error_detail?: { code?: number; message?: string } | null;
}

interface TypeState extends TypeSyncState {
  /** null = wildcard */
  names: Set<string> | null;
  /** SotW: the version (plus names) last NACKed; never resent. */
  nackedKey?: string;
  lastSentKey?: string;
  /** SotW: the subscribed names sorted (undefined for wildcard) and as a map key ('*' for wildcard);
   * both recomputed after the names change. */
  sortedNames?: string[];
  namesKey?: string;
  /** A response is in flight (not ACKed or NACKed yet). */
  awaiting?: boolean;
  /** performance.now() when the last response was written (metrics only). */
  sentAt?: number;
  /** Delta: resource name -> version the client has. */
  clientVersions?: Map<string, string>;
}

interface StreamCtx {
  id: number;
  record: ProxyRecord;
  types: Map<XdsTypeUrl, TypeState>;
  nonce: number;
  /** Refused at admission: nothing more is read or sent. */
  refused: boolean;
  send: (typeUrl: XdsTypeUrl) => void;
  close: () => void;
}

interface PreparedResponse {
  key: string;
  bytes: Buffer;
}

export type CertificateRenewal = 'agent' | 'manual';

/** Who a stream's first request says it is, as admitted (see AdsServer.identify). */
interface Identified {
  nodeId: string;
  identity: string;
  certificate?: ProxyRecord['certificate'];
}

interface Refusal {
  code: grpc.status;
  details: string;
}

/** A LoadStatsRequest as proto-loader decodes it (keepCase, longs as strings). */
interface LoadStatsRequest {
  node?: Node | null;
  cluster_stats?: unknown[];
}

/** One LoadReportingService stream. */
interface LrsStream {
  id: number;
  nodeId: string;
  peer: string;
  refused: boolean;
  /** What was logged once for this stream already. */
  logged: Set<'malformed' | 'unknown-cluster'>;
  close: () => void;
}

/** What the LRS request deserializer hands on for bytes that are no LoadStatsRequest. */
const MALFORMED: object = Object.freeze({});

let streamSeq = 0;

/** The AdsServer's events; 'load' carries a client's load report (LRS), only the clusters its snapshot has. */
export interface AdsServerEvents {
  status: [ProxyStatus];
  disconnect: [ProxyRecord];
  load: [nodeId: string, reports: ClusterLoadReport[], atMs: number];
}

export class AdsServer extends EventEmitter<AdsServerEvents> {
  private server: grpc.Server | undefined;
  private readonly streams = new Map<number, StreamCtx>();
  private readonly lrsStreams = new Set<LrsStream>();
  private readonly loadReportingIntervalMs: number;
  private readonly byNode = new Map<string, Set<StreamCtx>>();
  private readonly envelopes = new Map<string, Buffer>();
  /** Per published type snapshot and subscribed names: the response every such stream is sent. */
  private readonly prepared = new WeakMap<TypeSnapshot, Map<string, PreparedResponse>>();
  private certificates: RotatingCertificates | undefined;
  private readonly stopHooks: (() => void)[] = [];
  private readonly cache: SnapshotCache;
  private readonly log: { info: (m: string) => void; warn: (m: string) => void };
  private tls = false;
  /** The CA's signing service shares the port: clients may connect without a certificate. */
  private signing = false;
  /** Streams with types to send after a publish, in the order they were announced. */
  private readonly pending = new Map<StreamCtx, Set<XdsTypeUrl>>();
  private drainScheduled: NodeJS.Immediate | undefined;
  /** Streams whose record changed since their last 'status' (see emitStatus). */
  private readonly statusDirty = new Set<StreamCtx>();
  private statusTimer: NodeJS.Timeout | undefined;
  private statusDeferrals = 0;
  private readonly statusCoalesceMs: number;
  private readonly metrics: AdsMetricsSink | undefined;

  private readonly onChange = (nodeId: string, _snap: NodeSnapshot | undefined, changed: XdsTypeUrl[]) => {
    for (const s of this.byNode.get(nodeId) ?? []) {
      const types = this.pending.get(s);
      if (types) for (const t of changed) types.add(t);
      else this.pending.set(s, new Set(changed));
    }
    this.drainScheduled ??= setImmediate(this.drain);
  };

  /**
   * Sends what a publish changed, DRAIN_CHUNK streams per event-loop turn. grpc-js hands a write to
   * the socket only once the current turn ends, so writing 2,000 streams in one turn would hold every
   * byte back until the last response is queued; in chunks the first proxies receive theirs (and ACK)
   * while later ones are still being written, which on two cores overlaps the server with its clients.
   * Each send reads the latest published snapshot, so a stream queued twice still gets one response.
   */
  private readonly drain = () => {
    this.drainScheduled = undefined;
    let n = 0;
    for (const [s, types] of this.pending) {
      if (n++ >= DRAIN_CHUNK) {
        this.drainScheduled = setImmediate(this.drain);
        return;
      }
      this.pending.delete(s);
      for (const t of XDS_TYPE_URLS) if (types.has(t)) s.send(t);
    }
  };

  constructor(options: AdsServerOptions) {
    super();
    this.cache = options.cache;
    this.statusCoalesceMs = options.statusCoalesceMs ?? 50;
    this.loadReportingIntervalMs = options.loadReportingIntervalMs ?? 2000;
    this.metrics = options.metrics;
    this.log = {
      info: options.logger?.info ?? (() => {}),
      warn: options.logger?.warn ?? ((m) => console.warn(m)),
    };
  }

  /** Binds and starts serving; resolves with the bound port. Plaintext only with `{insecure: true}`. */
  async listen(options: ListenOptions): Promise<number> {
    if (this.server) throw new Error('already listening');
    const host = options.host ?? '127.0.0.1';
    let creds: grpc.ServerCredentials;
    if ('tls' in options && options.tls) {
      this.certificates = new RotatingCertificates(options.tls);
      creds = this.certificates.serverCredentials(!options.certificateService);
      this.tls = true;
      this.signing = !!options.certificateService;
    } else if ('insecure' in options && options.insecure === true) {
      creds = grpc.ServerCredentials.createInsecure();
      this.tls = false;
      this.log.warn(
        `meshdeck xDS: serving ADS WITHOUT TLS on ${host} (insecure: true); proxies are not authenticated and node ids are trusted as sent`,
      );
    } else {
      throw new Error('listen: pass tls {key, cert, ca}, or insecure: true to serve plaintext');
    }
    const server = new grpc.Server({ 'grpc.keepalive_permit_without_calls': 1 });
    server.addService(leanService(adsServiceDefinition()), {
      StreamAggregatedResources: (call: grpc.ServerDuplexStream<DiscoveryRequest, unknown>) =>
        this.sotw(call),
      DeltaAggregatedResources: (call: grpc.ServerDuplexStream<DeltaDiscoveryRequest, unknown>) =>
        this.delta(call),
    });
    // Load reports (LRS) on the same server, so the same TLS: grpc-js-xds sends them to the ADS server
    // itself when a Cluster says `lrs_server: {self: {}}`.
    server.addService(tolerantService(lrsServiceDefinition()), {
      StreamLoadStats: (call: grpc.ServerDuplexStream<LoadStatsRequest, unknown>) => this.lrs(call),
    });
    if ('tls' in options && options.certificateService)
      server.addService(certificateServiceDefinition(), options.certificateService);
    for (const extra of options.services ?? []) server.addService(extra.definition, extra.implementation);
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(`${host}:${options.port ?? 0}`, creds, (err, p) => (err ? reject(err) : resolve(p))),
    );
    this.server = server;
    this.cache.on('change', this.onChange);
    return port;
  }

  /** Runs `fn` when the server stops (e.g. to end a certificate renewal timer). */
  onStop(fn: () => void): void {
    this.stopHooks.push(fn);
  }

  /** Closes every stream and the server. */
  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    for (const fn of this.stopHooks.splice(0)) fn();
    this.cache.off('change', this.onChange);
    if (this.drainScheduled) clearImmediate(this.drainScheduled);
    this.drainScheduled = undefined;
    this.pending.clear();
    if (this.statusTimer) clearTimeout(this.statusTimer);
    this.statusTimer = undefined;
    this.statusDirty.clear();
    for (const s of [...this.streams.values()]) s.close();
    for (const s of [...this.lrsStreams]) s.close();
    await stopGrpcServer(server);
  }

  /**
   * Renews the server certificate (and CA) of a TLS server without a restart: new connections get it,
   * open streams keep theirs. Throws on a plaintext server.
   */
  updateTls(material: TlsMaterial): void {
    if (!this.certificates) throw new Error('updateTls: this ADS server does not serve TLS');
    this.certificates.update(material);
  }

  /**
   * A SotW response's key (version and names, what NACKs and resends compare) and its shared bytes
   * before the nonce. Streams that share a published type snapshot and subscribe the same names get
   * the same object, built once: a push to 2,000 proxies of one render sorts, joins and looks up once.
   */
  private response(typeUrl: XdsTypeUrl, ts: TypeSnapshot, st: TypeState): PreparedResponse {
    if (st.namesKey === undefined) {
      st.sortedNames = st.names ? [...st.names].sort() : undefined;
      // JSON: unambiguous whatever the names contain; never '*'.
      st.namesKey = st.sortedNames ? JSON.stringify(st.sortedNames) : '*';
    }
    let byNames = this.prepared.get(ts);
    if (!byNames) this.prepared.set(ts, (byNames = new Map()));
    let prepared = byNames.get(st.namesKey);
    if (prepared) return prepared;
    const names = st.sortedNames ?? [...ts.resources.keys()].sort();
    const key = `${ts.version}|${names.join(',')}`;
    prepared = { key, bytes: this.envelope(typeUrl, key, ts, names) };
    byNames.set(st.namesKey, prepared);
    return prepared;
  }

  /** The shared bytes of a SotW response before its nonce; a push encodes each content once. */
  private envelope(typeUrl: string, key: string, ts: TypeSnapshot, names: string[]): Buffer {
    const k = `${typeUrl}|${key}`;
    let bytes = this.envelopes.get(k);
    if (!bytes) {
      // Bounded: contents of the past few pushes; older ones are re-encoded if ever asked again.
      if (this.envelopes.size >= 4096) this.envelopes.clear();
      const resources: EncodedAny[] = [];
      for (const n of names) {
        const r = ts.resources.get(n);
        if (r) resources.push(r.any);
      }
      bytes = discoveryResponsePrefix(ts.version, resources, typeUrl);
      this.envelopes.set(k, bytes);
    }
    return bytes;
  }

  /** One entry per connected stream (a reconnecting proxy may briefly have two). */
  proxyStatus(): ProxyStatus[] {
    return [...this.streams.values()]
      .filter((s) => s.record.nodeId)
      .map((s) => this.statusOf(s))
      .sort((a, b) => (a.nodeId < b.nodeId ? -1 : a.nodeId > b.nodeId ? 1 : a.streamId - b.streamId));
  }

  private statusOf(s: StreamCtx): ProxyStatus {
    const snap = this.cache.getSnapshot(s.record.nodeId);
    const status = {} as ProxyStatus['status'];
    const types: ProxyRecord['types'] = {};
    for (const t of XDS_TYPE_URLS) {
      const st = s.types.get(t);
      status[SHORT[t]] = syncStatus(st, snap?.types[t].version);
      if (st) {
        types[t] = {
          lastSentVersion: st.lastSentVersion,
          lastSentNonce: st.lastSentNonce,
          lastAckedVersion: st.lastAckedVersion,
          lastNack: st.lastNack,
          subscribed: st.names ? [...st.names].sort() : ['*'],
        };
      }
    }
    return { ...s.record, types, status };
  }

  /**
   * Open streams that sent their node, by protocol and by each type's sync status (what proxyStatus()
   * says, counted without building a record per stream: a metrics scrape reads it).
   */
  streamStats(): AdsStreamStats {
    const counts = (): Record<SyncStatus, number> => ({ SYNCED: 0, STALE: 0, NACKED: 0, 'NOT SENT': 0 });
    const out: AdsStreamStats = {
      streams: { sotw: 0, delta: 0 },
      status: { LDS: counts(), RDS: counts(), CDS: counts(), EDS: counts() },
      certificateEnds: [],
    };
    for (const s of this.streams.values()) {
      if (!s.record.nodeId) continue;
      out.streams[s.record.protocol]++;
      if (s.record.certificate)
        out.certificateEnds.push({
          end: Date.parse(s.record.certificate.validTo),
          renewal: s.record.certificate.renewal,
        });
      const snap = this.cache.getSnapshot(s.record.nodeId);
      for (const t of XDS_TYPE_URLS)
        out.status[SHORT[t]][syncStatus(s.types.get(t), snap?.types[t].version)]++;
    }
    return out;
  }

  /**
   * Marks a stream's record changed; 'status' follows within statusCoalesceMs, once per stream
   * however often it changed meanwhile (a push is a send and an ACK per stream), and never while a
   * push is still being written: building 4,000 statuses per push to 2,000 streams (and what
   * listeners do with each) cost more than the push's own sends and ACKs.
   */
  private emitStatus(s: StreamCtx): void {
    if (!s.record.nodeId || !this.listenerCount('status')) return;
    this.statusDirty.add(s);
    this.statusTimer ??= setTimeout(this.flushStatus, this.statusCoalesceMs);
  }

  private readonly flushStatus = () => {
    this.statusTimer = undefined;
    if (this.pending.size && this.statusDeferrals < STATUS_MAX_DEFERRALS) {
      this.statusDeferrals++;
      this.statusTimer = setTimeout(this.flushStatus, this.statusCoalesceMs);
      return;
    }
    this.statusDeferrals = 0;
    const dirty = [...this.statusDirty];
    this.statusDirty.clear();
    for (const s of dirty) this.emit('status', this.statusOf(s));
  };

  /**
   * The node a stream's first request names, shared by ADS and LRS streams: with TLS the client
   * certificate must name the same proxy, so a proxy can neither read another's config nor report
   * load in its name.
   */
  private identify(
    call: grpc.ServerDuplexStream<unknown, unknown>,
    node: Node | null | undefined,
  ): Identified | Refusal {
    const nodeId = node?.id;
    if (!nodeId || typeof nodeId !== 'string')
      return { code: grpc.status.INVALID_ARGUMENT, details: 'the first request must carry node.id' };
    if (!this.tls) return { nodeId, identity: nodeId };
    const cert = call.getAuthContext?.()?.sslPeerCertificate;
    const certIdentity = cert ? identityFromCertificate(cert) : undefined;
    if (!cert || !certIdentity)
      return {
        code: grpc.status.UNAUTHENTICATED,
        details: this.signing
          ? 'no client certificate from the xDS CA: get one from this server first (meshdeck xds agent)'
          : 'no client certificate identity',
      };
    if (certIdentity !== nodeId)
      return {
        code: grpc.status.PERMISSION_DENIED,
        details: `node id ${JSON.stringify(nodeId)} does not match the client certificate (${certIdentity})`,
      };
    return {
      nodeId,
      identity: certIdentity,
      certificate: {
        serialNumber: cert.serialNumber,
        validTo: new Date(cert.valid_to).toISOString(),
        fingerprint256: cert.fingerprint256,
        renewal: [cert.subject?.OU].flat().includes(AGENT_UNIT) ? 'agent' : 'manual',
      },
    };
  }

  /** Registers a stream once its node is known; returns an error to end the call with, if refused. */
  private admit(
    call: grpc.ServerDuplexStream<unknown, unknown>,
    s: StreamCtx,
    node: Node | null | undefined,
  ): Refusal | undefined {
    const who = this.identify(call, node);
    if ('code' in who) return who;
    const { nodeId } = who;
    s.record.nodeId = nodeId;
    s.record.identity = who.identity;
    if (who.certificate) s.record.certificate = who.certificate;
    let set = this.byNode.get(nodeId);
    if (!set) this.byNode.set(nodeId, (set = new Set()));
    set.add(s);
    this.log.info(`xDS: ${s.record.protocol} stream ${s.id} from ${nodeId} (${s.record.peer})`);
    return undefined;
  }

  private newStream(call: grpc.ServerDuplexStream<unknown, unknown>, protocol: 'sotw' | 'delta'): StreamCtx {
    const id = ++streamSeq;
    const s: StreamCtx = {
      id,
      record: {
        streamId: id,
        nodeId: '',
        identity: '',
        peer: call.getPeer(),
        protocol,
        connectedSince: new Date().toISOString(),
        types: {},
      },
      types: new Map(),
      nonce: 0,
      refused: false,
      send: () => {},
      close: () => {
        if (!call.writableEnded) call.end();
      },
    };
    this.streams.set(id, s);
    let gone = false;
    const cleanup = () => {
      if (gone) return;
      gone = true;
      this.streams.delete(id);
      this.pending.delete(s);
      // It had its 'disconnect': a status after that would bring it back.
      this.statusDirty.delete(s);
      const set = this.byNode.get(s.record.nodeId);
      set?.delete(s);
      if (set && set.size === 0) this.byNode.delete(s.record.nodeId);
      if (s.record.nodeId) this.emit('disconnect', s.record);
    };
    call.on('error', cleanup);
    call.on('close', cleanup);
    call.on('cancelled', cleanup);
    call.on('end', () => {
      cleanup();
      if (!call.writableEnded) call.end();
    });
    return s;
  }

  private fail(call: grpc.ServerDuplexStream<unknown, unknown>, err: Refusal, what = 'stream') {
    this.log.warn(`xDS: refused ${what} from ${call.getPeer()}: ${err.details}`);
    call.emit('error', Object.assign(new Error(err.details), err));
  }

  /** Tells the metrics sink of a response just written. */
  private sent(typeUrl: XdsTypeUrl, st: TypeState): void {
    if (!this.metrics) return;
    st.sentAt = performance.now();
    this.metrics.sent(SHORT[typeUrl]);
  }

  /** Admits a stream on its first request; false once it is refused (and its call failed). */
  private admitted(
    call: grpc.ServerDuplexStream<unknown, unknown>,
    s: StreamCtx,
    node: Node | null | undefined,
  ) {
    if (s.refused) return false;
    if (s.record.nodeId) return true;
    const err = this.admit(call, s, node);
    if (!err) return true;
    s.refused = true;
    this.metrics?.refused(grpc.status[err.code] ?? String(err.code));
    this.fail(call, err);
    return false;
  }

  /** Records the ACK or NACK (by `error_detail`, never by version) of the response last sent for a type. */
  private recordReply(s: StreamCtx, typeUrl: XdsTypeUrl, st: TypeState, nonce: string, error: ErrorDetail) {
    st.awaiting = false;
    if (this.metrics && st.sentAt !== undefined)
      this.metrics.replied(SHORT[typeUrl], !error, performance.now() - st.sentAt);
    if (error) {
      st.lastNack = {
        version: st.lastSentVersion ?? '',
        nonce,
        errorDetail: { code: error.code ?? 0, message: error.message ?? '' },
        at: new Date().toISOString(),
      };
      // SotW: the key of the rejected content; delta: clientVersions keeps the rejected versions. Either
      // way it is not resent, and a changed one is.
      st.nackedKey = st.lastSentKey;
      this.log.warn(
        `xDS: ${s.record.nodeId} NACKed ${SHORT[typeUrl]} ${st.lastSentVersion}: ${error.message}`,
      );
    } else {
      st.lastAckedVersion = st.lastSentVersion;
    }
    this.emitStatus(s);
  }

  // ---- load reports (LRS) ----

  /**
   * `StreamLoadStats`: the first request names the node (admitted as an ADS stream is) and is answered
   * once with `send_all_clusters` (grpc-js-xds 1.14 skips the first name of an explicit `clusters`
   * list) and the reporting interval; the client then reports every interval. Every request's stats
   * (a reconnecting client's first one may carry some) become a 'load' event, keeping only clusters
   * the node's published snapshot has, so a client cannot make the server count names of its choosing.
   * Nothing a client sends throws: undecodable or ill-formed messages are ignored (logged once per
   * stream).
   */
  private lrs(call: grpc.ServerDuplexStream<LoadStatsRequest, unknown>): void {
    const id = ++streamSeq;
    const s: LrsStream = {
      id,
      nodeId: '',
      peer: call.getPeer(),
      refused: false,
      logged: new Set(),
      close: () => {
        if (!call.writableEnded) call.end();
      },
    };
    this.lrsStreams.add(s);
    const cleanup = () => this.lrsStreams.delete(s);
    call.on('error', cleanup);
    call.on('close', cleanup);
    call.on('cancelled', cleanup);
    call.on('end', () => {
      cleanup();
      if (!call.writableEnded) call.end();
    });
    call.on('data', (req: LoadStatsRequest) => {
      if (s.refused || call.writableEnded) return;
      const atMs = Date.now();
      if (req === MALFORMED || typeof req !== 'object' || req === null) {
        this.logOnce(s, 'malformed', `xDS: ignored a malformed load report on LRS stream ${id} (${s.peer})`);
        return;
      }
      if (!s.nodeId) {
        const who = this.identify(call, req.node);
        if ('code' in who) {
          s.refused = true;
          this.fail(call, who, 'LRS stream');
          return;
        }
        s.nodeId = who.nodeId;
        this.log.info(`xDS: LRS stream ${id} from ${s.nodeId} (${s.peer})`);
        const ms = this.loadReportingIntervalMs;
        call.write({
          send_all_clusters: true,
          load_reporting_interval: { seconds: String(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1e6 },
        });
      }
      this.loadReported(s, req, atMs);
    });
  }

  private loadReported(s: LrsStream, req: LoadStatsRequest, atMs: number): void {
    const reports = readLoadStatsRequest(req);
    if (reports.length === 0) {
      if (Array.isArray(req.cluster_stats) && req.cluster_stats.length > 0)
        this.logOnce(s, 'malformed', `xDS: ignored malformed cluster stats from ${s.nodeId}`);
      return;
    }
    const clusters = this.cache.getSnapshot(s.nodeId)?.types[TypeUrls.cluster].resources;
    const known = reports.filter((r) => clusters?.has(r.cluster));
    if (known.length < reports.length) {
      const unknown = reports.filter((r) => !clusters?.has(r.cluster)).map((r) => r.cluster);
      this.logOnce(
        s,
        'unknown-cluster',
        `xDS: ${s.nodeId} reported load for clusters it is not served (not counted): ${unknown.slice(0, 5).join(', ')}`,
      );
    }
    if (known.length === 0) return;
    this.metrics?.load?.(known);
    this.emit('load', s.nodeId, known, atMs);
  }

  private logOnce(s: LrsStream, what: 'malformed' | 'unknown-cluster', message: string): void {
    if (s.logged.has(what)) return;
    s.logged.add(what);
    // A cluster just removed from a snapshot is still reported for an interval: not worth a warning.
    if (what === 'unknown-cluster') this.log.info(message);
    else this.log.warn(message);
  }

  // ---- state of the world ----

  private sotw(call: grpc.ServerDuplexStream<DiscoveryRequest, unknown>): void {
    const s = this.newStream(call, 'sotw');
    s.send = (typeUrl) => {
      const st = s.types.get(typeUrl);
      if (!st || s.refused || call.writableEnded) return;
      const snap = this.cache.getSnapshot(s.record.nodeId);
      if (!snap) return;
      const ts = snap.types[typeUrl];
      // The common case after an ACK: nothing changed since the last send. Every change of names
      // clears lastSentKey, so this is the key comparison below without building the key.
      if (st.lastSentKey !== undefined && st.lastSentVersion === ts.version) return;
      const { key, bytes } = this.response(typeUrl, ts, st);
      if (key === st.nackedKey) return; // never resend what was rejected
      if (key === st.lastSentKey) return; // already sent (ACKed or in flight)
      const nonce = String(++s.nonce);
      st.lastSentVersion = ts.version;
      st.lastSentNonce = nonce;
      st.lastSentKey = key;
      st.awaiting = true;
      call.write(withNonce(bytes, nonce));
      this.sent(typeUrl, st);
      this.emitStatus(s);
    };
    call.on('data', (req: DiscoveryRequest) => {
      if (!this.admitted(call, s, req.node)) return;
      const typeUrl = req.type_url as XdsTypeUrl;
      if (!XDS_TYPE_URLS.includes(typeUrl)) {
        this.log.warn(`xDS: ${s.record.nodeId} asked for unsupported type ${req.type_url}`);
        return;
      }
      const nonce = req.response_nonce ?? '';
      let st = s.types.get(typeUrl);
      if (st && nonce && nonce !== st.lastSentNonce) return; // stale
      const requested = req.resource_names ?? [];
      let namesChanged = false;
      if (!st || !requestsSame(st.names, requested)) {
        const wildcard =
          WILDCARD_TYPES.has(typeUrl) &&
          (requested.length === 0 ? !st || st.names === null : requested.includes('*'));
        const names = wildcard ? null : new Set(requested.filter((n) => n !== '*'));
        if (!st) {
          st = { names, subscribed: [] };
          s.types.set(typeUrl, st);
          namesChanged = true;
        } else {
          namesChanged = !sameNames(st.names, names);
          st.names = names;
          st.namesKey = undefined;
        }
      }
      if (nonce && nonce === st.lastSentNonce) this.recordReply(s, typeUrl, st, nonce, req.error_detail);
      // A new subscription (or a request without a nonce: a fresh or restarted one) always gets an
      // answer; otherwise only content not sent yet goes out (after an ACK/NACK nothing, or what
      // changed meanwhile).
      if (namesChanged || !nonce) st.lastSentKey = undefined;
      s.send(typeUrl);
    });
  }

  // ---- incremental ----

  private delta(call: grpc.ServerDuplexStream<DeltaDiscoveryRequest, unknown>): void {
    const s = this.newStream(call, 'delta');
    s.send = (typeUrl) => {
      const st = s.types.get(typeUrl);
      if (!st || s.refused || call.writableEnded || st.awaiting) return;
      const snap = this.cache.getSnapshot(s.record.nodeId);
      if (!snap) return;
      const ts = snap.types[typeUrl];
      const have = (st.clientVersions ??= new Map());
      const wanted = st.names ? [...st.names] : [...ts.resources.keys()];
      const resources: { name: string; version: string; resource: EncodedAny }[] = [];
      const removed: string[] = [];
      for (const n of wanted) {
        const r = ts.resources.get(n);
        if (r && have.get(n) !== r.hash) resources.push({ name: n, version: r.hash, resource: r.any });
        if (!r && have.has(n)) removed.push(n);
      }
      // Wildcard: drop what disappeared from the snapshot.
      if (!st.names) for (const n of have.keys()) if (!ts.resources.has(n)) removed.push(n);
      const key = `${ts.version}|${resources.map((r) => r.name).join(',')}|${removed.join(',')}`;
      if (!resources.length && !removed.length) return;
      if (key === st.nackedKey) return;
      const nonce = String(++s.nonce);
      for (const r of resources) have.set(r.name, r.version);
      for (const n of removed) have.delete(n);
      st.lastSentVersion = ts.version;
      st.lastSentNonce = nonce;
      st.lastSentKey = key;
      st.awaiting = true;
      call.write({
        system_version_info: ts.version,
        resources,
        type_url: typeUrl,
        removed_resources: removed,
        nonce,
      });
      this.sent(typeUrl, st);
      this.emitStatus(s);
    };
    call.on('data', (req: DeltaDiscoveryRequest) => {
      if (!this.admitted(call, s, req.node)) return;
      const typeUrl = req.type_url as XdsTypeUrl;
      if (!XDS_TYPE_URLS.includes(typeUrl)) return;
      let st = s.types.get(typeUrl);
      const sub = req.resource_names_subscribe ?? [];
      const unsub = req.resource_names_unsubscribe ?? [];
      if (!st) {
        const wildcard = (sub.length === 0 && WILDCARD_TYPES.has(typeUrl)) || sub.includes('*');
        st = { names: wildcard ? null : new Set(), subscribed: [], clientVersions: new Map() };
        for (const [n, v] of Object.entries(req.initial_resource_versions ?? {}))
          st.clientVersions!.set(n, v);
        s.types.set(typeUrl, st);
      }
      if (st.names) {
        for (const n of sub) if (n !== '*') st.names.add(n);
        for (const n of unsub) {
          st.names.delete(n);
          st.clientVersions?.delete(n);
        }
      }
      const nonce = req.response_nonce ?? '';
      if (nonce && nonce === st.lastSentNonce) this.recordReply(s, typeUrl, st, nonce, req.error_detail);
      s.send(typeUrl);
    });
  }
}

/** A type's sync status on one stream, given the version its node's snapshot has now. */
function syncStatus(st: TypeState | undefined, current: string | undefined): SyncStatus {
  if (!st?.lastSentNonce) return 'NOT SENT';
  if (st.lastNack && st.lastNack.nonce === st.lastSentNonce) return 'NACKED';
  if (st.lastAckedVersion === st.lastSentVersion && st.lastSentVersion === current && !st.awaiting)
    return 'SYNCED';
  return 'STALE';
}

/**
 * True when a SotW request's names certainly subscribe what `names` holds (an ACK's usual case),
 * without building a Set; false means "compute it".
 */
function requestsSame(names: Set<string> | null, requested: readonly string[]): boolean {
  if (names === null) return requested.length === 0;
  if (names.size !== requested.length) return false;
  for (const n of requested) if (!names.has(n)) return false;
  return true;
}

function sameNames(a: Set<string> | null, b: Set<string> | null): boolean {
  if (a === null || b === null) return a === b;
  if (a.size !== b.size) return false;
  for (const n of a) if (!b.has(n)) return false;
  return true;
}

/**
 * A service whose request deserializers never throw: bytes that are not the request message decode
 * to MALFORMED, which the handler ignores, instead of grpc-js ending the call.
 */
function tolerantService(def: grpc.ServiceDefinition): grpc.ServiceDefinition {
  return Object.fromEntries(
    Object.entries(def).map(([name, method]) => [
      name,
      {
        ...method,
        requestDeserialize: (bytes: Buffer) => {
          try {
            return method.requestDeserialize(bytes) as unknown;
          } catch {
            return MALFORMED;
          }
        },
      },
    ]),
  );
}

const LEAN_SCANS: Record<string, (buf: Uint8Array) => object | undefined> = {
  StreamAggregatedResources: scanDiscoveryRequest,
  DeltaAggregatedResources: scanDeltaDiscoveryRequest,
};

/**
 * The ADS service with request deserializers that read ACKs leanly (leanDiscoveryRequest.ts; first
 * requests and NACKs still get the full decode) and response serializers that send pre-encoded bytes
 * (a Buffer) as they are.
 */
function leanService(def: grpc.ServiceDefinition): grpc.ServiceDefinition {
  return Object.fromEntries(
    Object.entries(def).map(([name, method]) => {
      const serialize = method.responseSerialize;
      const scan = LEAN_SCANS[name];
      return [
        name,
        {
          ...method,
          requestDeserialize: scan
            ? leanDeserializer(scan, method.requestDeserialize)
            : method.requestDeserialize,
          responseSerialize: (v: unknown) => (Buffer.isBuffer(v) ? v : serialize(v)),
        },
      ];
    }),
  );
}
