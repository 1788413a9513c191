import { describe, expect, it } from 'vitest';
import {
  ALLOWED,
  applyAnswer,
  CONFLICT,
  CREATE,
  DELETE,
  DENIED,
  dryRun,
  FORBIDDEN,
  INVALID,
  ORPHAN,
  ref,
  SKIPPED,
  UNCHANGED,
  UPDATE,
} from './clusterApplyFixtures.testutil';
import {
  actionLabel,
  applyBlockers,
  applyFailure,
  deniedAccess,
  deniedText,
  formatValue,
  isInvalid,
  isRolloutHeld,
  objectLabel,
  outcomeLabel,
  outcomeSummary,
  problemLines,
  sortRows,
  summaryLine,
} from './clusterApplyView';
import { ROLLOUT_IN_PROGRESS } from '@/lib/kube/rolloutSplit';

/** A Target whose split a running rollout moves, and a draft that removes it (server/kube/clusterApply.ts). */
const HELD = {
  ...UNCHANGED,
  ref: ref('Target', 'echo-canary', 3),
  action: 'error' as const,
  error: {
    status: 409,
    reason: ROLLOUT_IN_PROGRESS,
    message:
      'Target default/echo-canary: rollout r-1 of echo-v2 is paused at step 1 of 2 (50%) and moves its split; this apply would remove its split. Abort or finish the rollout first, then apply again',
    causes: [],
  },
};

describe('objectLabel', () => {
  it('names an object as Kind namespace/name, a collection and a broken file in words', () => {
    expect(objectLabel(ref('Route', 'user-route'))).toBe('Route default/user-route');
    expect(objectLabel({ ...ref('Route', '*', 0, 'mesh'), key: 'Route/mesh/*' })).toBe(
      'Route objects in mesh',
    );
    expect(
      objectLabel({
        key: 'file/a.yaml',
        apiVersion: '',
        kind: '',
        namespace: '',
        name: 'a.yaml',
        file: 'a.yaml',
      }),
    ).toBe('file a.yaml');
  });
});

describe('rows', () => {
  it('labels each action, splitting API errors into invalid and refused', () => {
    expect([CREATE, UPDATE, UNCHANGED, DELETE, ORPHAN, CONFLICT, SKIPPED].map(actionLabel)).toEqual([
      'create',
      'update',
      'unchanged',
      'delete (prune)',
      'not in the draft',
      'conflict',
      'skipped',
    ]);
    expect(actionLabel(INVALID)).toBe('invalid');
    expect(actionLabel(FORBIDDEN)).toBe('forbidden');
    // kube-apiserver answers an apply with an unknown field with 500 InternalError naming the field.
    const unknownField = {
      ...INVALID,
      error: {
        status: 500,
        reason: 'InternalError',
        message:
          'failed to create typed patch object (default/bad-port; msm.l7mp.io/v1, Kind=Route): .spec.retry.tries: field not declared in schema',
        causes: [{ field: 'spec.retry.tries', message: 'field not declared in schema' }],
      },
    };
    expect(isInvalid(unknownField)).toBe(true);
    expect(isInvalid(FORBIDDEN)).toBe(false);
    const noAnswer = {
      ...FORBIDDEN,
      error: { status: 0, reason: 'NoAnswer', message: 'ECONNREFUSED', causes: [] },
    };
    expect(actionLabel(noAnswer)).toBe('refused');
  });

  it('sorts what blocks an apply first, then changes, then the rest, by object within an action', () => {
    const b = { ...CREATE, ref: ref('Route', 'b-route') };
    const sorted = sortRows([UNCHANGED, SKIPPED, b, CREATE, UPDATE, CONFLICT, INVALID, ORPHAN]);
    expect(sorted.map((r) => `${r.action} ${r.ref.name}`)).toEqual([
      'error bad-port',
      'conflict gateway-vsvc',
      'create b-route',
      'create user-route',
      'update transcoder-vsvc',
      'orphan old-route',
      'unchanged worker-target',
      'skipped worker-0',
    ]);
  });

  it('summarises a dry-run in one line, in reading order', () => {
    expect(summaryLine([CREATE, CREATE, CREATE, UPDATE, UNCHANGED, UNCHANGED, CONFLICT])).toBe(
      '3 to create, 1 to update, 2 unchanged, 1 conflict',
    );
    expect(summaryLine([CONFLICT, CONFLICT, INVALID, FORBIDDEN, ORPHAN, SKIPPED, DELETE])).toBe(
      '1 to delete, 2 conflicts, 1 invalid, 1 refused, 1 no longer in the draft, 1 skipped',
    );
    expect(summaryLine([])).toBe('the draft has no objects');
  });

  it('says what an apply did per object and in one line', () => {
    const answer = applyAnswer(
      [CREATE, UPDATE, UNCHANGED, DELETE, ORPHAN, SKIPPED],
      (o) => o.action !== 'orphan' && o.action !== 'skipped',
    );
    expect(answer.ok).toBe(true);
    expect(answer.objects.map(outcomeLabel)).toEqual([
      'created',
      'updated',
      'unchanged',
      'deleted',
      'kept (not in the draft)',
      'skipped',
    ]);
    expect(outcomeSummary(answer.objects)).toBe(
      '1 created, 1 updated, 1 deleted, 1 unchanged, 1 kept (not in the draft), 1 skipped',
    );
    const partial = applyAnswer([CREATE, UPDATE, ORPHAN, SKIPPED], (o) => o === CREATE);
    partial.objects[1] = { ...partial.objects[1]!, action: 'error', error: FORBIDDEN.error };
    expect(partial.objects.map(outcomeLabel)).toEqual([
      'created',
      'not applied: forbidden',
      'kept (not in the draft)',
      'skipped',
    ]);
    expect(outcomeSummary(partial.objects)).toBe('1 created, 1 failed, 1 kept (not in the draft), 1 skipped');
    expect(outcomeSummary([])).toBe('nothing to apply');
  });
});

describe('access', () => {
  it('groups the denied verbs by resource and namespace and says them in words', () => {
    expect(deniedAccess(DENIED)).toEqual([
      { resource: 'virtualservices.msm.l7mp.io', namespace: 'default', verbs: ['patch', 'create'] },
      { resource: 'services', namespace: 'default', verbs: ['patch', 'create'] },
    ]);
    expect(deniedText(DENIED)).toBe(
      'Kubernetes RBAC does not let bob@example.com patch and create virtualservices.msm.l7mp.io in default; patch and create services in default.',
    );
    expect(deniedAccess(ALLOWED)).toEqual([]);
    expect(deniedText({ allowed: false, user: 'bob', checks: [], denied: [] })).toMatch(
      /no objects the console applies/,
    );
  });

  it('keeps the reason of a failed review', () => {
    const failed = {
      ...DENIED,
      checks: [{ ...DENIED.checks[0]!, reason: 'the access review failed: HTTP 500' }],
    };
    expect(deniedAccess(failed)[0]).toMatchObject({
      verbs: ['patch'],
      reason: 'the access review failed: HTTP 500',
    });
  });
});

describe('applyBlockers', () => {
  it('lets a clean dry-run apply', () => {
    expect(applyBlockers(dryRun([CREATE, UPDATE, UNCHANGED, SKIPPED]))).toEqual([]);
    expect(applyBlockers(dryRun([UNCHANGED]))).toEqual([]);
  });

  it('names invalid objects, refusals, conflicts and denied access, one reason each', () => {
    expect(applyBlockers(dryRun([CREATE, INVALID, INVALID]))).toEqual([
      '2 objects are invalid: fix them in the draft.',
    ]);
    expect(applyBlockers(dryRun([CREATE, INVALID, CONFLICT]))).toEqual([
      '1 object is invalid: fix it in the draft.',
      '1 object has fields another manager owns: choose Force to take them over, or change the draft.',
    ]);
    expect(applyBlockers(dryRun([FORBIDDEN], DENIED))).toEqual([
      deniedText(DENIED),
      'The API server refused 1 object (see the rows below).',
    ]);
  });

  it('asks to rebase or overwrite when mesh objects changed in the cluster since the draft started', () => {
    const behind = {
      ...dryRun([UPDATE]),
      clusterChanges: [
        {
          key: 'Route/default/r1',
          kind: 'Route',
          namespace: 'default',
          name: 'r1',
          change: 'modified' as const,
          fields: ['spec.destination'],
          draftChanged: false,
        },
      ],
    };
    expect(applyBlockers(behind)).toEqual([
      '1 object changed in the cluster since this draft started: rebase the draft, or choose Overwrite to revert that change.',
    ]);
    expect(applyBlockers(behind, { overwrite: true })).toEqual([]);
    // An object the cluster gained blocks only an apply with Prune.
    const gained = {
      ...behind,
      clusterChanges: [{ ...behind.clusterChanges[0]!, change: 'added' as const }],
    };
    expect(applyBlockers(gained)).toEqual([]);
    expect(applyBlockers(gained, { prune: true })).toHaveLength(1);
  });

  it('refuses a draft with nothing to send', () => {
    expect(applyBlockers(dryRun([SKIPPED, ORPHAN]))).toEqual([
      'The draft has no objects to apply to the cluster.',
    ]);
  });
});

describe('a Target a running rollout holds', () => {
  it('is its own row: not invalid, not a conflict Force could take over, and it blocks the apply', () => {
    expect(isRolloutHeld(HELD)).toBe(true);
    expect(isInvalid(HELD)).toBe(false);
    expect([isRolloutHeld(FORBIDDEN), isRolloutHeld(CONFLICT)]).toEqual([false, false]);
    expect(actionLabel(HELD)).toBe('rollout running');
    expect(outcomeLabel({ ...HELD, done: false })).toBe('not applied: rollout running');
    expect(summaryLine([UPDATE, HELD])).toBe('1 to update, 1 held by a running rollout');
    expect(applyBlockers(dryRun([UPDATE, HELD]))).toEqual([
      'A progressive rollout is moving the split of 1 Target this draft changes: abort or finish it first, or leave the split as it runs (see the rows below).',
    ]);
    expect(problemLines(HELD.error)).toEqual([{ message: HELD.error.message }]);
  });

  it("reads the apply's 409 as the rollout's, with the server's words", () => {
    const said = `nothing was applied: ${HELD.error.message}`;
    expect(applyFailure(409, { ...applyAnswer([UPDATE, HELD], () => false), error: said }, '')).toEqual({
      kind: 'rollout',
      title: 'A progressive rollout is running: nothing was applied',
      detail: said,
    });
  });
});

describe('problemLines', () => {
  it('gives each cause with its field path, or the message when no cause names a field', () => {
    expect(problemLines(INVALID.error!)).toEqual([
      {
        field: 'spec.destination.tcp.port',
        message:
          'Invalid value: 70000: spec.destination.tcp.port in body should be less than or equal to 65535',
      },
    ]);
    expect(problemLines(FORBIDDEN.error!)).toEqual([{ message: FORBIDDEN.error!.message }]);
  });
});

describe('formatValue', () => {
  it('writes JSON, says (none) for an absent value, and shortens long ones', () => {
    expect(formatValue(8888)).toBe('8888');
    expect(formatValue('a')).toBe('"a"');
    expect(formatValue(undefined)).toBe('(none)');
    expect(formatValue({ a: 'x'.repeat(200) }, 20)).toHaveLength(20);
  });
});

describe('applyFailure', () => {
  it('tells a stale revision from another running apply', () => {
    const stale = applyFailure(
      409,
      { error: 'the draft is at revision 8, not 7: review the dry-run again, then apply', revision: 8 },
      'POST ... answered 409',
    );
    expect(stale).toMatchObject({
      kind: 'stale',
      title: 'The draft changed since the dry-run: review again',
    });
    expect(stale.detail).toContain('revision 8, not 7');
    expect(applyFailure(409, { error: 'another apply is running; wait for it to finish' }, '').kind).toBe(
      'busy',
    );
  });

  it('tells a draft behind the cluster from a stale revision', () => {
    const behind = applyFailure(
      409,
      { error: 'changed in the cluster since this draft started: Route default/r1 (…)', clusterChanges: [] },
      '',
    );
    expect(behind).toMatchObject({
      kind: 'behind',
      detail: 'changed in the cluster since this draft started: Route default/r1 (…).',
    });
  });

  it('reads the gate refusals (409 conflicts, 422) and partial writes (502) from the rows', () => {
    expect(
      applyFailure(
        409,
        applyAnswer([CREATE, CONFLICT], () => false),
        '',
      ).kind,
    ).toBe('conflict');
    const invalid = applyFailure(
      422,
      applyAnswer([CREATE, INVALID], () => false),
      '',
    );
    expect(invalid).toMatchObject({ kind: 'invalid', detail: '1 to create, 1 invalid' });
    const partial = applyAnswer([CREATE, UPDATE], (o) => o === CREATE);
    partial.objects[1] = { ...partial.objects[1]!, action: 'error', error: FORBIDDEN.error };
    expect(applyFailure(502, partial, '')).toMatchObject({
      kind: 'partial',
      detail: 'Applied: Route default/user-route. Failed: VirtualService default/transcoder-vsvc.',
    });
  });

  it('passes the server words on for 503 and anything else', () => {
    const unavailable = applyFailure(
      503,
      { error: 'no cluster is configured: start the console with …' },
      'x',
    );
    expect(unavailable).toMatchObject({
      kind: 'unavailable',
      detail: 'no cluster is configured: start the console with …',
    });
    expect(applyFailure(0, undefined, 'POST /api/cluster/apply: the server did not answer')).toMatchObject({
      kind: 'unavailable',
      detail: 'POST /api/cluster/apply: the server did not answer',
    });
    expect(applyFailure(400, { error: 'invalid request' }, '')).toMatchObject({
      kind: 'other',
      detail: 'invalid request',
    });
  });
});
