// Kubernetes mode's mTLS ADS server with real parts: a REAL kube-apiserver and etcd holding the CA
// Secret, two "replicas" (AdsServers started by listenKubeAds, each with its own state directory, as two
// pods have), and `meshdeck xds bootstrap --kubeconfig` run as users run it (a child process). A proxy's
// certificate from the Secret must be good at either replica; the restricted user cannot read the CA.
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMeshdeck } from '../testing/runMeshdeck';
import { AdsServer } from '../xds/AdsServer';
import { TypeUrls } from '../xds/envoyProtos';
import { SnapshotCache } from '../xds/SnapshotCache';
import { waitFor } from '../xds/testing/children';
import { demoSnapshot } from '../xds/testing/demoSnapshot';
import { connectRawAds, type RawAdsClient } from '../xds/testing/rawAdsClient';
import { listenKubeAds } from './listenKubeAds';
import { XDS_CA_SECRET } from './sharedCaSecret';
import { type KubeApiServer, startKubeApiServer } from './testing/kubeApiServer';

const NS = 'default';
const PROXY = 'ns1/envoy-0';

let kube: KubeApiServer;
let tmp: string;
const replicas: { id: string; ads: AdsServer; cache: SnapshotCache; port: number; caDir: string }[] = [];
const clients: RawAdsClient[] = [];

beforeAll(async () => {
  kube = await startKubeApiServer();
  tmp = await mkdtemp(path.join(os.tmpdir(), 'md-kube-ads-'));
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kube.admin.kubeconfigPath);
  // Started together, as a Deployment's replicas are: one creates the Secret, the other reads it.
  await Promise.all(
    ['a', 'b'].map(async (id) => {
      const cache = new SnapshotCache();
      cache.setSnapshot(
        PROXY,
        demoSnapshot({ service: `svc-${id}`, clusters: [{ name: `c-${id}`, weight: 1, ports: [1] }] }),
      );
      cache.flush();
      const ads = new AdsServer({ cache, logger: { warn: () => {} } });
      const caDir = path.join(tmp, id, 'xds-ca');
      const { port, tls } = await listenKubeAds(ads, {
        kubeConfig: kc,
        namespace: NS,
        host: '127.0.0.1',
        port: 0,
        caDir,
      });
      expect(tls).toBe(true);
      replicas.push({ id, ads, cache, port, caDir });
    }),
  );
}, 180_000);

afterAll(async () => {
  for (const c of clients) c.close();
  for (const r of replicas) await r.ads.stop();
  await kube?.stop();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe('listenKubeAds: one xDS CA for every replica, in a Secret', () => {
  it('both replicas serve from the one CA of the Secret, their certificates naming the Service', async () => {
    const secret = await kubeSecret();
    const root = Buffer.from(secret.data!['ca.crt']!, 'base64');
    for (const r of replicas) expect(fs.readFileSync(path.join(r.caDir, 'root.crt')).equals(root)).toBe(true);
    expect(secret.metadata?.labels?.['app.kubernetes.io/component']).toBe('xds');
    // The server certificate: loopback for the test, and the Service's names for proxies in the cluster.
    const served = await serverCertificate(replicas[0]!.port);
    expect(served.subjectAltName).toContain(`DNS:meshdeck.${NS}.svc`);
    expect(served.subjectAltName).toContain(`DNS:meshdeck.${NS}.svc.cluster.local`);
    expect(served.verify(new X509Certificate(root).publicKey)).toBe(true);
  });

  it('meshdeck xds bootstrap --kubeconfig issues a certificate that each replica accepts', async () => {
    const out = path.join(tmp, 'bootstrap');
    const r = await runMeshdeck([
      'xds',
      'bootstrap',
      PROXY,
      '--kubeconfig',
      kube.admin.kubeconfigPath,
      '--namespace',
      NS,
      '--out',
      out,
      '--xds',
      `127.0.0.1:${replicas[0]!.port}`,
    ]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain('PRIVATE KEY');
    const [ca, key, chain] = ['ca.pem', 'key.pem', 'cert.pem'].map((f) => fs.readFileSync(path.join(out, f)));
    for (const [i, replica] of replicas.entries()) {
      const c = connectRawAds({
        address: `127.0.0.1:${replica.port}`,
        credentials: grpc.credentials.createSsl(ca!, key!, chain!),
        channelOptions: {
          'grpc.ssl_target_name_override': 'localhost',
          'grpc.default_authority': 'localhost',
        },
        nodeId: PROXY,
        subscriptions: [[TypeUrls.listener, []]],
        decodeNames: true,
      });
      clients.push(c);
      const lds = await waitFor(`LDS from replica ${i}`, () => c.latest.get(TypeUrls.listener), 15_000);
      expect(lds.names).toEqual([`svc-${replica.id}`]);
    }
    // The CA's key stays in the Secret: no copy is left behind by the CLI.
    expect(fs.readdirSync(os.tmpdir()).filter((d) => d.startsWith('meshdeck-xds-ca-'))).toEqual([]);
  });

  it('says what is missing: no Secret in that namespace, or no right to read it', async () => {
    const elsewhere = await runMeshdeck([
      'xds',
      'bootstrap',
      PROXY,
      '--kubeconfig',
      kube.admin.kubeconfigPath,
      '--namespace',
      'kube-public',
      '--out',
      path.join(tmp, 'x'),
    ]);
    expect(elsewhere.code).toBe(2);
    expect(elsewhere.stderr).toContain(
      `no Secret kube-public/${XDS_CA_SECRET}: meshdeck serve --kubeconfig creates it`,
    );
    const denied = await runMeshdeck([
      'xds',
      'bootstrap',
      PROXY,
      '--kubeconfig',
      kube.restricted.kubeconfigPath,
      '--namespace',
      NS,
      '--out',
      path.join(tmp, 'y'),
    ]);
    expect(denied.code).toBe(2);
    expect(denied.stderr).toMatch(
      new RegExp(`cannot read the xDS CA \\(Secret ${NS}/${XDS_CA_SECRET}\\): .*forbidden`, 'i'),
    );
    expect(fs.existsSync(path.join(tmp, 'x'))).toBe(false);
    expect(fs.existsSync(path.join(tmp, 'y'))).toBe(false);
  });
});

describe('listenKubeAds when the API server is away', () => {
  it('waits for it to come back (a restart), then serves from the same CA', async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(kube.admin.kubeconfigPath);
    const root = Buffer.from((await kubeSecret()).data!['ca.crt']!, 'base64');
    await kube.killApiServer();
    const said: string[] = [];
    const cache = new SnapshotCache();
    const ads = new AdsServer({ cache, logger: { warn: () => {} } });
    const caDir = path.join(tmp, 'c', 'xds-ca');
    const started = listenKubeAds(ads, {
      kubeConfig: kc,
      namespace: NS,
      host: '127.0.0.1',
      port: 0,
      caDir,
      logger: { info: (m) => said.push(m) },
    });
    replicas.push({ id: 'c', ads, cache, port: 0, caDir });
    await waitFor('a retry said', () => said.length > 0, 20_000);
    await kube.restartApiServer();
    expect((await started).tls).toBe(true);
    expect(said[0]).toMatch(
      /the xDS CA in Secret default\/meshdeck-xds-ca: the API server is out of reach \(.*ECONNREFUSED.*\); trying again/,
    );
    expect(fs.readFileSync(path.join(caDir, 'root.crt')).equals(root)).toBe(true);
  }, 120_000);

  it('gives up after its attempts, saying why', async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(kube.admin.kubeconfigPath);
    await kube.killApiServer();
    try {
      const ads = new AdsServer({ cache: new SnapshotCache(), logger: { warn: () => {} } });
      await expect(
        listenKubeAds(ads, {
          kubeConfig: kc,
          namespace: NS,
          host: '127.0.0.1',
          port: 0,
          caDir: path.join(tmp, 'd', 'xds-ca'),
          attempts: 2,
        }),
      ).rejects.toThrow(/^the xDS CA in Secret default\/meshdeck-xds-ca: .*ECONNREFUSED/);
    } finally {
      await kube.restartApiServer();
    }
  }, 120_000);
});

async function kubeSecret(): Promise<k8s.V1Secret> {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kube.admin.kubeconfigPath);
  return kc.makeApiClient(k8s.CoreV1Api).readNamespacedSecret({ name: XDS_CA_SECRET, namespace: NS });
}

/** The certificate a TLS server presents (no client certificate: the handshake is refused after it). */
async function serverCertificate(port: number): Promise<X509Certificate> {
  const tls = await import('node:tls');
  return new Promise((resolve, reject) => {
    const s = tls.connect(
      { host: '127.0.0.1', port, servername: 'localhost', rejectUnauthorized: false, ALPNProtocols: ['h2'] },
      () => {
        const raw = s.getPeerCertificate().raw;
        s.destroy();
        resolve(new X509Certificate(raw));
      },
    );
    s.on('error', reject);
  });
}
