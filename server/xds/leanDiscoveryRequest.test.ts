import type * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { adsServiceDefinition, TypeUrls } from './envoyProtos';
import {
  leanDeserializer,
  MalformedRequestError,
  scanDeltaDiscoveryRequest,
  scanDiscoveryRequest,
} from './leanDiscoveryRequest';
import { varint } from './testing/leanAdsClient';

type Method = grpc.MethodDefinition<unknown, unknown>;
const sotw = adsServiceDefinition().StreamAggregatedResources as Method;
const delta = adsServiceDefinition().DeltaAggregatedResources as Method;

/** Unknown fields of every skippable wire type: 0 (a 10-byte varint), 1, 2 (with a multi-byte length), 5. */
const UNKNOWN = Buffer.from([
  ...varint((100 << 3) | 0),
  ...varint(2 ** 52 + 3),
  ...varint((101 << 3) | 1),
  ...[1, 2, 3, 4, 5, 6, 7, 8],
  ...varint((102 << 3) | 2),
  ...varint(300),
  ...Array<number>(300).fill(9),
  ...varint((103 << 3) | 5),
  ...[1, 2, 3, 4],
]);

/** The lean path must read exactly what proto-loader's full decode (protobufjs + toObject) returns. */
function sameAsFull(method: Method, scan: (b: Uint8Array) => object | undefined, bytes: Buffer) {
  const lean = scan(bytes);
  expect(lean).toBeDefined();
  expect(lean).toStrictEqual(method.requestDeserialize(bytes));
}

const ack = {
  version_info: '7',
  resource_names: ['cluster-a-eds', 'cluster-b-eds'],
  type_url: TypeUrls.endpoint,
  response_nonce: '12',
};

describe('scanDiscoveryRequest', () => {
  it('reads an ACK as the full decode does', () => {
    sameAsFull(sotw, scanDiscoveryRequest, sotw.requestSerialize(ack));
    // What grpc-js-xds writes: node and error_detail null.
    sameAsFull(sotw, scanDiscoveryRequest, sotw.requestSerialize({ ...ack, node: null, error_detail: null }));
  });

  it('reads a wildcard ACK without names, non-ASCII and long names, and the empty message', () => {
    sameAsFull(
      sotw,
      scanDiscoveryRequest,
      sotw.requestSerialize({ version_info: 'v1', type_url: TypeUrls.cluster, response_nonce: '3' }),
    );
    sameAsFull(
      sotw,
      scanDiscoveryRequest,
      sotw.requestSerialize({ ...ack, resource_names: ['ünïcødé-☃', 'x'.repeat(400), ''] }),
    );
    sameAsFull(sotw, scanDiscoveryRequest, Buffer.alloc(0));
    expect(scanDiscoveryRequest(Buffer.alloc(0))).toStrictEqual({});
  });

  it('skips unknown fields of wire types 0, 1, 2 and 5 wherever they are', () => {
    const base = sotw.requestSerialize(ack);
    sameAsFull(sotw, scanDiscoveryRequest, Buffer.concat([UNKNOWN, base]));
    sameAsFull(sotw, scanDiscoveryRequest, Buffer.concat([base, UNKNOWN]));
    // Between two fields: cut after the first field (version_info, 3 bytes: tag, length, '7').
    sameAsFull(sotw, scanDiscoveryRequest, Buffer.concat([base.subarray(0, 3), UNKNOWN, base.subarray(3)]));
  });

  it('lets the last of a repeated singular field win, as protobufjs does', () => {
    const twice = Buffer.concat([
      sotw.requestSerialize(ack),
      sotw.requestSerialize({ response_nonce: '13', resource_names: ['more'] }),
    ]);
    sameAsFull(sotw, scanDiscoveryRequest, twice);
    expect(scanDiscoveryRequest(twice)).toMatchObject({
      response_nonce: '13',
      resource_names: ['cluster-a-eds', 'cluster-b-eds', 'more'],
    });
  });

  it('leaves a first request (node), a NACK (error_detail) and resource locators to the full decode', () => {
    const first = sotw.requestSerialize({
      node: { id: 'ns/pod', cluster: 'c', locality: { region: 'r' } },
      resource_names: ['a'],
      type_url: TypeUrls.listener,
    });
    const nack = sotw.requestSerialize({ ...ack, error_detail: { code: 3, message: 'bad endpoint' } });
    const locators = sotw.requestSerialize({ ...ack, resource_locators: [{ name: 'x' }] });
    for (const b of [first, nack, locators]) expect(scanDiscoveryRequest(b)).toBeUndefined();
    // A known string field with another wire type: protobufjs decides what it means.
    expect(scanDiscoveryRequest(Buffer.from([(5 << 3) | 0, 1]))).toBeUndefined();
    // A group (wire type 3) of an unknown field.
    expect(
      scanDiscoveryRequest(Buffer.from([...varint((20 << 3) | 3), ...varint((20 << 3) | 4)])),
    ).toBeUndefined();
  });

  it('throws a clear error on truncated or invalid bytes, where the full decode throws too', () => {
    const cases = [
      Buffer.from([(4 << 3) | 2]), // a tag without its length
      Buffer.from([(4 << 3) | 2, 0x80]), // a truncated length varint
      Buffer.from([...varint((100 << 3) | 2), 5, 1]), // an unknown field running past the end
      Buffer.from([...varint((100 << 3) | 1), 1, 2, 3]), // a short fixed64
      Buffer.from([...varint((100 << 3) | 5), 1]), // a short fixed32
      Buffer.from([...varint((100 << 3) | 6), 1]), // wire type 6
      Buffer.from([...varint((100 << 3) | 7), 1]), // wire type 7
    ];
    for (const b of cases) {
      expect(() => scanDiscoveryRequest(b)).toThrow(MalformedRequestError);
      expect(() => sotw.requestDeserialize(b)).toThrow();
    }
    expect(() => scanDiscoveryRequest(Buffer.from([...varint((100 << 3) | 6), 1]))).toThrow(
      'malformed envoy.service.discovery.v3.DiscoveryRequest: invalid wire type 6 (field 100) at byte 0',
    );
  });

  it('refuses what protobufjs would let through: a string cut short, a varint over 10 bytes', () => {
    const base = sotw.requestSerialize(ack);
    const cut = base.subarray(0, base.length - 1);
    expect((sotw.requestDeserialize(cut) as { response_nonce: string }).response_nonce).toBe('1');
    const longVarint = Buffer.from([...varint((100 << 3) | 0), ...Array<number>(11).fill(0x80), 1]);
    expect(sotw.requestDeserialize(longVarint)).toStrictEqual({});
    expect(() => scanDiscoveryRequest(longVarint)).toThrow(/varint longer than 10 bytes at byte 2/);
    expect(() => scanDiscoveryRequest(cut)).toThrow(
      /malformed envoy\.service\.discovery\.v3\.DiscoveryRequest: field 5 length 2 past the end at byte \d+/,
    );
  });

  it('reads a plain Uint8Array as well as a Buffer', () => {
    const b = sotw.requestSerialize(ack);
    expect(scanDiscoveryRequest(new Uint8Array(b))).toStrictEqual(sotw.requestDeserialize(b));
  });
});

describe('scanDeltaDiscoveryRequest', () => {
  const deltaAck = {
    type_url: TypeUrls.endpoint,
    resource_names_subscribe: ['a', 'b'],
    resource_names_unsubscribe: ['c'],
    response_nonce: '4',
  };

  it('reads an ACK and a subscription change as the full decode does, skipping unknown fields', () => {
    sameAsFull(
      delta,
      scanDeltaDiscoveryRequest,
      delta.requestSerialize({ type_url: TypeUrls.route, response_nonce: '2' }),
    );
    sameAsFull(delta, scanDeltaDiscoveryRequest, delta.requestSerialize(deltaAck));
    sameAsFull(
      delta,
      scanDeltaDiscoveryRequest,
      Buffer.concat([
        UNKNOWN,
        delta.requestSerialize({ ...deltaAck, node: null, error_detail: null }),
        UNKNOWN,
      ]),
    );
  });

  it('leaves node, initial_resource_versions, error_detail and locators to the full decode', () => {
    for (const extra of [
      { node: { id: 'n' } },
      { initial_resource_versions: { a: '1' } },
      { error_detail: { code: 3, message: 'no' } },
      { resource_locators_subscribe: [{ name: 'x' }] },
      { resource_locators_unsubscribe: [{ name: 'x' }] },
    ])
      expect(scanDeltaDiscoveryRequest(delta.requestSerialize({ ...deltaAck, ...extra }))).toBeUndefined();
  });

  it('throws a clear error on truncated bytes', () => {
    const b = delta.requestSerialize(deltaAck);
    expect(() => scanDeltaDiscoveryRequest(b.subarray(0, b.length - 1))).toThrow(
      /malformed envoy\.service\.discovery\.v3\.DeltaDiscoveryRequest: .* past the end at byte \d+/,
    );
  });
});

describe('leanDeserializer', () => {
  it('never runs the full decode for an ACK, and runs it for a NACK and a first request', () => {
    let fullDecodes = 0;
    const deserialize = leanDeserializer(scanDiscoveryRequest, (b) => {
      fullDecodes++;
      return sotw.requestDeserialize(b);
    });
    const ackBytes = sotw.requestSerialize(ack);
    expect(deserialize(ackBytes)).toStrictEqual(sotw.requestDeserialize(ackBytes));
    expect(fullDecodes).toBe(0);
    const nack = sotw.requestSerialize({ ...ack, error_detail: { code: 13, message: 'bad' } });
    expect(deserialize(nack)).toMatchObject({ error_detail: { code: 13, message: 'bad' } });
    const first = sotw.requestSerialize({ node: { id: 'ns/pod' }, type_url: TypeUrls.listener });
    expect(deserialize(first)).toMatchObject({ node: { id: 'ns/pod' }, type_url: TypeUrls.listener });
    expect(fullDecodes).toBe(2);
  });
});
