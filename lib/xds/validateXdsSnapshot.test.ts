import { describe, expect, it } from 'vitest';
import { compileMesh } from '../engine/compileMesh';
import { parseManifests } from '../parse/parseManifests';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { XdsResources } from './envoyTypes';
import { renderXds } from './renderXds';
import { XDS_INCONSISTENT, validateXdsSnapshot } from './validateXdsSnapshot';

function grpcCanary(): XdsResources {
  const content = readFileSync(path.join(__dirname, 'testdata', 'grpc-canary.in.yaml'), 'utf8');
  const { mesh } = compileMesh(parseManifests([{ path: 'grpc-canary.in.yaml', content }]));
  const s = renderXds(mesh).proxies['default/grpc-client']!;
  // A deep copy that the test may break.
  return JSON.parse(
    JSON.stringify({
      listeners: s.listeners,
      routes: s.routes,
      clusters: s.clusters,
      endpoints: s.endpoints,
    }),
  ) as XdsResources;
}

function problems(s: XdsResources): string[] {
  return validateXdsSnapshot(s).map((d) => {
    expect(d.severity).toBe('error');
    expect(d.code).toBe(XDS_INCONSISTENT);
    return `${d.object.kind} ${d.object.name} ${d.path}`;
  });
}

describe('validateXdsSnapshot', () => {
  it('accepts the rendered grpc-canary snapshot', () => {
    expect(problems(grpcCanary())).toEqual([]);
  });

  it('catches a listener whose RDS name is missing', () => {
    const s = grpcCanary();
    s.routes = [];
    expect(problems(s)).toEqual(['Listener echo api_listener.api_listener.rds.route_config_name']);
  });

  it('catches a weighted cluster that does not exist', () => {
    const s = grpcCanary();
    s.clusters = s.clusters.filter((c) => !c.name.endsWith('/echo-v2'));
    expect(problems(s)).toEqual([
      'RouteConfiguration echo.default.virtualservice.cluster.local virtual_hosts[0].routes[0].route.weighted_clusters.clusters[1].name',
    ]);
  });

  it('catches a cluster whose EDS service_name has no ClusterLoadAssignment', () => {
    const s = grpcCanary();
    s.endpoints = s.endpoints.slice(1);
    expect(problems(s)).toEqual([
      'Cluster echo-split.default.target.cluster.local/echo-v1 eds_cluster_config.service_name',
    ]);
  });

  it('catches virtual host domains that do not match the api_listener name', () => {
    const s = grpcCanary();
    s.routes[0]!.virtual_hosts[0]!.domains = ['echo.default'];
    expect(problems(s)).toEqual([
      'RouteConfiguration echo.default.virtualservice.cluster.local virtual_hosts',
    ]);
  });

  it('catches a locality without load_balancing_weight, weights summing to 0, a router not last', () => {
    const s = grpcCanary();
    delete (s.endpoints[0]!.endpoints[0] as Partial<(typeof s.endpoints)[0]['endpoints'][0]>)
      .load_balancing_weight;
    for (const c of s.routes[0]!.virtual_hosts[0]!.routes[0]!.route.weighted_clusters!.clusters)
      c.weight.value = 0;
    s.listeners[0]!.api_listener!.api_listener.http_filters = [];
    expect(problems(s).sort()).toEqual(
      [
        'ClusterLoadAssignment echo-split.default.target.cluster.local/echo-v1 endpoints[0].load_balancing_weight',
        'Listener echo api_listener.api_listener.http_filters',
        'RouteConfiguration echo.default.virtualservice.cluster.local virtual_hosts[0].routes[0].route.weighted_clusters',
      ].sort(),
    );
  });

  it('catches duplicate names and malformed input without throwing', () => {
    const s = grpcCanary();
    s.clusters.push(s.clusters[0]!);
    expect(problems(s)).toContain('Cluster echo-split.default.target.cluster.local/echo-v1 name');
    expect(() => validateXdsSnapshot({} as XdsResources)).not.toThrow();
    expect(
      validateXdsSnapshot({
        listeners: [null],
        routes: 'x',
        clusters: [{}],
        endpoints: [],
      } as unknown as XdsResources).length,
    ).toBeGreaterThan(0);
  });
});
