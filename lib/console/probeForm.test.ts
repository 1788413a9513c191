import { describe, expect, it } from 'vitest';
import type { MeshLiveState, ProxyLiveState } from '@/server/controlPlane/liveState';
import { parseProbeCount, parseProbeFrom, proxiesWithListener, virtualServiceListener } from './probeForm';

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

describe('parseProbeCount', () => {
  it('reads a whole number from 1 to 1000, spaces around it allowed', () => {
    expect(parseProbeCount('1')).toBe(1);
    expect(parseProbeCount(' 100 ')).toBe(100);
    expect(parseProbeCount('1000')).toBe(1000);
    expect(parseProbeCount('007')).toBe(7);
  });
  it('says what is wrong with anything else', () => {
    expect(parseProbeCount('')).toBe('how many probes: 1 to 1000');
    expect(parseProbeCount('  ')).toBe('how many probes: 1 to 1000');
    expect(parseProbeCount('0')).toBe('at least 1 probe');
    expect(parseProbeCount('1001')).toBe('at most 1000 probes in one test');
    expect(parseProbeCount('99999999999999999999')).toBe('at most 1000 probes in one test');
    // Number() would take all of these.
    expect(parseProbeCount('2.5')).toBe('"2.5" is not a whole number of probes');
    expect(parseProbeCount('-3')).toBe('"-3" is not a whole number of probes');
    expect(parseProbeCount('1e2')).toBe('"1e2" is not a whole number of probes');
    expect(parseProbeCount('0x10')).toBe('"0x10" is not a whole number of probes');
    expect(parseProbeCount('ten')).toBe('"ten" is not a whole number of probes');
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
