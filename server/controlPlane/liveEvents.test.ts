import { afterEach, describe, expect, it } from 'vitest';
import { GET } from '@/app/api/events/route';
import { GET as getState } from '@/app/api/state/route';
import { LiveStateStore, type ProxyLiveState } from './liveState';
import { setControlPlane } from './registry';

const proxy: ProxyLiveState = {
  id: 'default/gw',
  pod: 'gw',
  apiUrl: 'http://127.0.0.10:1234',
  role: 'gateway',
  address: '127.0.0.10',
  reachable: null,
  inSync: false,
  phase: 'pending',
  attempts: 0,
  listeners: [],
  routes: [],
  clusters: [],
  sessions: { available: false, reason: 'not read yet' },
  counters: { pushes: 0, pushFailures: 0, operations: 0, restarts: 0, sessions: 0 },
};

afterEach(() => setControlPlane(undefined));

describe('/api/state and /api/events', () => {
  it('refuse a foreign Host or Origin (DNS rebinding) before anything else', () => {
    const foreign = { headers: { host: 'evil.example:3000' } };
    expect(getState(new Request('http://evil.example:3000/api/state', foreign)).status).toBe(403);
    expect(GET(new Request('http://evil.example:3000/api/events', foreign)).status).toBe(403);
    const crossSite = { headers: { host: '127.0.0.1:3000', origin: 'http://evil.example' } };
    expect(getState(new Request('http://127.0.0.1:3000/api/state', crossSite)).status).toBe(403);
  });

  it('answer 503 when no control plane runs in the process', async () => {
    expect(getState(new Request('http://127.0.0.1/api/state')).status).toBe(503);
    expect(GET(new Request('http://127.0.0.1/api/events')).status).toBe(503);
  });

  it('stream the whole state first, then each change with a growing version', async () => {
    const live = new LiveStateStore('examples/x');
    live.setMesh({ proxies: { [proxy.id]: proxy }, services: {}, diagnostics: [] });
    const unused = () => {
      throw new Error('unused');
    };
    setControlPlane({
      live,
      probe: unused,
      trafficTest: unused,
      logs: () => [],
      reload: unused,
      whenIdle: unused,
      syncStates: unused,
      desiredConfigs: unused,
    });
    const abort = new AbortController();
    const res = GET(new Request('http://127.0.0.1/api/events', { signal: abort.signal }));
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const reader = res.body!.getReader();
    const dec = new TextDecoder();
    const first = dec.decode((await reader.read()).value);
    expect(first).toMatch(/^event: mesh\ndata: /);
    expect(JSON.parse(first.split('data: ')[1]!).state.proxies['default/gw'].phase).toBe('pending');

    live.updateProxy('default/gw', { phase: 'synced', inSync: true, reachable: true });
    const second = dec.decode((await reader.read()).value);
    const event = JSON.parse(second.split('data: ')[1]!);
    expect(second).toMatch(/^event: proxy\n/);
    expect(event.proxy.phase).toBe('synced');
    expect(event.version).toBeGreaterThan(JSON.parse(first.split('data: ')[1]!).version);
    // An update that changes nothing is not sent.
    live.updateProxy('default/gw', { phase: 'synced' });
    expect(live.listenerCount('event')).toBe(1);
    abort.abort();
    expect(live.listenerCount('event')).toBe(0);
    expect(
      (await getState(new Request('http://127.0.0.1/api/state')).json()).proxies['default/gw'].inSync,
    ).toBe(true);
  });
});
