// Replicas share their xDS clients (server/xds/replicaStreams.ts, server/kube/replicaPeers.ts), with real
// parts: a REAL kube-apiserver and etcd holding examples/grpc-canary, the shared CA Secret and the
// replicas' Leases; two replicas (KubeControlPlane with its own MeshXdsPublisher and mTLS AdsServer from
// listenKubeAds, as two pods run them); a proxy's raw ADS stream over mTLS with a certificate from the
// shared CA, open at the replica that does NOT lead. The leader must still see it: Programmed True on
// the objects, and its console-side tracker naming the replica. Leases are short (renew 300 ms, 3 s);
// waits are bounded, never timed.
import { cp, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdsServer } from '../xds/AdsServer';
import { CertificateManager } from '../xds/CertificateManager';
import { TypeUrls } from '../xds/envoyProtos';
import { MeshXdsPublisher } from '../xds/meshXds';
import { ReplicaStreamsClient, type ReplicaStatus } from '../xds/replicaStreams';
import { connectRawAds, type RawAdsClient } from '../xds/testing/rawAdsClient';
import { clusterStats, connectRawLrs } from '../xds/testing/rawLrsClient';
import { KubeConsole } from './kubeConsole';
import { KubeControlPlane } from './kubeControlPlane';
import { listenKubeAds } from './listenKubeAds';
import { REPLICA_LABEL, replicaLeaseName, XDS_ADDRESS_ANNOTATION } from './replicaPeers';
import { installCrds, NS, until } from './replicasTestKit';
import { applyGrpcCanary, GRPC_CANARY_CLIENT as CLIENT, programmedBecomes } from './testing/grpcCanaryKube';
import { type KubeApiServer, startKubeApiServer } from './testing/kubeApiServer';

interface Replica {
  id: string;
  cp: KubeControlPlane;
  ads: AdsServer;
  xds: MeshXdsPublisher;
  port: number;
  caDir: string;
}

let kube: KubeApiServer;
let kc: k8s.KubeConfig;
let custom: k8s.CustomObjectsApi;
let tmp: string;
const replicas: Replica[] = [];
const clients: RawAdsClient[] = [];
const consoles: KubeConsole[] = [];
const logs: string[] = [];
const context = () => `log:\n${logs.slice(-40).join('\n')}`;

async function startReplica(id: string): Promise<Replica> {
  const logger = {
    info: (m: string) => logs.push(`[${id}] info ${m}`),
    warn: (m: string) => logs.push(`[${id}] warn ${m}`),
    error: (m: string) => logs.push(`[${id}] error ${m}`),
  };
  const xds = new MeshXdsPublisher();
  const ads = new AdsServer({ cache: xds.cache, logger });
  const caDir = path.join(tmp, id, 'xds-ca');
  const { port, peerCredentials } = await listenKubeAds(ads, {
    kubeConfig: kc,
    namespace: NS,
    host: '127.0.0.1',
    port: 0,
    caDir,
    signing: false,
    replicaStreams: { replica: id, coalesceMs: 50 },
  });
  const cp = KubeControlPlane.start({
    kubeConfig: kc,
    identity: id,
    leaseNamespace: NS,
    xds,
    xdsServer: ads,
    peers: {
      address: `127.0.0.1:${port}`,
      credentials: peerCredentials!,
      serverName: 'localhost',
      renewMs: 300,
      leaseDurationSeconds: 3,
      backoff: { baseMs: 100, capMs: 1000 },
    },
    leaseDurationSeconds: 3,
    renewDeadlineMs: 2000,
    retryPeriodMs: 300,
    controller: { source: { backoff: { baseMs: 200, capMs: 2000 } }, statusCoalesceMs: 50 },
    logger,
  });
  const r = { id, cp, ads, xds, port, caDir };
  replicas.push(r);
  return r;
}

/** A proxy's certificate from the shared CA (a copy of the one every replica seeded from the Secret). */
async function proxyCertificate(nodeId: string) {
  const cm = new CertificateManager({ dir: path.join(tmp, 'issuer') });
  return { cert: await cm.issue(nodeId), root: await cm.root() };
}

/** A proxy's mTLS ADS stream to `r` as `nodeId`. */
async function proxyStream(r: Replica, nodeId: string): Promise<RawAdsClient> {
  const { cert, root } = await proxyCertificate(nodeId);
  const c = connectRawAds({
    address: `127.0.0.1:${r.port}`,
    credentials: grpc.credentials.createSsl(root.certificateChain, cert.privateKey, cert.certificateChain),
    channelOptions: { 'grpc.ssl_target_name_override': 'localhost', 'grpc.default_authority': 'localhost' },
    nodeId,
    subscriptions: [[TypeUrls.listener, ['echo']]],
    decodeNames: true,
  });
  clients.push(c);
  return c;
}

const stopped = new Set<Replica>();
async function stopReplica(r: Replica): Promise<void> {
  if (stopped.has(r)) return;
  stopped.add(r);
  await r.cp.stop();
  await r.ads.stop();
  r.xds.cache.close();
}

beforeAll(async () => {
  kube = await startKubeApiServer();
  tmp = await mkdtemp(path.join(os.tmpdir(), 'md-replica-streams-'));
  kc = new k8s.KubeConfig();
  kc.loadFromFile(kube.admin.kubeconfigPath);
  custom = kc.makeApiClient(k8s.CustomObjectsApi);
  await installCrds(kube, kc);
  // No backend needs to answer: the client only streams ADS (its RPCs are not part of this test).
  await applyGrpcCanary(kc, 50051);
  const a = await startReplica('a');
  await until('a leads', () => a.cp.health().leading, 20_000, context);
  await startReplica('b');
  for (const r of replicas) await r.cp.controller.whenSynced(30_000);
  await cp(a.caDir, path.join(tmp, 'issuer'), { recursive: true });
}, 240_000);

afterAll(async () => {
  for (const c of consoles) c.stop();
  for (const c of clients) c.close();
  for (const r of replicas) await stopReplica(r);
  await kube?.stop();
  if (tmp) await rm(tmp, { recursive: true, force: true });
}, 60_000);

describe('replicas share their xDS clients (real kube-apiserver, mTLS between replicas)', () => {
  it('each replica announces itself with a Lease saying where its ADS port is', async () => {
    const coordination = kc.makeApiClient(k8s.CoordinationV1Api);
    const leases = await until(
      'both replica Leases',
      async () => {
        const { items } = await coordination.listNamespacedLease({
          namespace: NS,
          labelSelector: REPLICA_LABEL,
        });
        return items.length === 2 ? items : undefined;
      },
      20_000,
      context,
    );
    const byName = Object.fromEntries(leases.map((l) => [l.metadata!.name!, l]));
    for (const r of replicas) {
      const lease = byName[replicaLeaseName(r.id)]!;
      expect(lease.spec?.holderIdentity).toBe(r.id);
      expect(lease.metadata?.annotations?.[XDS_ADDRESS_ANNOTATION]).toBe(`127.0.0.1:${r.port}`);
    }
    await until('each follows the other', () =>
      replicas.every((r) => r.cp.peers!.peers().some((p) => p.connected)),
    );
    expect(replicas[0]!.cp.peers!.peers().map((p) => p.replica)).toEqual(['b']);
    expect(replicas[1]!.cp.peers!.peers().map((p) => p.replica)).toEqual(['a']);
    // GET /api/health says it too (and the metric meshdeck_xds_replica_peers counts it).
    expect(replicas[0]!.cp.health().peers).toEqual([
      { replica: 'b', address: `127.0.0.1:${replicas[1]!.port}`, connected: true, streams: 0 },
    ]);
  });

  it("a dead replica's Lease is not followed, and deleted once it is 10 minutes old", async () => {
    const coordination = kc.makeApiClient(k8s.CoordinationV1Api);
    const lease = (name: string, renewedMsAgo: number): k8s.V1Lease => ({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name: replicaLeaseName(name),
        labels: { [REPLICA_LABEL]: 'true' },
        annotations: { [XDS_ADDRESS_ANNOTATION]: '127.0.0.1:1' },
      },
      spec: {
        holderIdentity: name,
        leaseDurationSeconds: 3,
        renewTime: new Date(Date.now() - renewedMsAgo).toISOString().replace(/Z$/, '000Z') as never,
      },
    });
    // Gone a minute ago (crashed): not followed, kept a while. Gone an hour ago: deleted.
    await coordination.createNamespacedLease({ namespace: NS, body: lease('stale', 60_000) });
    await coordination.createNamespacedLease({ namespace: NS, body: lease('ghost', 3600_000) });
    await until(
      'the ghost Lease deleted',
      () =>
        coordination.readNamespacedLease({ name: replicaLeaseName('ghost'), namespace: NS }).then(
          () => false,
          (e: { code?: number }) => e.code === 404,
        ),
      10_000,
      context,
    );
    const stale = await coordination.readNamespacedLease({ name: replicaLeaseName('stale'), namespace: NS });
    expect(stale.spec?.holderIdentity).toBe('stale');
    for (const r of replicas) expect(r.cp.peers!.peers().map((p) => p.replica)).not.toContain('stale');
    await coordination.deleteNamespacedLease({ name: replicaLeaseName('stale'), namespace: NS });
  });

  it('a client streaming from the replica that does not lead: the leader programs its objects True', async () => {
    const [a, b] = replicas as [Replica, Replica];
    expect(a.cp.health().leading).toBe(true);
    expect(b.cp.health().leading).toBe(false);
    // Unknown first: nobody streams yet.
    await programmedBecomes(custom, 'VirtualService', 'echo', 'Unknown', undefined, context);
    const client = await proxyStream(b, CLIENT);
    await until('LDS from b', () => client.latest.get(TypeUrls.listener), 15_000, context);
    const p = await programmedBecomes(custom, 'VirtualService', 'echo', 'True', undefined, context);
    expect(p).toMatchObject({ reason: 'Programmed', message: `programmed on ${CLIENT}` });
    expect(a.ads.proxyStatus()).toEqual([]);
    const seen = a.cp.peers!.proxyStatus();
    expect(seen.map((s) => [s.nodeId, s.replica, s.status.LDS])).toEqual([[CLIENT, 'b', 'SYNCED']]);
    expect(seen[0]!.identity).toBe(CLIENT);
  });

  it("the leader's console lists the client as synced at b, and counts the load it reports to b", async () => {
    const [a, b] = replicas as [Replica, Replica];
    const console = new KubeConsole({
      cp: a.cp,
      server: kube.url,
      xds: { server: a.ads, publisher: a.xds, listen: `127.0.0.1:${a.port}`, tls: true },
    });
    consoles.push(console);
    const entry = await until(
      'the client in live state',
      () => {
        const p = console.live.get().proxies[CLIENT];
        return p?.phase === 'synced' ? p : undefined;
      },
      10_000,
      context,
    );
    expect(entry.xds).toMatchObject({ connected: true, replica: 'b', identity: CLIENT });
    // Its RPCs as it reports them (LRS) to the replica it streams from.
    const cluster = b.xds.last!.snapshots[CLIENT]!.clusters[0]!.name;
    const { cert, root } = await proxyCertificate(CLIENT);
    const lrs = connectRawLrs({
      address: `127.0.0.1:${b.port}`,
      credentials: grpc.credentials.createSsl(root.certificateChain, cert.privateKey, cert.certificateChain),
      channelOptions: { 'grpc.ssl_target_name_override': 'localhost', 'grpc.default_authority': 'localhost' },
    });
    try {
      lrs.write({ node: { id: CLIENT }, cluster_stats: [] });
      await until('the LoadStatsResponse', () => lrs.responses.length > 0, 10_000, context);
      lrs.write({ cluster_stats: [clusterStats(cluster, { issued: 40, succeeded: 39, failed: 1 })] });
      const counted = await until(
        "the report at a's console",
        () => console.loadReports.between(0, Date.now())[cluster],
        10_000,
        context,
      );
      expect(counted).toEqual({ issued: 40, succeeded: 39, failed: 1, dropped: 0 });
      // b's own console adapter would have it too: a's came through b, not from the client.
      expect(a.ads.proxyStatus()).toEqual([]);
    } finally {
      lrs.close();
    }
  });

  it('only replicas may watch: a proxy certificate is refused, naming what it holds', async () => {
    const { cert, root } = await proxyCertificate('ns1/envoy-0');
    const watcher = new ReplicaStreamsClient({
      address: `127.0.0.1:${replicas[1]!.port}`,
      replica: 'b',
      credentials: () =>
        grpc.credentials.createSsl(root.certificateChain, cert.privateKey, cert.certificateChain),
      serverName: 'localhost',
      backoff: { baseMs: 5000, capMs: 5000 },
    });
    const got: ReplicaStatus[] = [];
    watcher.on('status', (s) => got.push(s));
    try {
      const state = await new Promise<{ connected: boolean; error?: string }>((r) =>
        watcher.once('state', r),
      );
      expect(state.connected).toBe(false);
      expect(state.error).toBe(
        'the client certificate names ns1/envoy-0: only Meshdeck replicas (meshdeck-system/xds-server) may watch the ADS streams',
      );
      expect(got).toEqual([]);
    } finally {
      watcher.close();
    }
  });

  it('the replica the client streams from stops: its Lease goes, the leader says the stream closed', async () => {
    await stopReplica(replicas[1]!);
    const coordination = kc.makeApiClient(k8s.CoordinationV1Api);
    await expect(
      coordination.readNamespacedLease({ name: replicaLeaseName('b'), namespace: NS }),
    ).rejects.toMatchObject({ code: 404 });
    const p = await programmedBecomes(custom, 'VirtualService', 'echo', 'Unknown', undefined, context);
    expect(p).toMatchObject({
      reason: 'NotConnected',
      message: `not connected over xDS: ${CLIENT}: its ADS stream closed (it keeps the config it had, if any)`,
    });
    await until('a follows nobody', () => replicas[0]!.cp.peers!.peers().length === 0, 10_000, context);
    expect(replicas[0]!.cp.peers!.proxyStatus()).toEqual([]);
  });
});
