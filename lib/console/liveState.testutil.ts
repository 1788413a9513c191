/** Live-state and graph fixtures for the console's tests: one literal of each shape, patched per test. */
import type { ProxyLiveState } from '@/server/controlPlane/liveState';
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
