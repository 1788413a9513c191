import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { convertSeedDialect } from '../parse/seedDialect';
import {
  AdmissionReviewResponse,
  CONTROLLER_USERS,
  MAX_WARNING_LENGTH,
  MAX_WARNINGS,
  meshDiagnostics,
  reviewAdmission,
} from './admission';
import { type KubeObjects, type KubeSourceKind, leanKubeObject } from './kubeSnapshot';

/** Seed Example 2 as a cluster holds it (mesh resources canonical, each kind's lean objects). */
function example2(): { objects: Partial<KubeObjects>; raw: Record<string, Record<string, unknown>> } {
  const text = readFileSync(path.join(__dirname, '../engine/testdata/seed-example-2.in.yaml'), 'utf8');
  const objects: Partial<Record<KubeSourceKind, ReturnType<typeof leanKubeObject>[]>> = {};
  const raw: Record<string, Record<string, unknown>> = {};
  for (const d of parseAllDocuments(text)) {
    const o = d.toJS() as Record<string, unknown> | null;
    if (!o) continue;
    const c = convertSeedDialect(o).object as Record<string, unknown> & {
      kind: KubeSourceKind;
      metadata: { name: string };
    };
    (objects[c.kind] ??= []).push(leanKubeObject(c.kind, c));
    raw[`${c.kind}/${c.metadata.name}`] = c;
  }
  return { objects: objects as Partial<KubeObjects>, raw };
}

function review(request: Record<string, unknown>) {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: { uid: 'u-1', namespace: 'default', ...request },
  };
}

const routeKind = { group: 'msm.l7mp.io', version: 'v1', kind: 'Route' };

function answer(body: unknown, cluster?: Parameters<typeof reviewAdmission>[1]) {
  const a = reviewAdmission(body, cluster);
  if (!a.ok) throw new Error(a.error);
  // What goes back to the API server always has the AdmissionReview v1 shape.
  expect(AdmissionReviewResponse.safeParse(a.review).success).toBe(true);
  return a.review.response;
}

describe('reviewAdmission', () => {
  it('denies an object that fails the schema, naming each field, with 422', () => {
    const r = answer(
      review({
        kind: routeKind,
        operation: 'CREATE',
        name: 'bad',
        object: {
          apiVersion: 'msm.l7mp.io/v1',
          kind: 'Route',
          metadata: { name: 'bad', namespace: 'default' },
          spec: { destination: 42, retry: { num_retries: 'many' } },
        },
      }),
    );
    expect(r.uid).toBe('u-1');
    expect(r.allowed).toBe(false);
    expect(r.status?.code).toBe(422);
    expect(r.status?.reason).toBe('Invalid');
    expect(r.status?.message).toMatch(/^Route default\/bad does not match the MSM API schema/);
    expect(r.status?.message).toContain('spec.destination: expected string or object, received number');
    expect(r.status?.message).toContain('spec.retry.num_retries: expected number, received string');
  });

  it('allows a valid object and warns about a reference the cluster does not have', () => {
    const { objects, raw } = example2();
    const route = raw['Route/gateway-route']!;
    const r = answer(
      review({
        kind: routeKind,
        operation: 'UPDATE',
        name: 'gateway-route',
        object: { ...route, spec: { ...(route.spec as object), destination: 'worker-targt' } },
        oldObject: route,
      }),
      { objects },
    );
    expect(r.allowed).toBe(true);
    expect(r.warnings?.[0]).toMatch(/^error: Route default\/gateway-route spec\.destination: .*worker-targt/);
    // Nothing the mesh already had before the change is repeated.
    const before = new Set(meshDiagnostics(objects).map((d) => d.message));
    for (const w of r.warnings ?? []) expect([...before].some((m) => w.endsWith(m))).toBe(false);
  });

  it('allows an unchanged valid object with no warning at all', () => {
    const { objects, raw } = example2();
    const route = raw['Route/gateway-route']!;
    const r = answer(
      review({
        kind: routeKind,
        operation: 'UPDATE',
        name: 'gateway-route',
        object: route,
        oldObject: route,
      }),
      { objects },
    );
    expect(r).toEqual({ uid: 'u-1', allowed: true });
  });

  it('warns on DELETE of an object others still reference, and allows it', () => {
    const { objects, raw } = example2();
    const r = answer(
      review({
        kind: routeKind,
        operation: 'DELETE',
        name: 'gateway-route',
        oldObject: raw['Route/gateway-route'],
      }),
      { objects },
    );
    expect(r.allowed).toBe(true);
    expect(r.warnings?.join('\n')).toMatch(
      /after the delete, error: VirtualService default\/gateway-user-a-vsvc spec\.rules\[0\]\.action\.route: .*gateway-route/,
    );
  });

  it("allows the namespace controller's and the garbage collector's deletes without compiling the mesh", () => {
    const { objects, raw } = example2();
    const del = (username: string) =>
      answer(
        review({
          kind: routeKind,
          operation: 'DELETE',
          name: 'gateway-route',
          oldObject: raw['Route/gateway-route'],
          userInfo: { username },
        }),
        { objects },
      );
    for (const u of CONTROLLER_USERS) expect(del(u)).toEqual({ uid: 'u-1', allowed: true });
    // A person deleting the same Route still hears what it leaves dangling.
    expect(del('alice@example.com').warnings?.length).toBeGreaterThan(0);
  });

  it('lets a metadata-only UPDATE of a stored invalid object through (a label, a finalizer)', () => {
    const bad = {
      apiVersion: 'msm.l7mp.io/v1',
      kind: 'Route',
      metadata: { name: 'old', namespace: 'default' },
      spec: { destination: 42 },
    };
    const labelled = { ...bad, metadata: { ...bad.metadata, labels: { team: 'a' } } };
    expect(
      answer(review({ kind: routeKind, operation: 'UPDATE', name: 'old', object: labelled, oldObject: bad }))
        .allowed,
    ).toBe(true);
    // ...but not a spec change that keeps it invalid.
    const changed = { ...labelled, spec: { destination: 43 } };
    expect(
      answer(review({ kind: routeKind, operation: 'UPDATE', name: 'old', object: changed, oldObject: bad }))
        .allowed,
    ).toBe(false);
  });

  it('takes the namespace from the request when the object leaves it out', () => {
    const r = answer(
      review({
        kind: routeKind,
        operation: 'CREATE',
        namespace: 'team-a',
        name: 'r',
        object: {
          apiVersion: 'msm.l7mp.io/v1',
          kind: 'Route',
          metadata: { name: 'r' },
          spec: { destination: 7 },
        },
      }),
    );
    expect(r.status?.message).toMatch(/^Route team-a\/r /);
  });

  it('allows what is not a mesh kind, and CONNECT', () => {
    const svc = { group: '', version: 'v1', kind: 'Service' };
    expect(answer(review({ kind: svc, operation: 'CREATE', object: { spec: 1 } })).allowed).toBe(true);
    expect(answer(review({ kind: routeKind, operation: 'CONNECT' })).allowed).toBe(true);
  });

  it('caps the warnings in number and length', () => {
    const { objects } = example2();
    const vs = (i: number) => ({
      apiVersion: 'msm.l7mp.io/v1',
      kind: 'VirtualService',
      metadata: { name: `v${i}`, namespace: 'default' },
      spec: {
        udp: { port: 7000 + i },
        rules: [
          { action: { route: { destination: `a-target-with-a-rather-long-name-${'x'.repeat(200)}-${i}` } } },
        ],
        selector: { serviceName: 'gateway-svc' },
      },
    });
    // Many objects that each add a problem, then one more change that adds one more.
    const many = { ...objects, VirtualService: [...(objects.VirtualService ?? [])] };
    const r = answer(
      review({
        kind: { group: 'msm.l7mp.io', version: 'v1', kind: 'VirtualService' },
        operation: 'CREATE',
        name: 'v1',
        object: vs(1),
      }),
      { objects: many },
    );
    expect(r.allowed).toBe(true);
    expect(r.warnings!.length).toBeGreaterThan(0);
    expect(r.warnings!.length).toBeLessThanOrEqual(MAX_WARNINGS);
    for (const w of r.warnings!) expect(w.length).toBeLessThanOrEqual(MAX_WARNING_LENGTH);
    expect(r.warnings!.some((w) => w.endsWith('...'))).toBe(true);
  });

  it('says why a body is not an AdmissionReview', () => {
    const a = reviewAdmission({ apiVersion: 'admission.k8s.io/v1beta1', kind: 'AdmissionReview' });
    expect(a).toEqual({
      ok: false,
      error: expect.stringMatching(/^not an admission.k8s.io\/v1 AdmissionReview: apiVersion/),
    });
    expect(reviewAdmission('x').ok).toBe(false);
    expect(reviewAdmission(review({ kind: routeKind, operation: 'PATCH' })).ok).toBe(false);
  });
});
