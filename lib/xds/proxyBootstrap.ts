/**
 * What a proxy outside Meshdeck needs to reach its ADS server over mTLS: an Envoy v3 bootstrap and a
 * gRPC xDS bootstrap (GRPC_XDS_BOOTSTRAP), both naming the files `meshdeck xds bootstrap` writes beside
 * them (the proxy's certificate chain, its key and the root CA). Pure: the caller issues the certificate
 * and writes the files.
 */

/** 4 or 6 for an IP address literal, 0 for a DNS name (node:net's isIP, without Node: lib/ is isomorphic). */
function ipVersion(host: string): 0 | 4 | 6 {
  if (/^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/.test(host)) return 4;
  return host.includes(':') ? 6 : 0;
}

/** The ADS cluster's name in the Envoy bootstrap. */
export const XDS_CLUSTER_NAME = 'meshdeck-xds';

export interface ProxyBootstrapInput {
  /** `<namespace>/<pod>`: the node id, and the name the certificate carries. */
  nodeId: string;
  /** Where the ADS server listens (its certificate names this host: `serve` issues it so). */
  xds: { host: string; port: number };
  /** Absolute paths of the files, as the proxy will read them. */
  files: { certificateChain: string; privateKey: string; rootCa: string };
  /** Envoy's admin listener (127.0.0.1 only); default 15000. */
  adminPort?: number;
}

/**
 * Envoy's v3 Bootstrap (proto3 JSON, snake_case): ADS over gRPC to `xds`, with the proxy's certificate
 * and the server's checked against the root CA and the name it was dialled by, as Envoy does not check
 * a server's name unless told to.
 */
export function envoyBootstrap(b: ProxyBootstrapInput): Record<string, unknown> {
  const ip = ipVersion(b.xds.host) !== 0;
  const namespace = b.nodeId.split('/')[0]!;
  const ads = { ads: {}, resource_api_version: 'V3' };
  return {
    node: { id: b.nodeId, cluster: namespace },
    dynamic_resources: {
      ads_config: {
        api_type: 'GRPC',
        transport_api_version: 'V3',
        grpc_services: [{ envoy_grpc: { cluster_name: XDS_CLUSTER_NAME } }],
        set_node_on_first_message_only: true,
      },
      lds_config: ads,
      cds_config: ads,
    },
    static_resources: {
      clusters: [
        {
          name: XDS_CLUSTER_NAME,
          type: ip ? 'STATIC' : 'STRICT_DNS',
          connect_timeout: '5s',
          // ADS is gRPC: HTTP/2 to the control plane.
          typed_extension_protocol_options: {
            'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': {
              '@type': 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions',
              explicit_http_config: { http2_protocol_options: {} },
            },
          },
          load_assignment: {
            cluster_name: XDS_CLUSTER_NAME,
            endpoints: [
              {
                lb_endpoints: [
                  {
                    endpoint: {
                      address: { socket_address: { address: b.xds.host, port_value: b.xds.port } },
                    },
                  },
                ],
              },
            ],
          },
          transport_socket: {
            name: 'envoy.transport_sockets.tls',
            typed_config: {
              '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext',
              ...(ip ? {} : { sni: b.xds.host }),
              common_tls_context: {
                tls_certificates: [
                  {
                    certificate_chain: { filename: b.files.certificateChain },
                    private_key: { filename: b.files.privateKey },
                  },
                ],
                validation_context: {
                  trusted_ca: { filename: b.files.rootCa },
                  match_typed_subject_alt_names: [
                    { san_type: ip ? 'IP_ADDRESS' : 'DNS', matcher: { exact: b.xds.host } },
                  ],
                },
              },
            },
          },
        },
      ],
    },
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: b.adminPort ?? 15000 } } },
  };
}

/**
 * gRPC's xDS bootstrap (the file GRPC_XDS_BOOTSTRAP names) with gRFC A65's `tls` channel credentials:
 * gRPC Go, C++ and Java read them. @grpc/grpc-js-xds (1.14) knows only `insecure` and
 * `google_default`, so a Node client needs the plaintext ADS server (`--xds-insecure`) instead.
 */
export function grpcBootstrap(b: ProxyBootstrapInput): Record<string, unknown> {
  return {
    xds_servers: [
      {
        server_uri: `${ipVersion(b.xds.host) === 6 ? `[${b.xds.host}]` : b.xds.host}:${b.xds.port}`,
        channel_creds: [
          {
            type: 'tls',
            config: {
              ca_certificate_file: b.files.rootCa,
              certificate_file: b.files.certificateChain,
              private_key_file: b.files.privateKey,
            },
          },
        ],
        server_features: ['xds_v3'],
      },
    ],
    node: { id: b.nodeId, cluster: b.nodeId.split('/')[0]!, locality: {} },
  };
}
