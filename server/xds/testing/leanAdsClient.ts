/**
 * The cheapest SotW ADS stream a Node process can open, for load-testing the server: gRPC spoken
 * directly over node:http2 (one HTTP/2 connection per stream, the 5-byte gRPC message prefix, no
 * grpc-js client stack), responses scanned for version_info, type_url and nonce only (resources are
 * skipped, not decoded), ACKs hand-encoded. With thousands of streams in one bench process, grpc-js's
 * client pipeline (resolving/retrying call, interceptors, per-message filters) and protobufjs would
 * otherwise dominate what the bench measures (bench/xdsFloor.ts: a do-nothing grpc-js server pushing
 * one response to 500 streams, p99 116-205 ms with grpc-js client streams, 73-133 ms with these).
 */
import * as http2 from 'node:http2';

const ADS_PATH = '/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources';

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

/** A protobuf base-128 varint's bytes. */
export function varint(n: number): number[] {
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
  // The read position lives in `at` and varints are read inline: no closure allocated per response
  // (with thousands of streams in one process, the load generator's own cost skews what is measured).
  const at = { i: 0 };
  while (at.i < buf.length) {
    const key = readVarint(buf, at);
    const wire = key & 7;
    const no = Math.floor(key / 8);
    if (wire === 0) {
      readVarint(buf, at);
      continue;
    }
    if (wire !== 2) throw new Error(`unexpected wire type ${wire}`);
    const len = readVarint(buf, at);
    const start = at.i;
    at.i += len;
    if (no === 1) out.version = buf.toString('latin1', start, at.i);
    else if (no === 2) out.resources++;
    else if (no === 4) out.typeUrl = buf.toString('latin1', start, at.i);
    else if (no === 5) out.nonce = buf.toString('latin1', start, at.i);
  }
  return out;
}

function readVarint(buf: Buffer, at: { i: number }): number {
  let shift = 0;
  let v = 0;
  for (;;) {
    const b = buf[at.i++]!;
    v += (b & 0x7f) * 2 ** shift;
    if (b < 0x80) return v;
    shift += 7;
  }
}

/**
 * A framed ACK: version_info (1), then the type's names (3) and type_url (4) encoded once per
 * subscription, then response_nonce (5), in one buffer. Versions, type URLs and nonces are ASCII.
 */
function ack(version: string, tail: Buffer, nonce: string): Buffer {
  const head = [...varint((1 << 3) | 2), ...varint(version.length)];
  const foot = [...varint((5 << 3) | 2), ...varint(nonce.length)];
  const len = head.length + version.length + tail.length + foot.length + nonce.length;
  const out = Buffer.allocUnsafe(5 + len);
  out[0] = 0;
  out.writeUInt32BE(len, 1);
  let i = 5;
  for (const b of head) out[i++] = b;
  i += out.write(version, i, 'latin1');
  i += tail.copy(out, i);
  for (const b of foot) out[i++] = b;
  out.write(nonce, i, 'latin1');
  return out;
}

/** A gRPC length-prefixed message: flag 0 (uncompressed), 4-byte big-endian length, the bytes. */
function frame(message: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(message.length, 1);
  return Buffer.concat([head, message]);
}

/** Opens one SotW stream subscribing `subscriptions` and ACKing every response immediately. */
export function connectLeanAds(o: {
  address: string;
  nodeId: string;
  subscriptions: [string, string[]][];
}): LeanAdsClient {
  const session = http2.connect(`http://${o.address}`);
  const stream = session.request({
    ':method': 'POST',
    ':path': ADS_PATH,
    'content-type': 'application/grpc',
    te: 'trailers',
  });
  const tails = new Map(o.subscriptions.map(([t, n]) => [t, request({ names: n, typeUrl: t })]));
  let first = true;
  for (const [typeUrl, n] of o.subscriptions) {
    stream.write(frame(request({ ...(first ? { nodeId: o.nodeId } : {}), names: n, typeUrl })));
    first = false;
  }
  const latest = new Map<string, LeanResponse>();
  let pending: Buffer = Buffer.alloc(0);
  stream.on('data', (chunk: Buffer) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    // HTTP/2 DATA frames need not align with gRPC messages: consume every complete one.
    while (pending.length >= 5) {
      const len = pending.readUInt32BE(1);
      if (pending.length < 5 + len) break;
      const r = scan(pending.subarray(5, 5 + len));
      pending = pending.subarray(5 + len);
      latest.set(r.typeUrl, {
        version: r.version,
        nonce: r.nonce,
        resources: r.resources,
        at: performance.now(),
      });
      stream.write(
        ack(r.version, tails.get(r.typeUrl) ?? request({ names: [], typeUrl: r.typeUrl }), r.nonce),
      );
    }
  });
  stream.on('error', () => {});
  session.on('error', () => {});
  return {
    latest,
    close: () => {
      stream.close(http2.constants.NGHTTP2_CANCEL);
      session.close();
    },
  };
}
