import { describe, expect, it } from 'vitest';
import { filterProxies, syncCounts } from './proxyFilter';

const proxies = [
  { id: 'default/gateway-0', address: '127.0.0.10', role: 'gateway', inSync: true },
  { id: 'default/transcoder-0', address: '127.0.0.20', role: 'sidecar', inSync: false },
  { id: 'prod/transcoder-1', address: '10.0.0.7', role: 'sidecar', inSync: true },
];
const ids = (text: string, notInSync = false) => filterProxies(proxies, { text, notInSync }).map((p) => p.id);

describe('filterProxies', () => {
  it('keeps proxies matching every word in id, address or role, any case', () => {
    expect(ids('')).toEqual(['default/gateway-0', 'default/transcoder-0', 'prod/transcoder-1']);
    expect(ids('TRANSCODER')).toEqual(['default/transcoder-0', 'prod/transcoder-1']);
    expect(ids('transcoder prod')).toEqual(['prod/transcoder-1']);
    expect(ids('127.0.0.')).toEqual(['default/gateway-0', 'default/transcoder-0']);
    expect(ids('gateway')).toEqual(['default/gateway-0']);
    expect(ids('sidecar 10.0')).toEqual(['prod/transcoder-1']);
    expect(ids('nothing')).toEqual([]);
  });

  it('keeps only the proxies not in sync when asked, with the words too', () => {
    expect(ids('', true)).toEqual(['default/transcoder-0']);
    expect(ids('prod', true)).toEqual([]);
  });

  it('counts the proxies in sync and not', () => {
    expect(syncCounts(proxies)).toEqual({ total: 3, inSync: 2, notInSync: 1 });
    expect(syncCounts([])).toEqual({ total: 0, inSync: 0, notInSync: 0 });
  });
});
