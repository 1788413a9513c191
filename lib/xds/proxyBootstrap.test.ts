import { describe, expect, it } from 'vitest';
import { envoyBootstrap, grpcBootstrap, XDS_CLUSTER_NAME } from './proxyBootstrap';

const files = { certificateChain: '/p/cert.pem', privateKey: '/p/key.pem', rootCa: '/p/ca.pem' };

/** The ADS cluster's parts the proxy's connection depends on. */
function adsCluster(b: Record<string, unknown>) {
  const c = (b.static_resources as { clusters: Record<string, any>[] }).clusters[0]!;
  const tls = c.transport_socket.typed_config;
  return {
    type: c.type,
    address: c.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address,
    sni: tls.sni,
    certificate: tls.common_tls_context.tls_certificates[0],
    validation: tls.common_tls_context.validation_context,
  };
}

describe('envoyBootstrap', () => {
  it('dials ADS at an IP over mTLS with the written files, checking the server by its IP SAN', () => {
    const b = envoyBootstrap({ nodeId: 'ns1/pod-a', xds: { host: '127.0.0.1', port: 18000 }, files });
    expect(b.node).toEqual({ id: 'ns1/pod-a', cluster: 'ns1' });
    const ads = (b.dynamic_resources as Record<string, any>).ads_config;
    expect(ads.grpc_services).toEqual([{ envoy_grpc: { cluster_name: XDS_CLUSTER_NAME } }]);
    expect(ads.transport_api_version).toBe('V3');
    expect(adsCluster(b)).toEqual({
      type: 'STATIC',
      address: { address: '127.0.0.1', port_value: 18000 },
      sni: undefined,
      certificate: {
        certificate_chain: { filename: '/p/cert.pem' },
        private_key: { filename: '/p/key.pem' },
      },
      validation: {
        trusted_ca: { filename: '/p/ca.pem' },
        match_typed_subject_alt_names: [{ san_type: 'IP_ADDRESS', matcher: { exact: '127.0.0.1' } }],
      },
    });
  });

  it('resolves a DNS name, sends it as SNI and checks it as a DNS SAN', () => {
    const b = envoyBootstrap({ nodeId: 'ns1/pod-a', xds: { host: 'meshdeck.mesh.svc', port: 18000 }, files });
    const c = adsCluster(b);
    expect(c.type).toBe('STRICT_DNS');
    expect(c.sni).toBe('meshdeck.mesh.svc');
    expect(c.validation.match_typed_subject_alt_names).toEqual([
      { san_type: 'DNS', matcher: { exact: 'meshdeck.mesh.svc' } },
    ]);
  });

  it('takes an IPv6 literal for an IP', () => {
    const b = envoyBootstrap({ nodeId: 'ns1/pod-a', xds: { host: '::1', port: 18000 }, files });
    expect(adsCluster(b).type).toBe('STATIC');
    expect(adsCluster(b).validation.match_typed_subject_alt_names[0].san_type).toBe('IP_ADDRESS');
  });
});

describe('grpcBootstrap', () => {
  it('names the server, gRFC A65 tls channel credentials from the files, and the node', () => {
    expect(grpcBootstrap({ nodeId: 'ns1/pod-a', xds: { host: '127.0.0.1', port: 18000 }, files })).toEqual({
      xds_servers: [
        {
          server_uri: '127.0.0.1:18000',
          channel_creds: [
            {
              type: 'tls',
              config: {
                ca_certificate_file: '/p/ca.pem',
                certificate_file: '/p/cert.pem',
                private_key_file: '/p/key.pem',
              },
            },
          ],
          server_features: ['xds_v3'],
        },
      ],
      node: { id: 'ns1/pod-a', cluster: 'ns1', locality: {} },
    });
  });

  it('brackets an IPv6 server address', () => {
    const b = grpcBootstrap({ nodeId: 'ns1/pod-a', xds: { host: '::1', port: 18000 }, files });
    expect((b.xds_servers as { server_uri: string }[])[0]!.server_uri).toBe('[::1]:18000');
  });
});
