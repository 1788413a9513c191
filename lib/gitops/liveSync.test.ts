import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { clusterDraftFiles } from '../kube/clusterDraftFiles';
import { type KubeObjects, type KubeSourceKind, leanKubeObject, MESH_CRD_KINDS } from '../kube/kubeSnapshot';
import { convertSeedDialect } from '../parse/seedDialect';
import { inSync, liveSync } from './liveSync';

const EXAMPLE = path.join(__dirname, '../../examples/seed-example-2');
const read = (f: string) => readFileSync(path.join(EXAMPLE, f), 'utf8');

/** Git: the example as shipped (the seed's dialect, comments, its own file layout). */
const gitFiles = { 'mesh.yaml': read('mesh.yaml'), 'cluster.yaml': read('cluster.yaml') };

/** The cluster after `kubectl apply` of it, as the cluster mirror writes it (canonical, per namespace). */
function clusterFiles(edit: (o: Record<string, unknown>) => Record<string, unknown> | undefined = (o) => o) {
  const objects: Partial<Record<KubeSourceKind, unknown[]>> = {};
  for (const file of Object.values(gitFiles)) {
    for (const d of parseAllDocuments(file)) {
      const raw = d.toJS() as Record<string, unknown> | null;
      if (!raw) continue;
      const o = edit(convertSeedDialect(raw).object);
      if (!o) continue;
      const kind = o.kind as KubeSourceKind;
      // What the API server adds: it is never part of the comparison.
      const served = {
        ...o,
        metadata: {
          ...(o.metadata as object),
          uid: 'u',
          resourceVersion: '7',
          generation: 3,
          annotations: { 'argocd.argoproj.io/tracking-id': 'app:msm.l7mp.io/Route:default/x' },
        },
        status: { conditions: [] },
      };
      (objects[kind] ??= []).push(leanKubeObject(kind, served));
    }
  }
  return clusterDraftFiles(objects as Partial<KubeObjects>);
}

describe('liveSync', () => {
  it('Git in the seed dialect and the cluster canonical, with server fields: every mesh object in sync', () => {
    const s = liveSync(gitFiles, clusterFiles(), MESH_CRD_KINDS);
    expect(s.counts).toEqual({ synced: 7, modified: 0, missing: 0, extra: 0 });
    expect(inSync(s)).toBe(true);
    expect(s.entries.find((e) => e.key === 'Route/default/gateway-route')).toMatchObject({
      state: 'synced',
      git: { file: 'mesh.yaml' },
      live: { file: 'default/mesh.yaml' },
    });
  });

  it('names the fields that differ, and what is missing from the cluster or not in Git', () => {
    const live = clusterFiles((o) => {
      const name = (o.metadata as { name: string }).name;
      if (name === 'worker-vsvc') return undefined;
      if (name === 'gateway-route')
        return { ...o, spec: { ...(o.spec as object), destination: 'sync-target' } };
      return o;
    });
    live['default/extra.yaml'] =
      'apiVersion: msm.l7mp.io/v1\nkind: Target\nmetadata: { name: hand-made }\nspec: { selector: { serviceName: worker-svc } }\n';
    const s = liveSync(gitFiles, live, MESH_CRD_KINDS);
    expect(s.counts).toEqual({ synced: 5, modified: 1, missing: 1, extra: 1 });
    expect(inSync(s)).toBe(false);
    // Out of sync first.
    expect(s.entries.slice(0, 3).map((e) => [e.state, e.key])).toEqual([
      ['modified', 'Route/default/gateway-route'],
      ['missing', 'VirtualService/default/worker-vsvc'],
      ['extra', 'Target/default/hand-made'],
    ]);
    expect(s.entries[0]!.fields).toEqual([
      { path: 'spec.destination', before: 'worker-target', after: 'sync-target' },
    ]);
  });

  it('compares every kind without a filter, and reports a file it cannot read', () => {
    const s = liveSync(gitFiles, { ...clusterFiles(), 'default/broken.yaml': 'a: [' });
    // The cluster's Services and Pods are in Git's cluster.yaml too: in sync.
    expect(s.counts.synced).toBeGreaterThan(7);
    expect(s.unreadable).toEqual([expect.objectContaining({ side: 'live', path: 'default/broken.yaml' })]);
    expect(inSync(s)).toBe(false);
  });
});
