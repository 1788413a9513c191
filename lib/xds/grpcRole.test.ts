/**
 * Proxyless gRPC clients (msm.l7mp.io/proxy: grpc) are proxies for xDS only: no l7mp config, no l7mp
 * API port in the local mesh, and the grpc protocol is a warning (l7mp-unsupported) on l7mp proxies.
 */
import { describe, expect, it } from 'vitest';
import { compileMesh } from '../engine/compileMesh';
import { MeshEngine } from '../engine/meshEngine';
import { prepareLocalMesh } from '../localMesh/prepareLocalMesh';
import { renderLocalMesh } from '../localMesh/renderLocalMesh';
import { parseManifests } from '../parse/parseManifests';
import { renderXds } from './renderXds';

const MESH = `
apiVersion: msm.l7mp.io/v1
kind: VirtualService
metadata: { name: echo }
spec:
  selector: { matchLabels: { app: client } }
  grpc: { port: 50051 }
  rules: [{ action: { route: { destination: echo-back } } }]
---
apiVersion: msm.l7mp.io/v1
kind: VirtualService
metadata: { name: echo-on-gw }
spec:
  selector: { matchLabels: { app: gw } }
  grpc: { port: 1234 }
  rules: [{ action: { route: { destination: echo-back } } }]
---
apiVersion: v1
kind: Service
metadata: { name: echo-back }
spec: { selector: { app: back }, ports: [{ protocol: TCP, port: 50051 }] }
---
apiVersion: v1
kind: Pod
metadata: { name: client-0, labels: { app: client, msm.l7mp.io/proxy: grpc } }
status: { podIP: 10.1.0.1 }
---
apiVersion: v1
kind: Pod
metadata: { name: gw-0, labels: { app: gw, msm.l7mp.io/proxy: gateway } }
status: { podIP: 10.1.0.2 }
---
apiVersion: v1
kind: Pod
metadata: { name: back-0, labels: { app: back } }
status: { podIP: 10.1.1.1 }
`;

const snapshot = () => parseManifests([{ path: 'mesh.yaml', content: MESH }]);

describe('proxyless gRPC clients', () => {
  it('are proxies with role grpc and get no l7mp config', () => {
    const c = compileMesh(snapshot());
    expect(c.mesh.proxies['default/client-0']!.role).toBe('grpc');
    expect(c.mesh.placement['default/client-0']!.listeners).toEqual([
      'echo.default.virtualservice.cluster.local',
    ]);
    expect(Object.keys(c.l7mp.proxies)).toEqual(['default/gw-0']);
    expect(c.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  });

  it('a grpc VirtualService on an l7mp proxy is l7mp-unsupported, with no listener and no port clash', () => {
    const c = compileMesh(snapshot());
    expect(c.l7mp.proxies['default/gw-0']!.config.listeners).toEqual([]);
    expect(c.diagnostics.filter((d) => d.code === 'l7mp-unsupported')).toEqual([
      expect.objectContaining({
        severity: 'warning',
        object: { kind: 'VirtualService', namespace: 'default', name: 'echo-on-gw' },
        path: 'spec.grpc',
      }),
    ]);
    expect(c.diagnostics.filter((d) => d.code === 'port-clash')).toEqual([]);
  });

  it('is served over xDS as an api_listener named after the VirtualService', () => {
    const x = renderXds(compileMesh(snapshot()).mesh);
    expect(x.proxies['default/client-0']!.listeners.map((l) => l.name)).toEqual(['echo']);
    expect(x.proxies['default/client-0']!.routes[0]!.virtual_hosts[0]!.domains).toEqual(['echo']);
  });

  it('the local mesh neither renders nor assigns an API port to them', () => {
    const prepared = prepareLocalMesh(snapshot());
    const client = prepared.snapshot.pods.find((p) => p.metadata.name === 'client-0')!;
    expect(client.metadata.annotations?.['msm.l7mp.io/api-port']).toBeUndefined();
    const local = renderLocalMesh(compileMesh(prepared.snapshot), { podsDir: '/tmp/pods' });
    expect(Object.keys(local.proxies)).toEqual(['default/gw-0']);
  });

  it('the incremental engine skips them when endpoints move', () => {
    const s = snapshot();
    const slice = (ip: string) => ({
      apiVersion: 'discovery.k8s.io/v1' as const,
      kind: 'EndpointSlice' as const,
      metadata: {
        name: 'echo-back-1',
        namespace: 'default',
        labels: { 'kubernetes.io/service-name': 'echo-back' },
      },
      endpoints: [{ addresses: [ip], conditions: { ready: true } }],
    });
    const engine = new MeshEngine({ ...s, endpointSlices: [slice('10.1.1.1')] });
    const u = engine.setServiceEndpointSlices('default', 'echo-back', [slice('10.1.1.9')]);
    expect(u.changedProxies).not.toContain('default/client-0');
    expect(Object.keys(engine.current.l7mp.proxies)).toEqual(['default/gw-0']);
    const x = renderXds(engine.current.mesh);
    expect(
      x.proxies['default/client-0']!.endpoints[0]!.endpoints[0]!.lb_endpoints[0]!.endpoint.address
        .socket_address.address,
    ).toBe('10.1.1.9');
  });
});
