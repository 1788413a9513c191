/**
 * Answers of POST /api/cluster/dry-run and /api/cluster/apply for the console's tests, shaped by the
 * server's own types and worded as kube-apiserver 1.36 words them (see clusterApply.integration.test.ts).
 */
import type { AccessDecision } from '@/server/kube/accessReview';
import type { ObjectOutcome, ObjectPlan, ObjectRef } from '@/server/kube/clusterApply';
import type { ClusterApplyAnswer, ClusterDryRun } from './clusterApplyView';

const GROUP = 'msm.l7mp.io';

/** A draft object's reference (`Kind/namespace/name`, in mesh.yaml). */
export function ref(kind: string, name: string, line = 1, namespace = 'default'): ObjectRef {
  return {
    key: `${kind}/${namespace}/${name}`,
    apiVersion: kind === 'Service' ? 'v1' : `${GROUP}/v1`,
    kind,
    namespace,
    name,
    file: 'mesh.yaml',
    line,
  };
}

const base = (r: ObjectRef, action: ObjectPlan['action'], extra: Partial<ObjectPlan> = {}): ObjectPlan => ({
  ref: r,
  action,
  live: null,
  result: null,
  diff: [],
  conflicts: [],
  warnings: [],
  ...extra,
});

const vsvc = (name: string, port: number) => ({
  apiVersion: `${GROUP}/v1`,
  kind: 'VirtualService',
  metadata: { name, namespace: 'default', resourceVersion: '812' },
  spec: { selector: { matchLabels: { app: name } }, listener: { spec: { websocket: { port } } } },
});

export const CREATE = base(ref('Route', 'user-route', 30), 'create', {
  result: {
    apiVersion: `${GROUP}/v1`,
    kind: 'Route',
    metadata: { name: 'user-route', namespace: 'default' },
  },
  diff: [
    { path: 'apiVersion', after: `${GROUP}/v1` },
    { path: 'kind', after: 'Route' },
    { path: 'metadata', after: { name: 'user-route', namespace: 'default' } },
    { path: 'spec', after: { destination: 'worker-svc' } },
  ],
});

export const UPDATE = base(ref('VirtualService', 'transcoder-vsvc', 1), 'update', {
  live: vsvc('transcoder-vsvc', 8888),
  result: vsvc('transcoder-vsvc', 8889),
  diff: [{ path: 'spec.listener.spec.websocket.port', before: 8888, after: 8889 }],
});

export const UNCHANGED = base(ref('Target', 'worker-target', 50), 'unchanged', {
  live: { kind: 'Target' },
  result: { kind: 'Target' },
});

export const SKIPPED = base(ref('Pod', 'worker-0', 70), 'skipped', {
  note: 'Pod objects are not applied to the cluster from the console',
});

export const CONFLICT = base(ref('VirtualService', 'gateway-vsvc', 12), 'conflict', {
  live: vsvc('gateway-vsvc', 9999),
  conflicts: [
    {
      manager: 'kubectl',
      field: 'spec.listener.spec.websocket.port',
      message: 'conflict with "kubectl" using msm.l7mp.io/v1: .spec.listener.spec.websocket.port',
    },
  ],
});

export const INVALID = base(ref('Route', 'bad-port', 40), 'error', {
  error: {
    status: 422,
    reason: 'Invalid',
    message:
      'Route.msm.l7mp.io "bad-port" is invalid: spec.destination.tcp.port: Invalid value: 70000: spec.destination.tcp.port in body should be less than or equal to 65535',
    causes: [
      {
        field: 'spec.destination.tcp.port',
        reason: 'FieldValueInvalid',
        message:
          'Invalid value: 70000: spec.destination.tcp.port in body should be less than or equal to 65535',
      },
    ],
  },
});

export const FORBIDDEN = base(ref('VirtualService', 'transcoder-vsvc', 1), 'error', {
  error: {
    status: 403,
    reason: 'Forbidden',
    message:
      'virtualservices.msm.l7mp.io "transcoder-vsvc" is forbidden: User "bob@example.com" cannot patch resource "virtualservices" in API group "msm.l7mp.io" in the namespace "default"',
    causes: [],
  },
});

export const ORPHAN = base(ref('Route', 'old-route', 0), 'orphan', {
  live: { kind: 'Route', metadata: { name: 'old-route' } },
  note: 'the draft no longer has it; applied with prune it is deleted',
});

export const DELETE = base({ ...ref('Route', 'old-route'), file: undefined, line: undefined }, 'delete', {
  live: { kind: 'Route', metadata: { name: 'old-route' } },
  diff: [{ path: 'metadata', before: { name: 'old-route' } }],
});

export const ALICE = { user: 'alice@example.com', groups: ['mesh-editors', 'system:authenticated'] };
export const BOB = { user: 'bob@example.com', groups: ['system:authenticated'] };

const check = (resource: string, verb: string, allowed: boolean, group = GROUP) => ({
  group,
  resource,
  namespace: 'default',
  verb,
  allowed,
  ...(allowed ? { reason: 'RBAC: allowed by RoleBinding "mesh-editors/default" of Role "mesh-editor"' } : {}),
});

/** alice may patch and create routes, virtualservices and targets in default. */
export const ALLOWED: AccessDecision = {
  allowed: true,
  user: ALICE.user,
  checks: ['routes', 'virtualservices', 'targets'].flatMap((r) => [
    check(r, 'patch', true),
    check(r, 'create', true),
  ]),
  denied: [],
};

/** bob may read only: patch and create are denied on virtualservices and services. */
export const DENIED: AccessDecision = {
  allowed: false,
  user: BOB.user,
  checks: [
    check('virtualservices', 'patch', false),
    check('virtualservices', 'create', false),
    check('services', 'patch', false, ''),
    check('services', 'create', false, ''),
  ],
  denied: [
    'patch virtualservices.msm.l7mp.io in default',
    'create virtualservices.msm.l7mp.io in default',
    'patch services in default',
    'create services in default',
  ],
};

/** A dry-run answer of these rows. */
export function dryRun(
  objects: ObjectPlan[],
  access: AccessDecision = ALLOWED,
  revision = 7,
  user = access.allowed ? ALICE : BOB,
): ClusterDryRun {
  const ok = objects.every((o) => o.action !== 'error' && o.action !== 'conflict');
  return { ok, user, objects, revision, access, clusterChanges: [] };
}

/** An apply answer: each row done when `done(row)` says so. */
export function applyAnswer(
  objects: ObjectPlan[],
  done: (o: ObjectPlan) => boolean,
  revision = 7,
): ClusterApplyAnswer {
  const outcomes: ObjectOutcome[] = objects.map((o) => ({ ...o, done: done(o) }));
  return {
    applied: outcomes.some((o) => o.done),
    ok: outcomes.every((o) => o.done || o.action === 'skipped' || o.action === 'orphan'),
    user: ALICE,
    objects: outcomes,
    revision,
  };
}
