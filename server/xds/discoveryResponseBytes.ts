/**
 * Hand-encoded `envoy.service.discovery.v3.DiscoveryResponse` bytes. A push to N streams of the same
 * content differs only in the nonce, so the part before it (version_info, resources, type_url) is
 * encoded once per content and shared, and each stream appends its nonce (field 5): no protobufjs
 * `fromObject`/`encode` per stream, which copied every resource's bytes once per stream.
 * Field numbers from envoy/service/discovery/v3/discovery.proto and google/protobuf/any.proto.
 */
import type { EncodedAny } from './envoyProtos';

function varint(n: number): Buffer {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return Buffer.from(out);
}

/** A length-delimited field (wire type 2). */
function lengthDelimited(field: number, bytes: Buffer): Buffer[] {
  return [varint((field << 3) | 2), varint(bytes.length), bytes];
}

function stringField(field: number, value: string): Buffer[] {
  return value === '' ? [] : lengthDelimited(field, Buffer.from(value, 'utf8'));
}

/** Fields 1 (version_info), 2 (resources as Any) and 4 (type_url) of a DiscoveryResponse. */
export function discoveryResponsePrefix(
  versionInfo: string,
  resources: readonly EncodedAny[],
  typeUrl: string,
): Buffer {
  const parts: Buffer[] = [...stringField(1, versionInfo)];
  for (const r of resources) {
    const any = Buffer.concat([
      ...stringField(1, r.type_url),
      ...(r.value.length ? lengthDelimited(2, r.value) : []),
    ]);
    parts.push(...lengthDelimited(2, any));
  }
  parts.push(...stringField(4, typeUrl));
  return Buffer.concat(parts);
}

/** A complete DiscoveryResponse: the shared prefix plus field 5 (nonce). */
export function withNonce(prefix: Buffer, nonce: string): Buffer {
  // One allocation per stream and push: a nonce is a short ASCII counter (1-byte length).
  if (nonce.length > 0 && nonce.length < 0x80 && /^[\x20-\x7e]*$/.test(nonce)) {
    const out = Buffer.allocUnsafe(prefix.length + 2 + nonce.length);
    prefix.copy(out, 0);
    out[prefix.length] = (5 << 3) | 2;
    out[prefix.length + 1] = nonce.length;
    out.write(nonce, prefix.length + 2, 'latin1');
    return out;
  }
  return Buffer.concat([prefix, ...stringField(5, nonce)]);
}
