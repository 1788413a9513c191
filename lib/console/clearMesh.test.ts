import { describe, expect, it } from 'vitest';
import { applyCommand } from './draftCommands';
import { parseDraft } from './draftModel';
import { exampleDraft } from './testDrafts.testutil';

describe('clearMesh', () => {
  it('deletes the mesh objects and their layout entries, and keeps the cluster file byte for byte', () => {
    const ex1 = exampleDraft('seed-example-1');
    const draft = {
      files: {
        ...ex1.files,
        // A file mixing both keeps its cluster object; a List keeps its non-mesh items.
        'mixed.yaml':
          'kind: Route\nmetadata: {name: r}\nspec: {destination: x}\n---\n# svc\nkind: Service\nmetadata: {name: s}\n',
        'list.yaml':
          'kind: List\nitems:\n  - {kind: Target, metadata: {name: t1}, spec: {}}\n  - {apiVersion: v1, kind: Service, metadata: {name: s2}}\n  - {kind: Target, metadata: {name: t2}, spec: {}}\n',
      },
      layout: {
        'VirtualService/default/gateway-vsvc': { x: 1, y: 2 },
        'VirtualService/default/gateway-vsvc#spec.rules[0].action.route': { x: 3, y: 4 },
        'Pod/default/gateway-0': { x: 5, y: 6 },
      },
    };
    const r = applyCommand(draft, { type: 'clearMesh' });
    if (!r.ok) throw new Error(r.error);
    expect(Object.keys(r.draft.files).sort()).toEqual(['cluster.yaml', 'list.yaml', 'mixed.yaml']);
    expect(r.draft.files['cluster.yaml']).toBe(ex1.files['cluster.yaml']);
    expect(r.draft.layout).toEqual({ 'Pod/default/gateway-0': { x: 5, y: 6 } });
    const m = parseDraft(r.draft);
    expect(m.objects.map((o) => o.key).sort()).toEqual([
      'Pod/default/gateway-0',
      'Pod/default/transcoder-0',
      'Pod/default/worker-0',
      'Pod/default/worker-1',
      'Service/default/gateway-svc',
      'Service/default/s',
      'Service/default/s2',
      'Service/default/worker-svc',
    ]);
  });

  it('leaves a draft without mesh objects as it is', () => {
    const draft = { files: { 'c.yaml': 'kind: Service\nmetadata: {name: s}\n' }, layout: {} };
    const r = applyCommand(draft, { type: 'clearMesh' });
    expect(r).toEqual({ ok: true, draft });
  });
});
