// The webhook's HTTPS server on its own (a real TLS listener with a certificate from CertificateManager):
// what it answers to what is not a review, and the cluster view it reviews against.
// admissionWebhook.integration.test.ts has the real API server calling it.
import { mkdtemp, rm } from 'node:fs/promises';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObjects, LeanKubeObject } from '@/lib/kube/kubeSnapshot';
import { CertificateManager } from '../xds/CertificateManager';
import { type AdmissionOutcome, AdmissionWebhook, clusterFromObjects } from './admissionWebhook';

let dir: string;
let ca: Buffer;
let hook: AdmissionWebhook;
const outcomes: string[] = [];

function post(p: string, body: string | Buffer, method = 'POST'): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port: hook.port,
        path: p,
        method,
        ca,
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const review = (object: unknown) =>
  JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'abc',
      kind: { group: 'msm.l7mp.io', version: 'v1', kind: 'Route' },
      operation: 'CREATE',
      namespace: 'default',
      name: 'r',
      object,
    },
  });

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'md-webhook-unit-'));
  const cm = new CertificateManager({ dir });
  const leaf = await cm.issue('default/webhook', undefined, ['IP:127.0.0.1']);
  ca = leaf.issuingCA;
  hook = await AdmissionWebhook.listen({
    host: '127.0.0.1',
    port: 0,
    tls: { key: leaf.privateKey, cert: leaf.certificateChain },
    cluster: () => undefined,
    onReview: (o: AdmissionOutcome, kind, op) => outcomes.push(`${o} ${kind} ${op}`),
  });
}, 60_000);

afterAll(async () => {
  await hook?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('AdmissionWebhook', () => {
  it('answers a review with an AdmissionReview, over TLS', async () => {
    const res = await post(
      '/validate?timeout=10s',
      review({
        apiVersion: 'msm.l7mp.io/v1',
        kind: 'Route',
        metadata: { name: 'r' },
        spec: { destination: 1 },
      }),
    );
    expect(res.status).toBe(200);
    const body = JSON.parse(res.text) as { kind: string; response: { uid: string; allowed: boolean } };
    expect(body.kind).toBe('AdmissionReview');
    expect(body.response).toMatchObject({ uid: 'abc', allowed: false, status: { code: 422 } });
    expect(outcomes.at(-1)).toBe('denied Route CREATE');
  });

  it('refuses what is not a review with the reason (the API server then applies failurePolicy)', async () => {
    expect(await post('/validate', '{')).toMatchObject({
      status: 400,
      text: expect.stringMatching(/^the body is not JSON/),
    });
    expect(await post('/validate', '{"kind":"Pod"}')).toMatchObject({
      status: 400,
      text: expect.stringMatching(/^not an admission.k8s.io\/v1 AdmissionReview: apiVersion/),
    });
    expect(await post('/mutate', review({}))).toMatchObject({ status: 404 });
    expect(await post('/validate', '', 'GET')).toMatchObject({ status: 405 });
    expect((await post('/validate', Buffer.alloc(5 * 1024 * 1024, 32))).status).toBe(413);
    expect(outcomes.filter((o) => o.startsWith('malformed'))).toHaveLength(2);
  });
});

describe('clusterFromObjects', () => {
  const lean = (kind: string, name: string, spec: unknown) =>
    ({
      apiVersion: 'msm.l7mp.io/v1',
      kind,
      metadata: { name, namespace: 'default' },
      spec,
    }) as LeanKubeObject;

  it('is undefined until synced, and recompiles only when an object changed', () => {
    let synced = false;
    const route = lean('Route', 'r', { destination: 'missing' });
    let objects: Partial<KubeObjects> = { Route: [route] };
    const cluster = clusterFromObjects(
      () => objects as KubeObjects,
      () => synced,
    );
    expect(cluster()).toBeUndefined();
    synced = true;
    const first = cluster()!;
    expect(first.before?.some((d) => d.object.name === 'r' && d.code === 'unresolved-reference')).toBe(true);
    // The same lean objects: the diagnostics are the ones computed before.
    objects = { Route: [route] };
    expect(cluster()!.before).toBe(first.before);
    // A changed object (a new lean form): computed again.
    objects = { Route: [lean('Route', 'r', { destination: 'r' })] };
    expect(cluster()!.before).not.toBe(first.before);
  });
});
