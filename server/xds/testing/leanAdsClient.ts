/**
 * The cheapest SotW ADS stream plain @grpc/grpc-js allows, for load-testing the server: responses are
 * scanned for version_info, type_url and nonce only (resources are skipped, not decoded) and ACKs are
 * written as hand-encoded bytes. With thousands of streams in one bench process, protobufjs decoding
 * and encoding on the client would otherwise dominate what the bench measures (the server's push).
 */
import * as grpc from '@grpc/grpc-js';
import { adsServiceDefinition } from '../envoyProtos';

/** What the bench needs of a response. */
export interface LeanResponse {
  version: string;
  nonce: string;
  resources: number;
  /** performance.now() when the response was decoded (its ACK is written right after). */
  at: number;
}

export interface LeanAdsClient {
  latest: Map<string, LeanResponse>;
  close(): void;
}

function varint(n: number): number[] {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return out;
}

function field(no: number, value: Buffer): Buffer {
  return Buffer.concat([Buffer.from([...varint((no << 3) | 2), ...varint(value.length)]), value]);
}

/** DiscoveryRequest: version_info 1, node 2 (id 1), resource_names 3, type_url 4, response_nonce 5. */
function request(o: {
  nodeId?: string;
  version?: string;
  names: string[];
  typeUrl: string;
  nonce?: string;
}): Buffer {
  const parts: Buffer[] = [];
  if (o.version) parts.push(field(1, Buffer.from(o.version)));
  if (o.nodeId) parts.push(field(2, field(1, Buffer.from(o.nodeId))));
  for (const n of o.names) parts.push(field(3, Buffer.from(n)));
  parts.push(field(4, Buffer.from(o.typeUrl)));
  if (o.nonce) parts.push(field(5, Buffer.from(o.nonce)));
  return Buffer.concat(parts);
}

interface Scanned {
  version: string;
  typeUrl: string;
  nonce: string;
  resources: number;
}

/** Reads fields 1, 2 (counted), 4 and 5 of a DiscoveryResponse; skips the rest. */
function scan(buf: Buffer): Scanned {
  const out: Scanned = { version: '', typeUrl: '', nonce: '', resources: 0 };
  let i = 0;
  const readVarint = () => {
    let shift = 0;
    let v = 0;
    for (;;) {
      const b = buf[i++]!;
      v += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return v;
      shift += 7;
    }
  };
  while (i < buf.length) {
    const key = readVarint();
    const wire = key & 7;
    const no = Math.floor(key / 8);
    if (wire === 0) {
      readVarint();
      continue;
    }
    if (wire !== 2) throw new Error(`unexpected wire type ${wire}`);
    const len = readVarint();
    const start = i;
    i += len;
    if (no === 1) out.version = buf.toString('utf8', start, i);
    else if (no === 2) out.resources++;
    else if (no === 4) out.typeUrl = buf.toString('utf8', start, i);
    else if (no === 5) out.nonce = buf.toString('utf8', start, i);
  }
  return out;
}

let ctor: grpc.ServiceClientConstructor | undefined;

function leanConstructor(): grpc.ServiceClientConstructor {
  if (!ctor) {
    const def = adsServiceDefinition();
    const sotw = def.StreamAggregatedResources!;
    ctor = grpc.makeGenericClientConstructor(
      {
        StreamAggregatedResources: {
          ...sotw,
          requestSerialize: (b: Buffer) => b,
          responseDeserialize: (b: Buffer) => b,
        },
      },
      'AggregatedDiscoveryService',
    );
  }
  return ctor;
}

/** Opens one SotW stream subscribing `subscriptions` and ACKing every response immediately. */
export function connectLeanAds(o: {
  address: string;
  nodeId: string;
  subscriptions: [string, string[]][];
  channelOptions?: grpc.ChannelOptions;
}): LeanAdsClient {
  const Ctor = leanConstructor();
  const client = new Ctor(o.address, grpc.credentials.createInsecure(), o.channelOptions ?? {});
  const call = (
    client as unknown as { StreamAggregatedResources(): grpc.ClientDuplexStream<Buffer, Buffer> }
  ).StreamAggregatedResources();
  const names = new Map(o.subscriptions);
  let first = true;
  for (const [typeUrl, n] of o.subscriptions) {
    call.write(request({ ...(first ? { nodeId: o.nodeId } : {}), names: n, typeUrl }));
    first = false;
  }
  const latest = new Map<string, LeanResponse>();
  call.on('data', (b: Buffer) => {
    const r = scan(b);
    latest.set(r.typeUrl, {
      version: r.version,
      nonce: r.nonce,
      resources: r.resources,
      at: performance.now(),
    });
    call.write(
      request({ version: r.version, names: names.get(r.typeUrl) ?? [], typeUrl: r.typeUrl, nonce: r.nonce }),
    );
  });
  call.on('error', () => {});
  return {
    latest,
    close: () => {
      call.cancel();
      client.close();
    },
  };
}
