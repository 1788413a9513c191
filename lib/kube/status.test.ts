import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { compileMesh } from '../engine/compileMesh';
import { convertSeedDialect } from '../parse/seedDialect';
import { type KubeSourceKind, type LeanKubeObject, leanKubeObject, snapshotFromKube } from './kubeSnapshot';
import { meshStatusConditions, withTransitionTimes } from './meshStatus';
import { MeshResourceStatus } from './status';

// The controller's conditions (meshStatus.ts) must fit the status schema the CRDs are generated from,
// or the API server refuses the status write.
describe('MeshResourceStatus', () => {
  it('accepts what meshStatusConditions writes, valid and invalid objects, every proxy phase', () => {
    const text = readFileSync(
      path.join(__dirname, '..', 'engine', 'testdata', 'seed-example-1.in.yaml'),
      'utf8',
    );
    const broken = {
      apiVersion: 'msm.l7mp.io/v1',
      kind: 'VirtualService',
      metadata: { name: 'broken-vsvc', namespace: 'default' },
      spec: {
        selector: { serviceName: 'gateway-svc' },
        udp: { port: 9555 },
        rules: [{ action: { route: 'nowhere' } }],
      },
    };
    const invalid = {
      ...broken,
      metadata: { name: 'invalid-vsvc', namespace: 'default' },
      spec: { udp: { port: 0 } },
    };
    const docs = [
      ...parseAllDocuments(text).map((d) => convertSeedDialect(d.toJS() as Record<string, unknown>).object),
      broken,
      invalid,
    ];
    const objects: Partial<Record<KubeSourceKind, LeanKubeObject[]>> = {};
    for (const o of docs) {
      const meta = o.metadata as Record<string, unknown>;
      const lean = leanKubeObject(o.kind as KubeSourceKind, { ...o, metadata: { ...meta, generation: 3 } });
      if (lean) (objects[o.kind as KubeSourceKind] ??= []).push(lean);
    }
    const ks = snapshotFromKube(objects);
    const compiled = compileMesh(ks.snapshot);
    const byObject = meshStatusConditions({
      meshObjects: ks.meshObjects,
      diagnostics: compiled.diagnostics,
      mesh: compiled.mesh,
      proxies: {
        'default/gateway-0': {
          phase: 'failed',
          inSync: false,
          message: 'POST /api/v1/listeners: 400 "port in use"',
        },
        'default/transcoder-0': { phase: 'pending', inSync: false },
      },
    });
    const statuses = Object.values(byObject);
    expect(statuses.length).toBeGreaterThanOrEqual(3);
    const reasons = new Set<string>();
    for (const conditions of statuses) {
      const written = withTransitionTimes(conditions, undefined, '2026-01-02T03:04:05Z');
      const parsed = MeshResourceStatus.safeParse({ observedGeneration: 3, conditions: written });
      expect(parsed.error?.issues ?? []).toEqual([]);
      written.forEach((c) => reasons.add(`${c.type}=${c.status}`));
    }
    // Both outcomes were exercised, not only the happy path.
    expect([...reasons]).toEqual(
      expect.arrayContaining(['Accepted=True', 'Accepted=False', 'ResolvedRefs=False', 'Programmed=False']),
    );
  });
});
