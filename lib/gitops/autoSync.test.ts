import { describe, expect, it } from 'vitest';
import {
  AutoSyncPolicy,
  changedPolicy,
  holdReason,
  isAutoSyncOn,
  outOfSyncKeys,
  policyText,
  samePolicy,
  type SyncAttempt,
  syncDecision,
  SyncPolicyChange,
} from './autoSync';
import type { SyncEntry, SyncState } from './liveSync';

const entry = (key: string, state: SyncState): SyncEntry => {
  const [kind, namespace, name] = key.split('/') as [string, string, string];
  return { key, kind, namespace, name, state };
};

const C1 = 'c1'.repeat(20);
const C2 = 'c2'.repeat(20);
const entries = [
  entry('Route/default/a', 'modified'),
  entry('Target/default/t', 'missing'),
  entry('VirtualService/default/v', 'extra'),
  entry('Service/default/s', 'synced'),
];
const cmp = (over: Partial<Parameters<typeof syncDecision>[0]> = {}) => ({
  commit: C2,
  entries,
  unreadable: [],
  ...over,
});
const attempt = (over: Partial<SyncAttempt>): SyncAttempt => ({
  commit: C2,
  at: '2026-11-28T00:00:00.000Z',
  trigger: 'new-commit',
  user: 'meshdeck:gitops-sync',
  result: 'synced',
  applied: [],
  deleted: [],
  prune: false,
  ...over,
});
const off = { prune: false, selfHeal: false };
const heal = { prune: false, selfHeal: true };

describe('outOfSyncKeys', () => {
  it('is the modified and missing objects, and the extra ones only with prune', () => {
    expect(outOfSyncKeys(entries, false)).toEqual(['Route/default/a', 'Target/default/t']);
    expect(outOfSyncKeys(entries, true)).toEqual([
      'Route/default/a',
      'Target/default/t',
      'VirtualService/default/v',
    ]);
  });
});

describe('syncDecision', () => {
  it('syncs a commit it has not tried, with the objects it changes', () => {
    expect(syncDecision(cmp(), off, undefined)).toEqual({
      action: 'sync',
      trigger: 'new-commit',
      keys: ['Route/default/a', 'Target/default/t'],
    });
    expect(syncDecision(cmp(), off, attempt({ commit: C1, result: 'failed' }))).toMatchObject({
      action: 'sync',
      trigger: 'new-commit',
    });
  });

  it('does nothing when what runs is what Git says, an extra object counting only with prune', () => {
    const onlyExtra = cmp({ entries: [entry('VirtualService/default/v', 'extra')] });
    expect(syncDecision(onlyExtra, off, undefined)).toEqual({ action: 'none', why: 'synced' });
    expect(syncDecision(onlyExtra, { prune: true, selfHeal: false }, undefined)).toEqual({
      action: 'sync',
      trigger: 'new-commit',
      keys: ['VirtualService/default/v'],
    });
  });

  it('decides nothing after a failed fetch: the tip may have moved', () => {
    expect(syncDecision(cmp({ fetchError: { message: 'no route to host' } }), heal, undefined)).toEqual({
      action: 'none',
      why: 'fetch-failed',
    });
  });

  it('holds while a file cannot be read (its objects are unknown)', () => {
    const d = syncDecision(
      cmp({ unreadable: [{ side: 'live', path: 'mesh.yaml', line: 3, message: 'bad indentation' }] }),
      heal,
      undefined,
    );
    expect(d).toMatchObject({ action: 'hold', why: 'unreadable' });
  });

  it('does not try a held or failed commit again', () => {
    expect(syncDecision(cmp(), heal, attempt({ result: 'held' }))).toMatchObject({
      action: 'hold',
      why: 'held-before',
    });
    expect(syncDecision(cmp(), heal, attempt({ result: 'failed' }))).toMatchObject({
      action: 'hold',
      why: 'failed-before',
    });
  });

  it('leaves a change made outside Git alone without self-heal', () => {
    expect(syncDecision(cmp(), off, attempt({ left: [] }))).toEqual({
      action: 'hold',
      why: 'no-self-heal',
      keys: ['Route/default/a', 'Target/default/t'],
    });
  });

  it('self-heals only the objects that drifted since the sync, not what it could not settle', () => {
    expect(syncDecision(cmp(), heal, attempt({ left: ['Route/default/a'] }))).toEqual({
      action: 'sync',
      trigger: 'drift',
      keys: ['Target/default/t'],
    });
    expect(
      syncDecision(cmp(), heal, attempt({ left: ['Route/default/a', 'Target/default/t'] })),
    ).toMatchObject({ action: 'hold', why: 'unsettled' });
  });
});

describe('AutoSyncPolicy', () => {
  it('defaults to neither prune nor self-heal and refuses unknown fields', () => {
    expect(AutoSyncPolicy.parse({})).toEqual({ prune: false, selfHeal: false });
    expect(AutoSyncPolicy.safeParse({ selfheal: true }).success).toBe(false);
    expect(AutoSyncPolicy.parse({ as: { user: 'ci-bot' } })).toEqual({
      prune: false,
      selfHeal: false,
      as: { user: 'ci-bot', groups: [] },
    });
  });
});

describe('turning the policy on and off (the console)', () => {
  const bot = { user: 'ci-bot', groups: ['mesh-writers'] };

  it('is on when present and not `enabled: false` (Argo CD: an absent `enabled` is on)', () => {
    expect(isAutoSyncOn(undefined)).toBe(false);
    expect(isAutoSyncOn(AutoSyncPolicy.parse({}))).toBe(true);
    expect(isAutoSyncOn(AutoSyncPolicy.parse({ enabled: true }))).toBe(true);
    expect(isAutoSyncOn(AutoSyncPolicy.parse({ enabled: false, prune: true }))).toBe(false);
  });

  it('off keeps the settings and the identity; on sets prune and self-heal and keeps the identity', () => {
    const current: AutoSyncPolicy = { prune: true, selfHeal: false, as: bot };
    expect(changedPolicy(current, null)).toEqual({ enabled: false, prune: true, selfHeal: false, as: bot });
    expect(changedPolicy(undefined, null)).toBeUndefined();
    expect(changedPolicy({ ...current, enabled: false }, { prune: false, selfHeal: true })).toEqual({
      prune: false,
      selfHeal: true,
      as: bot,
    });
    expect(changedPolicy(undefined, { prune: true, selfHeal: true })).toEqual({
      prune: true,
      selfHeal: true,
    });
  });

  it('compares policies by what they do, and says them in a few words', () => {
    const p = AutoSyncPolicy.parse({ prune: true, as: { user: 'ci-bot', groups: ['b', 'a'] } });
    expect(samePolicy(p, { ...p, enabled: true, as: { user: 'ci-bot', groups: ['a', 'b'] } })).toBe(true);
    expect(samePolicy(p, { ...p, enabled: false })).toBe(false);
    expect(samePolicy(p, { ...p, as: { user: 'other', groups: ['a', 'b'] } })).toBe(false);
    expect(samePolicy(undefined, undefined)).toBe(true);
    expect(samePolicy(undefined, { ...p, enabled: false })).toBe(false);
    expect(
      [undefined, { ...p, enabled: false }, off, p, { prune: true, selfHeal: true }].map(policyText),
    ).toEqual(['off', 'off', 'on', 'on (prune)', 'on (prune, self-heal)']);
  });

  it("takes {autoSync: {prune, selfHeal} | null} and nothing else (the identity is not the console's)", () => {
    expect(SyncPolicyChange.parse({ autoSync: null })).toEqual({ autoSync: null });
    expect(SyncPolicyChange.parse({ autoSync: { prune: true, selfHeal: false } })).toEqual({
      autoSync: { prune: true, selfHeal: false },
    });
    for (const bad of [{}, { autoSync: { prune: true } }, { autoSync: { ...heal, as: { user: 'root' } } }])
      expect(SyncPolicyChange.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
  });
});

describe('holdReason', () => {
  it('names the commit and the count', () => {
    expect(holdReason({ action: 'hold', why: 'held-before', keys: ['a', 'b'] }, C2)).toBe(
      `2 objects out of sync: ${C2.slice(0, 7)} has errors and is held until a new commit fixes them`,
    );
  });
});
