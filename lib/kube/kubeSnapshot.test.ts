import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { compileMesh } from '../engine/compileMesh';
import { parseManifests } from '../parse/parseManifests';
import { convertSeedDialect } from '../parse/seedDialect';
import {
  type KubeObjects,
  KUBE_SOURCE_KINDS,
  type KubeSourceKind,
  type LeanKubeObject,
  kubeSourceName,
  leanKubeObject,
  snapshotFromKube,
} from './kubeSnapshot';

const GOLDEN = path.join(__dirname, '..', 'engine', 'testdata');

/** The documents of a golden case, the mesh resources canonical (as an API server would store them). */
function goldenObjects(name: string): Record<string, unknown>[] {
  const text = readFileSync(path.join(GOLDEN, `${name}.in.yaml`), 'utf8');
  return parseAllDocuments(text)
    .map((d) => d.toJS() as Record<string, unknown> | null)
    .filter((o): o is Record<string, unknown> => o !== null)
    .map((o) => convertSeedDialect(o).object);
}

/** What an API server adds: server-set metadata, a status; list items come without apiVersion/kind. */
function asServed(o: Record<string, unknown>, i: number): Record<string, unknown> {
  const { apiVersion: _a, kind: _k, ...rest } = o;
  const metadata = rest.metadata as Record<string, unknown>;
  return {
    ...rest,
    metadata: {
      ...metadata,
      uid: `uid-${i}`,
      resourceVersion: String(1000 + i),
      generation: 3,
      creationTimestamp: new Date(Date.UTC(2026, 0, 1)),
      managedFields: [{ manager: 'kubectl', operation: 'Apply' }],
      annotations: {
        ...(metadata.annotations as Record<string, string> | undefined),
        'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify(o),
      },
    },
    ...(o.apiVersion === 'msm.l7mp.io/v1'
      ? { status: { conditions: [{ type: 'Accepted', status: 'True' }] } }
      : {}),
  };
}

function byKind(objects: Record<string, unknown>[], served = true): KubeObjects {
  const out = Object.fromEntries(KUBE_SOURCE_KINDS.map((k) => [k, [] as LeanKubeObject[]])) as Record<
    KubeSourceKind,
    LeanKubeObject[]
  >;
  objects.forEach((o, i) => {
    const kind = o.kind as KubeSourceKind;
    const lean = leanKubeObject(kind, served ? asServed(o, i) : o);
    if (!lean) throw new Error(`not an object: ${JSON.stringify(o)}`);
    out[kind].push(lean);
  });
  return out;
}

describe('snapshotFromKube', () => {
  for (const name of [
    'seed-example-1',
    'seed-example-2',
    'canary-split',
    'endpoints-sources',
    'names-short-and-long',
    'inline-routes-and-targets',
    'port-clashes',
  ]) {
    it(`${name}: objects as an API server serves them compile to the same proxies as the manifests`, () => {
      const fromFiles = compileMesh(
        parseManifests([
          { path: `${name}.in.yaml`, content: readFileSync(path.join(GOLDEN, `${name}.in.yaml`), 'utf8') },
        ]),
      );
      const { snapshot } = snapshotFromKube(byKind(goldenObjects(name)));
      const fromKube = compileMesh(snapshot);
      expect(Object.keys(fromKube.l7mp.proxies).length).toBeGreaterThan(0);
      expect(fromKube.l7mp.proxies).toEqual(fromFiles.l7mp.proxies);
      // The same problems, bar the seed-dialect notes the canonical objects no longer need.
      const key = (d: { code: string; object: unknown; path?: string; message: string }) =>
        JSON.stringify([d.code, d.object, d.path, d.message]);
      expect(fromKube.diagnostics.map(key)).toEqual(
        fromFiles.diagnostics.filter((d) => !d.code.startsWith('seed-dialect-')).map(key),
      );
    });
  }

  it('names each object as its source, with no file lines', () => {
    const { snapshot } = snapshotFromKube(byKind(goldenObjects('seed-example-1')));
    expect(snapshot.sources['VirtualService/default/gateway-vsvc']).toEqual({
      file: 'default/gateway-vsvc (VirtualService)',
      line: 1,
    });
    expect(snapshot.sources['Pod/default/worker-1']).toEqual({
      file: kubeSourceName('Pod', 'default', 'worker-1'),
      line: 1,
    });
  });

  it('is independent of input order', () => {
    const objects = byKind(goldenObjects('seed-example-2'));
    const reversed = Object.fromEntries(
      Object.entries(objects).map(([k, list]) => [k, [...list].reverse()]),
    ) as unknown as KubeObjects;
    expect(JSON.stringify(snapshotFromKube(reversed))).toBe(JSON.stringify(snapshotFromKube(objects)));
  });

  it('rejects an invalid mesh object with schema diagnostics naming the field and the object', () => {
    const vs = leanKubeObject('VirtualService', {
      apiVersion: 'msm.l7mp.io/v1',
      kind: 'VirtualService',
      metadata: { name: 'bad', namespace: 'team-a', generation: 7 },
      spec: { selector: { serviceName: 'x' }, udp: { port: 70000 }, tcp: { port: 80 } },
    })!;
    const { snapshot, meshObjects } = snapshotFromKube({ VirtualService: [vs] });
    expect(snapshot.virtualServices).toEqual([]);
    expect(snapshot.rejected).toEqual([{ kind: 'VirtualService', namespace: 'team-a', name: 'bad' }]);
    expect(meshObjects['VirtualService/team-a/bad']).toEqual({
      ref: { kind: 'VirtualService', namespace: 'team-a', name: 'bad' },
      generation: 7,
      rejected: true,
    });
    const paths = snapshot.diagnostics.map((d) => [d.severity, d.code, d.path, d.source?.file]);
    expect(paths).toContainEqual(['error', 'schema', 'spec.udp.port', 'team-a/bad (VirtualService)']);
    expect(snapshot.diagnostics.map((d) => d.message)).toContainEqual(
      expect.stringContaining('exactly one protocol key'),
    );
  });

  it('converts the seed dialect that a CRD preserving unknown fields lets through, with a warning', () => {
    const vs = leanKubeObject('VirtualService', {
      apiVersion: 'msm.l7mp.io/v1',
      kind: 'VirtualService',
      metadata: { name: 'seedy', namespace: 'default' },
      spec: {
        selector: { matchLabels: { app: 'a' } },
        udp: { port: '9001,' },
        rules: { action: { route: { destination: 'x' } } },
      },
    })!;
    const { snapshot, meshObjects } = snapshotFromKube({ VirtualService: [vs] });
    expect(snapshot.virtualServices[0]!.spec.udp).toEqual({ port: 9001 });
    expect(snapshot.diagnostics.map((d) => `${d.severity} ${d.code} ${d.path}`)).toEqual([
      'warning seed-dialect-rules-object spec.rules',
      'warning seed-dialect-port-string spec.udp.port',
    ]);
    expect(meshObjects['VirtualService/default/seedy']!.rejected).toBe(false);
  });
});

describe('leanKubeObject', () => {
  it('keeps only what the engine reads, so server-side churn gives an equal object', () => {
    const a = leanKubeObject('Pod', {
      metadata: { name: 'p', namespace: 'n', resourceVersion: '1', labels: { app: 'x' } },
      spec: { containers: [{ name: 'c', image: 'i' }] },
      status: { podIP: '10.0.0.1', phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
    });
    const b = leanKubeObject('Pod', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'n', resourceVersion: '2', labels: { app: 'x' }, uid: 'u' },
      status: { podIP: '10.0.0.1', phase: 'Running', startTime: new Date() },
    });
    expect(a).toEqual(b);
    expect(a).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'n', labels: { app: 'x' } },
      status: { podIP: '10.0.0.1', phase: 'Running' },
    });
  });

  it('drops a mesh object status but keeps its generation', () => {
    const lean = leanKubeObject('Route', {
      metadata: { name: 'r', namespace: 'n', generation: 2, resourceVersion: '9' },
      spec: { destination: 't' },
      status: { conditions: [] },
    });
    expect(lean).toEqual({
      apiVersion: 'msm.l7mp.io/v1',
      kind: 'Route',
      metadata: { name: 'r', namespace: 'n', generation: 2 },
      spec: { destination: 't' },
    });
  });

  it('reads EndpointSlices and Services in the typed form the client library lists them in', () => {
    const slice = leanKubeObject('EndpointSlice', {
      metadata: { name: 's-1', namespace: 'n', labels: { 'kubernetes.io/service-name': 's' } },
      addressType: 'IPv4',
      endpoints: [
        {
          addresses: ['10.0.0.1'],
          conditions: { ready: true, serving: true },
          targetRef: { kind: 'Pod', name: 'p', uid: 'u' },
          nodeName: 'n1',
        },
        { addresses: ['10.0.0.2'], conditions: { ready: undefined } },
      ],
      ports: [{ name: 'udp', port: 9999, protocol: 'UDP' }],
    });
    expect(slice).toEqual({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 's-1', namespace: 'n', labels: { 'kubernetes.io/service-name': 's' } },
      addressType: 'IPv4',
      endpoints: [
        {
          addresses: ['10.0.0.1'],
          conditions: { ready: true, serving: true },
          targetRef: { kind: 'Pod', name: 'p' },
        },
        { addresses: ['10.0.0.2'], conditions: {} },
      ],
      ports: [{ name: 'udp', port: 9999, protocol: 'UDP' }],
    });
    const svc = leanKubeObject('Service', {
      metadata: { name: 's', namespace: 'n' },
      spec: {
        selector: { app: 'x' },
        ports: [{ port: 80, targetPort: 'http', protocol: 'TCP' }],
        type: 'ClusterIP',
      },
    });
    expect(svc).toEqual({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 's', namespace: 'n' },
      spec: { selector: { app: 'x' }, ports: [{ port: 80, targetPort: 'http', protocol: 'TCP' }] },
    });
  });

  it('says undefined for something that is not a named object', () => {
    expect(leanKubeObject('Pod', null)).toBeUndefined();
    expect(leanKubeObject('Pod', { metadata: {} })).toBeUndefined();
    expect(leanKubeObject('Service', 'x')).toBeUndefined();
  });
});
