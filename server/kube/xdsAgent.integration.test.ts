// A pod's own certificate in Kubernetes mode, with real parts: a REAL kube-apiserver and etcd (the
// pod, its service account, tokens minted by the TokenRequest API and checked by TokenReview), the ADS
// server started by listenKubeAds (its signing service on the ADS port), and `meshdeck xds agent` run
// as a pod runs it (a child process reading the token and root from files). The certificate must name
// the token's pod whatever the request says, get the pod its config, and be refused to anything else.
import { type ChildProcess, spawn } from 'node:child_process';
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
import { withTimeout } from '@/lib/util/withTimeout';
import { waitFor } from '../xds/testing/children';
import { demoSnapshot } from '../xds/testing/demoSnapshot';
import { connectRawAds, type RawAdsClient } from '../xds/testing/rawAdsClient';
import { type Backend, startBackend } from '../xds/testing/children';
import { grpcGoClientBinary, runGrpcGoClient } from '../xds/testing/grpcGoClient';
import { runXdsAgent } from '../xds/xdsAgent';
import { freePort } from '../testing/startL7mp';
import { MESHDECK_BIN } from '../testing/runMeshdeck';
import { parse as parseYaml } from 'yaml';
import { parseArgs } from '../cli/args';
import { REPO_ROOT } from '../testing/runMeshdeck';
import { AGENT_FILES } from '../xds/xdsAgent';
import { CaRootPublisher, XDS_CA_ROOT_CONFIGMAP, XDS_CA_ROOT_KEY } from './caRootPublisher';
import { XDS_TOKEN_AUDIENCE } from './podTokenAuthenticator';
import { listenKubeAds } from './listenKubeAds';
import { replicaLeaseName, XDS_ADDRESS_ANNOTATION } from './replicaPeers';
import { seedCaDir } from './sharedCaSecret';
import { CertificateManager } from '../xds/CertificateManager';
import { XDS_SERVER_COMMON_NAME } from '../xds/certificateIdentity';
import { ReplicaStreamsClient } from '../xds/replicaStreams';
import { installCrds, until } from './replicasTestKit';
import { type KubeApiServer, startKubeApiServer } from './testing/kubeApiServer';

const NS = 'ns1';
const SA = 'client';

let kube: KubeApiServer;
let core: k8s.CoreV1Api;
let tmp: string;
let ads: AdsServer;
let port: number;
let rootFile: string;
let backend: Backend;
const clients: RawAdsClient[] = [];

/** A Pod that runs as the service account SA (never scheduled: no node runs here). */
async function createPod(name: string, labels: Record<string, string>): Promise<k8s.V1Pod> {
  return core.createNamespacedPod({
    namespace: NS,
    body: {
      metadata: { name, labels },
      spec: { serviceAccountName: SA, containers: [{ name: 'app', image: 'registry.invalid/app:1' }] },
    },
  });
}

/** A token from the TokenRequest API, as the kubelet mints a projected one, written to a file. */
async function tokenFile(file: string, o: { audience?: string; pod?: k8s.V1Pod } = {}): Promise<string> {
  const tr = await core.createNamespacedServiceAccountToken({
    name: SA,
    namespace: NS,
    body: {
      spec: {
        audiences: [o.audience ?? 'meshdeck'],
        expirationSeconds: 3600,
        ...(o.pod
          ? {
              boundObjectRef: {
                apiVersion: 'v1',
                kind: 'Pod',
                name: o.pod.metadata!.name!,
                uid: o.pod.metadata!.uid!,
              },
            }
          : {}),
      },
    },
  });
  const f = path.join(tmp, file);
  fs.writeFileSync(f, tr.status!.token);
  return f;
}

function agent(token: string, out: string, extra: string[] = []) {
  return runMeshdeck([
    'xds',
    'agent',
    '--once',
    '--xds',
    `127.0.0.1:${port}`,
    '--server-name',
    'localhost',
    '--ca-file',
    rootFile,
    '--token-file',
    token,
    '--out',
    out,
    ...extra,
  ]);
}

function adsWith(dir: string | undefined, nodeId: string): RawAdsClient {
  const read = (f: string) => fs.readFileSync(path.join(dir!, f));
  const c = connectRawAds({
    address: `127.0.0.1:${port}`,
    credentials: dir
      ? grpc.credentials.createSsl(read('ca.pem'), read('key.pem'), read('cert.pem'))
      : grpc.credentials.createSsl(fs.readFileSync(rootFile)),
    channelOptions: { 'grpc.ssl_target_name_override': 'localhost', 'grpc.default_authority': 'localhost' },
    nodeId,
    subscriptions: [[TypeUrls.listener, []]],
    decodeNames: true,
  });
  clients.push(c);
  return c;
}

const kc = () => {
  const c = new k8s.KubeConfig();
  c.loadFromFile(kube.admin.kubeconfigPath);
  return c;
};

beforeAll(async () => {
  kube = await startKubeApiServer();
  tmp = await mkdtemp(path.join(os.tmpdir(), 'md-xds-agent-'));
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kube.admin.kubeconfigPath);
  core = kc.makeApiClient(k8s.CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: NS } } });
  await core.createNamespacedServiceAccount({ namespace: NS, body: { metadata: { name: SA } } });
  await installCrds(kube, kc);
  const cache = new SnapshotCache();
  await grpcGoClientBinary();
  backend = await startBackend('who-client-0');
  for (const pod of ['client-0', 'client-3'])
    cache.setSnapshot(
      `${NS}/${pod}`,
      demoSnapshot({
        service: `svc-${pod}`,
        clusters: [{ name: `c-${pod}`, weight: 1, ports: [backend.port] }],
      }),
    );
  cache.flush();
  ads = new AdsServer({ cache, logger: { warn: () => {} } });
  const caDir = path.join(tmp, 'xds-ca');
  // The shortest lifetime 2 s: the renewal test asks for 20 s and must see a second certificate.
  ({ port } = await listenKubeAds(ads, {
    kubeConfig: kc,
    namespace: 'default',
    host: '127.0.0.1',
    port: 0,
    caDir,
    signing: { minValidityMs: 2000 },
  }));
  rootFile = path.join(caDir, 'root.crt');
}, 180_000);

let served: { child: ChildProcess; out: string } | undefined;

afterAll(async () => {
  served?.child.kill('SIGKILL');
  for (const c of clients) c.close();
  await ads?.stop();
  await backend?.stop();
  await kube?.stop();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe('meshdeck xds agent: a pod gets its own certificate with its bound token', () => {
  it("writes a certificate naming the token's pod, which the ADS server admits as that proxy", async () => {
    const pod = await createPod('client-0', { 'msm.l7mp.io/proxy': 'grpc' });
    const out = path.join(tmp, 'client-0');
    const r = await agent(await tokenFile('client-0.token', { pod }), out, ['--validity', '1h']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^meshdeck xds agent: ns1\/client-0 has certificate [0-9A-F]+ until /);
    expect(r.stdout).not.toContain('PRIVATE KEY');
    expect(fs.statSync(path.join(out, 'key.pem')).mode & 0o777).toBe(0o600);
    const leaf = new X509Certificate(fs.readFileSync(path.join(out, 'cert.pem')));
    expect(leaf.subjectAltName).toBe('URI:spiffe://meshdeck/ns/ns1/pod/client-0');
    expect(leaf.verify(new X509Certificate(fs.readFileSync(rootFile)).publicKey)).toBe(true);
    // The lifetime asked for (1 h), give or take the minute of clock skew the CA backdates by.
    const lifetime = Date.parse(leaf.validTo) - Date.parse(leaf.validFrom);
    expect(Math.abs(lifetime - 3600_000 - 60_000)).toBeLessThanOrEqual(2000);
    const bootstrap = JSON.parse(fs.readFileSync(path.join(out, 'grpc-bootstrap.json'), 'utf8'));
    expect(bootstrap.node.id).toBe('ns1/client-0');
    expect(bootstrap.xds_servers[0].server_uri).toBe(`localhost:${port}`);
    expect(bootstrap.xds_servers[0].channel_creds[0].config.certificate_file).toBe(
      path.join(out, 'cert.pem'),
    );

    const c = adsWith(out, 'ns1/client-0');
    const lds = await waitFor(
      "LDS for the agent's certificate",
      () => c.latest.get(TypeUrls.listener),
      15_000,
    );
    expect(lds.names).toEqual(['svc-client-0']);
    // The server knows the pod renews it itself (its open stream keeps the handshake's certificate).
    const record = ads.proxyStatus().find((p) => p.nodeId === 'ns1/client-0')!;
    expect(record.certificate).toMatchObject({ serialNumber: leaf.serialNumber, renewal: 'agent' });
    expect(ads.streamStats().certificateEnds).toEqual([{ end: Date.parse(leaf.validTo), renewal: 'agent' }]);

    // The app in the pod: gRPC Go's xDS client, given only GRPC_XDS_BOOTSTRAP=<the agent's file>.
    const calls = await runGrpcGoClient({
      bootstrap: path.join(out, 'grpc-bootstrap.json'),
      target: 'xds:///svc-client-0',
      count: 10,
    });
    expect(calls.errors, calls.stderr).toEqual([]);
    expect(calls.byBackend).toEqual({ 'who-client-0': 10 });
  });

  it('refuses an ADS stream without a certificate at the call, saying where to get one', async () => {
    const c = adsWith(undefined, 'ns1/client-0');
    const end = await withTimeout(c.ended, 15_000, 'a stream without a client certificate');
    expect(end.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(end.details).toBe(
      'no client certificate from the xDS CA: get one from this server first (meshdeck xds agent)',
    );
    expect(c.latest.size).toBe(0);
  });

  it('says why it refuses a token: another audience, no pod bound, a pod that is not a proxy, a deleted pod', async () => {
    const proxy = await createPod('client-1', { 'msm.l7mp.io/proxy': 'grpc' });
    const plain = await createPod('web-0', { app: 'web' });
    const gone = await createPod('client-2', { 'msm.l7mp.io/proxy': 'grpc' });
    const goneToken = await tokenFile('gone.token', { pod: gone });
    await core.deleteNamespacedPod({ name: 'client-2', namespace: NS, gracePeriodSeconds: 0 });
    const cases: [string, string, RegExp][] = [
      [
        'audience',
        await tokenFile('aud.token', { audience: 'vault', pod: proxy }),
        /said UNAUTHENTICATED: the token is not valid for audience "meshdeck"/,
      ],
      [
        'unbound',
        await tokenFile('unbound.token'),
        /said UNAUTHENTICATED: the token of system:serviceaccount:ns1:client is not bound to a pod/,
      ],
      [
        'plain',
        await tokenFile('plain.token', { pod: plain }),
        /said UNAUTHENTICATED: pod ns1\/web-0 is not a mesh proxy \(no msm\.l7mp\.io\/proxy label\)/,
      ],
      // The API server itself refuses a token whose pod is gone.
      ['gone', goneToken, /said UNAUTHENTICATED: the token is not valid for audience "meshdeck"/],
      ['missing', path.join(tmp, 'no-such.token'), /cannot read the token .*no-such\.token: ENOENT/],
    ];
    for (const [name, token, said] of cases) {
      const out = path.join(tmp, `refused-${name}`);
      const r = await agent(token, out);
      expect(r.code, name).toBe(2);
      expect(r.stderr, name).toMatch(said);
      expect(fs.existsSync(path.join(out, 'cert.pem')), name).toBe(false);
    }
  });

  it('renews at half the lifetime with a new key, and the renewed pair is still admitted', async () => {
    const pod = await createPod('client-3', { 'msm.l7mp.io/proxy': 'grpc' });
    const out = path.join(tmp, 'client-3');
    const said: string[] = [];
    const stop = new AbortController();
    const running = runXdsAgent(
      {
        host: '127.0.0.1',
        port,
        serverName: 'localhost',
        caFile: rootFile,
        tokenFile: await tokenFile('client-3.token', { pod }),
        out,
        validityMs: 20_000,
      },
      stop.signal,
      { info: (m) => said.push(m), warn: (m) => said.push(m) },
    );
    try {
      await waitFor('a first certificate', () => said.length >= 1, 15_000);
      const firstKey = fs.readFileSync(path.join(out, 'key.pem'), 'utf8');
      // Issued back-dated by a minute for clock skew, half of its 80 s is already behind it: the agent
      // renews after its floor of 5 s.
      await waitFor('a renewal', () => said.length >= 2, 20_000);
      stop.abort();
      await running;
      expect(said.every((m) => /has certificate [0-9A-F]+ until/.test(m))).toBe(true);
      const serials = said.map((m) => /certificate ([0-9A-F]+)/.exec(m)![1]);
      expect(new Set(serials).size).toBe(serials.length);
      expect(fs.readFileSync(path.join(out, 'key.pem'), 'utf8')).not.toBe(firstKey);
      const c = adsWith(out, 'ns1/client-3');
      const lds = await waitFor('LDS with the renewed pair', () => c.latest.get(TypeUrls.listener), 15_000);
      expect(lds.names).toEqual(['svc-client-3']);
    } finally {
      stop.abort();
      await running;
    }
  }, 60_000);
});

describe("meshdeck serve --kubeconfig: the root for the agents, in the proxies' namespaces", () => {
  it("publishes the xDS CA's root as a ConfigMap where proxies run, and an agent trusting it gets a certificate", async () => {
    await core.createNamespace({ body: { metadata: { name: 'meshdeck-system' } } });
    const xdsPort = await freePort('tcp');
    const stateDir = path.join(tmp, 'serve-state');
    const child = spawn(
      process.execPath,
      [
        MESHDECK_BIN,
        'serve',
        '--kubeconfig',
        kube.admin.kubeconfigPath,
        '--port',
        String(await freePort('tcp')),
        '--xds-listen',
        `127.0.0.1:${xdsPort}`,
      ],
      {
        env: {
          ...process.env,
          POD_NAME: 'meshdeck-0',
          POD_NAMESPACE: 'meshdeck-system',
          POD_IP: '127.0.0.1',
          MESHDECK_STATE_DIR: stateDir,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    served = { child, out: '' };
    const s = served;
    child.stdout!.on('data', (d: Buffer) => (s.out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (s.out += d.toString()));
    const configMap = await until(
      `ConfigMap ${NS}/${XDS_CA_ROOT_CONFIGMAP}`,
      async () =>
        core.readNamespacedConfigMap({ name: XDS_CA_ROOT_CONFIGMAP, namespace: NS }).catch(() => undefined),
      60_000,
      () => s.out.slice(-3000),
      200,
    );
    const secret = await kc().makeApiClient(k8s.CoreV1Api).readNamespacedSecret({
      name: 'meshdeck-xds-ca',
      namespace: 'meshdeck-system',
    });
    const rootPem = configMap.data!['ca.crt']!;
    expect(Buffer.from(secret.data!['ca.crt']!, 'base64').toString()).toBe(rootPem);
    expect(rootPem).not.toContain('PRIVATE KEY');
    // Only where proxies run: kube-public has none.
    await expect(
      core.readNamespacedConfigMap({ name: XDS_CA_ROOT_CONFIGMAP, namespace: 'kube-public' }),
    ).rejects.toMatchObject({ code: 404 });

    const caFile = path.join(tmp, 'mounted-ca.crt');
    fs.writeFileSync(caFile, rootPem);
    const pod = await createPod('client-4', { 'msm.l7mp.io/proxy': 'grpc' });
    const out = path.join(tmp, 'client-4');
    const r = await runMeshdeck([
      'xds',
      'agent',
      '--once',
      '--xds',
      `127.0.0.1:${xdsPort}`,
      '--server-name',
      'meshdeck.meshdeck-system.svc',
      '--ca-file',
      caFile,
      '--token-file',
      await tokenFile('client-4.token', { pod }),
      '--out',
      out,
    ]);
    expect(r.stderr + s.out.slice(-2000)).not.toMatch(/said|error/i);
    expect(r.code).toBe(0);
    const leaf = new X509Certificate(fs.readFileSync(path.join(out, 'cert.pem')));
    expect(leaf.subjectAltName).toBe('URI:spiffe://meshdeck/ns/ns1/pod/client-4');
    expect(leaf.verify(new X509Certificate(rootPem).publicKey)).toBe(true);

    // The replica announces where the other replicas reach its ADS port ($POD_IP) and serves them its
    // streams (replicaStreams.ts): a replica's certificate from the same CA is answered.
    await until(
      'the replicas line',
      () => s.out.includes('xDS replicas:'),
      30_000,
      () => s.out.slice(-3000),
    );
    expect(s.out).toContain(`xDS replicas: this one is meshdeck-0 at 127.0.0.1:${xdsPort};`);
    const lease = await kc()
      .makeApiClient(k8s.CoordinationV1Api)
      .readNamespacedLease({ name: replicaLeaseName('meshdeck-0'), namespace: 'meshdeck-system' });
    expect(lease.metadata?.annotations?.[XDS_ADDRESS_ANNOTATION]).toBe(`127.0.0.1:${xdsPort}`);
    const issuer = path.join(tmp, 'replica-issuer');
    await seedCaDir(issuer, {
      crt: Buffer.from(secret.data!['ca.crt']!, 'base64'),
      key: Buffer.from(secret.data!['ca.key']!, 'base64'),
    });
    const cm = new CertificateManager({ dir: issuer });
    const replicaCert = await cm.issue(XDS_SERVER_COMMON_NAME);
    const replicaRoot = await cm.root();
    const watcher = new ReplicaStreamsClient({
      address: `127.0.0.1:${xdsPort}`,
      replica: 'meshdeck-0',
      credentials: () =>
        grpc.credentials.createSsl(
          replicaRoot.certificateChain,
          replicaCert.privateKey,
          replicaCert.certificateChain,
        ),
      serverName: 'meshdeck.meshdeck-system.svc',
    });
    try {
      const state = await new Promise<{ connected: boolean; error?: string }>((r) =>
        watcher.once('state', r),
      );
      expect(state).toEqual({ connected: true });
      expect(watcher.proxyStatus()).toEqual([]);
    } finally {
      watcher.close();
    }
  }, 120_000);
});

describe("deploy/README.md's agent pod", () => {
  it('is a Pod the API server accepts, whose agent finds its token, root and output where the pod mounts them', async () => {
    const readme = fs.readFileSync(path.join(REPO_ROOT, 'deploy/README.md'), 'utf8');
    const block = /<!-- agent-pod -->\s*```yaml\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block).toBeDefined();
    const pod = parseYaml(block!) as any;
    pod.metadata = { ...pod.metadata, name: 'readme-client', namespace: NS };
    const created = await core.createNamespacedPod({ namespace: NS, body: pod });
    expect(created.spec!.initContainers![0]!.restartPolicy).toBe('Always');

    const agent = created.spec!.initContainers![0]!;
    const cmd = parseArgs(agent.args!);
    if (cmd.command !== 'xds' || cmd.sub !== 'agent') throw new Error(`not the agent: ${agent.args}`);
    const mountOf = (c: k8s.V1Container, volume: string) =>
      c.volumeMounts!.find((m) => m.name === volume)!.mountPath;
    const volume = (name: string) => created.spec!.volumes!.find((v) => v.name === name)!;
    const sources = volume('meshdeck-token').projected!.sources!;
    const token = sources.find((x) => x.serviceAccountToken)!.serviceAccountToken!;
    const root = sources.find((x) => x.configMap)!.configMap!;
    expect(token.audience).toBe(XDS_TOKEN_AUDIENCE);
    expect(path.join(mountOf(agent, 'meshdeck-token'), token.path)).toBe(cmd.tokenFile);
    expect(root.name).toBe(XDS_CA_ROOT_CONFIGMAP);
    expect(root.items).toEqual([{ key: XDS_CA_ROOT_KEY, path: path.basename(cmd.caFile) }]);
    expect(mountOf(agent, 'meshdeck-token')).toBe(path.dirname(cmd.caFile));
    expect(mountOf(agent, 'meshdeck-certs')).toBe(cmd.out);
    const app = created.spec!.containers[0]!;
    expect(app.env).toContainEqual({
      name: 'GRPC_XDS_BOOTSTRAP',
      value: path.join(cmd.out, AGENT_FILES.grpc),
    });
    expect(mountOf(app, 'meshdeck-certs')).toBe(cmd.out);
    expect(agent.startupProbe!.exec!.command).toEqual(['test', '-s', path.join(cmd.out, AGENT_FILES.grpc)]);
  });
});

describe('CaRootPublisher', () => {
  it('corrects a stale root, and after a recheck recreates one that was deleted', async () => {
    const namespace = 'ns2';
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    await core.createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: XDS_CA_ROOT_CONFIGMAP }, data: { [XDS_CA_ROOT_KEY]: 'an old root' } },
    });
    const said: string[] = [];
    const rootPem = fs.readFileSync(rootFile, 'utf8');
    const publisher = new CaRootPublisher({
      kubeConfig: kc(),
      rootPem,
      logger: { info: (m) => said.push(m), warn: (m) => said.push(`warn: ${m}`) },
    });
    const data = async () =>
      (await core.readNamespacedConfigMap({ name: XDS_CA_ROOT_CONFIGMAP, namespace }).catch(() => undefined))
        ?.data?.[XDS_CA_ROOT_KEY];
    await publisher.ensure([namespace]);
    expect(await data()).toBe(rootPem);
    await core.deleteNamespacedConfigMap({ name: XDS_CA_ROOT_CONFIGMAP, namespace });
    // Done once: not looked at again until a recheck.
    await publisher.ensure([namespace]);
    expect(await data()).toBeUndefined();
    publisher.recheck();
    await publisher.ensure([namespace]);
    expect(await data()).toBe(rootPem);
    expect(said).toEqual([
      `meshdeck kube: updated ConfigMap ${namespace}/${XDS_CA_ROOT_CONFIGMAP} (the xDS CA's root)`,
      `meshdeck kube: created ConfigMap ${namespace}/${XDS_CA_ROOT_CONFIGMAP} (the xDS CA's root)`,
    ]);
  });
});
