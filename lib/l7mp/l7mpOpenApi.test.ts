import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { L7mpConfig, L7mpOperation } from '@/lib/model/l7mp';
import { validateL7mpRequest } from '../../test/l7mpOpenApi';
import { diffL7mp } from './diffL7mp';
import { l7mpConfigArbitrary, l7mpConfigPairArbitrary } from './l7mpArbitraries.testutil';
import example1Gateway from './testdata/example1-gateway.json';
import example1Transcoder from './testdata/example1-transcoder.json';
import loadbalancingVirtual from './testdata/loadbalancing-virtual.json';
import namedRouteOptions from './testdata/named-route-options.json';
import staleReferences from './testdata/stale-references.json';

const empty: L7mpConfig = { listeners: [], routes: [], clusters: [] };
const post = (kind: L7mpOperation['kind'], body: unknown): L7mpOperation => ({
  method: 'POST',
  path: '/api/v1/x',
  body,
  kind,
  name: 'x',
  reason: 'test',
});

describe('request bodies against the l7mp 0.5.7 OpenAPI schema', () => {
  it('accepts every body pushed for the real-proxy fixtures', () => {
    for (const f of [
      example1Gateway,
      example1Transcoder,
      loadbalancingVirtual,
      namedRouteOptions,
      staleReferences,
    ]) {
      const pushed = (f as unknown as { pushed: L7mpConfig }).pushed;
      const ops = diffL7mp(empty, pushed);
      expect(ops.length).toBeGreaterThan(0);
      for (const op of ops) expect(validateL7mpRequest(op)).toEqual([]);
    }
  });

  it('accepts every body diffL7mp generates', () => {
    fc.assert(
      fc.property(l7mpConfigPairArbitrary, ([a, b]) => {
        for (const op of diffL7mp(a, b)) expect([op.path, validateL7mpRequest(op)]).toEqual([op.path, []]);
      }),
      { numRuns: 200 },
    );
    fc.assert(
      fc.property(l7mpConfigArbitrary, (c) => {
        for (const op of diffL7mp(empty, c)) expect(validateL7mpRequest(op)).toEqual([]);
      }),
      { numRuns: 200 },
    );
  });

  it('accepts the endpoint API body, including the top-level weight l7mp reads', () => {
    expect(
      validateL7mpRequest(
        post('endpoint', { endpoint: { name: 'e', spec: { address: '127.0.0.1' }, weight: 80 } }),
      ),
    ).toEqual([]);
  });

  it('rejects listener rules given as a number', () => {
    const errors = validateL7mpRequest(
      post('listener', { listener: { name: 'l', spec: { protocol: 'UDP', port: 9001 }, rules: 3 } }),
    );
    expect(errors.some((e) => e.startsWith('/listener/rules'))).toBe(true);
  });

  it('rejects a cluster spec with protocol FOO', () => {
    const errors = validateL7mpRequest(
      post('cluster', { cluster: { name: 'c', spec: { protocol: 'FOO', port: 1 } } }),
    );
    expect(errors).toEqual(['/cluster/spec value of tag "protocol" must be in oneOf']);
  });

  it('rejects other bodies that strict mode answers with 422', () => {
    expect(validateL7mpRequest(post('cluster', { name: 'c', spec: { protocol: 'UDP', port: 1 } }))).toEqual([
      "/ must have required property 'cluster'",
    ]);
    expect(
      validateL7mpRequest(post('listener', { listener: { name: 'l', spec: { protocol: 'UDP', port: 1 } } })),
    ).toEqual(["/listener must have required property 'rules'"]);
    expect(
      validateL7mpRequest(post('cluster', { cluster: { name: 'c', spec: { protocol: 'UDP' } } })),
    ).toEqual(["/cluster/spec must have required property 'port'"]);
    expect(validateL7mpRequest(post('endpoint', { endpoint: { name: 'e', spec: {} } }))).toEqual([
      "/endpoint/spec must have required property 'address'",
    ]);
    expect(
      validateL7mpRequest(
        post('route', { route: { name: 'r', destination: 'c', retry: { num_retries: 3 } } }),
      ),
    ).toEqual(["/route/retry must have required property 'retry_on'"]);
    expect(validateL7mpRequest(post('rule', { rule: {} }))).toEqual([
      'no OpenAPI request schema for a POST of kind rule',
    ]);
  });

  it('expects no body on deletes', () => {
    const del: L7mpOperation = {
      method: 'DELETE',
      path: '/api/v1/clusters/c',
      kind: 'cluster',
      name: 'c',
      reason: 'x',
    };
    expect(validateL7mpRequest(del)).toEqual([]);
    expect(validateL7mpRequest({ ...del, body: {} })).toEqual(['DELETE must not have a body']);
  });
});
