import { describe, expect, it } from 'vitest';
import type { MeshLiveState, ProxyLiveState } from '@/server/controlPlane/liveState';
import { parseProbeFrom, proxiesWithListener, virtualServiceListener } from './probeForm';

describe('parseProbeFrom', () => {
  it('reads address and address:port, and leaves an empty field to the server', () => {
    expect(parseProbeFrom('')).toBeUndefined();
    expect(parseProbeFrom('  ')).toBeUndefined();
    expect(parseProbeFrom('127.0.0.100')).toEqual({ address: '127.0.0.100' });
    expect(parseProbeFrom(' 127.0.0.100:9050 ')).toEqual({ address: '127.0.0.100', port: 9050 });
  });
  it('says what is wrong with a malformed one', () => {
    expect(parseProbeFrom('127.0.0.100:99999')).toBe('port 99999 is beyond 65535');
    expect(parseProbeFrom('127.0.0.100:x')).toBe('"127.0.0.100:x" is not address or address:port');
    expect(parseProbeFrom('a b')).toBe('"a b" is not address or address:port');
  });
});

describe('proxiesWithListener', () => {
  const proxy = (id: string, listeners: string[]) => ({ id, listeners }) as unknown as ProxyLiveState;
  const live = {
    proxies: {
      'default/b': proxy('default/b', [virtualServiceListener('gw', 'default')]),
      'default/a': proxy('default/a', [virtualServiceListener('gw', 'default'), 'other']),
      'default/c': proxy('default/c', ['other']),
    },
  } as unknown as MeshLiveState;
  it('lists the running proxies with that listener, sorted', () => {
    expect(proxiesWithListener(live, 'gw.default.virtualservice.cluster.local')).toEqual([
      'default/a',
      'default/b',
    ]);
    expect(proxiesWithListener(live, 'nope')).toEqual([]);
  });
  it('is empty without a control plane', () => {
    expect(proxiesWithListener(null, 'gw.default.virtualservice.cluster.local')).toEqual([]);
    expect(proxiesWithListener(undefined, 'x')).toEqual([]);
  });
});
