import { describe, expect, it } from 'vitest';
import { matchPredicate } from './matchPredicate';

// The gateway-vsvc filter of seed Example 1: "access is allowed only from 10.0.0.1 on ports 9000-9099".
const example1 = {
  op: 'and',
  apply: [
    { op: 'test', path: '/IP/src_addr', value: '10.0.0.1' },
    { op: 'more', path: '/UDP/src_port', value: 8999 },
    { op: 'less', path: '/UDP/src_port', value: 9100 },
  ],
};
const meta = (addr: string, port: number) => ({ IP: { src_addr: addr }, UDP: { src_port: port } });

describe('matchPredicate', () => {
  it('evaluates the seed Example 1 filter', () => {
    expect(matchPredicate(example1, meta('10.0.0.1', 9050))).toBe(true);
    expect(matchPredicate(example1, meta('10.0.0.1', 9150))).toBe(false);
    expect(matchPredicate(example1, meta('10.0.0.2', 9050))).toBe(false);
  });
  it('an empty match always matches; unknown ops are unknown, not guessed', () => {
    expect(matchPredicate(undefined, {})).toBe(true);
    expect(matchPredicate({}, {})).toBe(true);
    expect(matchPredicate({ op: 'matches', path: '/x', value: '.*' }, { x: 'a' })).toBe('unknown');
    expect(
      matchPredicate(
        {
          op: 'or',
          apply: [
            { op: 'matches', path: '/x' },
            { op: 'test', path: '/x', value: 'a' },
          ],
        },
        { x: 'a' },
      ),
    ).toBe(true);
    expect(matchPredicate({ op: 'not', apply: [{ op: 'test', path: '/x', value: 'a' }] }, { x: 'b' })).toBe(
      true,
    );
  });
});
