/** A proxy's xDS resources in the shape of Envoy's /config_dump, as the Preview shows them. */
import { TYPE_URL, type XdsResources } from '../xds/envoyTypes';

const ADMIN = 'type.googleapis.com/envoy.admin.v3.';

/** `{configs: [Listeners, Clusters, Routes, Endpoints ConfigDump]}` with each resource typed (`@type`). */
export function xdsConfigDump(r: XdsResources): { configs: Record<string, unknown>[] } {
  return {
    configs: [
      {
        '@type': `${ADMIN}ListenersConfigDump`,
        dynamic_listeners: r.listeners.map((l) => ({
          name: l.name,
          active_state: { listener: { '@type': TYPE_URL.listener, ...l } },
        })),
      },
      {
        '@type': `${ADMIN}ClustersConfigDump`,
        dynamic_active_clusters: r.clusters.map((c) => ({ cluster: { '@type': TYPE_URL.cluster, ...c } })),
      },
      {
        '@type': `${ADMIN}RoutesConfigDump`,
        dynamic_route_configs: r.routes.map((rc) => ({
          route_config: { '@type': TYPE_URL.routeConfiguration, ...rc },
        })),
      },
      {
        '@type': `${ADMIN}EndpointsConfigDump`,
        dynamic_endpoint_configs: r.endpoints.map((e) => ({
          endpoint_config: { '@type': TYPE_URL.clusterLoadAssignment, ...e },
        })),
      },
    ],
  };
}
