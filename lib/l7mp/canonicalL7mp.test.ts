import { describe, expect, it } from 'vitest';
import type { L7mpConfig } from '@/lib/model/l7mp';
import fc from 'fast-check';
import {
  canonicalL7mpCluster,
  canonicalL7mpConfig,
  canonicalL7mpEndpoint,
  canonicalL7mpListener,
  canonicalL7mpLoadBalancer,
  canonicalL7mpRoute,
  canonicalL7mpRule,
  l7mpProtocolTakesEndpoints,
  sameL7mp,
} from './canonicalL7mp';

const udp = { protocol: 'UDP', port: 9999 };

describe('canonicalL7mpLoadBalancer', () => {
  it('defaults to Trivial', () => {
    expect(canonicalL7mpLoadBalancer(undefined)).toEqual({ policy: 'Trivial' });
    expect(canonicalL7mpLoadBalancer({ policy: 'Trivial' })).toEqual({ policy: 'Trivial' });
  });
  it('treats ConsistentHash as HashRing and a missing key as <RANDOM>', () => {
    expect(canonicalL7mpLoadBalancer({ policy: 'ConsistentHash' })).toEqual({
      policy: 'HashRing',
      key: '<RANDOM>',
    });
    expect(canonicalL7mpLoadBalancer({ policy: 'HashRing', key: '<RANDOM>' })).toEqual({
      policy: 'HashRing',
      key: '<RANDOM>',
    });
    expect(canonicalL7mpLoadBalancer({ policy: 'ConsistentHash', key: '/labels/id' })).toEqual({
      policy: 'HashRing',
      key: '/labels/id',
    });
  });
  it('drops a key that only HashRing reads', () => {
    expect(canonicalL7mpLoadBalancer({ policy: 'Trivial', key: '/x' })).toEqual({ policy: 'Trivial' });
  });
});

describe('canonicalL7mpEndpoint', () => {
  it('defaults the weight to 1 (and, like l7mp 0.5.7, turns 0 into 1)', () => {
    expect(canonicalL7mpEndpoint({ name: 'e', spec: { address: 'a' } })).toEqual({
      name: 'e',
      spec: { address: 'a' },
      weight: 1,
    });
    expect(canonicalL7mpEndpoint({ name: 'e', spec: { address: 'a' }, weight: 0 }).weight).toBe(1);
    expect(canonicalL7mpEndpoint({ name: 'e', spec: { address: 'a' }, weight: 80 }).weight).toBe(80);
  });
});

describe('canonicalL7mpCluster', () => {
  it('fills in the load balancer and sorts endpoints by name', () => {
    const c = canonicalL7mpCluster({
      name: 'c',
      spec: udp,
      endpoints: [
        { name: 'b', spec: { address: '2' } },
        { name: 'a', spec: { address: '1' }, weight: 3 },
      ],
    });
    expect(c).toEqual({
      name: 'c',
      spec: udp,
      endpoints: [
        { name: 'a', spec: { address: '1' }, weight: 3 },
        { name: 'b', spec: { address: '2' }, weight: 1 },
      ],
      loadbalancer: { policy: 'Trivial' },
    });
    expect(canonicalL7mpCluster({ name: 'c', spec: udp }).endpoints).toEqual([]);
  });

  it('sorts keys deeply so that key order never matters', () => {
    const a = canonicalL7mpCluster({
      name: 'c',
      spec: { port: 1, protocol: 'UDP', bind: { port: 2, address: 'x' } },
    });
    expect(JSON.stringify(a.spec)).toBe('{"bind":{"address":"x","port":2},"port":1,"protocol":"UDP"}');
    expect(Object.keys(a)).toEqual(['endpoints', 'loadbalancer', 'name', 'spec']);
  });

  it("applies the virtual clusters' rewrites: forced policy, hidden endpoints, rebuilt spec", () => {
    expect(l7mpProtocolTakesEndpoints('Sync')).toBe(false);
    expect(l7mpProtocolTakesEndpoints('Prometheus')).toBe(false);
    expect(l7mpProtocolTakesEndpoints('UDP')).toBe(true);
    expect(l7mpProtocolTakesEndpoints('JSONSocket')).toBe(true);
    expect(
      canonicalL7mpCluster({
        name: 's',
        spec: { protocol: 'Sync', query: '/q', junk: 1 },
        loadbalancer: { policy: 'ConsistentHash' },
        endpoints: [{ name: 'e', spec: { address: 'a' } }],
      }),
    ).toEqual({
      name: 's',
      spec: { protocol: 'Sync', query: '/q' },
      endpoints: [],
      loadbalancer: { policy: 'None' },
    });
    expect(canonicalL7mpCluster({ name: 'e', spec: { protocol: 'Echo' } }).loadbalancer).toEqual({
      policy: 'Trivial',
    });
    expect(canonicalL7mpCluster({ name: 'l', spec: { protocol: 'Logger' } }).spec).toEqual({
      protocol: 'Logger',
      log_file: '-',
      log_prefix: '',
    });
  });
});

describe('canonicalL7mpRoute', () => {
  it('defaults ingress, egress and retry', () => {
    expect(canonicalL7mpRoute({ name: 'r', destination: 'c' })).toEqual({
      name: 'r',
      destination: 'c',
      ingress: [],
      egress: [],
      retry: { retry_on: 'never', num_retries: 1, timeout: 2000 },
    });
  });
  it('keeps the order of ingress and egress', () => {
    const r = canonicalL7mpRoute({ name: 'r', destination: 'c', ingress: ['z', 'a'], egress: ['y', 'b'] });
    expect(r.ingress).toEqual(['z', 'a']);
    expect(r.egress).toEqual(['y', 'b']);
    expect(
      sameL7mp(
        r,
        canonicalL7mpRoute({ name: 'r', destination: 'c', ingress: ['a', 'z'], egress: ['y', 'b'] }),
      ),
    ).toBe(false);
  });
});

describe('canonicalL7mpRule', () => {
  it('makes the wildcard match and the empty rewrite explicit', () => {
    expect(canonicalL7mpRule({ action: { route: 'r' } })).toEqual({
      match: { match: '*' },
      action: { rewrite: [], route: 'r' },
    });
    expect(
      sameL7mp(
        canonicalL7mpRule({ action: { route: 'r' } }),
        canonicalL7mpRule({ match: { match: '*' }, action: { rewrite: [], route: 'r' } }),
      ),
    ).toBe(true);
  });
  it('canonicalises an inline route body', () => {
    expect(canonicalL7mpRule({ action: { route: { destination: 'c' } } }).action.route).toEqual({
      destination: 'c',
      ingress: [],
      egress: [],
      retry: { retry_on: 'never', num_retries: 1, timeout: 2000 },
    });
  });
});

describe('canonicalL7mpListener', () => {
  it('defaults options to {track: 0}, keeps given options verbatim and ignores live', () => {
    const l = canonicalL7mpListener({
      name: 'l',
      spec: udp,
      rules: [],
      live: { rulelist: 'l-RuleList-0', rules: [], routes: [] },
    });
    expect(l).toEqual({ name: 'l', spec: udp, rules: [], options: { track: 0 } });
    expect(
      canonicalL7mpListener({ name: 'l', spec: udp, rules: [], options: { removeOrphanSessions: true } })
        .options,
    ).toEqual({
      removeOrphanSessions: true,
    });
  });
  it('keeps rule order', () => {
    const rules = [{ action: { route: 'b' } }, { action: { route: 'a' } }];
    const l = canonicalL7mpListener({ name: 'l', spec: udp, rules });
    expect(l.rules.map((r) => r.action.route)).toEqual(['b', 'a']);
  });
});

describe('canonicalL7mpConfig', () => {
  it('sorts every list by name', () => {
    const config: L7mpConfig = {
      listeners: [
        { name: 'l2', spec: udp, rules: [] },
        { name: 'l1', spec: udp, rules: [] },
      ],
      routes: [
        { name: 'r2', destination: 'c' },
        { name: 'r1', destination: 'c' },
      ],
      clusters: [
        { name: 'c2', spec: udp },
        { name: 'c1', spec: udp },
      ],
    };
    const c = canonicalL7mpConfig(config);
    expect(c.listeners.map((x) => x.name)).toEqual(['l1', 'l2']);
    expect(c.routes.map((x) => x.name)).toEqual(['r1', 'r2']);
    expect(c.clusters.map((x) => x.name)).toEqual(['c1', 'c2']);
    // Pure: the input is untouched.
    expect(config.listeners[0]?.name).toBe('l2');
  });
});

/** The definition sameL7mp had before it compared in place: JSON of key-sorted copies. */
function sameAsSortedJson(a: unknown, b: unknown): boolean {
  const sorted = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sorted)
      : v !== null && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
              .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
          )
        : v;
  return JSON.stringify(sorted(a)) === JSON.stringify(sorted(b));
}

/** The same value with every object's keys in reverse order. */
function reversedKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(reversedKeys);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(
    Object.keys(v)
      .reverse()
      .map((k) => [k, reversedKeys((v as Record<string, unknown>)[k])]),
  );
}

describe('sameL7mp', () => {
  const value = fc.anything({
    maxDepth: 3,
    key: fc.constantFrom('a', 'b', 'c', 'name', 'spec'),
    values: [
      fc.constant(undefined),
      fc.constant(null),
      fc.constantFrom(0, -0, 1, NaN, Infinity),
      fc.boolean(),
      fc.constantFrom('', 'x', '0', 'null'),
    ],
  });

  it('agrees with comparing the JSON of key-sorted copies', () => {
    fc.assert(
      fc.property(value, value, (a, b) => {
        expect(sameL7mp(a, b)).toBe(sameAsSortedJson(a, b));
        expect(sameL7mp(a, reversedKeys(a))).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('tells apart what JSON tells apart, and only that', () => {
    expect(sameL7mp({ a: 1, b: undefined }, { a: 1 })).toBe(true);
    expect(sameL7mp([undefined], [null])).toBe(true);
    expect(sameL7mp({ a: NaN }, { a: null })).toBe(true);
    expect(sameL7mp(undefined, null)).toBe(false);
    expect(sameL7mp({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(sameL7mp({ a: [1, 2] }, { a: [2, 1] })).toBe(false);
    expect(sameL7mp({ a: '1' }, { a: 1 })).toBe(false);
    expect(sameL7mp([], {})).toBe(false);
    expect(sameL7mp([1, null], [1])).toBe(false);
    expect(sameL7mp([1], [1, undefined])).toBe(false);
  });
});
