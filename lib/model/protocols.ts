/**
 * The protocols l7mp 0.5.7 knows (openapi/l7mp-openapi.yaml in @l7mp/l7mp), keyed by the
 * lowercase keys the mesh resources use (`udp:`, `websocket:`, `jsonsocket:`, ...).
 */
export const L7MP_PROTOCOL_BY_KEY = {
  udp: 'UDP',
  tcp: 'TCP',
  http: 'HTTP',
  websocket: 'WebSocket',
  jsonsocket: 'JSONSocket',
  unixdomainsocket: 'UnixDomainSocket',
  sync: 'Sync',
  echo: 'Echo',
  discard: 'Discard',
  logger: 'Logger',
  stdio: 'Stdio',
  jsonencap: 'JSONEncap',
  jsondecap: 'JSONDecap',
  metric: 'Metric',
  prometheus: 'Prometheus',
} as const;

export type ProtocolKey = keyof typeof L7MP_PROTOCOL_BY_KEY;
export type L7mpProtocol = (typeof L7MP_PROTOCOL_BY_KEY)[ProtocolKey];

/** Protocol keys that may open a server-side socket: a VirtualService (an l7mp Listener). */
export const LISTENER_PROTOCOL_KEYS = [
  'udp',
  'tcp',
  'http',
  'websocket',
  'jsonsocket',
  'unixdomainsocket',
  'grpc',
] as const;
export type ListenerProtocolKey = (typeof LISTENER_PROTOCOL_KEYS)[number];

/**
 * Listener protocol keys l7mp does not know: served only over xDS. `grpc` is a proxyless gRPC client's
 * api_listener (the client dials `xds:///<VirtualService name>`).
 */
export const XDS_ONLY_PROTOCOL_KEYS = ['grpc'] as const;
export type XdsOnlyProtocolKey = (typeof XDS_ONLY_PROTOCOL_KEYS)[number];
export function isXdsOnlyProtocolKey(key: string): key is XdsOnlyProtocolKey {
  return (XDS_ONLY_PROTOCOL_KEYS as readonly string[]).includes(key);
}

/** Protocol keys that may originate connections: a Target (an l7mp Cluster). l7mp 0.5.7 has no HTTP cluster. */
export const CLUSTER_PROTOCOL_KEYS = [
  'udp',
  'tcp',
  'websocket',
  'jsonsocket',
  'unixdomainsocket',
  'sync',
  'echo',
  'discard',
  'logger',
  'stdio',
  'jsonencap',
  'jsondecap',
  'metric',
  'prometheus',
] as const;
export type ClusterProtocolKey = (typeof CLUSTER_PROTOCOL_KEYS)[number];

/** Virtual clusters live inside the proxy: they have no endpoints. */
export const VIRTUAL_CLUSTER_KEYS = [
  'sync',
  'echo',
  'discard',
  'logger',
  'stdio',
  'jsonencap',
  'jsondecap',
  'metric',
  'prometheus',
] as const;

/** Transports JSONSocket can run over (listener side and cluster side). */
export const TRANSPORT_PROTOCOL_KEYS = ['udp', 'tcp', 'websocket', 'unixdomainsocket'] as const;
export type TransportProtocolKey = (typeof TRANSPORT_PROTOCOL_KEYS)[number];

/** Which kernel port space a listener protocol binds in (for port-clash detection). */
export type PortFamily = 'tcp' | 'udp' | 'unix';
export function portFamilyOf(key: ListenerProtocolKey | TransportProtocolKey): PortFamily {
  switch (key) {
    case 'udp':
      return 'udp';
    case 'unixdomainsocket':
      return 'unix';
    default:
      return 'tcp';
  }
}

export function isVirtualClusterKey(key: string): boolean {
  return (VIRTUAL_CLUSTER_KEYS as readonly string[]).includes(key);
}
