// The xDS CA's signing service on a real ADS server (mTLS, a real openssl CA), called over gRPC as
// Istio's agent calls it. Who a token names is decided here by a fixed table (`tokenTable`): the
// Kubernetes check (TokenReview) is tested against a real API server in
// server/kube/xdsAgent.integration.test.ts.
import { execFileSync } from 'node:child_process';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MeshMetrics } from '../metrics/MeshMetrics';
import { sample } from '../metrics/testing/promText';
import { AdsServer } from './AdsServer';
import {
  type CertificateRequest,
  type CertificateResponse,
  certificateServiceDefinition,
  type CsrAuthenticator,
} from './certificateService';
import { listenAds } from './meshXds';
import { SnapshotCache } from './SnapshotCache';

let tmp: string;
let ads: AdsServer;
let port: number;
let root: Buffer;
const metrics = new MeshMetrics({ version: '0.0.0-test', mode: 'kubernetes', processMetrics: false });

/** Tokens by the table: `broken` is an outage of the check itself. */
const tokenTable: CsrAuthenticator = async (token) => {
  if (token === 'broken') throw new Error('connect ECONNREFUSED 10.0.0.1:443');
  if (token === 'pod-a') return { nodeId: 'ns1/pod-a' };
  if (token === 'pod-b') return { nodeId: 'ns1/pod-b' };
  // A pod named as the replicas' own certificate is (a Pod xds-server in meshdeck-system).
  if (token === 'pod-server') return { nodeId: 'meshdeck-system/xds-server' };
  return { refused: 'the token is not valid for audience "meshdeck"' };
};

function csr(name: string, args: string[]): string {
  const key = path.join(tmp, `${name}.key`);
  const out = path.join(tmp, `${name}.csr`);
  execFileSync('openssl', ['genpkey', ...args, '-out', key], { stdio: 'pipe' });
  execFileSync('openssl', [
    'req',
    '-new',
    '-key',
    key,
    '-out',
    out,
    '-subj',
    '/CN=kube-system\\/admin',
    '-addext',
    'subjectAltName=URI:spiffe://meshdeck/ns/kube-system/pod/admin,DNS:meshdeck.meshdeck-system.svc',
  ]);
  return fs.readFileSync(out, 'utf8');
}

function call(request: CertificateRequest, token?: string): Promise<CertificateResponse> {
  const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createSsl(root), {
    'grpc.ssl_target_name_override': 'localhost',
    'grpc.default_authority': 'localhost',
  });
  const m = certificateServiceDefinition().CreateCertificate!;
  const md = new grpc.Metadata();
  if (token) md.set('authorization', `Bearer ${token}`);
  return new Promise((resolve, reject) =>
    client.makeUnaryRequest(
      m.path,
      m.requestSerialize,
      m.responseDeserialize,
      request,
      md,
      { deadline: Date.now() + 15_000 },
      (err: grpc.ServiceError | null, res?: CertificateResponse) => {
        client.close();
        if (err) reject(err);
        else resolve(res!);
      },
    ),
  );
}

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'md-csr-'));
  ads = new AdsServer({ cache: new SnapshotCache(), logger: { warn: () => {} } });
  ({ port } = await listenAds(ads, {
    host: '127.0.0.1',
    port: 0,
    tlsDir: path.join(tmp, 'ca'),
    signing: {
      authenticate: tokenTable,
      maxValidityMs: 2 * 3600_000,
      metrics: metrics.ca,
      perProxy: { burst: 8, refillMs: 3600_000 },
    },
  }));
  root = fs.readFileSync(path.join(tmp, 'ca', 'root.crt'));
}, 60_000);

afterAll(async () => {
  await ads?.stop();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe('the xDS CA signing service (Istio CreateCertificate)', () => {
  it("signs for the token's proxy only, whatever subject and SANs the CSR asks for", async () => {
    const res = await call(
      { csr: csr('a', ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256']), validity_duration: 3600 },
      'pod-a',
    );
    expect(res.cert_chain).toHaveLength(2);
    const [leaf, issuer] = res.cert_chain.map((p) => new X509Certificate(p));
    expect(leaf!.subject).toBe('O=meshdeck\nOU=agent\nCN=ns1/pod-a');
    expect(leaf!.subjectAltName).toBe('URI:spiffe://meshdeck/ns/ns1/pod/pod-a');
    expect(leaf!.verify(issuer!.publicKey)).toBe(true);
    expect(issuer!.raw.equals(new X509Certificate(root).raw)).toBe(true);
    // The key is the CSR's: the certificate belongs to whoever made the request.
    const key = fs.readFileSync(path.join(tmp, 'a.key'));
    expect(leaf!.checkPrivateKey(createPrivateKey(key))).toBe(true);
  });

  it('grants at most the longest lifetime, and that when none is asked', async () => {
    for (const asked of [0, 30 * 24 * 3600]) {
      const res = await call(
        {
          csr: csr('b', ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256']),
          validity_duration: asked,
        },
        'pod-a',
      );
      const leaf = new X509Certificate(res.cert_chain[0]!);
      const lifetime = Date.parse(leaf.validTo) - Date.parse(leaf.validFrom);
      // 2 h, and the minute the CA back-dates by for clock skew.
      expect(Math.abs(lifetime - 2 * 3600_000 - 60_000), `asked ${asked}`).toBeLessThanOrEqual(2000);
    }
  });

  it("says what is wrong: no token, a refused token, the replicas' own name, an outage, a bad or weak CSR", async () => {
    const good = csr('c', ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256']);
    const lines = good.trim().split('\n');
    lines[lines.length - 2] = lines[lines.length - 2]!.replace(
      /^(.{4})(.)/,
      (_, a, b) => a + (b === 'A' ? 'B' : 'A'),
    );
    const tampered = lines.join('\n') + '\n';
    const cases: [string, Promise<unknown>, grpc.status, RegExp][] = [
      [
        'no token',
        call({ csr: good, validity_duration: 0 }),
        grpc.status.UNAUTHENTICATED,
        /^no bearer token/,
      ],
      [
        'refused',
        call({ csr: good, validity_duration: 0 }, 'someone'),
        grpc.status.UNAUTHENTICATED,
        /^the token is not valid for audience "meshdeck"$/,
      ],
      [
        "the replicas' name",
        call({ csr: good, validity_duration: 0 }, 'pod-server'),
        grpc.status.PERMISSION_DENIED,
        /^meshdeck-system\/xds-server is the control plane's own name$/,
      ],
      [
        'outage',
        call({ csr: good, validity_duration: 0 }, 'broken'),
        grpc.status.UNAVAILABLE,
        /^cannot check the token now: connect ECONNREFUSED/,
      ],
      [
        'not a CSR',
        call({ csr: 'hello', validity_duration: 0 }, 'pod-a'),
        grpc.status.INVALID_ARGUMENT,
        /^the csr is not a PEM certificate request$/,
      ],
      [
        'tampered',
        call({ csr: tampered, validity_duration: 0 }, 'pod-a'),
        grpc.status.INVALID_ARGUMENT,
        /^the csr('s signature does not verify| cannot be read)/,
      ],
      [
        'weak',
        call(
          { csr: csr('d', ['-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:1024']), validity_duration: 0 },
          'pod-a',
        ),
        grpc.status.INVALID_ARGUMENT,
        /^an RSA key of 1024 bits \(2048 or more\)$/,
      ],
    ];
    for (const [name, p, code, details] of cases) {
      const err = (await p.then(
        () => undefined,
        (e: grpc.ServiceError) => e,
      )) as grpc.ServiceError | undefined;
      expect(err?.code, name).toBe(code);
      expect(err?.details, name).toMatch(details);
    }
  });

  it('limits each proxy, not the others: past its burst a pod is told when to come back', async () => {
    const ec = ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256'];
    const results = [];
    for (let i = 0; i < 9; i++)
      results.push(
        await call({ csr: csr(`b${i}`, ec), validity_duration: 0 }, 'pod-b').then(
          (r) => `issued ${r.cert_chain.length}`,
          (e: grpc.ServiceError) => `${grpc.status[e.code]}: ${e.details}`,
        ),
      );
    expect(results.slice(0, 8)).toEqual(Array(8).fill('issued 2'));
    expect(results[8]).toBe(
      'RESOURCE_EXHAUSTED: ns1/pod-b asked for too many certificates: try again in 3600 s',
    );
    // pod-a (six of its eight used above) is not held up by pod-b.
    const other = await call({ csr: csr('a2', ec), validity_duration: 0 }, 'pod-a');
    expect(other.cert_chain).toHaveLength(2);
  });

  it('counts every request by how it ended (meshdeck_xds_ca_requests_total)', async () => {
    const text = (await metrics.scrape()).body;
    const count = (result: string) => sample(text, 'meshdeck_xds_ca_requests_total', { result });
    // The tests above: 1 + 2 + 8 + 1 issued; no token, a refused one and the replicas' name; an outage;
    // three bad CSRs; 1 limited.
    expect(
      ['issued', 'unauthenticated', 'unavailable', 'invalid-csr', 'limited'].map((r) => [r, count(r)]),
    ).toEqual([
      ['issued', 12],
      ['unauthenticated', 3],
      ['unavailable', 1],
      ['invalid-csr', 3],
      ['limited', 1],
    ]);
  });
});
