import { describe, expect, it } from 'vitest';
import { objectDiff } from './objectDiff';

const live = {
  apiVersion: 'msm.l7mp.io/v1',
  kind: 'VirtualService',
  metadata: {
    name: 'a',
    namespace: 'default',
    resourceVersion: '12',
    generation: 3,
    uid: 'u',
    creationTimestamp: '2026-01-01T00:00:00Z',
    managedFields: [{ manager: 'meshdeck' }],
  },
  spec: { websocket: { port: 8888 }, rules: [{ action: { route: { destination: 'x' } } }] },
};

describe('objectDiff', () => {
  it('ignores the bookkeeping fields the API server changes on every write', () => {
    const after = structuredClone(live);
    after.metadata.resourceVersion = '13';
    after.metadata.generation = 4;
    after.metadata.managedFields = [{ manager: 'other' }];
    after.metadata.creationTimestamp = '2027-01-01T00:00:00Z';
    expect(objectDiff(live, after)).toEqual([]);
  });

  it('names exactly the changed leaf, array items by index', () => {
    const after = structuredClone(live);
    after.spec.websocket.port = 8889;
    after.spec.rules[0]!.action.route.destination = 'y';
    expect(objectDiff(live, after)).toEqual([
      { path: 'spec.rules[0].action.route.destination', before: 'x', after: 'y' },
      { path: 'spec.websocket.port', before: 8888, after: 8889 },
    ]);
  });

  it('a create is one change of the whole object, a removed field has no after', () => {
    expect(objectDiff(null, { kind: 'X', metadata: { uid: 'u' } })).toEqual([
      { path: '', after: { kind: 'X', metadata: {} } },
    ]);
    const after = structuredClone(live) as Record<string, any>;
    delete after.spec.websocket;
    after.spec.rules.push({});
    expect(objectDiff(live, after)).toEqual([
      { path: 'spec.rules', before: live.spec.rules, after: after.spec.rules },
      { path: 'spec.websocket', before: { port: 8888 } },
    ]);
  });
});
