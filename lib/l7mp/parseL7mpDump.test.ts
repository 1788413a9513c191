import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { L7mpConfig } from '@/lib/model/l7mp';
import { applyL7mpOps } from './applyL7mpOps';
import { canonicalL7mpConfig } from './canonicalL7mp';
import { diffL7mp } from './diffL7mp';
import { parseL7mpDump, type L7mpDump } from './parseL7mpDump';
import example1Gateway from './testdata/example1-gateway.json';
import example1Transcoder from './testdata/example1-transcoder.json';
import loadbalancingVirtual from './testdata/loadbalancing-virtual.json';
import namedRouteOptions from './testdata/named-route-options.json';
import staleReferences from './testdata/stale-references.json';
import staleRule from './testdata/stale-rule.json';
import staleRulelist from './testdata/stale-rulelist.json';

/** A capture from a real l7mp 0.5.7 proxy (see testdata/README.md). */
interface Fixture {
  description: string;
  /** What we pushed (with diffL7mp(empty, pushed)). */
  pushed: L7mpConfig;
  /** What the dump should read back as, when something was changed behind our back after the push. */
  expected?: L7mpConfig;
  dump: L7mpDump;
}
const fixture = (json: unknown) => json as Fixture;

const clean: Record<string, Fixture> = {
  'example1-gateway': fixture(example1Gateway),
  'example1-transcoder': fixture(example1Transcoder),
  'named-route-options': fixture(namedRouteOptions),
  'loadbalancing-virtual': fixture(loadbalancingVirtual),
  'stale-references': fixture(staleReferences),
};

describe('parseL7mpDump on real l7mp 0.5.7 dumps', () => {
  for (const [name, f] of Object.entries(clean)) {
    describe(name, () => {
      const { config, ignored } = parseL7mpDump(f.dump);
      const want = f.expected ?? f.pushed;

      it('reads back as what we pushed (canonically), ignoring nothing', () => {
        expect(ignored).toEqual([]);
        expect(canonicalL7mpConfig(config)).toEqual(canonicalL7mpConfig(want));
      });

      it('needs no calls to become what we pushed', () => {
        expect(diffL7mp(config, want)).toEqual([]);
      });

      it("leaves out the controller's own listener, cluster and route", () => {
        const names = [...config.listeners, ...config.routes, ...config.clusters].map((x) => x.name);
        expect(names).not.toContain('controller-listener');
        expect(names).not.toContain('l7mp-controller');
        expect(names.some((n) => n.startsWith('controller-listener-'))).toBe(false);
      });

      it('records the auto-generated rulelist, rules and inline routes of each listener', () => {
        for (const l of config.listeners) {
          const inline = l.rules.filter((r) => typeof r.action.route !== 'string').length;
          expect(l.live?.rulelist).toMatch(
            new RegExp(`^${l.name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}-RuleList-\\d+$`),
          );
          expect(l.live?.rules).toHaveLength(l.rules.length);
          for (const rule of l.live?.rules ?? [])
            expect(rule.startsWith(`${l.live?.rulelist}-Rule-`)).toBe(true);
          expect(l.live?.routes).toHaveLength(inline);
        }
      });

      it('removing everything leaves nothing (simulated)', () => {
        const empty: L7mpConfig = { listeners: [], routes: [], clusters: [] };
        const { config: after, errors } = applyL7mpOps(config, diffL7mp(config, empty));
        expect(errors).toEqual([]);
        expect(after).toEqual(empty);
      });
    });
  }

  it('reads the Example 1 gateway as its inline route to named clusters', () => {
    const { config } = parseL7mpDump(fixture(example1Gateway).dump);
    expect(config.routes).toEqual([]);
    expect(config.listeners[0]?.rules[0]?.action.route).toEqual({
      destination: 'worker-svc',
      ingress: ['transcoder-vsvc'],
      egress: [],
      retry: { retry_on: 'never', num_retries: 1, timeout: 2000 },
    });
  });

  it('reads named route references as names, inline routes as bodies, and options verbatim', () => {
    const { config } = parseL7mpDump(fixture(namedRouteOptions).dump);
    const userA = config.listeners.find((l) => l.name === 'default/user-a@vsvc');
    expect(userA?.options).toEqual({ removeOrphanSessions: true });
    expect(userA?.rules[0]).toEqual({
      match: { op: 'test', path: '/IP/src_addr', value: '127.0.0.11' },
      action: { rewrite: [{ path: '/labels/session_id', value: '1' }], route: 'default/media-route' },
    });
    expect(userA?.rules[1]?.action.route).toMatchObject({
      destination: 'default/media@v1:udp',
      retry: { retry_on: 'connect-failure', num_retries: 2, timeout: 1000 },
    });
    expect(config.listeners.find((l) => l.name === 'tracked')?.options).toEqual({
      track: 5,
      removeOrphanSessions: false,
    });
    expect(config.routes.map((r) => r.name)).toEqual(['default/media-route']);
    // And a removeOrphanSessions listener read back this way is deleted recursively.
    const ops = diffL7mp(config, { ...config, listeners: [] });
    expect(ops.find((op) => op.name === 'default/user-a@vsvc')?.path).toBe(
      '/api/v1/listeners/default%2Fuser-a%40vsvc?recursive=true',
    );
  });

  it("drops the virtual clusters' fake endpoint and forced policy, and the <RANDOM> key", () => {
    const { config } = parseL7mpDump(fixture(loadbalancingVirtual).dump);
    const byName = new Map(config.clusters.map((c) => [c.name, c]));
    expect(byName.get('sync-target')).toEqual({
      name: 'sync-target',
      spec: { protocol: 'Sync', query: '/JSONSocket/labels/session_id' },
      endpoints: [],
    });
    expect(byName.get('canary')?.loadbalancer).toEqual({ policy: 'HashRing' });
    expect(byName.get('canary')?.endpoints?.map((e) => e.weight)).toEqual([80, 20]);
    expect(byName.get('worker-target')?.loadbalancer).toEqual({
      policy: 'HashRing',
      key: '/labels/session_id',
    });
  });

  it('reads dangling references ("<name>:<STALE>") as the plain name', () => {
    const { config } = parseL7mpDump(fixture(staleReferences).dump);
    const rules = config.listeners[0]?.rules ?? [];
    expect(rules[0]?.action.route).toMatchObject({
      destination: 'gone-cluster',
      ingress: ['gone-cluster', 'kept-cluster'],
    });
    expect(rules[1]?.action.route).toBe('missing-route');
    expect(rules[2]?.action.route).toBe('stale-route');
    expect(config.routes).toEqual([
      {
        name: 'stale-route',
        destination: 'gone-cluster',
        ingress: ['kept-cluster'],
        egress: [],
        retry: { retry_on: 'never', num_retries: 1, timeout: 2000 },
      },
    ]);
    expect(config.clusters.map((c) => c.name)).toEqual(['kept-cluster']);
  });

  it('skips a deleted rule ("<rule>:<STALE>" in the rulelist), so the listener gets re-added', () => {
    const f = fixture(staleRule);
    const { config, ignored } = parseL7mpDump(f.dump);
    expect(ignored).toEqual([
      'listener stale-rule-l: rule stale-rule-l-RuleList-7-Rule-10 no longer exists (stale-rule-l-RuleList-7-Rule-10:<STALE>)',
    ]);
    expect(config.listeners[0]?.rules).toHaveLength(1);
    expect(config.listeners[0]?.live).toEqual({
      rulelist: 'stale-rule-l-RuleList-7',
      rules: ['stale-rule-l-RuleList-7-Rule-11'],
      routes: ['stale-rule-l-RuleList-7-Rule-11-Route-7'],
    });
    // The deleted rule's inline route is left over and now looks like any route: it gets removed.
    expect(config.routes.map((r) => r.name)).toEqual(['stale-rule-l-RuleList-7-Rule-10-Route-6']);
    expect(diffL7mp(config, f.pushed).map((op) => `${op.method} ${op.kind} ${op.name}`)).toEqual([
      'DELETE listener stale-rule-l',
      'DELETE rulelist stale-rule-l-RuleList-7',
      'DELETE rule stale-rule-l-RuleList-7-Rule-11',
      'DELETE route stale-rule-l-RuleList-7-Rule-11-Route-7',
      'DELETE route stale-rule-l-RuleList-7-Rule-10-Route-6',
      'POST listener stale-rule-l',
    ]);
  });

  it('reads a listener whose rulelist is gone as having no rules', () => {
    const f = fixture(staleRulelist);
    const { config, ignored } = parseL7mpDump(f.dump);
    expect(ignored).toEqual([
      'listener stale-rulelist-l: rules "stale-rulelist-l-RuleList-8:<STALE>" not expanded, read as no rules',
    ]);
    expect(config.listeners[0]?.rules).toEqual([]);
    expect(config.listeners[0]?.live).toEqual({ rules: [], routes: [] });
    expect(diffL7mp(config, f.pushed).map((op) => `${op.method} ${op.kind} ${op.name}`)).toEqual([
      'DELETE listener stale-rulelist-l',
      'DELETE route stale-rulelist-l-RuleList-8-Rule-12-Route-8',
      'POST listener stale-rulelist-l',
    ]);
  });
});

describe('parseL7mpDump on odd input', () => {
  it('never throws, whatever it is given', () => {
    fc.assert(
      fc.property(fc.anything(), fc.anything(), fc.anything(), (listeners, clusters, routes) => {
        const { config, ignored } = parseL7mpDump({ listeners, clusters, routes });
        expect(Array.isArray(config.listeners) && Array.isArray(ignored)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('never throws on near-miss shapes', () => {
    const item = fc.oneof(
      fc.anything(),
      fc.record({
        name: fc.oneof(fc.string(), fc.integer()),
        spec: fc.anything(),
        rules: fc.anything(),
        endpoints: fc.anything(),
        destination: fc.anything(),
        loadbalancer: fc.anything(),
      }),
      fc.record({
        name: fc.constantFrom('l', 'c'),
        spec: fc.record({ protocol: fc.constantFrom('UDP', 'Sync', 'L7mpController') }),
        rules: fc.array(
          fc.oneof(
            fc.string(),
            fc.record({
              name: fc.string(),
              match: fc.anything(),
              action: fc.record({ route: fc.anything(), rewrite: fc.anything(), apply: fc.anything() }),
            }),
          ),
        ),
        endpoints: fc.oneof(fc.integer(), fc.array(fc.anything())),
        destination: fc.oneof(fc.string(), fc.record({ name: fc.string() })),
        ingress: fc.anything(),
        retry: fc.anything(),
        options: fc.anything(),
      }),
    );
    fc.assert(
      fc.property(
        fc.array(item, { maxLength: 4 }),
        fc.array(item, { maxLength: 4 }),
        fc.array(item, { maxLength: 4 }),
        (listeners, clusters, routes) => {
          parseL7mpDump({ listeners, clusters, routes });
        },
      ),
      { numRuns: 200 },
    );
  });

  it('lists what it skipped', () => {
    const { config, ignored } = parseL7mpDump({
      listeners: [
        42,
        {
          name: 'l',
          spec: { protocol: 'UDP', port: 1 },
          rules: [{ name: 'r', action: { route: 7 } }, 'gone:<STALE>'],
        },
      ],
      clusters: 'nope',
      routes: [
        { name: 'r', destination: { no: 'name' } },
        { name: 'r2', destination: 'c', retry: { retry_on: 'always', num_retries: 3 } },
      ],
    });
    expect(config.listeners).toEqual([
      { name: 'l', spec: { protocol: 'UDP', port: 1 }, rules: [], live: { rules: [], routes: [] } },
    ]);
    expect(config.clusters).toEqual([]);
    expect(config.routes).toEqual([{ name: 'r2', destination: 'c', ingress: [], egress: [] }]);
    expect(ignored).toEqual([
      'clusters: expected a JSON array, got "nope"',
      'listener #0: unknown shape 42',
      'listener l, rule r: no usable route 7',
      'listener l: rule gone no longer exists (gone:<STALE>)',
      'route r: unknown route shape {"name":"r","destination":{"no":"name"}}',
      'route r2: partial retry {"retry_on":"always","num_retries":3} not representable, read as the default',
    ]);
  });

  it('notes non-recursive dumps it cannot expand', () => {
    const { config, ignored } = parseL7mpDump({
      listeners: [
        { name: 'l', spec: { protocol: 'UDP', port: 1 }, rules: 'l-RuleList-3', options: { track: 0 } },
      ],
      clusters: [
        { name: 'c', spec: { protocol: 'UDP', port: 1 }, endpoints: 2, loadbalancer: { policy: 'Trivial' } },
      ],
      routes: [],
    });
    expect(config.listeners[0]?.live).toEqual({ rulelist: 'l-RuleList-3', rules: [], routes: [] });
    expect(ignored).toEqual([
      'cluster c: 2 endpoints not expanded (use ?recursive=true)',
      'listener l: rules "l-RuleList-3" not expanded, read as no rules',
    ]);
  });

  it('recognises the controller by its cluster protocol, also behind a named route', () => {
    const controller = {
      name: 'api',
      spec: { protocol: 'L7mpController' },
      endpoints: [],
      loadbalancer: { policy: 'None' },
    };
    const { config, ignored } = parseL7mpDump({
      listeners: [
        {
          name: 'api-listener',
          spec: { protocol: 'HTTP', port: 1234 },
          rules: [
            {
              name: 'x',
              match: { match: '*' },
              action: { route: { name: 'api-route', destination: controller, ingress: [], egress: [] } },
            },
          ],
        },
      ],
      clusters: [controller],
      routes: [{ name: 'api-route', destination: 'api', ingress: [], egress: [] }],
    });
    expect(config).toEqual({ listeners: [], routes: [], clusters: [] });
    expect(ignored).toEqual([]);
  });

  it('keeps the first of duplicate names', () => {
    const { config, ignored } = parseL7mpDump({
      listeners: [],
      clusters: [
        { name: 'c', spec: { protocol: 'UDP', port: 1 } },
        { name: 'c', spec: { protocol: 'UDP', port: 2 } },
      ],
      routes: [],
    });
    expect(config.clusters).toEqual([{ name: 'c', spec: { protocol: 'UDP', port: 1 }, endpoints: [] }]);
    expect(ignored).toEqual(['cluster c: duplicate name, later copy ignored']);
  });
});
