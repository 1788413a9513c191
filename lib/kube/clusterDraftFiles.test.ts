import { describe, expect, it } from 'vitest';
import { parseManifests } from '../parse/parseManifests';
import { CLUSTER_FILE_HEADER, clusterDraftFiles, MESH_FILE_HEADER } from './clusterDraftFiles';
import { leanKubeObject, snapshotFromKube } from './kubeSnapshot';

const vsvc = (name: string, ns: string) =>
  leanKubeObject('VirtualService', {
    apiVersion: 'msm.l7mp.io/v1',
    kind: 'VirtualService',
    metadata: { name, namespace: ns, generation: 3, resourceVersion: '17', uid: 'u' },
    spec: {
      selector: { matchLabels: { app: 'gateway' } },
      udp: { port: 9001 },
      rules: [{ action: { route: { destination: 'worker' } } }],
    },
    status: { conditions: [{ type: 'Accepted', status: 'True' }] },
  })!;
const svc = (name: string, ns: string) =>
  leanKubeObject('Service', {
    metadata: { name, namespace: ns, managedFields: [{ manager: 'x' }] },
    spec: { selector: { app: name }, ports: [{ protocol: 'UDP', port: 9999 }], clusterIP: '10.0.0.1' },
  })!;
const pod = (name: string, ns: string) =>
  leanKubeObject('Pod', {
    metadata: { name, namespace: ns, labels: { app: 'gateway', 'msm.l7mp.io/proxy': 'gateway' } },
    spec: { containers: [{ name: 'c', image: 'i' }] },
    status: { podIP: '10.1.0.7', phase: 'Running', hostIP: '10.0.0.9' },
  })!;

describe('clusterDraftFiles', () => {
  it('writes one mesh.yaml and one cluster.yaml per namespace, sorted, without server bookkeeping', () => {
    const files = clusterDraftFiles({
      VirtualService: [vsvc('b-vsvc', 'prod'), vsvc('a-vsvc', 'prod'), vsvc('x', 'dev')],
      Service: [svc('worker', 'prod')],
      Pod: [pod('gateway-0', 'prod')],
    });
    expect(Object.keys(files)).toEqual(['dev/mesh.yaml', 'prod/mesh.yaml', 'prod/cluster.yaml']);
    const mesh = files['prod/mesh.yaml']!;
    expect(mesh.startsWith(MESH_FILE_HEADER)).toBe(true);
    expect(mesh.indexOf('name: a-vsvc')).toBeLessThan(mesh.indexOf('name: b-vsvc'));
    for (const noise of ['generation', 'resourceVersion', 'uid', 'status:', 'managedFields'])
      expect(mesh).not.toContain(noise);
    const cluster = files['prod/cluster.yaml']!;
    expect(cluster.startsWith(CLUSTER_FILE_HEADER)).toBe(true);
    expect(cluster).toContain('podIP: 10.1.0.7');
    expect(cluster).not.toContain('hostIP');
    expect(cluster).not.toContain('managedFields');
  });

  it('is independent of the order objects arrive in', () => {
    const a = clusterDraftFiles({
      VirtualService: [vsvc('a', 'n'), vsvc('b', 'n')],
      Service: [svc('s', 'n')],
    });
    const b = clusterDraftFiles({
      Service: [svc('s', 'n')],
      VirtualService: [vsvc('b', 'n'), vsvc('a', 'n')],
    });
    expect(b).toEqual(a);
  });

  it('reads back as the same snapshot the controller computes from the objects', () => {
    const objects = {
      VirtualService: [vsvc('gw', 'default')],
      Service: [svc('worker', 'default')],
      Pod: [pod('gateway-0', 'default')],
      Route: [],
      Target: [],
      EndpointSlice: [],
    };
    const parsed = parseManifests(
      Object.entries(clusterDraftFiles(objects)).map(([path, content]) => ({ path, content })),
    );
    const fromKube = snapshotFromKube(objects).snapshot;
    expect(parsed.diagnostics).toEqual([]);
    expect(parsed.virtualServices.map((v) => v.spec)).toEqual(fromKube.virtualServices.map((v) => v.spec));
    expect(parsed.services.map((s) => s.spec)).toEqual(fromKube.services.map((s) => s.spec));
    expect(parsed.pods.map((p) => p.status)).toEqual(fromKube.pods.map((p) => p.status));
  });

  it('gives no files for an empty cluster', () => {
    expect(clusterDraftFiles({})).toEqual({});
  });
});
