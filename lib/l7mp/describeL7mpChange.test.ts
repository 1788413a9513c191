import { describe, expect, it } from 'vitest';
import { describeL7mpChange } from './describeL7mpChange';

describe('describeL7mpChange', () => {
  it('names a changed leaf inside a field', () => {
    expect(
      describeL7mpChange(
        'listener',
        { spec: { protocol: 'UDP', port: 9001 } },
        { spec: { protocol: 'UDP', port: 9002 } },
      ),
    ).toBe('listener spec changed: port 9001 -> 9002');
  });

  it('names a changed primitive field directly', () => {
    expect(describeL7mpChange('endpoint', { name: 'e', weight: 80 }, { name: 'e', weight: 50 })).toBe(
      'endpoint weight 80 -> 50',
    );
  });

  it('lists several fields and shows missing values as (none)', () => {
    expect(
      describeL7mpChange(
        'cluster',
        { spec: { port: 1 }, loadbalancer: { policy: 'Trivial' } },
        { spec: { port: 2 }, loadbalancer: { policy: 'HashRing', key: '<RANDOM>' } },
      ),
    ).toBe(
      'cluster loadbalancer changed: key (none) -> <RANDOM>, policy Trivial -> HashRing; spec changed: port 1 -> 2',
    );
  });

  it('shows arrays of different length as whole values, and summarises many leaves', () => {
    expect(describeL7mpChange('route', { ingress: ['a'] }, { ingress: ['a', 'b'] })).toBe(
      'route ingress ["a"] -> ["a","b"]',
    );
    expect(
      describeL7mpChange(
        'x',
        { f: { a: 1, b: 1, c: 1, d: 1, e: 1 } },
        { f: { a: 2, b: 2, c: 2, d: 2, e: 2 } },
      ),
    ).toBe('x f changed: a 1 -> 2, b 1 -> 2, c 1 -> 2, and 2 more');
  });

  it('truncates long values', () => {
    const long = 'v'.repeat(100);
    const text = describeL7mpChange('route', { destination: 'a' }, { destination: long });
    expect(text.length).toBeLessThan(90);
    expect(text.endsWith('…')).toBe(true);
  });

  it('says when nothing changed', () => {
    expect(describeL7mpChange('route', { a: 1 }, { a: 1 })).toBe('route unchanged');
  });
});
