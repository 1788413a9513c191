import { describe, expect, it } from 'vitest';
import { collectionPath, conflictsOf, draftObjects, problemOf } from './clusterApply';

describe('draftObjects', () => {
  it('reads the seed dialect as canonical objects without status or bookkeeping, namespace filled in', () => {
    const { objects, problems } = draftObjects({
      'a.yaml': [
        'apiVersion: l7mp.io/MSM/v1',
        'kind: Route',
        'metadata: { name: r, resourceVersion: "3" }',
        'spec: { destination: x }',
        'status: { conditions: [] }',
      ].join('\n'),
    });
    expect(problems).toEqual([]);
    expect(objects).toEqual([
      {
        ref: {
          key: 'Route/default/r',
          apiVersion: 'msm.l7mp.io/v1',
          kind: 'Route',
          namespace: 'default',
          name: 'r',
          file: 'a.yaml',
          line: 1,
        },
        body: {
          apiVersion: 'msm.l7mp.io/v1',
          kind: 'Route',
          metadata: { name: 'r', namespace: 'default' },
          spec: { destination: 'x' },
        },
      },
    ]);
  });

  it('a duplicate and a broken file are problems that name where they are', () => {
    const route =
      'apiVersion: msm.l7mp.io/v1\nkind: Route\nmetadata: { name: r }\nspec: { destination: x }\n';
    const { objects, problems } = draftObjects({ 'a.yaml': route, 'b.yaml': route, 'c.yaml': 'a: [' });
    expect(objects).toHaveLength(1);
    expect(problems.map((p) => [p.action, p.ref.file, p.error?.message])).toEqual([
      ['error', 'c.yaml', expect.stringMatching(/^c\.yaml:1: not valid YAML/)],
      [
        'error',
        'b.yaml',
        expect.stringMatching(/Route\/default\/r is defined twice \(a\.yaml:1 and b\.yaml:1\)/),
      ],
    ]);
  });
});

describe('API server answers', () => {
  it('a 422 Status keeps its message and causes, field paths without the leading dot', () => {
    const p = problemOf({
      status: 422,
      warnings: [],
      body: {
        kind: 'Status',
        reason: 'Invalid',
        message: 'Route.msm.l7mp.io "r" is invalid: spec.destination.tcp.port: Invalid value: 70000',
        details: {
          causes: [
            {
              reason: 'FieldValueInvalid',
              message: 'Invalid value: 70000',
              field: '.spec.destination.tcp.port',
            },
          ],
        },
      },
    });
    expect(p).toEqual({
      status: 422,
      reason: 'Invalid',
      message: 'Route.msm.l7mp.io "r" is invalid: spec.destination.tcp.port: Invalid value: 70000',
      causes: [
        { field: 'spec.destination.tcp.port', reason: 'FieldValueInvalid', message: 'Invalid value: 70000' },
      ],
    });
  });

  it('a Status without causes or reason still names the field from its message', () => {
    const p = problemOf({
      status: 500,
      warnings: [],
      body: {
        message:
          'failed to create typed patch object (default/r; msm.l7mp.io/v1, Kind=Route): .spec.retry.tries: field not declared in schema',
      },
    });
    expect(p.reason).toBe('InternalError');
    expect(p.causes).toEqual([{ field: 'spec.retry.tries', message: 'field not declared in schema' }]);
  });

  it("a 409 apply conflict gives each other manager's name and field", () => {
    const c = conflictsOf({
      status: 409,
      warnings: [],
      body: {
        reason: 'Conflict',
        message:
          'Apply failed with 1 conflict: conflict with "other" using msm.l7mp.io/v1: .spec.websocket.port',
        details: {
          causes: [
            {
              reason: 'FieldManagerConflict',
              message: 'conflict with "other" using msm.l7mp.io/v1',
              field: '.spec.websocket.port',
            },
          ],
        },
      },
    });
    expect(c).toEqual([
      {
        manager: 'other',
        field: 'spec.websocket.port',
        message: 'conflict with "other" using msm.l7mp.io/v1',
      },
    ]);
  });

  it('collection paths: the mesh CRDs, core kinds, nothing else', () => {
    expect(collectionPath('Target', 'ns-1')).toBe('/apis/msm.l7mp.io/v1/namespaces/ns-1/targets');
    expect(collectionPath('Service', 'default')).toBe('/api/v1/namespaces/default/services');
    expect(collectionPath('Deployment', 'default')).toBeUndefined();
  });
});
