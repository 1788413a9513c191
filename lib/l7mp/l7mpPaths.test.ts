import { describe, expect, it } from 'vitest';
import { l7mpPaths } from './l7mpPaths';

describe('l7mpPaths', () => {
  it('builds the collection paths', () => {
    expect(l7mpPaths.clusters()).toBe('/api/v1/clusters');
    expect(l7mpPaths.routes()).toBe('/api/v1/routes');
    expect(l7mpPaths.listeners()).toBe('/api/v1/listeners');
    expect(l7mpPaths.rulelists()).toBe('/api/v1/rulelists');
    expect(l7mpPaths.rules()).toBe('/api/v1/rules');
    expect(l7mpPaths.listeners({ recursive: true })).toBe('/api/v1/listeners?recursive=true');
    expect(l7mpPaths.clusters({ recursive: true })).toBe('/api/v1/clusters?recursive=true');
  });

  it('builds the named paths', () => {
    const name = 'worker-svc.default.target.cluster.local';
    expect(l7mpPaths.cluster(name)).toBe(`/api/v1/clusters/${name}`);
    expect(l7mpPaths.clusterEndpoints(name)).toBe(`/api/v1/clusters/${name}/endpoints`);
    expect(l7mpPaths.endpoint(name)).toBe(`/api/v1/endpoints/${name}`);
    expect(l7mpPaths.route(name)).toBe(`/api/v1/routes/${name}`);
    expect(l7mpPaths.listener(name)).toBe(`/api/v1/listeners/${name}`);
    expect(l7mpPaths.rulelist(name)).toBe(`/api/v1/rulelists/${name}`);
    expect(l7mpPaths.rule(name)).toBe(`/api/v1/rules/${name}`);
  });

  it('encodes / @ : and other reserved characters in names', () => {
    expect(l7mpPaths.cluster('default/media@v1:udp')).toBe('/api/v1/clusters/default%2Fmedia%40v1%3Audp');
    expect(l7mpPaths.clusterEndpoints('a/b')).toBe('/api/v1/clusters/a%2Fb/endpoints');
    expect(l7mpPaths.endpoint('x?y#z&w=1')).toBe('/api/v1/endpoints/x%3Fy%23z%26w%3D1');
    expect(l7mpPaths.listener('a b%')).toBe('/api/v1/listeners/a%20b%25');
  });

  it('adds ?recursive=true only when asked', () => {
    expect(l7mpPaths.listener('l', { recursive: true })).toBe('/api/v1/listeners/l?recursive=true');
    expect(l7mpPaths.listener('l', { recursive: false })).toBe('/api/v1/listeners/l');
    expect(l7mpPaths.cluster('c', { recursive: true })).toBe('/api/v1/clusters/c?recursive=true');
  });
});
