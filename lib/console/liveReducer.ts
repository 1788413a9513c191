/**
 * Folds the control plane's Server-Sent Events into the live state held in the query cache. Every
 * event carries the store's version: anything not newer than what the cache holds is dropped, so a
 * late or replayed event never rolls the state back.
 */
import type { LiveEvent, MeshLiveState, ProxyLiveState } from '@/server/controlPlane/liveState';

/** Applies one event; returns the same object when the event is stale or cannot apply. */
export function liveReducer(state: MeshLiveState | undefined, event: LiveEvent): MeshLiveState | undefined {
  if (state !== undefined && event.version <= state.version) return state;
  if (event.type === 'mesh') return event.state;
  // A proxy change needs the mesh it belongs to; without one, wait for the next full state.
  if (state === undefined) return state;
  return { ...state, version: event.version, proxies: { ...state.proxies, [event.proxy.id]: event.proxy } };
}

/**
 * True when the event shows that events were missed (a version gap, or a proxy the state does not
 * know): the caller should refetch the whole state rather than trust the fold.
 */
export function liveEventGap(state: MeshLiveState | undefined, event: LiveEvent): boolean {
  if (event.type === 'mesh' || state === undefined) return false;
  if (event.version <= state.version) return false;
  return event.version > state.version + 1 || !(event.proxy.id in state.proxies);
}

/** What folding a batch of events gave: the state, whether a gap was seen, and the proxies changed. */
export interface LiveFold {
  state: MeshLiveState | undefined;
  /** An event showed that events were missed: the caller refetches the whole state. */
  gap: boolean;
  /** Ids of the proxies whose events were applied, each once, in order. */
  proxies: string[];
}

/**
 * Folds a batch of events in order, as liveReducer one by one would, so the console sets its state
 * once per frame instead of once per event (a push to many proxies sends a burst of them). Stops at a
 * gap: what follows it cannot be trusted until the whole state is fetched again.
 */
export function foldLiveEvents(state: MeshLiveState | undefined, events: readonly LiveEvent[]): LiveFold {
  let current = state;
  const proxies = new Set<string>();
  for (const ev of events) {
    if (liveEventGap(current, ev)) return { state: current, gap: true, proxies: [...proxies] };
    const next = liveReducer(current, ev);
    if (next !== current && ev.type === 'proxy') proxies.add(ev.proxy.id);
    current = next;
  }
  return { state: current, gap: false, proxies: [...proxies] };
}

/** Reads an SSE message (`event: mesh|proxy`, JSON data) into a LiveEvent, or says why it is not one. */
export function parseLiveEvent(type: string, data: string): LiveEvent | { error: string } {
  let v: unknown;
  try {
    v = JSON.parse(data);
  } catch {
    return { error: `live event "${type}" is not JSON` };
  }
  if (typeof v !== 'object' || v === null) return { error: `live event "${type}" is not an object` };
  const e = v as Record<string, unknown>;
  if (typeof e.version !== 'number' || !Number.isInteger(e.version))
    return { error: `live event "${type}" has no integer version` };
  if (type === 'mesh' && e.type === 'mesh' && isState(e.state))
    return { type: 'mesh', version: e.version, state: e.state };
  if (type === 'proxy' && e.type === 'proxy' && isProxy(e.proxy))
    return { type: 'proxy', version: e.version, proxy: e.proxy };
  return { error: `live event "${type}" does not have the shape of a ${type} event` };
}

function isState(v: unknown): v is MeshLiveState {
  const s = v as MeshLiveState | null;
  return (
    typeof s === 'object' &&
    s !== null &&
    typeof s.version === 'number' &&
    typeof s.proxies === 'object' &&
    s.proxies !== null &&
    typeof s.services === 'object' &&
    Array.isArray(s.diagnostics)
  );
}

function isProxy(v: unknown): v is ProxyLiveState {
  const p = v as ProxyLiveState | null;
  return (
    typeof p === 'object' &&
    p !== null &&
    typeof p.id === 'string' &&
    typeof p.phase === 'string' &&
    isSessions(p.sessions)
  );
}

/** The sessions list is drawn straight from the event, so its two shapes are checked here. */
function isSessions(v: unknown): v is ProxyLiveState['sessions'] {
  const s = v as { available?: unknown; items?: unknown; reason?: unknown } | null;
  if (typeof s !== 'object' || s === null) return false;
  if (s.available === true)
    return (
      Array.isArray(s.items) &&
      s.items.every(
        (i: { name?: unknown } | null) => typeof i === 'object' && i !== null && typeof i.name === 'string',
      )
    );
  return s.available === false && typeof s.reason === 'string';
}
