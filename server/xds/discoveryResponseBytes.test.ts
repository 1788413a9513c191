import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { adsServiceDefinition, encodeResource, TypeUrls } from './envoyProtos';
import { discoveryResponsePrefix, withNonce } from './discoveryResponseBytes';

describe('discoveryResponseBytes', () => {
  const method = adsServiceDefinition().StreamAggregatedResources as grpc.MethodDefinition<unknown, unknown>;
  const cla = (n: number) =>
    encodeResource(TypeUrls.endpoint, {
      cluster_name: `c${n}`,
      endpoints: [
        {
          locality: {},
          load_balancing_weight: 1,
          lb_endpoints: Array.from({ length: n }, (_, i) => ({
            endpoint: { address: { socket_address: { address: `127.0.0.${i + 1}`, port_value: 50051 } } },
          })),
        },
      ],
    });

  it('decodes to what the proto-loader serializer encodes, with every resource byte intact', () => {
    // 200 endpoints make an Any longer than 127 bytes (multi-byte lengths).
    const resources = [cla(1), cla(200)];
    const object = { version_info: 'v-123', resources, type_url: TypeUrls.endpoint, nonce: '42' };
    const ours = withNonce(discoveryResponsePrefix('v-123', resources, TypeUrls.endpoint), '42');
    expect(method.responseDeserialize(ours)).toEqual(
      method.responseDeserialize(method.responseSerialize(object)),
    );
    const decoded = method.responseDeserialize(ours) as { resources: { value: Buffer }[]; nonce: string };
    expect(decoded.nonce).toBe('42');
    expect(Buffer.compare(decoded.resources[1]!.value, resources[1]!.value)).toBe(0);
    expect(ours.equals(method.responseSerialize(object))).toBe(true);
  });

  it('encodes an empty response (no resources) as the serializer does', () => {
    const object = { version_info: 'v0', resources: [], type_url: TypeUrls.cluster, nonce: '1' };
    expect(
      withNonce(discoveryResponsePrefix('v0', [], TypeUrls.cluster), '1').equals(
        method.responseSerialize(object),
      ),
    ).toBe(true);
  });

  it('encodes any nonce as the serializer does (short ASCII, long, non-ASCII)', () => {
    const prefix = discoveryResponsePrefix('v1', [cla(1)], TypeUrls.endpoint);
    for (const nonce of ['7', '123456', 'n'.repeat(127), 'n'.repeat(128), 'nönce-☃']) {
      const object = { version_info: 'v1', resources: [cla(1)], type_url: TypeUrls.endpoint, nonce };
      expect(withNonce(prefix, nonce).equals(method.responseSerialize(object))).toBe(true);
    }
  });
});
