import { describe, expect, it } from 'vitest';
import type { MeshLiveState, ProxyLiveState } from '@/server/controlPlane/liveState';
import { liveEventGap, liveReducer, parseLiveEvent } from './liveReducer';

function proxy(id: string, phase: string, inSync = phase === 'in-sync'): ProxyLiveState {
  return {
    id,
    pod: id.split('/')[1]!,
    role: 'gateway',
    address: '127.0.0.10',
    reachable: true,
    inSync,
    phase,
    attempts: 0,
    listeners: [],
    routes: [],
    clusters: [],
    sessions: { available: true, items: [] },
    counters: { pushes: 0, pushFailures: 0, operations: 0, restarts: 0, sessions: 0 },
  };
}

function state(version: number, proxies: ProxyLiveState[]): MeshLiveState {
  return {
    version,
    mesh: { source: 'dir', mode: 'local', loadedAt: '2025-01-01T00:00:00Z' },
    proxies: Object.fromEntries(proxies.map((p) => [p.id, p])),
    services: {},
    diagnostics: [],
  };
}

describe('liveReducer', () => {
  const s3 = state(3, [proxy('default/gw', 'pushing'), proxy('default/tc', 'in-sync')]);

  it('takes a newer mesh state whole', () => {
    const s5 = state(5, [proxy('default/gw', 'in-sync')]);
    expect(liveReducer(s3, { type: 'mesh', version: 5, state: s5 })).toBe(s5);
    expect(liveReducer(undefined, { type: 'mesh', version: 1, state: s5 })).toBe(s5);
  });

  it('replaces one proxy on a newer proxy event and keeps the others by reference', () => {
    const next = liveReducer(s3, { type: 'proxy', version: 4, proxy: proxy('default/gw', 'in-sync') })!;
    expect(next.version).toBe(4);
    expect(next.proxies['default/gw']!.phase).toBe('in-sync');
    expect(next.proxies['default/tc']).toBe(s3.proxies['default/tc']);
    expect(s3.proxies['default/gw']!.phase).toBe('pushing'); // not mutated
  });

  it('drops stale and replayed events, returning the same object', () => {
    expect(liveReducer(s3, { type: 'proxy', version: 3, proxy: proxy('default/gw', 'failed') })).toBe(s3);
    expect(liveReducer(s3, { type: 'proxy', version: 2, proxy: proxy('default/gw', 'failed') })).toBe(s3);
    expect(liveReducer(s3, { type: 'mesh', version: 1, state: state(1, []) })).toBe(s3);
  });

  it('cannot apply a proxy event before any mesh state', () => {
    expect(liveReducer(undefined, { type: 'proxy', version: 9, proxy: proxy('default/gw', 'in-sync') })).toBe(
      undefined,
    );
  });

  it('flags a version gap or an unknown proxy so the caller refetches', () => {
    expect(liveEventGap(s3, { type: 'proxy', version: 4, proxy: proxy('default/gw', 'x') })).toBe(false);
    expect(liveEventGap(s3, { type: 'proxy', version: 6, proxy: proxy('default/gw', 'x') })).toBe(true);
    expect(liveEventGap(s3, { type: 'proxy', version: 4, proxy: proxy('default/new', 'x') })).toBe(true);
    expect(liveEventGap(s3, { type: 'proxy', version: 2, proxy: proxy('default/new', 'x') })).toBe(false);
  });
});

describe('parseLiveEvent', () => {
  it('reads mesh and proxy events as the SSE route sends them', () => {
    const s = state(2, [proxy('default/gw', 'in-sync')]);
    expect(parseLiveEvent('mesh', JSON.stringify({ type: 'mesh', version: 2, state: s }))).toEqual({
      type: 'mesh',
      version: 2,
      state: s,
    });
    const p = proxy('default/gw', 'failed', false);
    expect(parseLiveEvent('proxy', JSON.stringify({ type: 'proxy', version: 3, proxy: p }))).toEqual({
      type: 'proxy',
      version: 3,
      proxy: p,
    });
  });

  it('says what is wrong with a malformed event', () => {
    expect(parseLiveEvent('mesh', '{')).toEqual({ error: 'live event "mesh" is not JSON' });
    expect(parseLiveEvent('proxy', '{"type":"proxy"}')).toEqual({
      error: 'live event "proxy" has no integer version',
    });
    expect(parseLiveEvent('proxy', '{"type":"proxy","version":1,"proxy":{}}')).toEqual({
      error: 'live event "proxy" does not have the shape of a proxy event',
    });
  });
});
