import { describe, expect, it } from 'vitest';
import type { MeshLiveState, ProxyLiveState } from '@/server/controlPlane/liveState';
import { foldLiveEvents, liveEventGap, liveReducer, type LiveFold, parseLiveEvent } from './liveReducer';

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

describe('foldLiveEvents', () => {
  const s3 = state(3, [proxy('default/gw', 'pushing'), proxy('default/tc', 'pushing')]);
  const ev = (version: number, id: string, phase: string) =>
    ({ type: 'proxy', version, proxy: proxy(id, phase) }) as const;

  it('gives what liveReducer gives event by event, and each changed proxy once', () => {
    const events = [
      ev(4, 'default/gw', 'syncing'),
      ev(5, 'default/tc', 'in-sync'),
      ev(3, 'default/tc', 'failed'), // stale: dropped
      ev(6, 'default/gw', 'in-sync'),
    ];
    const oneByOne = events.reduce<MeshLiveState | undefined>((s, e) => liveReducer(s, e), s3);
    const fold: LiveFold = foldLiveEvents(s3, events);
    expect(fold.state).toEqual(oneByOne);
    expect(fold.state!.version).toBe(6);
    expect(fold.state!.proxies['default/gw']!.phase).toBe('in-sync');
    expect(fold.state!.proxies['default/tc']!.phase).toBe('in-sync');
    expect(fold).toMatchObject({ gap: false, proxies: ['default/gw', 'default/tc'] });
  });

  it('a mesh event in the batch replaces everything before it', () => {
    const s7 = state(7, [proxy('default/gw', 'failed')]);
    const fold = foldLiveEvents(s3, [
      ev(4, 'default/gw', 'syncing'),
      { type: 'mesh', version: 7, state: s7 },
    ]);
    expect(fold.state).toBe(s7);
    expect(fold.gap).toBe(false);
  });

  it('stops at a gap with the state folded so far', () => {
    const fold = foldLiveEvents(s3, [ev(4, 'default/gw', 'in-sync'), ev(9, 'default/tc', 'in-sync')]);
    expect(fold.gap).toBe(true);
    expect(fold.state!.version).toBe(4);
    expect(fold.state!.proxies['default/tc']!.phase).toBe('pushing');
    expect(fold.proxies).toEqual(['default/gw']);
  });

  it('an empty batch or only stale events leave the same object', () => {
    expect(foldLiveEvents(s3, []).state).toBe(s3);
    expect(foldLiveEvents(s3, [ev(2, 'default/gw', 'x')])).toEqual({ state: s3, gap: false, proxies: [] });
  });
});

describe('liveReducer: sessions', () => {
  const gw = proxy('default/gw', 'in-sync');
  const tc = proxy('default/tc', 'in-sync');
  const s3 = state(3, [gw, tc]);
  const session = {
    name: 'WS:::ffff:127.0.0.1:40504-::ffff:127.0.0.20:8888-0',
    status: 'CONNECTED',
    listener: 'tc-listener',
    source: '127.0.0.1:40504',
    startedAt: '2026-11-26T03:56:10.219Z',
  };

  it("takes a proxy's new sessions and keeps the other proxies' sessions by reference", () => {
    const withSession = { ...tc, sessions: { available: true as const, items: [session] } };
    const next = liveReducer(s3, { type: 'proxy', version: 4, proxy: withSession })!;
    expect(next.proxies['default/tc']!.sessions).toEqual({ available: true, items: [session] });
    expect(next.proxies['default/gw']!.sessions).toBe(gw.sessions);
    expect(s3.proxies['default/tc']!.sessions).toEqual({ available: true, items: [] }); // not mutated
  });

  it('replaces a list by the reason it became unavailable, and a list again when it comes back', () => {
    const reason = 'l7mp 0.5.7 cannot list sessions while a session has an ingress or egress chain (422)';
    const s4 = liveReducer(s3, {
      type: 'proxy',
      version: 4,
      proxy: { ...gw, sessions: { available: false, reason } },
    })!;
    expect(s4.proxies['default/gw']!.sessions).toEqual({ available: false, reason });
    const s5 = liveReducer(s4, {
      type: 'proxy',
      version: 5,
      proxy: { ...gw, sessions: { available: true, items: [session] } },
    })!;
    expect(s5.proxies['default/gw']!.sessions).toEqual({ available: true, items: [session] });
  });

  it('never rolls sessions back on a stale event', () => {
    const s4 = liveReducer(s3, {
      type: 'proxy',
      version: 4,
      proxy: { ...tc, sessions: { available: true, items: [session] } },
    })!;
    const stale = { ...tc, sessions: { available: true as const, items: [] } };
    expect(liveReducer(s4, { type: 'proxy', version: 4, proxy: stale })).toBe(s4);
    expect(s4.proxies['default/tc']!.sessions).toEqual({ available: true, items: [session] });
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
    // The page draws the sessions straight from the event: a list or a reason, nothing else.
    const shape = { error: 'live event "proxy" does not have the shape of a proxy event' };
    for (const sessions of [
      undefined,
      { available: true },
      { available: false },
      { available: true, items: [{}] },
    ]) {
      const p = { ...proxy('default/gw', 'in-sync'), sessions };
      expect(parseLiveEvent('proxy', JSON.stringify({ type: 'proxy', version: 1, proxy: p }))).toEqual(shape);
    }
  });
});
