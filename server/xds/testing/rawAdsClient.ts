/**
 * A raw SotW ADS client on plain @grpc/grpc-js (not grpc-js-xds): subscribes to fixed names per type,
 * ACKs every response (or NACKs what `nack` rejects, with error_detail) and records what arrived.
 * For the mTLS and NACK tests (grpc-js-xds 1.14.1 cannot present a client certificate to the ADS
 * server, nor be made to reject valid config) and for the bench.
 */
import * as grpc from '@grpc/grpc-js';
import { adsServiceDefinition, decodeResource } from '../envoyProtos';

export interface RawResponse {
  typeUrl: string;
  version: string;
  nonce: string;
  names: string[];
  at: number;
}

export interface RawAdsClient {
  /** Latest response per type URL. */
  latest: Map<string, RawResponse>;
  /** Resolves with the stream's end status. */
  ended: Promise<{ code: number; details: string }>;
  onResponse(fn: (r: RawResponse) => void): void;
  close(): void;
}

let ctor: grpc.ServiceClientConstructor | undefined;

export function adsClientConstructor(): grpc.ServiceClientConstructor {
  ctor ??= grpc.makeGenericClientConstructor(adsServiceDefinition(), 'AggregatedDiscoveryService');
  return ctor;
}

export interface RawAdsOptions {
  address: string;
  credentials?: grpc.ChannelCredentials;
  channelOptions?: grpc.ChannelOptions;
  nodeId: string;
  /** type URL -> names ([] = wildcard for LDS/CDS). */
  subscriptions: [string, string[]][];
  /** Decode resource names (costs CPU; off for benches). */
  decodeNames?: boolean;
  /** A shared client (channel) to multiplex streams; else one per stream. */
  client?: grpc.Client;
  /** Decides each response: a message NACKs it (sent as error_detail), undefined ACKs it. */
  nack?: (r: RawResponse) => string | undefined;
}

interface AdsResponse {
  version_info: string;
  resources: { type_url: string; value: Buffer }[];
  type_url: string;
  nonce: string;
}

export function connectRawAds(o: RawAdsOptions): RawAdsClient {
  const Ctor = adsClientConstructor();
  const client =
    o.client ??
    new Ctor(o.address, o.credentials ?? grpc.credentials.createInsecure(), o.channelOptions ?? {});
  const call = (
    client as unknown as { StreamAggregatedResources(): grpc.ClientDuplexStream<unknown, AdsResponse> }
  ).StreamAggregatedResources();
  const latest = new Map<string, RawResponse>();
  const fns: ((r: RawResponse) => void)[] = [];
  /** The last version ACKed per type URL: what a NACK says the client still runs. */
  const acked = new Map<string, string>();
  let first = true;
  for (const [typeUrl, names] of o.subscriptions) {
    call.write({
      ...(first ? { node: { id: o.nodeId, cluster: 'meshdeck-raw', locality: {} } } : {}),
      type_url: typeUrl,
      resource_names: names,
    });
    first = false;
  }
  call.on('data', (res: AdsResponse) => {
    const r: RawResponse = {
      typeUrl: res.type_url,
      version: res.version_info,
      nonce: res.nonce,
      names: o.decodeNames
        ? res.resources.map((a) => {
            const d = decodeResource(a);
            return String(d.name ?? d.cluster_name);
          })
        : [],
      at: Date.now(),
    };
    latest.set(r.typeUrl, r);
    const names = o.subscriptions.find(([t]) => t === res.type_url)?.[1] ?? [];
    const reject = o.nack?.(r);
    if (reject === undefined) acked.set(res.type_url, res.version_info);
    call.write({
      version_info: reject === undefined ? res.version_info : (acked.get(res.type_url) ?? ''),
      type_url: res.type_url,
      resource_names: names,
      response_nonce: res.nonce,
      ...(reject === undefined
        ? {}
        : { error_detail: { code: grpc.status.INVALID_ARGUMENT, message: reject } }),
    });
    for (const f of fns) f(r);
  });
  const ended = new Promise<{ code: number; details: string }>((resolve) => {
    call.on('error', (e: grpc.ServiceError) => resolve({ code: e.code, details: e.details }));
    call.on('status', (s: grpc.StatusObject) => resolve({ code: s.code, details: s.details }));
  });
  return {
    latest,
    ended,
    onResponse: (f) => fns.push(f),
    close: () => {
      call.cancel();
      if (!o.client) client.close();
    },
  };
}
