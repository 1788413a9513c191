import { type LoadCell, loadFailing, loadLabel } from '@/lib/console/grpcLoad';
import type { GraphNode } from '@/lib/console/meshGraph';
import type { MeshLiveState, ProxyLiveState } from '@/server/controlPlane/liveState';
import type { NodeLive } from './MeshNode';

/**
 * The live overlay of a node: a proxy's sync state, a Service's ready endpoints, and with the traffic
 * overlay on, the live sessions through it (lib/console/graphTraffic.ts) and the gRPC clients' RPCs
 * (`load`, lib/console/grpcLoad.ts).
 */
export function nodeLive(
  node: GraphNode,
  live: MeshLiveState | null | undefined,
  sessions?: number | 'n/a',
  load?: LoadCell,
): NodeLive | undefined {
  if (!live) return undefined;
  const state = withLoad(stateOf(node, live), load);
  // A proxy whose sessions cannot be listed: its traffic is unknown, not none.
  if (sessions === 'n/a') return state ? { ...state, text: `${state.text} · ⇄ n/a` } : state;
  if (!sessions) return state;
  const flow = `⇄ ${sessions} session${sessions === 1 ? '' : 's'}`;
  return state
    ? { ...state, text: `${state.text} · ⇄ ${sessions}`, sessions }
    : { tone: 'flow', text: flow, sessions };
}

/** RPCs through the node after its own state; failing RPCs turn a node that reads well red. */
function withLoad(state: NodeLive | undefined, load: LoadCell | undefined): NodeLive | undefined {
  if (!load) return state;
  const text = `⇄ ${loadLabel(load)}`;
  const failing = loadFailing(load);
  if (!state) return { tone: failing ? 'bad' : 'flow', text };
  return { tone: failing && state.tone === 'ok' ? 'bad' : state.tone, text: `${state.text} · ${text}` };
}

function stateOf(node: GraphNode, live: MeshLiveState): NodeLive | undefined {
  if (node.kind === 'Proxy' && node.proxyId) {
    const p = live.proxies[node.proxyId];
    return p ? proxyTone(p) : { tone: 'idle', text: 'not running' };
  }
  if (node.kind === 'Service') {
    const s = live.services[`${node.namespace}/${node.name}`];
    if (!s) return undefined;
    const ready = s.endpoints.filter((e) => e.ready).length;
    return { tone: ready > 0 ? 'ok' : 'bad', text: `${ready}/${s.endpoints.length} endpoints ready` };
  }
  return undefined;
}

/** How a proxy's sync state reads: in sync, pushing, failed (with why), unreachable. */
export function proxyTone(p: ProxyLiveState): NodeLive {
  if (p.inSync) return { tone: 'ok', text: 'in sync' };
  if (p.lastPush && !p.lastPush.ok)
    return { tone: 'bad', text: `failed: ${p.lastPush.failed?.message ?? p.phase}` };
  if (p.reachable === false) return { tone: 'bad', text: 'unreachable' };
  return { tone: 'busy', text: p.phase };
}
