import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkSplitSum, distributeEvenly, moveWeight, percentages, shareOff } from './splitWeights';

describe('split sliders', () => {
  it('moving one weight takes the difference from the unlocked others in proportion', () => {
    expect(moveWeight([80, 20], [false, false], 0, 70)).toEqual([70, 30]);
    expect(moveWeight([50, 30, 20], [false, false, false], 0, 80)).toEqual([80, 12, 8]);
    expect(moveWeight([50, 30, 20], [false, true, false], 0, 60)).toEqual([60, 30, 10]);
  });

  it('a locked entry keeps its weight and bounds how far the others can go', () => {
    expect(moveWeight([50, 30, 20], [false, true, false], 0, 95)).toEqual([70, 30, 0]);
    // Everything else locked: the moved entry cannot leave 100 - locked.
    expect(moveWeight([50, 50], [false, true], 0, 10)).toEqual([50, 50]);
  });

  it('evenly distributes what the locked entries leave', () => {
    expect(distributeEvenly([80, 20], [false, false])).toEqual([50, 50]);
    expect(distributeEvenly([10, 40, 50], [false, true, false])).toEqual([30, 40, 30]);
    expect(distributeEvenly([1, 1, 1], [false, false, false])).toEqual([34, 33, 33]);
  });

  it('keeps the total at 100 for any move (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ w: fc.nat(100), locked: fc.boolean() }), { minLength: 2, maxLength: 6 }),
        fc.nat(5),
        fc.integer({ min: -50, max: 150 }),
        (entries, idx, value) => {
          const start = distributeEvenly(
            entries.map((e) => e.w),
            entries.map(() => false),
          );
          const locked = entries.map((e) => e.locked);
          const i = idx % entries.length;
          const next = moveWeight(start, locked, i, value);
          expect(next.reduce((a, b) => a + b, 0)).toBe(100);
          next.forEach((w, j) => {
            expect(Number.isInteger(w) && w >= 0).toBe(true);
            if (locked[j] && j !== i) expect(w).toBe(start[j]);
          });
        },
      ),
    );
  });

  it('checks the sum and explains the shares otherwise', () => {
    expect(checkSplitSum([70, 30])).toBeNull();
    expect(checkSplitSum([3, 1])).toBe(
      'weights add up to 4, not 100; the engine normalises them, so shares are 75% / 25%',
    );
    expect(checkSplitSum([0, 0])).toBe('all weights are 0: no traffic can be split');
    expect(percentages([3, 1])).toEqual([75, 25]);
  });
});

describe('shareOff', () => {
  it('flags an observed share further from the configured one than chance allows', () => {
    // 80 % of 100 calls: sd 4, so 64..96 is chance (16 points); 60 is off, 70 and 90 are not.
    expect(shareOff(80, 80, 100)).toBe(false);
    expect(shareOff(80, 70, 100)).toBe(false);
    expect(shareOff(80, 90, 100)).toBe(false);
    expect(shareOff(80, 60, 100)).toBe(true);
    expect(shareOff(20, 40, 100)).toBe(true);
    // Many calls: 4 sd shrinks below 5 points, which still holds (a 2-point miss over 10,000 calls is no alarm).
    expect(shareOff(50, 5_200, 10_000)).toBe(false);
    expect(shareOff(50, 5_600, 10_000)).toBe(true);
  });

  it('says nothing over too few calls; a share of 0 is off once more than 5 % of the calls go there', () => {
    expect(shareOff(80, 0, 19)).toBe(false);
    expect(shareOff(0, 0, 50)).toBe(false);
    expect(shareOff(0, 5, 50)).toBe(true);
    expect(shareOff(100, 50, 50)).toBe(false);
    expect(shareOff(Number.NaN, 3, 50)).toBe(false);
  });
});
