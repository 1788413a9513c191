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
    expect(applyOutcome(noProxies)).toEqual({ tone: 'bad', text: 'no proxy state' });
    expect(applyOutcome({ ...base, proxies: { total: 0, inSync: 0, notInSync: [] } }).text).toBe(
      'no proxies',
    );
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
