import { describe, expect, it } from 'vitest';
import type { RolloutStep } from '@/lib/rollout/rollout';
import {
  releasedResult,
  ROLLOUT_FIELD_MANAGER,
  type RolloutOnTarget,
  shareBody,
  splitDecision,
  type SplitDecisionInput,
  splitOwners,
  splitText,
} from './rolloutSplit';

type Obj = Record<string, any>;

const split = (w1: number, w2: number) => [
  { serviceName: 'echo-v1', weight: w1 },
  { serviceName: 'echo-v2', weight: w2 },
];
const target = (spec: Obj, managedFields?: Obj[]): Obj => ({
  apiVersion: 'msm.l7mp.io/v1',
  kind: 'Target',
  metadata: { name: 'echo', namespace: 'default', ...(managedFields ? { managedFields } : {}) },
  spec,
});
const owns = (manager: string, fields: Obj, operation = 'Apply') => ({
  manager,
  operation,
  apiVersion: 'msm.l7mp.io/v1',
  fieldsType: 'FieldsV1',
  fieldsV1: { 'f:spec': fields },
});
const LB = { policy: 'ConsistentHash', key: '/IP/src_addr' };
/** As the cluster holds it after a rollout's step: the console owns the load balancer, the rollout the split. */
const LIVE = target({ loadbalancer: LB, split: split(50, 50) }, [
  owns('meshdeck', { 'f:loadbalancer': { 'f:key': {}, 'f:policy': {} } }),
  owns(ROLLOUT_FIELD_MANAGER, { 'f:split': {} }),
]);
const step = (percent: number): RolloutStep => ({ percent, weights: [100 - percent, percent] });
const rollout = (over: Partial<RolloutOnTarget> = {}): RolloutOnTarget => ({
  id: 'r-1',
  phase: 'paused',
  target: 'cluster',
  spec: {
    target: { namespace: 'default', name: 'echo' },
    canary: 'echo-v2',
    steps: [50, 100],
    pauseS: 0,
    analysis: {},
    onFailure: 'rollback',
  } as RolloutOnTarget['spec'],
  steps: [step(50)],
  ...over,
});
const decide = (over: Partial<SplitDecisionInput>) =>
  splitDecision({
    kind: 'Target',
    namespace: 'default',
    name: 'echo',
    draft: target({ loadbalancer: LB, serviceName: 'echo-v2' }),
    live: LIVE,
    rollouts: [],
    consoleManager: 'meshdeck',
    ...over,
  });

describe('splitDecision: a rollout that has not ended', () => {
  it('refuses a draft that removes, changes or deletes the split, naming the Target, the rollout and what to do', () => {
    const removed = decide({ rollouts: [rollout()] });
    expect(removed).toEqual({
      do: 'refuse',
      rollout: 'r-1',
      message:
        'Target default/echo: rollout r-1 of echo-v2 is paused at step 1 of 2 (50%) and moves its split; ' +
        'this apply would remove its split. Abort or finish the rollout first, then apply again ' +
        '(or apply a draft that leaves the split as it runs: echo-v1 50, echo-v2 50)',
    });
    const changed = decide({
      draft: target({ loadbalancer: LB, split: split(80, 20) }),
      rollouts: [rollout({ phase: 'progressing', steps: [] })],
    });
    expect(changed).toMatchObject({ do: 'refuse' });
    expect((changed as { message: string }).message).toContain(
      'rollout r-1 of echo-v2 is starting and moves its split; this apply would change its split to echo-v1 80, echo-v2 20.',
    );
    const deleted = decide({ draft: null, rollouts: [rollout()] });
    expect((deleted as { message: string }).message).toMatch(
      /this apply would delete the Target\. Abort or finish the rollout first, then apply again$/,
    );
  });

  it('lets a draft through that leaves the split exactly as it runs (entry keys in any order)', () => {
    const same = target({
      loadbalancer: { policy: 'RoundRobin' },
      split: [
        { weight: 50, serviceName: 'echo-v1' },
        { serviceName: 'echo-v2', weight: 50 },
      ],
    });
    expect(decide({ draft: same, rollouts: [rollout()] })).toEqual({ do: 'apply' });
    // The weights' order is the split's: swapped entries are another split.
    const swapped = target({ split: [...split(50, 50)].reverse() });
    expect(decide({ draft: swapped, rollouts: [rollout()] }).do).toBe('refuse');
  });

  it('looks only at rollouts of this Target in the cluster that have not ended', () => {
    for (const other of [
      rollout({ phase: 'succeeded' }),
      rollout({ phase: 'aborted' }),
      rollout({ target: 'local-mesh' }),
      rollout({ spec: { ...rollout().spec, target: { namespace: 'default', name: 'other' } } }),
      rollout({ spec: { ...rollout().spec, target: { namespace: 'prod', name: 'echo' } } }),
    ]) {
      expect(decide({ rollouts: [other] }).do).toBe('release');
    }
  });

  it('has nothing to protect where the cluster has no split, and says nothing of other kinds', () => {
    const plain = target({ serviceName: 'echo-v1' });
    expect(decide({ live: plain, rollouts: [rollout()] })).toEqual({ do: 'apply' });
    expect(decide({ live: null, rollouts: [rollout()] })).toEqual({ do: 'apply' });
    expect(decide({ kind: 'VirtualService', rollouts: [rollout()] })).toEqual({ do: 'apply' });
  });
});

describe('splitDecision: no rollout runs', () => {
  it("releases the rollout manager's split when the draft has none, sharing the split as it runs first", () => {
    const out = decide({});
    expect(out).toEqual({
      do: 'release',
      manager: ROLLOUT_FIELD_MANAGER,
      share: target({ loadbalancer: LB, split: split(50, 50) }),
    });
    // The console's manager sharing the split already (it applied the same weights) changes nothing.
    const shared = target({ loadbalancer: LB, split: split(50, 50) }, [
      owns('meshdeck', { 'f:loadbalancer': {}, 'f:split': {} }),
      owns(ROLLOUT_FIELD_MANAGER, { 'f:split': {} }),
    ]);
    expect(decide({ live: shared }).do).toBe('release');
  });

  it('leaves a draft with a split to server-side apply (a conflict with the rollout manager it may force)', () => {
    expect(decide({ draft: target({ split: split(80, 20) }) })).toEqual({ do: 'apply' });
  });

  it("does nothing where the rollout's manager owns no split, or another writer owns it too", () => {
    const consoles = target({ split: split(80, 20) }, [owns('meshdeck', { 'f:split': {} })]);
    expect(decide({ live: consoles })).toEqual({ do: 'apply' });
    const edited = target({ split: split(80, 20) }, [
      owns(ROLLOUT_FIELD_MANAGER, { 'f:split': {} }),
      owns('kubectl-edit', { 'f:split': {} }, 'Update'),
    ]);
    expect(decide({ live: edited })).toEqual({ do: 'apply' });
    // A prune deletes the whole object: nothing to release.
    expect(decide({ draft: null })).toEqual({ do: 'apply' });
  });
});

describe('the release bodies', () => {
  it('shares the split without its alternatives, and previews the split gone with them back', () => {
    const draft = target({ loadbalancer: LB, serviceName: 'echo-v2', endpoints: ['x'] });
    const share = shareBody(draft, split(0, 100));
    expect(share.spec).toEqual({ loadbalancer: LB, split: split(0, 100) });
    expect(draft.spec.serviceName).toBe('echo-v2');
    const answered = { ...share, metadata: { ...(share.metadata as Obj), resourceVersion: '9' } };
    expect(releasedResult(answered, draft).spec).toEqual({
      loadbalancer: LB,
      serviceName: 'echo-v2',
      endpoints: ['x'],
    });
    expect(releasedResult(answered, target({})).spec).toEqual({ loadbalancer: LB });
  });

  it('reads the split owners from managedFields and writes a split as it reads', () => {
    expect(splitOwners(LIVE)).toEqual([{ manager: ROLLOUT_FIELD_MANAGER, operation: 'Apply' }]);
    expect(splitOwners(target({}))).toEqual([]);
    expect(splitText(split(80, 20))).toBe('echo-v1 80, echo-v2 20');
  });
});
