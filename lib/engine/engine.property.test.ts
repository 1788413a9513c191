/**
 * Property tests of the engine (fast-check): no input makes it throw, its output does not depend on
 * input order, every diagnostic names an object, and the incremental path equals a full recompute.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { EndpointSlice } from '../model/kube';
import { parseManifests } from '../parse/parseManifests';
import { compileMesh } from './compileMesh';
import { MeshEngine } from './meshEngine';

const names = [
  'a',
  'b',
  'c',
  'svc-a',
  'svc-b',
  'rt',
  'tg',
  'x.other.virtualservice.cluster.local',
  'b.other.target.cluster.local',
];
const namespaces = ['default', 'other'];
const name = fc.constantFrom(...names.slice(0, 7));
const ref = fc.constantFrom(...names);
const ns = fc.constantFrom(...namespaces);
const port = fc.constantFrom(1234, 7000, 7001, 8000, 9000);
const labels = fc.record({ app: fc.constantFrom('a', 'b', 'c') }, { requiredKeys: [] });

const listenerProtocol = fc.oneof(
  fc.record({ udp: fc.record({ port }) }),
  fc.record({ tcp: fc.record({ port }) }),
  fc.record({ websocket: fc.record({ port }) }),
  fc.record({ http: fc.record({ port }) }),
  fc.record({ jsonsocket: fc.record({ transport: fc.record({ udp: fc.record({ port }) }) }) }),
  fc.record({ unixdomainsocket: fc.record({ filename: fc.constant('/run/x.sock') }) }),
);
const inlineTarget = fc.oneof(
  fc.record({ udp: fc.record({ port }), endpoints: fc.constant([{ spec: { address: '10.0.0.9' } }]) }),
  fc.record({ echo: fc.constant({}) }),
  fc.record({ serviceName: ref }),
  fc.record({ sync: fc.record({ query: fc.constant('/labels/x') }) }),
  fc.record({
    split: fc.array(fc.record({ serviceName: ref, weight: fc.integer({ min: 0, max: 100 }) }), {
      minLength: 1,
      maxLength: 3,
    }),
  }),
);
const targetRef = fc.oneof(ref, inlineTarget);
const routeBody = fc.record(
  {
    destination: targetRef,
    ingress: fc.array(targetRef, { maxLength: 2 }),
    egress: fc.array(targetRef, { maxLength: 1 }),
    retry: fc.record(
      { retry_on: fc.constantFrom('never', 'always'), num_retries: fc.nat(5) },
      { requiredKeys: ['retry_on'] },
    ),
  },
  { requiredKeys: ['destination'] },
);
const selector = fc.oneof(fc.record({ serviceName: ref }), fc.record({ matchLabels: labels }));
const meta = fc.record({ name, namespace: ns });

const vsDoc = fc
  .tuple(
    meta,
    selector,
    listenerProtocol,
    fc.array(fc.record({ action: fc.record({ route: fc.oneof(ref, routeBody) }) }), { maxLength: 3 }),
    fc.boolean(),
  )
  .map(([metadata, sel, proto, rules, orphan]) => ({
    apiVersion: 'msm.l7mp.io/v1',
    kind: 'VirtualService',
    metadata,
    spec: {
      selector: sel,
      ...proto,
      ...(rules.length ? { rules } : {}),
      ...(orphan ? { options: { removeOrphanSessions: true } } : {}),
    },
  }));
const routeDoc = fc
  .tuple(meta, routeBody)
  .map(([metadata, spec]) => ({ apiVersion: 'msm.l7mp.io/v1', kind: 'Route', metadata, spec }));
const targetDoc = fc
  .tuple(meta, inlineTarget, fc.option(selector, { nil: undefined }))
  .map(([metadata, spec, sel]) => ({
    apiVersion: 'msm.l7mp.io/v1',
    kind: 'Target',
    metadata,
    spec: sel ? { ...spec, selector: sel } : spec,
  }));
const serviceDoc = fc
  .tuple(meta, labels, fc.constantFrom('UDP', 'TCP'), port)
  .map(([metadata, sel, protocol, p]) => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata,
    spec: { selector: sel, ports: [{ protocol, port: p }] },
  }));
const podDoc = fc
  .tuple(
    fc.constantFrom('p0', 'p1', 'p2', 'p3'),
    ns,
    labels,
    fc.constantFrom('sidecar', 'gateway', undefined),
    fc.integer({ min: 1, max: 20 }),
  )
  .map(([n, namespace, l, proxy, ip]) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: n, namespace, labels: proxy ? { ...l, 'msm.l7mp.io/proxy': proxy } : l },
    status: { podIP: `10.0.0.${ip}` },
  }));
const sliceDoc = fc
  .tuple(
    fc.constantFrom('svc-a', 'svc-b', 'a'),
    ns,
    fc.array(fc.integer({ min: 30, max: 40 }), { minLength: 1, maxLength: 3 }),
  )
  .map(([svc, namespace, ips]) => sliceFor(svc, namespace, ips));
/** Random, possibly wrong input: also garbage documents. */
const garbageDoc = fc.oneof(
  fc.constant({
    apiVersion: 'msm.l7mp.io/v1',
    kind: 'VirtualService',
    metadata: { name: 'a' },
    spec: 'nope',
  }),
  fc.constant({ kind: 'Target' }),
  fc.constant(42),
  fc.record({
    apiVersion: fc.constant('msm.l7mp.io/v1'),
    kind: fc.constantFrom('Route', 'Target', 'VirtualService'),
    metadata: meta,
    spec: fc.anything(),
  }),
);
const doc = fc.oneof(
  { weight: 4, arbitrary: vsDoc },
  { weight: 2, arbitrary: routeDoc },
  { weight: 2, arbitrary: targetDoc },
  { weight: 2, arbitrary: serviceDoc },
  { weight: 3, arbitrary: podDoc },
  { weight: 1, arbitrary: sliceDoc },
  { weight: 1, arbitrary: garbageDoc },
);

function sliceFor(svc: string, namespace: string, ips: number[]): EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `${svc}-s`, namespace, labels: { 'kubernetes.io/service-name': svc } },
    endpoints: ips.map((i) => ({ addresses: [`10.0.1.${i}`] })),
  };
}

/** A mesh whose clusters follow svc-a and svc-b (with EndpointSlices), so that the fast path has work. */
const baseMesh: unknown[] = [
  {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'gw', namespace: 'default', labels: { app: 'gw', 'msm.l7mp.io/proxy': 'gateway' } },
    status: { podIP: '10.0.2.1' },
  },
  {
    apiVersion: 'msm.l7mp.io/v1',
    kind: 'VirtualService',
    metadata: { name: 'gw', namespace: 'default' },
    spec: {
      selector: { matchLabels: { app: 'gw' } },
      udp: { port: 5000 },
      rules: [
        { action: { route: { destination: 'svc-a', ingress: ['tg'] } } },
        { action: { route: { destination: 'svc-b' } } },
        { action: { route: { destination: 'canary' } } },
        {
          action: {
            route: {
              destination: {
                split: [
                  { serviceName: 'svc-b', weight: 3 },
                  { serviceName: 'svc-a', weight: 1 },
                ],
              },
            },
          },
        },
      ],
    },
  },
  {
    apiVersion: 'msm.l7mp.io/v1',
    kind: 'Target',
    metadata: { name: 'tg', namespace: 'default' },
    spec: { serviceName: 'svc-b' },
  },
  {
    apiVersion: 'msm.l7mp.io/v1',
    kind: 'Target',
    metadata: { name: 'canary', namespace: 'default' },
    spec: {
      split: [
        { serviceName: 'svc-a', weight: 80 },
        { serviceName: 'svc-b', weight: 20 },
      ],
    },
  },
  ...['svc-a', 'svc-b'].flatMap((n) => [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: n, namespace: 'default' },
      spec: { ports: [{ protocol: 'UDP', port: 6000 }] },
    },
    sliceFor(n, 'default', [31, 32]),
  ]),
];

function files(docs: unknown[]) {
  return docs.map((d, i) => ({ path: `doc-${i}.yaml`, content: stringify(d) }));
}

function compileFiles(fs: { path: string; content: string }[]) {
  return compileMesh(parseManifests(fs));
}

const runs = { numRuns: 150 };

describe('engine properties', () => {
  it('never throws, and every diagnostic names an object', () => {
    fc.assert(
      fc.property(fc.array(doc, { maxLength: 14 }), (docs) => {
        const { diagnostics } = compileFiles(files(docs));
        for (const d of diagnostics) {
          expect(d.object.kind).not.toBe('');
          expect(d.object.name).not.toBe('');
          expect(d.message).not.toBe('');
        }
      }),
      runs,
    );
  });

  it('never throws on arbitrary YAML text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (text) => {
        const { diagnostics } = compileFiles([{ path: 'x.yaml', content: text }]);
        expect(Array.isArray(diagnostics)).toBe(true);
      }),
      runs,
    );
  });

  it('gives byte-identical output for the same input in any order', () => {
    // Each document in its own file, named by its position in the (shuffled) order: only the source
    // locations may differ, so they are left out of the comparison.
    const scrub = (k: string, v: unknown): unknown =>
      k === 'source'
        ? undefined
        : k === 'diagnostics' && Array.isArray(v)
          ? v.map((d) => JSON.stringify(d, scrub)).sort() // file names decide the order of File diagnostics
          : typeof v === 'string'
            ? v.replace(/doc-\d+\.yaml(:\d+)?/g, 'FILE')
            : v;
    const withoutSources = (docs: unknown[]) => JSON.stringify(compileFiles(files(docs)), scrub);
    fc.assert(
      fc.property(
        fc
          .array(doc, { maxLength: 12 })
          .chain((docs) =>
            fc.tuple(fc.constant(docs), fc.shuffledSubarray(docs, { minLength: docs.length })),
          ),
        ([docs, shuffled]) => {
          expect(withoutSources(shuffled)).toBe(withoutSources(docs));
        },
      ),
      runs,
    );
  });

  it('incremental EndpointSlice updates equal a full recompute', () => {
    let fastPaths = 0;
    let splitFastPaths = 0;
    fc.assert(
      fc.property(
        fc.array(doc, { maxLength: 14 }),
        fc.constantFrom('svc-a', 'svc-b', 'a'),
        ns,
        fc.array(fc.integer({ min: 30, max: 45 }), { maxLength: 3 }),
        (docs, svc, namespace, ips) => {
          const snapshot = parseManifests(files([...baseMesh, ...docs]));
          const engine = new MeshEngine(snapshot);
          const slices = ips.length ? [sliceFor(svc, namespace, ips)] : [];
          if (engine.setServiceEndpointSlices(namespace, svc, slices).incremental) {
            fastPaths++;
            if (svc !== 'a' && namespace === 'default') splitFastPaths++;
          }
          const full = compileMesh(engine.snapshot);
          expect(JSON.stringify(engine.current.l7mp)).toBe(JSON.stringify(full.l7mp));
          expect(JSON.stringify(engine.current.diagnostics)).toBe(JSON.stringify(full.diagnostics));
          expect(JSON.stringify(engine.current.mesh.targets)).toBe(JSON.stringify(full.mesh.targets));
        },
      ),
      { numRuns: 400 },
    );
    // The fast path must actually be exercised, not only the fallback.
    expect(fastPaths).toBeGreaterThan(5);
    // ... including for Services that canary splits follow (baseMesh's `canary` and inline split).
    expect(splitFastPaths).toBeGreaterThan(5);
  });
});
