import { describe, expect, it } from 'vitest';
import { L7mpConfig } from '@/lib/model/l7mp';
import { toLiveSession } from './liveSession';

const TC = 'transcoder-vsvc.default.virtualservice.cluster.local';

// The transcoder's session after a probe of seed Example 1, as l7mp 0.5.7 dumped it (headers trimmed).
const wsSession = {
  name: 'WS:::ffff:127.0.0.1:40504-::ffff:127.0.0.20:8888-0',
  metadata: {
    IP: { src_addr: '::ffff:127.0.0.1', dst_addr: '::ffff:127.0.0.20' },
    TCP: { src_port: 40504, dst_port: 8888 },
    HTTP: { version: '1.1', method: 'GET', url: { path: '//' }, headers: { upgrade: 'websocket' } },
  },
  source: { origin: TC, listener: { protocol: 'WebSocket', port: 8888 }, status: 'READY' },
  destination: {
    origin: `${TC}/rules/0/destination`,
    endpoint: {
      name: `${TC}/rules/0/destination@/var/run/sock/uds-echo.sock`,
      spec: { address: '/tmp/pods/default/transcoder-0/var/run/sock/uds-echo.sock' },
    },
    status: 'READY',
  },
  ingress: [],
  egress: [],
  status: 'CONNECTED',
  events: [
    { event: 'INIT', timestamp: '2026-11-26T03:56:10.219Z', message: 'initialized', content: '' },
    { event: 'LOOKUP SUCCESS', timestamp: '2026-11-26T03:56:10.220Z', message: '', content: '' },
    { event: 'CONNECT', timestamp: '2026-11-26T03:56:10.224Z', message: 'connected', content: '' },
  ],
};

const config = L7mpConfig.parse({
  listeners: [
    {
      name: TC,
      spec: { protocol: 'WebSocket', port: 8888 },
      rules: [{ action: { route: { destination: `${TC}/rules/0/destination` } } }],
    },
    {
      name: 'gw',
      spec: { protocol: 'UDP', port: 9001 },
      rules: [
        { match: { op: 'test', path: '/IP/src_addr', value: '127.0.0.9' }, action: { route: 'blocked' } },
        { match: { op: 'more', path: '/UDP/src_port', value: 8999 }, action: { route: 'gw-route' } },
      ],
    },
  ],
  routes: [],
  clusters: [],
});

describe('toLiveSession', () => {
  it("trims l7mp's dump: client, listener, destination, endpoint, age and the newest event", () => {
    expect(toLiveSession(wsSession)).toEqual({
      name: wsSession.name,
      status: 'CONNECTED',
      listener: TC,
      source: '127.0.0.1:40504',
      destination: `${TC}/rules/0/destination`,
      endpoint: '/tmp/pods/default/transcoder-0/var/run/sock/uds-echo.sock',
      startedAt: '2026-11-26T03:56:10.219Z',
      lastEvent: 'CONNECT',
    });
  });

  it("names the route from the proxy's config: an inline route by its rule, a named one by name", () => {
    expect(toLiveSession(wsSession, config).route).toBe('rule 0 (inline)');
    const udp = {
      name: 'UDP:127.0.0.100:9050-127.0.0.10:9001-0',
      metadata: { IP: { src_addr: '127.0.0.100' }, UDP: { src_port: 9050, dst_port: 9001 } },
      source: { origin: 'gw' },
      status: 'CONNECTED',
    };
    const s = toLiveSession(udp, config);
    expect(s.route).toBe('gw-route');
    // The rule's position in the listener as pushed: the first rule's match (the source address) fails.
    expect(s.rule).toBe(1);
    expect(toLiveSession(wsSession, config).rule).toBe(0);
    expect(s.source).toBe('127.0.0.100:9050');
    // No rule holds: no route claimed.
    expect(
      toLiveSession({ ...udp, metadata: { ...udp.metadata, UDP: { src_port: 80 } } }, config).route,
    ).toBe(undefined);
    expect(toLiveSession({ ...udp, metadata: { ...udp.metadata, UDP: { src_port: 80 } } }, config).rule).toBe(
      undefined,
    );
    // A listener the config does not have (removed since): no route claimed.
    expect(toLiveSession({ ...udp, source: { origin: 'gone' } }, config).route).toBe(undefined);
  });

  it('tolerates a session without metadata or events', () => {
    expect(toLiveSession({ name: 'x', status: 'INIT' })).toEqual({ name: 'x', status: 'INIT' });
    expect(toLiveSession({})).toEqual({ name: '', status: '' });
  });
});
