/**
 * The seed's "Mapping Control Plane Objects to l7mp REST API Calls" section, block by block: what it
 * says the operator sends, and what Meshdeck sends, with each documented translation spelled out.
 * Translations (see docs/architecture.md, "What the real proxy needs"): long names ("implementations
 * should use the long name instead"), `rules` always a list, the Route's fields at the top level of the
 * l7mp route (l7mp 0.5.7's Route has no `spec`), a complete retry object, named endpoints, an explicit
 * load balancer when a cluster follows a Service, and every Target a named cluster.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { seedBlock } from '../../test/seedBlocks';
import { diffL7mp } from '../l7mp/diffL7mp';
import { emptyL7mpConfig } from '../model/l7mp';
import { parseManifests } from '../parse/parseManifests';
import { compileMesh } from './compileMesh';

function compileCase(name: string) {
  const content = readFileSync(path.join(__dirname, 'testdata', `${name}.in.yaml`), 'utf8');
  return compileMesh(parseManifests([{ path: name, content }]));
}

const long = {
  source: 'my-source-vsvc.default.virtualservice.cluster.local',
  route: 'my-route.default.route.cluster.local',
  dest: 'my-destination-svc.default.target.cluster.local',
  destVs: 'my-destination-svc.default.virtualservice.cluster.local',
};

describe('Mapping Control Plane Objects to l7mp REST API Calls', () => {
  const { mesh, l7mp } = compileCase('seed-mapping-example');
  const proxy = l7mp.proxies['default/source-0']!;
  const ops = diffL7mp(emptyL7mpConfig(), proxy.config);
  const body = (path: string, kind: string) =>
    ops.find((o) => o.path === path && o.kind === kind)?.body as Record<string, any>;
  const addListener = body('/api/v1/listeners', 'listener').listener;
  const addRoute = body('/api/v1/routes', 'route').route;
  const addCluster = body('/api/v1/clusters', 'cluster').cluster;

  it('"simply convert the VirtualService spec ... to an l7mp Listener spec"', () => {
    const seed = seedBlock('listener:\n  spec: { protocol: UDP, port: 8000 }', true) as {
      listener: { spec: unknown };
    };
    expect(addListener.spec).toEqual(seed.listener.spec);
  });

  it('"The rest is just copied from the VirtualService spec, yielding the following addListener call"', () => {
    const seed = seedBlock('name: my-source-vsvc\n  spec: { protocol: UDP') as { listener: any };
    expect(addListener).toEqual({
      ...seed.listener,
      name: long.source,
      rules: [{ action: { route: long.route } }],
    });
    expect(seed.listener.rules).toEqual([{ action: { route: 'my-route' } }]);
  });

  it('"the below addRoute call is made by simply copying everything from the Route object to the route spec"', () => {
    const seed = seedBlock('route:\n  name: my-route') as {
      route: { name: string; spec: Record<string, any> };
    };
    // l7mp 0.5.7's Route carries destination/retry itself (openapi io.l7mp.api.v1.Route has no spec);
    // the partial retry is completed: l7mp would otherwise store it without a timeout (no limit).
    expect(addRoute).toEqual({
      name: long.route,
      destination: long.dest,
      retry: { ...seed.route.spec.retry, timeout: 2000 },
    });
    expect(seed.route.spec.destination).toBe('my-destination-svc');
  });

  it('"the route will be added to the same l7mp sidecars that correspond the my-source-vsvc VirtualService"', () => {
    expect(mesh.placement['default/source-0']!.routes).toEqual([long.route]);
  });

  it('"the operator needs to create an identically named VirtualService for my-destination-svc"; "no addListener call is issued"', () => {
    const seed = seedBlock(
      'name: my-destination-svc\n  selector:\n    serviceName: my-destination-svc',
    ) as any;
    const vs = mesh.virtualServices[long.destVs]!;
    expect(vs.generated).toBe('naked-service');
    expect(vs.naked).toBe(true);
    expect({ [vs.protocol.key]: vs.protocol.spec }).toEqual(seed.spec);
    expect(vs.services).toEqual([`default/${seed.metadata.selector.serviceName}`]);
    expect(Object.values(l7mp.proxies).flatMap((p) => p.config.listeners.map((l) => l.name))).not.toContain(
      long.destVs,
    );
  });

  it('"auto-generate a(n identically named) Target ... bound to the caller"', () => {
    const seed = seedBlock('kind: Target\nmetadata:\n  name: my-destination-svc') as any;
    const t = mesh.targets[long.dest]!;
    expect(t.origin).toBe('virtualservice');
    expect({ [t.protocol.key]: t.protocol.spec }).toEqual({ udp: seed.spec.udp });
    expect(t.endpointSources).toEqual([long.destVs]); // serviceName: my-destination-svc
    // Bound to the caller: only the proxies of serviceName: my-source-svc get the cluster.
    const carriers = Object.entries(mesh.placement)
      .filter(([, p]) => p.clusters.includes(long.dest))
      .map(([id]) => id);
    expect(carriers).toEqual(['default/source-0']);
  });

  it('"the Target spec ... is converted to an l7mp Cluster spec"', () => {
    const seed = seedBlock('cluster:\n  spec: { protocol: UDP, port: 2000 }', true) as any;
    expect(addCluster.spec).toEqual(seed.cluster.spec);
  });

  it('"the following addCluster call is issued to the sidecars that run the service my-source-svc" (endpoints 10.0.0.1, 10.0.0.2)', () => {
    const seed = seedBlock('name: my-destination-svc\n  spec: { protocol: UDP, port: 2000 }') as any;
    expect(seed.cluster.endpoints).toEqual([
      { spec: { address: '10.0.0.1' } },
      { spec: { address: '10.0.0.2' } },
    ]);
    expect(addCluster).toEqual({
      ...seed.cluster,
      name: long.dest,
      // Named, so that an endpoint can be removed later (l7mp endpoint names are global per proxy).
      endpoints: seed.cluster.endpoints.map((e: any) => ({ name: `${long.dest}@${e.spec.address}`, ...e })),
      // Trivial (l7mp's default) sends every flow to the first endpoint.
      loadbalancer: { policy: 'ConsistentHash' },
    });
  });

  it('issues addCluster before addRoute before addListener', () => {
    expect(ops.map((o) => o.kind)).toEqual(['cluster', 'route', 'listener']);
  });
});

describe('Inline Routes and Targets: the transcoder-vsvc of Example 1', () => {
  const { l7mp } = compileCase('seed-example-1');
  const ops = diffL7mp(emptyL7mpConfig(), l7mp.proxies['default/transcoder-0']!.config);
  const seed = seedBlock('name: transcoder-vsvc\n  spec: { protocol: WebSocket, port: 8888 }') as any;

  it('"the route is copied straight to the addListener call"; the inline Target becomes a named cluster', () => {
    const listener = (ops.find((o) => o.kind === 'listener')!.body as any).listener;
    expect(listener.spec).toEqual(seed.listener.spec);
    expect(listener.name).toBe('transcoder-vsvc.default.virtualservice.cluster.local');
    // The seed gives rules as one object (422 on l7mp); an inline cluster can crash 0.5.7 on a recursive
    // delete, so the Target is a named cluster and the route refers to it by name.
    expect(Array.isArray(listener.rules)).toBe(true);
    const cluster = (ops.find((o) => o.kind === 'cluster')!.body as any).cluster;
    expect(listener.rules[0].action.route.destination).toBe(cluster.name);
    // l7mp ignores spec.filename on a cluster: the socket path is the endpoint address.
    expect(cluster.spec).toEqual({ protocol: seed.listener.rules.action.route.destination.spec.protocol });
    expect(cluster.endpoints.map((e: any) => e.spec.address)).toEqual([
      seed.listener.rules.action.route.destination.spec.filename,
    ]);
  });
});

describe('Caveats: auto-generating a cluster spec from a VirtualService spec', () => {
  const { mesh } = compileCase('caveat-protocol-conversion');
  it('"will map to the Target spec with dropping the connect part"', () => {
    const seed = seedBlock('cluster:\n  spec: { protocol: UDP, port: 2000 }', true) as any;
    const t = mesh.targets['udp-peer.default.target.cluster.local']!;
    expect({ protocol: 'UDP', ...t.protocol.spec }).toEqual(seed.cluster.spec);
  });
  it('"for JSONSocket the protocol and port come from the transport spec" (kept)', () => {
    const t = mesh.targets['json-peer.default.target.cluster.local']!;
    expect(t.protocol).toEqual({ key: 'jsonsocket', spec: { transport: { udp: { port: 19000 } } } });
  });
});
