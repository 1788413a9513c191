/**
 * Hand-built snapshots for the tests and the bench, shaped exactly like the proof of concept in
 * shared/notes/xds-grpc-js-xds.md §2: Listener (api_listener + HCM with RDS over ADS, router last),
 * RouteConfiguration (one vhost, weighted_clusters), EDS Clusters, ClusterLoadAssignments.
 */
import { TypeUrls } from '../envoyProtos';
import type { SnapshotInput } from '../SnapshotCache';

export interface DemoCluster {
  name: string;
  weight: number;
  /** Backend ports on 127.0.0.1. */
  ports: number[];
}

export interface DemoSnapshotOptions {
  /** The xds:/// target (listener name and vhost domain). */
  service?: string;
  route?: string;
  clusters: DemoCluster[];
  /** Extra routes in the virtual host (before the default route), for route-add benches. */
  extraRoutes?: number;
  /** Clusters ask the client to report its load to the ADS server (`lrs_server: {self: {}}`). */
  lrs?: boolean;
}

export function demoSnapshot(o: DemoSnapshotOptions): SnapshotInput {
  const service = o.service ?? 'demo-service';
  const route = o.route ?? `${service}-route`;
  return {
    listeners: [
      {
        name: service,
        api_listener: {
          api_listener: {
            '@type': TypeUrls.httpConnectionManager,
            rds: { config_source: { ads: {}, resource_api_version: 'V3' }, route_config_name: route },
            http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': TypeUrls.router } }],
          },
        },
      },
    ],
    routes: [
      {
        name: route,
        virtual_hosts: [
          {
            name: `${service}-vhost`,
            domains: [service],
            routes: [
              ...Array.from({ length: o.extraRoutes ?? 0 }, (_, i) => ({
                name: `extra-${i}`,
                match: { prefix: `/extra.Service${i}/` },
                route: { cluster: o.clusters[0]!.name },
              })),
              {
                name: 'default',
                match: { prefix: '' },
                route: {
                  weighted_clusters: {
                    clusters: o.clusters.map((c) => ({ name: c.name, weight: { value: c.weight } })),
                  },
                },
              },
            ],
          },
        ],
      },
    ],
    clusters: o.clusters.map((c) => ({
      name: c.name,
      type: 'EDS',
      eds_cluster_config: {
        eds_config: { ads: {}, resource_api_version: 'V3' },
        service_name: `${c.name}-eds`,
      },
      lb_policy: 'ROUND_ROBIN',
      ...(o.lrs ? { lrs_server: { self: {} } } : {}),
    })),
    endpoints: o.clusters.map((c) => ({
      cluster_name: `${c.name}-eds`,
      endpoints: [
        {
          locality: { region: 'local', zone: 'a' },
          load_balancing_weight: { value: 1 },
          lb_endpoints: c.ports.map((port) => ({
            endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: port } } },
            health_status: 'HEALTHY',
          })),
        },
      ],
    })),
  };
}
