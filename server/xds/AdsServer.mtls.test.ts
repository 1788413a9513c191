/**
 * mTLS on the ADS server. @grpc/grpc-js-xds 1.14.1 cannot present a client certificate to its xDS
 * server (bootstrap channel_creds accepts only `insecure` and `google_default`; see
 * build/src/xds-bootstrap.js SUPPORTED_CHANNEL_CREDS_TYPES), so this path is tested with raw ADS
 * streams on plain @grpc/grpc-js against the server in a forked process.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProxyStatus } from './AdsServer';
import { type Certificate, CertificateManager } from './CertificateManager';
import { TypeUrls } from './envoyProtos';
import { type Child, waitFor } from './testing/children';
import { forkMtlsAds } from './testing/mtlsAdsChild';
import { connectRawAds } from './testing/rawAdsClient';
import { withTimeout } from '@/lib/util/withTimeout';

describe('ADS over mTLS with CertificateManager certificates', () => {
  let dir: string;
  let cm: CertificateManager;
  let ads: Child;
  let port = 0;
  let root: Certificate;
  let podA: Certificate;
  let rogue: Certificate;

  const creds = (c?: Certificate) =>
    c
      ? grpc.credentials.createSsl(root.certificateChain, c.privateKey, c.certificateChain)
      : grpc.credentials.createSsl(root.certificateChain);
  const lds = (nodeId: string, c?: Certificate) =>
    connectRawAds({
      address: `127.0.0.1:${port}`,
      credentials: creds(c),
      // Verify the server certificate by its DNS SAN (an IP address as TLS ServerName is deprecated).
      channelOptions: { 'grpc.ssl_target_name_override': 'localhost', 'grpc.default_authority': 'localhost' },
      nodeId,
      subscriptions: [[TypeUrls.listener, []]],
      decodeNames: true,
    });

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'meshdeck-xds-ca-'));
    ({ ads, port, cm } = await forkMtlsAds(path.join(dir, 'ca')));
    const rogueCm = new CertificateManager({ dir: path.join(dir, 'rogue') });
    [podA, rogue] = await Promise.all([cm.issue('ns1/pod-a'), rogueCm.issue('ns1/pod-a')]);
    root = await cm.root();
  }, 60_000);

  afterAll(async () => {
    await ads?.kill();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('keeps the CA private: directory 0700, keys 0600; leaves name the proxy in the CN and a SPIFFE URI SAN', async () => {
    expect(fs.statSync(path.join(dir, 'ca')).mode & 0o777).toBe(0o700);
    expect(fs.statSync(path.join(dir, 'ca', 'root.key')).mode & 0o777).toBe(0o600);
    const x = new (await import('node:crypto')).X509Certificate(podA.certificateChain);
    expect(x.subject).toContain('CN=ns1/pod-a');
    expect(x.subjectAltName).toBe('URI:spiffe://meshdeck/ns/ns1/pod/pod-a');
    expect(x.verify(new (await import('node:crypto')).X509Certificate(root.certificateChain).publicKey)).toBe(
      true,
    );
    const ttl = podA.expiration.getTime() - Date.now();
    expect(ttl).toBeGreaterThan(500_000);
    expect(ttl).toBeLessThanOrEqual(600_000);
    const announced: string[] = [];
    cm.announcements().on('announcement', (a) => announced.push(`${a.kind} ${a.commonName}`));
    const rotated = await cm.rotate('ns1/pod-a');
    expect(rotated.serialNumber).not.toBe(podA.serialNumber);
    expect(cm.get('ns1/pod-a')?.serialNumber).toBe(rotated.serialNumber);
    cm.release('ns1/pod-b'); // never issued: no announcement
    expect(announced).toEqual(['rotated ns1/pod-a']);
    expect(
      cm
        .list()
        .map((c) => c.commonName)
        .sort(),
    ).toEqual(['meshdeck-system/xds-server', 'ns1/pod-a']);
  });

  it('refuses a client without a certificate', async () => {
    const c = lds('ns1/pod-a');
    const end = await withTimeout(c.ended, 10_000, 'no-cert stream');
    c.close();
    expect(end.code).toBe(grpc.status.UNAVAILABLE);
    expect(c.latest.size).toBe(0);
  });

  it('refuses a certificate from another CA', async () => {
    const c = lds('ns1/pod-a', rogue);
    const end = await withTimeout(c.ended, 10_000, 'rogue-cert stream');
    c.close();
    expect(end.code).toBe(grpc.status.UNAVAILABLE);
    expect(c.latest.size).toBe(0);
  });

  it('serves exactly its own resources to a proxy with a valid certificate', async () => {
    const c = lds('ns1/pod-a', podA);
    try {
      const r = await waitFor('LDS response', () => c.latest.get(TypeUrls.listener), 10_000);
      expect(r.names).toEqual(['svc-a']);
      const st = await waitFor(
        'status',
        async () =>
          (await ads.request<ProxyStatus[]>('status')).find(
            (s) => s.nodeId === 'ns1/pod-a' && s.status.LDS === 'SYNCED',
          ),
        5000,
      );
      expect(st.identity).toBe('ns1/pod-a');
      // The record names the certificate it trusted: serial, expiry (in the future) and fingerprint.
      expect(st.certificate?.serialNumber).toMatch(/^[0-9A-F]+$/);
      expect(Date.parse(st.certificate!.validTo)).toBeGreaterThan(Date.now());
      expect(st.certificate?.fingerprint256).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    } finally {
      c.close();
    }
  });

  it('refuses a node id that does not match the certificate', async () => {
    const c = lds('ns1/pod-b', podA);
    const end = await withTimeout(c.ended, 10_000, 'mismatched node id');
    c.close();
    expect(end.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(end.details).toContain('does not match the client certificate (ns1/pod-a)');
    expect(c.latest.size).toBe(0);
  });
});
