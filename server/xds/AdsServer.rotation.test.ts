/** Renewing the ADS server's certificate while it runs (AdsServer.updateTls), on real TLS handshakes. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdsServer } from './AdsServer';
import { type Certificate, CertificateManager } from './CertificateManager';
import { TypeUrls } from './envoyProtos';
import { listenAds, XDS_SERVER_COMMON_NAME } from './meshXds';
import { SnapshotCache } from './SnapshotCache';
import { waitFor } from './testing/children';
import { demoSnapshot } from './testing/demoSnapshot';
import { connectRawAds } from './testing/rawAdsClient';

const SERVER_CN = 'meshdeck-system/xds-server';

describe('ADS server certificate renewal', () => {
  let dir: string;
  let cm: CertificateManager;
  let cache: SnapshotCache;
  let ads: AdsServer;
  let port = 0;
  let root: Certificate;
  let pod: Certificate;
  let first: Certificate;

  /** The serial number of the certificate the server presents to a new mTLS handshake. */
  const servedSerial = (client?: Certificate) =>
    new Promise<string>((resolve, reject) => {
      const socket = tls.connect({
        host: '127.0.0.1',
        port,
        servername: 'localhost',
        ca: root.certificateChain,
        ...(client ? { key: client.privateKey, cert: client.certificateChain } : {}),
        ALPNProtocols: ['h2'],
      });
      const timer = setTimeout(() => socket.destroy(new Error('no handshake in 5 s')), 5000);
      socket.once('secureConnect', () => {
        // TLS 1.3 reports a refused client certificate only after the handshake: wait for data or close.
        const serial = socket.getPeerCertificate().serialNumber;
        socket.once('data', () => {
          clearTimeout(timer);
          socket.destroy();
          resolve(serial);
        });
      });
      socket.once('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
    });

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'meshdeck-xds-rot-'));
    cm = new CertificateManager({ dir: path.join(dir, 'ca'), defaultValidityMs: 600_000 });
    first = await cm.issue(SERVER_CN, 600_000, ['DNS:localhost', 'IP:127.0.0.1']);
    pod = await cm.issue('ns1/pod-a');
    root = await cm.root();
    cache = new SnapshotCache();
    cache.setSnapshot(
      'ns1/pod-a',
      demoSnapshot({ service: 'svc-a', clusters: [{ name: 'c', weight: 1, ports: [1] }] }),
    );
    cache.flush();
    ads = new AdsServer({ cache, logger: {} });
    port = await ads.listen({
      tls: { key: first.privateKey, cert: first.certificateChain, ca: root.certificateChain },
    });
  }, 60_000);

  afterAll(async () => {
    await ads?.stop();
    cache?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('serves the renewed certificate to new connections, still requires client certificates, and still serves ADS', async () => {
    expect(await servedSerial(pod)).toBe(first.serialNumber.toUpperCase());

    const renewed = await cm.rotate(SERVER_CN);
    expect(renewed.serialNumber).not.toBe(first.serialNumber);
    ads.updateTls({ key: renewed.privateKey, cert: renewed.certificateChain, ca: root.certificateChain });
    expect(await servedSerial(pod)).toBe(renewed.serialNumber.toUpperCase());

    await expect(servedSerial()).rejects.toThrow();

    const client = connectRawAds({
      address: `127.0.0.1:${port}`,
      credentials: grpc.credentials.createSsl(root.certificateChain, pod.privateKey, pod.certificateChain),
      channelOptions: { 'grpc.ssl_target_name_override': 'localhost', 'grpc.default_authority': 'localhost' },
      nodeId: 'ns1/pod-a',
      subscriptions: [[TypeUrls.listener, []]],
      decodeNames: true,
    });
    try {
      await waitFor(
        'LDS over the renewed certificate',
        () => client.latest.has(TypeUrls.listener),
        10_000,
        20,
      );
      expect(client.latest.get(TypeUrls.listener)!.names).toEqual(['svc-a']);
    } finally {
      client.close();
    }
  });

  it('refuses updateTls on a plaintext server', async () => {
    const plain = new AdsServer({ cache, logger: {} });
    await plain.listen({ insecure: true });
    try {
      expect(() => plain.updateTls({ key: '', cert: '', ca: '' })).toThrow(/does not serve TLS/);
    } finally {
      await plain.stop();
    }
  });

  it('listenAds renews its own server certificate before it expires (short lifetime for the test)', async () => {
    const tlsDir = path.join(dir, 'listen-ca');
    const own = new AdsServer({ cache, logger: {} });
    const { port: ownPort } = await listenAds(own, {
      host: '127.0.0.1',
      port: 0,
      tlsDir,
      serverCertValidityMs: 3000,
      renewCheckMs: 100,
    });
    const ownCm = new CertificateManager({ dir: tlsDir });
    const ownRoot = await ownCm.root();
    const client = await ownCm.issue('ns1/pod-a');
    const serial = () =>
      new Promise<string>((resolve, reject) => {
        const socket = tls.connect({
          host: '127.0.0.1',
          port: ownPort,
          servername: 'localhost',
          ca: ownRoot.certificateChain,
          key: client.privateKey,
          cert: client.certificateChain,
          ALPNProtocols: ['h2'],
        });
        socket.once('secureConnect', () => {
          const s = socket.getPeerCertificate().serialNumber;
          socket.destroy();
          resolve(s);
        });
        socket.once('error', reject);
      });
    try {
      const before = await serial();
      // Renewed after 2/3 of 3 s; checked every 100 ms.
      let after = before;
      for (let i = 0; i < 60 && after === before; i++) {
        await new Promise((r) => setTimeout(r, 100));
        after = await serial();
      }
      expect(after).not.toBe(before);
      expect(XDS_SERVER_COMMON_NAME).toBe(SERVER_CN);
    } finally {
      await own.stop();
    }
  });
});
