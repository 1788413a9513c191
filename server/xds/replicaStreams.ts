/**
 * Replicas share their xDS clients. Every replica serves ADS and a proxy streams from whichever one the
 * Service picked, so one replica alone sees only its share: the leader's Programmed conditions and the
 * console's sync state would miss every client of the others. Each ADS server therefore also serves
 * `meshdeck.xds.v1.ReplicaStreams/Watch` on its port: the records of its open streams (as proxyStatus()
 * has them), all at once and then their changes, to the other replicas only. A replica proves it is one
 * with the ADS server certificate every replica is issued from the shared CA (CN and SPIFFE id
 * `meshdeck-system/xds-server`, clientAuth as well as serverAuth), which no proxy is given: the signing
 * service refuses that name and marks what it signs OU=agent. Istio's istiod instances do not share
 * theirs (`istioctl proxy-status` asks each one); here each replica follows the others, so whichever
 * serves the console or leads sees every client.
 *
 * The clients' load reports (LRS) go along, so a rollout's analysis on the leader counts every
 * client's RPCs, not only those of the clients streaming from it.
 *
 * `ReplicaStreamsClient` follows one peer's Watch: it keeps the peer's streams, emits 'status',
 * 'disconnect' and 'load' as AdsServer does (XdsStreamTracker follows both kinds of source), and on losing the
 * peer says every stream of it closed, then connects again with a backoff.
 */
import { EventEmitter } from 'node:events';
import * as grpc from '@grpc/grpc-js';
import type { ClusterLoadReport } from '@/lib/xds/loadReports';
import type { AdsServer, ProxyRecord, ProxyStatus } from './AdsServer';
import { AGENT_UNIT } from './CertificateManager';
import { identityFromCertificate, XDS_SERVER_COMMON_NAME } from './certificateIdentity';

export const REPLICA_STREAMS_SERVICE = 'meshdeck.xds.v1.ReplicaStreams';

/** A replica's stream as its peers see it: the record, and which replica it is open at. */
export type ReplicaStatus = ProxyStatus & { replica: string };

/** One message of Watch: the first has every open stream (`reset`), the next their changes. */
export interface ReplicaStreamsUpdate {
  /** The serving replica's identity (its Pod's name). */
  replica: string;
  reset?: boolean;
  statuses: ProxyStatus[];
  /** Streams that closed: their node ids and stream ids. */
  closed: { nodeId: string; streamId: number }[];
  /** Load reports (LRS) the replica's clients sent since the last update, as its 'load' events. */
  load?: { nodeId: string; reports: ClusterLoadReport[]; atMs: number }[];
}

const json = {
  serialize: (v: unknown) => Buffer.from(JSON.stringify(v)),
  deserialize: (b: Buffer) => JSON.parse(b.toString('utf8')) as unknown,
};

/** The Watch method: JSON both ways (only Meshdeck speaks it, so no proto to ship). */
export function replicaStreamsServiceDefinition(): grpc.ServiceDefinition {
  return {
    Watch: {
      path: `/${REPLICA_STREAMS_SERVICE}/Watch`,
      requestStream: false,
      responseStream: true,
      requestSerialize: json.serialize,
      requestDeserialize: json.deserialize,
      responseSerialize: json.serialize,
      responseDeserialize: json.deserialize,
    },
  };
}

export interface ReplicaStreamsServiceOptions {
  /** This replica's identity, sent with each update. */
  replica: string;
  /** Changes are sent at most this often (default 100 ms): a fan-out changes every stream at once. */
  coalesceMs?: number;
  /** Plaintext ADS (local development): callers cannot be checked, and are not. */
  insecure?: boolean;
  logger?: { info?: (m: string) => void };
}

/** Why a caller is not a replica, or undefined when it is (its certificate is the ADS server's). */
function replicaCallerRefusal(call: grpc.ServerWritableStream<unknown, unknown>): string | undefined {
  const cert = call.getAuthContext?.()?.sslPeerCertificate;
  if (!cert) return 'no client certificate: only Meshdeck replicas may watch the ADS streams';
  const identity = identityFromCertificate(cert);
  const units = [cert.subject?.OU].flat();
  if (identity !== XDS_SERVER_COMMON_NAME || units.includes(AGENT_UNIT))
    return `the client certificate names ${identity ?? 'nobody'}: only Meshdeck replicas (${XDS_SERVER_COMMON_NAME}) may watch the ADS streams`;
  return undefined;
}

/** Watch's handler over `ads`'s stream events (see the module comment). */
export function replicaStreamsHandlers(
  ads: AdsServer,
  o: ReplicaStreamsServiceOptions,
): grpc.UntypedServiceImplementation {
  const coalesceMs = o.coalesceMs ?? 100;
  return {
    Watch: (call: grpc.ServerWritableStream<unknown, ReplicaStreamsUpdate>) => {
      const refusal = o.insecure ? undefined : replicaCallerRefusal(call);
      if (refusal) {
        call.emit('error', { code: grpc.status.PERMISSION_DENIED, details: refusal });
        return;
      }
      const changed = new Map<number, ProxyStatus>();
      const closed = new Map<number, string>();
      const load: NonNullable<ReplicaStreamsUpdate['load']> = [];
      let timer: NodeJS.Timeout | undefined;
      const flush = () => {
        timer = undefined;
        if (!changed.size && !closed.size && !load.length) return;
        const update: ReplicaStreamsUpdate = {
          replica: o.replica,
          statuses: [...changed.values()],
          closed: [...closed].map(([streamId, nodeId]) => ({ nodeId, streamId })),
          ...(load.length ? { load: load.splice(0) } : {}),
        };
        changed.clear();
        closed.clear();
        call.write(update);
      };
      const schedule = () => {
        timer ??= setTimeout(flush, coalesceMs);
      };
      const onStatus = (s: ProxyStatus) => {
        closed.delete(s.streamId);
        changed.set(s.streamId, s);
        schedule();
      };
      const onDisconnect = (r: ProxyRecord) => {
        changed.delete(r.streamId);
        closed.set(r.streamId, r.nodeId);
        schedule();
      };
      const onLoad = (nodeId: string, reports: ClusterLoadReport[], atMs: number) => {
        load.push({ nodeId, reports, atMs });
        schedule();
      };
      ads.on('status', onStatus);
      ads.on('disconnect', onDisconnect);
      ads.on('load', onLoad);
      call.write({ replica: o.replica, reset: true, statuses: ads.proxyStatus(), closed: [] });
      let done = false;
      const end = () => {
        if (done) return;
        done = true;
        if (timer) clearTimeout(timer);
        ads.off('status', onStatus);
        ads.off('disconnect', onDisconnect);
        ads.off('load', onLoad);
      };
      call.on('cancelled', end);
      call.on('close', end);
      call.on('error', end);
    },
  };
}

export interface ReplicaStreamsClientEvents {
  status: [ReplicaStatus];
  disconnect: [ProxyRecord & { replica: string }];
  /** A load report a client of the peer sent it (as AdsServer 'load'). */
  load: [nodeId: string, reports: ClusterLoadReport[], atMs: number];
  /** Following the peer (the first update arrived) or not (with why). */
  state: [{ connected: boolean; error?: string }];
}

export interface ReplicaStreamsClientOptions {
  /** The peer's ADS address, `host:port`. */
  address: string;
  /** The peer's identity, as its lease names it (until its own updates say). */
  replica: string;
  /** Asked again for each connection: a renewed certificate is used from the next one. */
  credentials: () => grpc.ChannelCredentials;
  /** The name the peer's certificate carries (`meshdeck.<ns>.svc`), when dialled by address. */
  serverName?: string;
  /** Reconnect backoff: first wait and cap (default 500 ms, 10 s). */
  backoff?: { baseMs: number; capMs: number };
}

const ReplicaStreamsGrpcClient = grpc.makeGenericClientConstructor(
  replicaStreamsServiceDefinition(),
  REPLICA_STREAMS_SERVICE,
);

/** Follows one peer replica's ADS streams (see the module comment). */
export class ReplicaStreamsClient extends EventEmitter<ReplicaStreamsClientEvents> {
  private client: grpc.Client | undefined;
  private readonly streams = new Map<number, ReplicaStatus>();
  private call: grpc.ClientReadableStream<ReplicaStreamsUpdate> | undefined;
  private retry: NodeJS.Timeout | undefined;
  private failures = 0;
  private closed = false;
  /** The last error, while not following. */
  lastError: string | undefined;
  connected = false;

  constructor(private readonly o: ReplicaStreamsClientOptions) {
    super();
    this.watch();
  }

  /** The peer's open streams as last heard. */
  proxyStatus(): ReplicaStatus[] {
    return [...this.streams.values()];
  }

  /** Stops following: the peer's streams are said closed. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    this.call?.cancel();
    this.forgetAll();
    this.client?.close();
  }

  private watch(): void {
    this.client?.close();
    const o = this.o;
    this.client = new ReplicaStreamsGrpcClient(o.address, o.credentials(), {
      ...(o.serverName
        ? { 'grpc.ssl_target_name_override': o.serverName, 'grpc.default_authority': o.serverName }
        : {}),
      'grpc.keepalive_time_ms': 20_000,
      'grpc.keepalive_timeout_ms': 10_000,
    });
    const call = (
      this.client as unknown as { Watch(req: unknown): grpc.ClientReadableStream<ReplicaStreamsUpdate> }
    ).Watch({});
    this.call = call;
    // A call given up on may still report its end: only the current one counts.
    call.on('data', (u: ReplicaStreamsUpdate) => this.call === call && this.update(u));
    call.on('error', (e: grpc.ServiceError) => this.call === call && this.lost(e.details || e.message));
    call.on('end', () => this.call === call && this.lost('the replica ended the watch'));
  }

  private update(u: ReplicaStreamsUpdate): void {
    if (this.closed) return;
    this.failures = 0;
    if (!this.connected) {
      this.connected = true;
      this.lastError = undefined;
      this.emit('state', { connected: true });
    }
    if (u.reset) {
      const open = new Set(u.statuses.map((s) => s.streamId));
      for (const id of [...this.streams.keys()]) if (!open.has(id)) this.forget(id);
    }
    for (const s of u.statuses) {
      const status: ReplicaStatus = { ...s, replica: this.o.replica };
      this.streams.set(s.streamId, status);
      this.emit('status', status);
    }
    for (const c of u.closed) this.forget(c.streamId);
    for (const l of u.load ?? []) this.emit('load', l.nodeId, l.reports, l.atMs);
  }

  private lost(why: string): void {
    if (this.closed || this.retry) return;
    this.call = undefined;
    this.connected = false;
    this.lastError = why;
    this.emit('state', { connected: false, error: why });
    // What a lost peer had open is unknown now: its clients reconnect (to this replica or another).
    this.forgetAll();
    const { baseMs, capMs } = this.o.backoff ?? { baseMs: 500, capMs: 10_000 };
    const wait = Math.min(capMs, baseMs * 2 ** Math.min(this.failures++, 16));
    this.retry = setTimeout(() => {
      this.retry = undefined;
      if (!this.closed) this.watch();
    }, wait);
    this.retry.unref?.();
  }

  private forget(streamId: number): void {
    const s = this.streams.get(streamId);
    if (!s) return;
    this.streams.delete(streamId);
    this.emit('disconnect', s);
  }

  private forgetAll(): void {
    for (const id of [...this.streams.keys()]) this.forget(id);
  }
}
