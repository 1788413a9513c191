import { describe, expect, it } from 'vitest';
import { conditionEvents, MAX_NOTE_BYTES, proxyEvent, truncateNote } from './meshEvents';
import type { MeshCondition } from './meshStatus';

const VS = {
  apiVersion: 'msm.l7mp.io/v1',
  kind: 'VirtualService',
  namespace: 'default',
  name: 'gw',
  uid: 'u1',
};

function cond(type: string, status: 'True' | 'False', reason: string, message = ''): MeshCondition {
  return { type, status, reason, message, observedGeneration: 1 } as MeshCondition;
}

const ACCEPTED = cond('Accepted', 'True', 'Accepted', 'accepted');
const RESOLVED = cond('ResolvedRefs', 'True', 'ResolvedRefs', 'all references resolved');
const PROGRAMMED = cond('Programmed', 'True', 'Programmed', 'programmed on 2 proxies');
const PENDING = cond('Programmed', 'False', 'Pending', 'pushing to 2 proxies');

describe('conditionEvents', () => {
  it('a new valid object: one Normal event once it is programmed, none while pending', () => {
    expect(conditionEvents(VS, undefined, [ACCEPTED, RESOLVED, PENDING])).toEqual([]);
    expect(
      conditionEvents(VS, { conditions: [ACCEPTED, RESOLVED, PENDING] }, [ACCEPTED, RESOLVED, PROGRAMMED]),
    ).toEqual([
      {
        regarding: VS,
        type: 'Normal',
        reason: 'Programmed',
        action: 'Program',
        note: 'programmed on 2 proxies',
      },
    ]);
  });

  it('a reference that stops resolving is a Warning with the engine message; resolving again is Normal', () => {
    const dangling = cond('ResolvedRefs', 'False', 'InvalidReference', 'spec.rules[0]: no Target default/t1');
    const before = { conditions: [ACCEPTED, RESOLVED, PROGRAMMED] };
    expect(conditionEvents(VS, before, [ACCEPTED, dangling, PROGRAMMED])).toEqual([
      {
        regarding: VS,
        type: 'Warning',
        reason: 'InvalidReference',
        action: 'ResolveReferences',
        note: 'spec.rules[0]: no Target default/t1',
      },
    ]);
    expect(
      conditionEvents(VS, { conditions: [ACCEPTED, dangling, PROGRAMMED] }, [ACCEPTED, RESOLVED, PROGRAMMED]),
    ).toEqual([
      expect.objectContaining({ type: 'Normal', reason: 'ResolvedRefs', note: 'all references resolved' }),
    ]);
  });

  it('an invalid object: the Accepted warning, not also the conditions that repeat it', () => {
    const invalid = cond('Accepted', 'False', 'Invalid', 'spec.udp.port: expected number');
    const unresolved = cond(
      'ResolvedRefs',
      'False',
      'Invalid',
      'references not resolved: the object is invalid',
    );
    const notProgrammed = cond('Programmed', 'False', 'Invalid', 'not programmed: not accepted');
    expect(conditionEvents(VS, undefined, [invalid, unresolved, notProgrammed])).toEqual([
      expect.objectContaining({
        type: 'Warning',
        reason: 'Invalid',
        action: 'Validate',
        note: 'spec.udp.port: expected number',
      }),
    ]);
  });

  it('nothing when status and reason stay (a message that changes alone is not news)', () => {
    const failed = cond('Programmed', 'False', 'ProxyError', 'default/gw-0: HTTP 500');
    const again = cond('Programmed', 'False', 'ProxyError', 'default/gw-0: HTTP 503');
    expect(conditionEvents(VS, { conditions: [ACCEPTED, failed] }, [ACCEPTED, again])).toEqual([]);
    expect(conditionEvents(VS, { conditions: 'garbage' }, [failed])).toEqual([
      expect.objectContaining({ type: 'Warning', reason: 'ProxyError' }),
    ]);
  });
});

describe('proxyEvent', () => {
  const state = (phase: string, failure?: string) => ({
    id: 'default/gateway-0',
    phase,
    ...(failure ? { failure } : {}),
  });
  const POD = { apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'gateway-0' };

  it('a failed push and an unreachable proxy are Warnings on the Pod; back in sync is Normal', () => {
    expect(proxyEvent('synced', state('failed', 'POST /api/v1/listeners: HTTP 400: bad port'))).toEqual({
      regarding: POD,
      type: 'Warning',
      reason: 'PushFailed',
      action: 'Push',
      note: "pushing the mesh's config to its l7mp proxy failed: POST /api/v1/listeners: HTTP 400: bad port",
    });
    expect(proxyEvent('syncing', state('unreachable', 'connect ECONNREFUSED'))).toMatchObject({
      type: 'Warning',
      reason: 'ProxyUnreachable',
    });
    expect(proxyEvent('unreachable', state('synced'))).toMatchObject({ type: 'Normal', reason: 'Synced' });
  });

  it('no event for the same phase, an ordinary sync, or an id that names no Pod', () => {
    expect(proxyEvent('failed', state('failed', 'x'))).toBeUndefined();
    expect(proxyEvent(undefined, state('synced'))).toBeUndefined();
    expect(proxyEvent('syncing', state('synced'))).toBeUndefined();
    expect(proxyEvent(undefined, { id: 'no-namespace', phase: 'failed' })).toBeUndefined();
  });
});

describe('truncateNote', () => {
  it('keeps a note within 1 KiB on a character boundary', () => {
    expect(truncateNote('short')).toBe('short');
    const long = 'é'.repeat(1000);
    const cut = truncateNote(long);
    expect(new TextEncoder().encode(cut).length).toBeLessThanOrEqual(MAX_NOTE_BYTES);
    expect(cut.endsWith('é…')).toBe(true);
  });
});
