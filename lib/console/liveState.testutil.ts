/** Live-state and graph fixtures for the console's tests: one literal of each shape, patched per test. */
import type { ProxyLiveState } from '@/server/controlPlane/liveState';
import type { ClusterLoadView } from '@/lib/xds/loadReports';
import type { GraphNode } from './meshGraph';

/** An l7mp proxy `namespace/pod` in sync with no sessions, as the live state has it; `patch` on top. */
export function proxyLive(id: string, patch: Partial<ProxyLiveState> = {}): ProxyLiveState {
  return {
    id,
    pod: id.split('/')[1]!,
    role: 'gateway',
    address: '127.0.0.10',
    reachable: true,
    inSync: true,
    phase: 'in-sync',
    attempts: 0,
    listeners: [],
    routes: [],
    clusters: [],
    sessions: { available: true, items: [] },
    counters: { pushes: 1, pushFailures: 0, operations: 3, restarts: 0, sessions: 0 },
    ...patch,
  };
}

/** A graph node `kind/default/name` with no diagnostics; `patch` on top. */
export function graphNode(kind: GraphNode['kind'], name: string, patch: Partial<GraphNode> = {}): GraphNode {
  return {
    id: `${kind}/default/${name}`,
    kind,
    name,
    namespace: 'default',
    detail: '',
    diagnostics: [],
    counts: { error: 0, warning: 0, info: 0 },
    ...patch,
  };
}

/** One cluster's load as `loadView` gives it: `issued` RPCs over a 10 s window, all succeeded unless told. */
export function clusterLoad(
  cluster: string,
  counts: { issued: number; succeeded?: number; failed?: number; inProgress?: number; dropped?: number },
): ClusterLoadView {
  const succeeded = counts.succeeded ?? counts.issued;
  const failed = counts.failed ?? 0;
  return {
    cluster,
    issued: counts.issued,
    succeeded,
    failed,
    dropped: counts.dropped ?? 0,
    rps: counts.issued / 10,
    successPercent:
      succeeded + failed === 0 ? null : Math.round((1000 * succeeded) / (succeeded + failed)) / 10,
    inProgress: counts.inProgress ?? 0,
  };
}

/**
 * A proxyless gRPC client `namespace/pod` as the live state has it (no REST API or sessions), served
 * `served` clusters, with these clusters' load over a 10 s window (none: no load reports yet).
 */
export function grpcClientLive(
  id: string,
  load: ClusterLoadView[] | undefined,
  served: string[] = (load ?? []).map((c) => c.cluster),
): ProxyLiveState {
  const total = (load ?? []).reduce(
    (s, c) => ({
      issued: s.issued + c.issued,
      succeeded: s.succeeded + c.succeeded,
      failed: s.failed + c.failed,
    }),
    { issued: 0, succeeded: 0, failed: 0 },
  );
  const done = total.succeeded + total.failed;
  return proxyLive(id, {
    role: 'grpc',
    address: '127.0.0.70',
    phase: 'synced',
    counters: { pushes: 0, pushFailures: 0, operations: 0, restarts: 0, sessions: 0 },
    clusters: served.map((name) => ({ name, protocol: 'gRPC', endpoints: [] })),
    sessions: { available: false, reason: 'a proxyless gRPC client runs no l7mp: no sessions to list' },
    ...(load
      ? {
          load: {
            at: '2026-11-28T14:22:22.000Z',
            windowMs: 10_000,
            clusters: load,
            rps: total.issued / 10,
            successPercent: done === 0 ? null : Math.round((1000 * total.succeeded) / done) / 10,
          },
        }
      : {}),
  });
}

/**
 * A grouped view of `graph` for viewTraffic: each group's members folded (group id -> node ids), every
 * other node shown as itself; returns the view and its `groupOf`.
 */
export function foldedView(
  graph: { nodes: readonly GraphNode[] },
  groups: Record<string, readonly string[]>,
): { view: { nodes: GraphNode[]; collapsed: { id: string }[] }; groupOf: Record<string, string> } {
  const groupOf: Record<string, string> = {};
  for (const [g, members] of Object.entries(groups)) for (const n of members) groupOf[n] = g;
  return {
    view: {
      nodes: graph.nodes.filter((n) => !groupOf[n.id]),
      collapsed: Object.keys(groups).map((id) => ({ id })),
    },
    groupOf,
  };
}
