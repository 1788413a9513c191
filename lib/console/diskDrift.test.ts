import { describe, expect, it } from 'vitest';
import { diskMoved, DiskState, diskSummary, RebaseOnDiskBody } from './diskDrift';

describe('diskDrift', () => {
  it('the disk moved when its hash is not the base hash', () => {
    expect(diskMoved({ baseHash: 'a', diskHash: 'a' })).toBe(false);
    expect(diskMoved({ baseHash: 'a', diskHash: 'b' })).toBe(true);
  });

  it('a rebase body takes ours, theirs or a text per conflict, and nothing else', () => {
    expect(
      RebaseOnDiskBody.safeParse({
        revision: 3,
        choices: { 'VirtualService/default/a': 'theirs', 'b.yaml': { text: 'x: 1\n' } },
      }).success,
    ).toBe(true);
    expect(RebaseOnDiskBody.safeParse({ revision: 3, choices: { k: 'mine' } }).success).toBe(false);
    expect(RebaseOnDiskBody.safeParse({ revision: -1 }).success).toBe(false);
    expect(RebaseOnDiskBody.safeParse({ revision: 1, force: true }).success).toBe(false);
  });

  it('a disk state without a kept base is valid; paths outside the directory are not', () => {
    const disk = { files: { 'mesh.yaml': 'a: 1\n' }, layout: {} };
    expect(DiskState.safeParse({ baseHash: 'a', diskHash: 'b', disk }).success).toBe(true);
    expect(
      DiskState.safeParse({
        baseHash: 'a',
        diskHash: 'b',
        disk: { files: { '/etc/x.yaml': '' }, layout: {} },
      }).success,
    ).toBe(false);
  });
});

describe('diskSummary', () => {
  it('lists the files changed on disk since the base, the layout file included', () => {
    const base = { files: { 'a.yaml': 'a: 1\n', 'b.yaml': 'b: 1\n' }, layout: {} };
    const disk = {
      files: { 'a.yaml': 'a: 2\n', 'b.yaml': 'b: 1\n', 'c.yaml': 'c: 1\n' },
      layout: { n: { x: 1, y: 2 } },
    };
    expect(diskSummary({ baseHash: 'h1', diskHash: 'h2', disk, base })).toEqual({
      baseHash: 'h1',
      diskHash: 'h2',
      changed: ['.meshdeck-layout.json', 'a.yaml', 'c.yaml'],
      hasBase: true,
    });
  });

  it('without a kept base nothing is known to have changed', () => {
    const disk = { files: { 'a.yaml': 'a: 2\n' }, layout: {} };
    expect(diskSummary({ baseHash: 'h1', diskHash: 'h2', disk })).toEqual({
      baseHash: 'h1',
      diskHash: 'h2',
      changed: [],
      hasBase: false,
    });
  });
});
