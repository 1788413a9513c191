/**
 * A lean reader of `envoy.service.discovery.v3.DiscoveryRequest` and `DeltaDiscoveryRequest` bytes
 * for the ADS server's ACK path: the same idea as discoveryResponseBytes.ts on the way in. An ACK
 * carries only strings (SotW: version_info, resource_names, type_url, response_nonce; delta:
 * type_url, the subscribe/unsubscribe names, response_nonce), and reading those with a varint loop
 * yields exactly the object proto-loader's protobufjs decode + toObject would (keepCase, no defaults,
 * empty lists omitted) at a fraction of the cost. A request with anything else (node: a first
 * request; error_detail: a NACK; resource locators, initial_resource_versions, groups, a known field
 * with an unexpected wire type) is handed to the full decode, so every request is handled as before.
 * Field numbers from envoy/service/discovery/v3/discovery.proto as @grpc/grpc-js-xds ships it.
 */

/** What the lean path reads of a SotW DiscoveryRequest (the full decode's shape for these fields). */
export interface LeanDiscoveryRequest {
  version_info?: string;
  resource_names?: string[];
  type_url?: string;
  response_nonce?: string;
}

/** What the lean path reads of a DeltaDiscoveryRequest. */
export interface LeanDeltaDiscoveryRequest {
  type_url?: string;
  resource_names_subscribe?: string[];
  resource_names_unsubscribe?: string[];
  response_nonce?: string;
}

/** Bytes that are not a protobuf message (truncated, bad wire type, overlong varint). */
export class MalformedRequestError extends Error {
  constructor(what: string, detail: string, offset: number) {
    super(`malformed ${what}: ${detail} at byte ${offset}`);
    this.name = 'MalformedRequestError';
  }
}

/** Per field number: a string field's name (repeated when `list`), or FULL to use the full decode. */
type FieldSpec = { name: string; list: boolean } | typeof FULL;
const FULL = 0;

interface MessageSpec {
  what: string;
  fields: FieldSpec[];
}

const one = (name: string): FieldSpec => ({ name, list: false });
const list = (name: string): FieldSpec => ({ name, list: true });

const SOTW: MessageSpec = {
  what: 'envoy.service.discovery.v3.DiscoveryRequest',
  // 2 node, 6 error_detail, 7 resource_locators
  fields: [
    FULL,
    one('version_info'),
    FULL,
    list('resource_names'),
    one('type_url'),
    one('response_nonce'),
    FULL,
    FULL,
  ],
};

const DELTA: MessageSpec = {
  what: 'envoy.service.discovery.v3.DeltaDiscoveryRequest',
  // 1 node, 5 initial_resource_versions, 7 error_detail, 8/9 resource locators
  fields: [
    FULL,
    FULL,
    one('type_url'),
    list('resource_names_subscribe'),
    list('resource_names_unsubscribe'),
    FULL,
    one('response_nonce'),
    FULL,
    FULL,
    FULL,
  ],
};

// The scan's cursor: module state rather than closures, because a closure per call cost more than
// the protobufjs decode it replaces.
let buf = Buffer.alloc(0) as unknown as Utf8Slicer;
let pos = 0;
let what = '';

function fail(detail: string, at: number): never {
  throw new MalformedRequestError(what, detail, at);
}

/** A varint, exact up to 2^53 (a tag or length that large fails the bounds checks anyway). */
function varint(): number {
  const b0 = pos < buf.length ? buf[pos]! : fail('truncated varint', pos);
  if (b0 < 0x80) {
    pos++;
    return b0;
  }
  const at = pos;
  let v = 0;
  let mul = 1;
  for (let n = 0; n < 10; n++) {
    if (pos >= buf.length) return fail('truncated varint', at);
    const b = buf[pos++]!;
    v += (b & 0x7f) * mul;
    if (b < 0x80) return v;
    mul *= 128;
  }
  return fail('varint longer than 10 bytes', at);
}

/** Buffer's own UTF-8 slice, as protobufjs reads strings (no argument checks of `toString`). */
type Utf8Slicer = Uint8Array & { utf8Slice(start: number, end: number): string };

/**
 * Reads `bytes` per `spec`; undefined when the message needs the full decode. Unknown fields (wire
 * types 0, 1, 2, 5) are skipped, as protobufjs does. Throws MalformedRequestError on bytes protobufjs
 * also refuses (running past the end, wire types 6 and 7), and on two it lets through: a string
 * running past the end (protobufjs cuts it short) and a varint longer than 10 bytes.
 */
function scan(bytes: Uint8Array, spec: MessageSpec): Record<string, string | string[]> | undefined {
  buf = (Buffer.isBuffer(bytes)
    ? bytes
    : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)) as unknown as Utf8Slicer;
  pos = 0;
  what = spec.what;
  const end = bytes.length;
  const fields = spec.fields;
  const out: Record<string, string | string[]> = {};
  while (pos < end) {
    const tagAt = pos;
    const tag = varint();
    const wire = tag & 7;
    const no = tag > 0xffffffff ? 0 : Math.floor(tag / 8);
    if (no === 0) return undefined; // odd enough to leave to protobufjs
    const f = no < fields.length ? fields[no]! : undefined;
    if (f === FULL) return undefined;
    if (f) {
      if (wire !== 2) return undefined; // a known field with another wire type: protobufjs decides
      const len = varint();
      if (len > end - pos) fail(`field ${no} length ${len} past the end`, tagAt);
      const s = buf.utf8Slice(pos, pos + len);
      pos += len;
      if (f.list) ((out[f.name] as string[] | undefined) ?? (out[f.name] = [])).push(s);
      else out[f.name] = s;
      continue;
    }
    switch (wire) {
      case 0:
        varint();
        break;
      case 1:
        if (end - pos < 8) fail(`field ${no} fixed64 past the end`, tagAt);
        pos += 8;
        break;
      case 2: {
        const len = varint();
        if (len > end - pos) fail(`field ${no} length ${len} past the end`, tagAt);
        pos += len;
        break;
      }
      case 5:
        if (end - pos < 4) fail(`field ${no} fixed32 past the end`, tagAt);
        pos += 4;
        break;
      case 3:
      case 4:
        return undefined; // groups: rare and deprecated; protobufjs knows them
      default:
        fail(`invalid wire type ${wire} (field ${no})`, tagAt);
    }
  }
  return out;
}

/** A SotW request's ACK-path fields, or undefined when it needs the full decode (node, error_detail...). */
export function scanDiscoveryRequest(buf: Uint8Array): LeanDiscoveryRequest | undefined {
  return scan(buf, SOTW) as LeanDiscoveryRequest | undefined;
}

/** A delta request's ACK-path fields, or undefined when it needs the full decode. */
export function scanDeltaDiscoveryRequest(buf: Uint8Array): LeanDeltaDiscoveryRequest | undefined {
  return scan(buf, DELTA) as LeanDeltaDiscoveryRequest | undefined;
}

/** A gRPC request deserializer: the lean scan where it suffices, else `full` (protobufjs). */
export function leanDeserializer<T>(
  lean: (buf: Uint8Array) => object | undefined,
  full: (buf: Buffer) => T,
): (buf: Buffer) => T {
  return (buf) => (lean(buf) as T | undefined) ?? full(buf);
}
