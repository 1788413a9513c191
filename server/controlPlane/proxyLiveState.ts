/**
 * The parts of live state both control planes build the same way (the local mesh's ControlPlane and
 * Kubernetes mode's console adapter): an l7mp proxy's entry from its desired config, what a sync state
 * changes in it, Services' endpoints from EndpointSlices, and a proxy's sessions read over REST.
 */
import type { ProxyL7mpConfig } from '@/lib/engine/renderL7mp';
import { toLiveSession } from '@/lib/l7mp/liveSession';
import { type EndpointSlice, SERVICE_NAME_LABEL } from '@/lib/model/kube';
import { L7mpRestClient } from '../l7mp/L7mpRestClient';
import type { ProxySyncState } from '../l7mp/Reconciler';
import type { ProxyLiveState, ServiceLiveState } from './liveState';

/** An l7mp proxy's entry for its desired config, keeping what `prev` knew of its process, sync and sessions. */
export function l7mpProxyLiveState(p: ProxyL7mpConfig, prev: ProxyLiveState | undefined): ProxyLiveState {
  return {
    id: p.proxy.id,
    pod: p.proxy.pod,
    apiUrl: p.proxy.apiUrl,
    role: p.proxy.role,
    address: p.proxy.address,
    process: prev?.process,
    reachable: prev?.reachable ?? null,
    inSync: prev?.inSync ?? false,
    phase: prev?.phase ?? 'pending',
    lastPush: prev?.lastPush,
    attempts: prev?.attempts ?? 0,
    listeners: p.config.listeners.map((l) => l.name),
    routes: p.config.routes.map((r) => r.name),
    clusters: p.config.clusters.map((c) => ({
      name: c.name,
      protocol: c.spec.protocol,
      endpoints: (c.endpoints ?? []).map((e) => ({
        name: e.name,
        address: e.spec.address,
        ...(e.weight !== undefined ? { weight: e.weight } : {}),
      })),
    })),
    sessions: prev?.sessions ?? { available: false, reason: 'not read yet' },
    counters: prev?.counters ?? { pushes: 0, pushFailures: 0, operations: 0, restarts: 0, sessions: 0 },
  };
}

/** What a reconciler sync state changes in a proxy's entry (a new push is counted once). */
export function syncStatePatch(prev: ProxyLiveState, s: ProxySyncState): Partial<ProxyLiveState> {
  const pushed = s.lastPush && s.lastPush.at !== prev.lastPush?.at;
  return {
    reachable: s.reachable,
    inSync: s.inSync,
    phase: s.phase,
    lastPush: s.lastPush,
    attempts: s.attempts,
    nextRetryAt: s.nextRetryAt,
    counters: pushed
      ? {
          ...prev.counters,
          pushes: prev.counters.pushes + 1,
          pushFailures: prev.counters.pushFailures + (s.lastPush!.ok ? 0 : 1),
          operations: prev.counters.operations + s.lastPush!.operations,
        }
      : prev.counters,
  };
}

/** Every Service's endpoints (`namespace/name`), from its EndpointSlices. */
export function serviceLiveStates(slices: readonly EndpointSlice[]): Record<string, ServiceLiveState> {
  const services: Record<string, ServiceLiveState> = {};
  for (const s of slices) {
    const svc = s.metadata.labels?.[SERVICE_NAME_LABEL];
    if (!svc) continue;
    const id = `${s.metadata.namespace ?? 'default'}/${svc}`;
    const list = (services[id] ??= { id, endpoints: [] });
    for (const e of s.endpoints ?? []) {
      for (const a of e.addresses)
        list.endpoints.push({ address: a, pod: e.targetRef?.name, ready: e.conditions?.ready !== false });
    }
  }
  return services;
}

/** A proxy's sessions over its REST API; l7mp answers 422 while sessions with ingress/egress chains exist. */
export async function readSessions(p: ProxyL7mpConfig): Promise<ProxyLiveState['sessions']> {
  const client = new L7mpRestClient(p.proxy.apiUrl, { timeoutMs: 1000 });
  try {
    const raw = (await client.get('/api/v1/sessions')) as unknown[];
    const items = raw
      .map((r) => toLiveSession(r, p.config))
      .filter((s) => !s.listener?.startsWith('controller-listener'));
    return { available: true, items };
  } catch (e) {
    const status = (e as { status?: number }).status;
    return {
      available: false,
      reason:
        status === 422
          ? 'l7mp 0.5.7 cannot list sessions while a session has an ingress or egress chain (422)'
          : (e as Error).message,
    };
  }
}

/** The counters after a sessions read. */
export function sessionsPatch(
  prev: ProxyLiveState,
  sessions: ProxyLiveState['sessions'],
): Pick<ProxyLiveState, 'sessions' | 'counters'> {
  return {
    sessions,
    counters: {
      ...prev.counters,
      sessions: sessions.available ? sessions.items.length : prev.counters.sessions,
    },
  };
}
