/**
 * The Envoy v3 xDS resources Meshdeck renders, as plain objects in the shape protobufjs `fromObject`
 * takes with `keepCase` (snake_case field names as in the .proto files, `@type` inside Any, wrapper
 * types as `{value}`, Durations as `{seconds, nanos}`, enums as their names). Only the fields used.
 */

export const TYPE_URL = {
  listener: 'type.googleapis.com/envoy.config.listener.v3.Listener',
  routeConfiguration: 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration',
  cluster: 'type.googleapis.com/envoy.config.cluster.v3.Cluster',
  clusterLoadAssignment: 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment',
  httpConnectionManager:
    'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
  router: 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router',
  tcpProxy: 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy',
  udpProxy: 'type.googleapis.com/envoy.extensions.filters.udp.udp_proxy.v3.UdpProxyConfig',
} as const;

/** The fully qualified protobuf message names of the four resource types. */
export const RESOURCE_MESSAGE = {
  listeners: 'envoy.config.listener.v3.Listener',
  routes: 'envoy.config.route.v3.RouteConfiguration',
  clusters: 'envoy.config.cluster.v3.Cluster',
  endpoints: 'envoy.config.endpoint.v3.ClusterLoadAssignment',
} as const;

export interface UInt32Value {
  value: number;
}
export interface Duration {
  seconds: number;
  nanos?: number;
}

export interface ConfigSource {
  ads: Record<string, never>;
  resource_api_version: 'V3';
}

export interface SocketAddress {
  protocol?: 'TCP' | 'UDP';
  address: string;
  port_value: number;
}
export interface Address {
  socket_address: SocketAddress;
}

// ---------------------------------------------------------------- filters (inside Any)

export interface RouterAny {
  '@type': typeof TYPE_URL.router;
}
export interface HttpFilter {
  name: string;
  typed_config: RouterAny;
}
export interface HttpConnectionManagerAny {
  '@type': typeof TYPE_URL.httpConnectionManager;
  stat_prefix: string;
  codec_type?: 'AUTO';
  rds: { config_source: ConfigSource; route_config_name: string };
  http_filters: HttpFilter[];
  upgrade_configs?: { upgrade_type: string }[];
}
export interface TcpProxyAny {
  '@type': typeof TYPE_URL.tcpProxy;
  stat_prefix: string;
  cluster?: string;
  weighted_clusters?: { clusters: { name: string; weight: number }[] };
  max_connect_attempts?: UInt32Value;
  hash_policy?: { source_ip: Record<string, never> }[];
}
export interface UdpProxyAny {
  '@type': typeof TYPE_URL.udpProxy;
  stat_prefix: string;
  cluster: string;
  hash_policies?: { source_ip: boolean }[];
}

export interface NetworkFilter {
  name: string;
  typed_config: HttpConnectionManagerAny | TcpProxyAny;
}
export interface ListenerFilter {
  name: string;
  typed_config: UdpProxyAny;
}

// ---------------------------------------------------------------- resources

export interface Listener {
  name: string;
  address?: Address;
  filter_chains?: { filters: NetworkFilter[] }[];
  listener_filters?: ListenerFilter[];
  udp_listener_config?: Record<string, never>;
  /** Proxyless gRPC: the client's own listener, `api_listener.api_listener` = Any(HttpConnectionManager). */
  api_listener?: { api_listener: HttpConnectionManagerAny };
}

export interface WeightedCluster {
  name: string;
  weight: UInt32Value;
}
export interface RetryPolicy {
  retry_on: string;
  num_retries: UInt32Value;
  per_try_timeout?: Duration;
}
export type HashPolicy =
  | { header: { header_name: string } }
  | { connection_properties: { source_ip: boolean } }
  | { filter_state: { key: string } };

export interface RouteAction {
  cluster?: string;
  weighted_clusters?: { clusters: WeightedCluster[] };
  retry_policy?: RetryPolicy;
  hash_policy?: HashPolicy[];
}
export interface Route {
  name: string;
  match: { prefix: string };
  route: RouteAction;
}
export interface VirtualHost {
  name: string;
  domains: string[];
  routes: Route[];
}
export interface RouteConfiguration {
  name: string;
  virtual_hosts: VirtualHost[];
}

export interface Cluster {
  name: string;
  type: 'EDS';
  eds_cluster_config: { eds_config: ConfigSource; service_name: string };
  lb_policy: 'ROUND_ROBIN' | 'RING_HASH';
  connect_timeout?: Duration;
  /** Proxyless gRPC clients only: report load (LRS) to the ADS server itself (`self`). */
  lrs_server?: { self: Record<string, never> };
}

export interface LbEndpoint {
  endpoint: { address: Address };
  health_status: 'HEALTHY';
  load_balancing_weight?: UInt32Value;
}
export interface LocalityLbEndpoints {
  locality: { region?: string; zone?: string; sub_zone?: string };
  /** Always set: gRPC silently drops a locality without it. */
  load_balancing_weight: UInt32Value;
  lb_endpoints: LbEndpoint[];
}
export interface ClusterLoadAssignment {
  cluster_name: string;
  endpoints: LocalityLbEndpoints[];
}

/** One proxy's xDS resources, per type (what an ADS server publishes as one snapshot). */
export interface XdsResources {
  listeners: Listener[];
  routes: RouteConfiguration[];
  clusters: Cluster[];
  endpoints: ClusterLoadAssignment[];
}
