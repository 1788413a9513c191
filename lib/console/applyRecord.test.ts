import { describe, expect, it } from 'vitest';
import { type ApplySummary, applyFilesText, applyOutcome, ApplyRecord } from './applyRecord';

const base: ApplySummary = {
  id: 3,
  at: '2026-11-27T10:00:00.000Z',
  user: 'alice',
  draft: 'main',
  revision: 4,
  applied: ['mesh.yaml'],
  deleted: [],
  proxies: { total: 2, inSync: 2, notInSync: [] },
};

describe('applyOutcome', () => {
  it('all proxies in sync is ok', () => {
    expect(applyOutcome(base)).toEqual({ tone: 'ok', text: '2 in sync' });
  });
  it('a push error is bad and counted', () => {
    const s = {
      ...base,
      proxies: { total: 2, inSync: 1, notInSync: [{ id: 'p', phase: 'failed', error: 'HTTP 400' }] },
    };
    expect(applyOutcome(s)).toEqual({ tone: 'bad', text: '1 of 2 failed' });
  });
  it('proxies still being configured when the apply stopped waiting are busy, otherwise bad', () => {
    const s = { ...base, proxies: { total: 3, inSync: 1, notInSync: [{ id: 'a', phase: 'pushing' }] } };
    expect(applyOutcome({ ...s, timedOut: true })).toEqual({ tone: 'busy', text: '2 of 3 not in sync yet' });
    expect(applyOutcome(s)).toEqual({ tone: 'bad', text: '2 of 3 not in sync' });
  });
  it('a failed reload is bad, whatever the proxies', () => {
    const { proxies: _p, ...noProxies } = base;
    expect(applyOutcome({ ...noProxies, error: 'boom' })).toEqual({ tone: 'bad', text: 'reload failed' });
    expect(applyOutcome({ ...noProxies, error: 'EISDIR', writeFailed: true })).toEqual({
      tone: 'bad',
      text: 'write failed partway',
    });
    expect(applyOutcome(noProxies)).toEqual({ tone: 'bad', text: 'no proxy state' });
    expect(applyOutcome({ ...base, proxies: { total: 0, inSync: 0, notInSync: [] } }).text).toBe(
      'no proxies',
    );
  });
});

describe('applyOutcome of a cluster apply', () => {
  const cluster: ApplySummary = { ...base, target: 'cluster', proxies: undefined, objects: [] };
  const o = (key: string, action: string, done: boolean) => ({ key, action, done });
  it('counts the objects written; what needed no write is not counted', () => {
    const objects = [
      o('VirtualService/default/a', 'update', true),
      o('Route/default/r', 'create', true),
      o('Target/default/t', 'unchanged', false),
      o('Pod/default/p', 'skipped', false),
    ];
    expect(applyOutcome({ ...cluster, objects })).toEqual({
      tone: 'ok',
      text: '2 objects applied to the cluster',
    });
    expect(applyOutcome({ ...cluster, objects: objects.slice(0, 1) }).text).toBe(
      '1 object applied to the cluster',
    );
    expect(applyOutcome({ ...cluster, objects: objects.slice(2) })).toEqual({
      tone: 'ok',
      text: 'nothing to apply',
    });
  });
  it('a write that did not happen is bad and counted, a delete included', () => {
    const objects = [
      o('VirtualService/default/a', 'update', true),
      o('Route/default/r', 'update', false),
      o('Target/default/t', 'delete', false),
    ];
    expect(applyOutcome({ ...cluster, objects })).toEqual({ tone: 'bad', text: '2 of 3 objects failed' });
  });
  it('a cluster record is valid without proxies and keeps its options', () => {
    const r = {
      ...cluster,
      objects: [{ ...o('Route/default/r', 'update', false), error: 'Forbidden' }],
      force: true,
    };
    const { proxies: _p, ...noProxies } = r;
    const parsed = ApplyRecord.safeParse({
      ...noProxies,
      before: { files: {}, layout: {} },
      after: { files: {}, layout: {} },
    });
    expect(parsed.success && parsed.data.objects?.[0]?.error).toBe('Forbidden');
    expect(
      ApplyRecord.safeParse({
        ...noProxies,
        target: 'moon',
        before: { files: {}, layout: {} },
        after: { files: {}, layout: {} },
      }).success,
    ).toBe(false);
  });
});

describe('applyFilesText', () => {
  it('counts written and deleted files, singular and plural', () => {
    expect(applyFilesText({ applied: ['a'], deleted: [] })).toBe('1 file written');
    expect(applyFilesText({ applied: ['a', 'b'], deleted: ['c'] })).toBe('2 files written, 1 file deleted');
    expect(applyFilesText({ applied: [], deleted: [] })).toBe('no file changed');
  });
});

describe('ApplyRecord', () => {
  it('accepts a record with both sides and refuses paths outside the mesh directory', () => {
    const ok = {
      ...base,
      before: { files: {}, layout: {} },
      after: { files: { 'a.yaml': 'x' }, layout: {} },
    };
    expect(ApplyRecord.safeParse(ok).success).toBe(true);
    const bad = { ...ok, after: { files: { '../a.yaml': 'x' }, layout: {} } };
    expect(ApplyRecord.safeParse(bad).success).toBe(false);
  });
});
