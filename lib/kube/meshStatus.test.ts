import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { compileMesh } from '../engine/compileMesh';
import { convertSeedDialect } from '../parse/seedDialect';
import { type KubeSourceKind, type LeanKubeObject, leanKubeObject, snapshotFromKube } from './kubeSnapshot';
import {
  carriersByObject,
  type ConditionType,
  conditionsEqual,
  type MeshCondition,
  meshStatusConditions,
  type ProxyProgress,
  withTransitionTimes,
} from './meshStatus';

function example1(extra: Record<string, unknown>[] = []) {
  const text = readFileSync(
    path.join(__dirname, '..', 'engine', 'testdata', 'seed-example-1.in.yaml'),
    'utf8',
  );
  const docs = parseAllDocuments(text)
    .map((d) => d.toJS() as Record<string, unknown>)
    .map((o) => convertSeedDialect(o).object);
  const objects: Partial<Record<KubeSourceKind, LeanKubeObject[]>> = {};
  for (const o of [...docs, ...extra]) {
    const kind = o.kind as KubeSourceKind;
    const meta = o.metadata as Record<string, unknown>;
    const lean = leanKubeObject(kind, { ...o, metadata: { ...meta, generation: 4 } })!;
    (objects[kind] ??= []).push(lean);
  }
  const ks = snapshotFromKube(objects);
  const compiled = compileMesh(ks.snapshot);
  return { ks, compiled };
}

/** examples/grpc-canary: a proxyless gRPC client pod carries the VirtualService echo and its split. */
function grpcCanary() {
  const dir = path.join(__dirname, '..', '..', 'examples', 'grpc-canary');
  const objects: Partial<Record<KubeSourceKind, LeanKubeObject[]>> = {};
  for (const file of ['mesh.yaml', 'cluster.yaml']) {
    for (const d of parseAllDocuments(readFileSync(path.join(dir, file), 'utf8'))) {
      const o = d.toJS() as Record<string, unknown>;
      const kind = o.kind as KubeSourceKind;
      const meta = o.metadata as Record<string, unknown>;
      (objects[kind] ??= []).push(leanKubeObject(kind, { ...o, metadata: { ...meta, generation: 2 } })!);
    }
  }
  const ks = snapshotFromKube(objects);
  return { ks, compiled: compileMesh(ks.snapshot) };
}

const synced: ProxyProgress = { phase: 'synced', inSync: true };
const byType = (cs: MeshCondition[]) =>
  Object.fromEntries(cs.map((c) => [c.type, c])) as Record<ConditionType, MeshCondition>;

describe('meshStatusConditions', () => {
  it('Example 1, every proxy in sync: all three True, with the generation read and the proxies named', () => {
    const { ks, compiled } = example1();
    const status = meshStatusConditions({
      meshObjects: ks.meshObjects,
      diagnostics: compiled.diagnostics,
      mesh: compiled.mesh,
      proxies: { 'default/gateway-0': synced, 'default/transcoder-0': synced },
    });
    expect(Object.keys(status)).toEqual([
      'VirtualService/default/gateway-vsvc',
      'VirtualService/default/transcoder-vsvc',
    ]);
    const gw = byType(status['VirtualService/default/gateway-vsvc']!);
    expect(gw.Accepted).toMatchObject({ status: 'True', reason: 'Accepted', observedGeneration: 4 });
    expect(gw.ResolvedRefs).toMatchObject({ status: 'True', reason: 'ResolvedRefs' });
    expect(gw.Programmed).toEqual({
      type: 'Programmed',
      status: 'True',
      reason: 'Programmed',
      message: 'programmed on default/gateway-0',
      observedGeneration: 4,
    });
    // The transcoder's listener is on its sidecar, the cluster generated from it on the gateway.
    expect(byType(status['VirtualService/default/transcoder-vsvc']!).Programmed.message).toBe(
      'programmed on default/gateway-0, default/transcoder-0',
    );
  });

  it('Programmed follows the proxies: Pending while one syncs, ProxyError with its message when one fails', () => {
    const { ks, compiled } = example1();
    const run = (proxies: Record<string, ProxyProgress>) =>
      byType(
        meshStatusConditions({
          meshObjects: ks.meshObjects,
          diagnostics: compiled.diagnostics,
          mesh: compiled.mesh,
          proxies,
        })['VirtualService/default/transcoder-vsvc']!,
      ).Programmed;
    expect(
      run({ 'default/gateway-0': synced, 'default/transcoder-0': { phase: 'syncing', inSync: false } }),
    ).toMatchObject({
      status: 'False',
      reason: 'Pending',
      message: 'waiting for default/transcoder-0 (syncing)',
    });
    expect(
      run({
        'default/gateway-0': {
          phase: 'failed',
          inSync: false,
          message: 'POST /api/v1/listeners: 422 port in use',
        },
        'default/transcoder-0': synced,
      }),
    ).toMatchObject({
      status: 'False',
      reason: 'ProxyError',
      message: 'default/gateway-0: POST /api/v1/listeners: 422 port in use',
    });
  });

  it('a proxyless gRPC client: True once it ACKs, ProxyError naming it on a NACK, Unknown without a stream', () => {
    const { ks, compiled } = grpcCanary();
    const run = (proxies: Record<string, ProxyProgress>) => {
      const all = meshStatusConditions({
        meshObjects: ks.meshObjects,
        diagnostics: compiled.diagnostics,
        mesh: compiled.mesh,
        proxies,
      });
      const vs = byType(all['VirtualService/default/echo']!).Programmed;
      expect(byType(all['Target/default/echo-split']!).Programmed).toEqual(vs);
      return vs;
    };
    const client = 'default/grpc-client';
    expect(run({})).toMatchObject({
      status: 'Unknown',
      reason: 'Pending',
      message: `served over xDS only (${client}); acknowledgements are not tracked in status`,
    });
    expect(run({ [client]: synced })).toEqual({
      type: 'Programmed',
      status: 'True',
      reason: 'Programmed',
      message: `programmed on ${client}`,
      observedGeneration: 2,
    });
    expect(
      run({ [client]: { phase: 'nacked', inSync: false, message: 'NACKed RDS 7: weights sum to 0' } }),
    ).toMatchObject({
      status: 'False',
      reason: 'ProxyError',
      message: `${client}: NACKed RDS 7: weights sum to 0`,
    });
    expect(run({ [client]: { phase: 'syncing', inSync: false } })).toMatchObject({
      status: 'False',
      reason: 'Pending',
      message: `waiting for ${client} (syncing)`,
    });
    for (const phase of ['not-connected', 'disconnected', 'xds-off'] as const) {
      expect(run({ [client]: { phase, inSync: false, message: `it has ${phase}` } })).toMatchObject({
        status: 'Unknown',
        reason: 'NotConnected',
        message: `not connected over xDS: ${client}: it has ${phase}`,
      });
    }
  });

  it('an invalid object is not Accepted, with the schema diagnostic as the message', () => {
    const { ks, compiled } = example1([
      {
        apiVersion: 'msm.l7mp.io/v1',
        kind: 'VirtualService',
        metadata: { name: 'broken', namespace: 'default' },
        spec: { selector: { serviceName: 'gateway-svc' }, udp: { port: 9002 }, tcp: { port: 9003 } },
      },
    ]);
    const s = byType(
      meshStatusConditions({
        meshObjects: ks.meshObjects,
        diagnostics: compiled.diagnostics,
        mesh: compiled.mesh,
        proxies: {},
      })['VirtualService/default/broken']!,
    );
    expect(s.Accepted).toMatchObject({ status: 'False', reason: 'Invalid', observedGeneration: 4 });
    expect(s.Accepted.message).toContain('a VirtualService needs exactly one protocol key');
    expect(s.Accepted.message).toContain('[schema]');
    expect(s.ResolvedRefs).toMatchObject({ status: 'False', reason: 'Invalid' });
    expect(s.Programmed).toMatchObject({ status: 'False', reason: 'Invalid' });
  });

  it('a dangling reference is Accepted but not ResolvedRefs, with the engine diagnostic', () => {
    const { ks, compiled } = example1([
      {
        apiVersion: 'msm.l7mp.io/v1',
        kind: 'VirtualService',
        metadata: { name: 'dangling', namespace: 'default' },
        spec: {
          selector: { serviceName: 'gateway-svc' },
          udp: { port: 9002 },
          rules: [{ action: { route: { destination: 'no-such-target' } } }],
        },
      },
    ]);
    const s = byType(
      meshStatusConditions({
        meshObjects: ks.meshObjects,
        diagnostics: compiled.diagnostics,
        mesh: compiled.mesh,
        proxies: { 'default/gateway-0': synced, 'default/transcoder-0': synced },
      })['VirtualService/default/dangling']!,
    );
    expect(s.Accepted).toMatchObject({ status: 'True', reason: 'Accepted' });
    expect(s.ResolvedRefs).toMatchObject({ status: 'False', reason: 'InvalidReference' });
    expect(s.ResolvedRefs.message).toContain('no-such-target');
    expect(s.ResolvedRefs.message).toContain('[unresolved-reference]');
    expect(s.Programmed.status).toBe('False');
  });
});

describe('carriersByObject', () => {
  it('names the proxies of each object of Example 1', () => {
    const { compiled } = example1();
    const c = carriersByObject(compiled.mesh);
    expect([...c.get('VirtualService/default/gateway-vsvc')!]).toEqual(['default/gateway-0']);
    expect([...c.get('VirtualService/default/transcoder-vsvc')!].sort()).toEqual([
      'default/gateway-0',
      'default/transcoder-0',
    ]);
  });
});

describe('withTransitionTimes and conditionsEqual', () => {
  const desired: MeshCondition[] = [
    { type: 'Accepted', status: 'True', reason: 'Accepted', message: 'accepted', observedGeneration: 2 },
    { type: 'Programmed', status: 'False', reason: 'Pending', message: 'waiting', observedGeneration: 2 },
  ];
  it('keeps the transition time of an unchanged status and stamps a changed one', () => {
    const current = {
      conditions: [
        { ...desired[0], lastTransitionTime: '2026-01-01T00:00:00Z' },
        { ...desired[1], status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z' },
      ],
    };
    const out = withTransitionTimes(desired, current, '2026-02-02T00:00:00Z');
    expect(out.map((c) => c.lastTransitionTime)).toEqual(['2026-01-01T00:00:00Z', '2026-02-02T00:00:00Z']);
  });
  it('compares status, reason, message and observedGeneration only', () => {
    const same = { conditions: desired.map((c) => ({ ...c, lastTransitionTime: 'x' })) };
    expect(conditionsEqual(desired, same)).toBe(true);
    expect(conditionsEqual(desired, { conditions: [same.conditions[0]] })).toBe(false);
    expect(
      conditionsEqual(desired, {
        conditions: [same.conditions[0], { ...same.conditions[1], observedGeneration: 1 }],
      }),
    ).toBe(false);
    expect(conditionsEqual(desired, undefined)).toBe(false);
    expect(conditionsEqual(desired, { conditions: 'nope' })).toBe(false);
  });
});
