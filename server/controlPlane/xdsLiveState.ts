/**
 * Live state from the xDS side: an ADS stream's status as the console shows it, and the entry of a
 * proxyless gRPC client (no l7mp process: what it is served over xDS and how far it has synced).
 */
import type { Proxy } from '@/lib/engine/clusterIndex';
import type { ProxyLoadLiveState } from '@/lib/xds/loadReports';
import type { ProxyXdsSnapshot } from '@/lib/xds/renderXds';
import type { ProxyStatus } from '../xds/AdsServer';
import { TypeUrls, type XdsTypeUrl } from '../xds/envoyProtos';
import type { ProxyLiveState, ProxyXdsLiveState, XdsTypeLiveState, XdsTypeName } from './liveState';

/** ProxyStatus keys `status` by short name and `types` by type URL. */
const TYPE_NAMES: [XdsTypeUrl, XdsTypeName][] = [
  [TypeUrls.listener, 'LDS'],
  [TypeUrls.route, 'RDS'],
  [TypeUrls.cluster, 'CDS'],
  [TypeUrls.endpoint, 'EDS'],
];

/** One ADS stream's status (AdsServer 'status' event or proxyStatus()) as live state. */
export function xdsLiveState(s: ProxyStatus & { replica?: string }): ProxyXdsLiveState {
  const types = {} as ProxyXdsLiveState['types'];
  for (const [url, name] of TYPE_NAMES) {
    const t = s.types[url];
    const entry: XdsTypeLiveState = { status: s.status[name], subscribed: t?.subscribed ?? [] };
    if (t?.lastSentVersion !== undefined) entry.lastSentVersion = t.lastSentVersion;
    if (t?.lastAckedVersion !== undefined) entry.lastAckedVersion = t.lastAckedVersion;
    if (t?.lastNack) entry.lastNack = t.lastNack;
    types[name] = entry;
  }
  return {
    connected: true,
    nodeId: s.nodeId,
    identity: s.identity,
    peer: s.peer,
    protocol: s.protocol,
    connectedSince: s.connectedSince,
    ...(s.certificate ? { certificate: s.certificate } : {}),
    ...(s.replica ? { replica: s.replica } : {}),
    types,
  };
}

/** The sync fields of a proxyless gRPC client, which only xDS configures. */
export function grpcSyncFields(
  xds: ProxyXdsLiveState | undefined,
  served: boolean,
): Pick<ProxyLiveState, 'phase' | 'inSync' | 'reachable'> {
  if (!served) return { phase: 'xds-off', inSync: false, reachable: null };
  if (!xds) return { phase: 'not-connected', inSync: false, reachable: null };
  if (!xds.connected) return { phase: 'disconnected', inSync: false, reachable: false };
  const statuses = Object.values(xds.types).map((t) => t.status);
  if (statuses.includes('NACKED')) return { phase: 'nacked', inSync: false, reachable: true };
  // NOT SENT is a type the client has not subscribed to (a subscribed one is always answered).
  const synced = statuses.includes('SYNCED') && statuses.every((s) => s === 'SYNCED' || s === 'NOT SENT');
  return { phase: synced ? 'synced' : 'syncing', inSync: synced, reachable: true };
}

/**
 * A proxyless gRPC client's entry: its xDS resources by name, its ADS stream's state, and the load it
 * last reported (LoadLiveFeed.get).
 */
export function grpcProxyLiveState(
  proxy: Proxy,
  snapshot: ProxyXdsSnapshot | undefined,
  xds: ProxyXdsLiveState | undefined,
  served: boolean,
  load?: ProxyLoadLiveState,
): ProxyLiveState {
  const endpoints = new Map((snapshot?.endpoints ?? []).map((e) => [e.cluster_name, e]));
  return {
    id: proxy.id,
    pod: proxy.pod,
    role: proxy.role,
    address: proxy.address,
    ...grpcSyncFields(xds, served),
    attempts: 0,
    listeners: (snapshot?.listeners ?? []).map((l) => l.name),
    routes: (snapshot?.routes ?? []).map((r) => r.name),
    clusters: (snapshot?.clusters ?? []).map((c) => ({
      name: c.name,
      protocol: 'gRPC',
      endpoints: (endpoints.get(c.eds_cluster_config.service_name)?.endpoints ?? []).flatMap((locality) =>
        locality.lb_endpoints.map((e) => {
          const a = e.endpoint.address.socket_address;
          const address = `${a.address}:${a.port_value}`;
          const weight = e.load_balancing_weight?.value;
          return { name: `${c.name}@${address}`, address, ...(weight !== undefined ? { weight } : {}) };
        }),
      ),
    })),
    sessions: { available: false, reason: 'a proxyless gRPC client runs no l7mp: no sessions to list' },
    counters: { pushes: 0, pushFailures: 0, operations: 0, restarts: 0, sessions: 0 },
    ...(xds ? { xds } : {}),
    ...(load ? { load } : {}),
  };
}
