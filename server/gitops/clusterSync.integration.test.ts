/**
 * Sync from Git in Kubernetes mode against a REAL kube-apiserver and etcd and real git: the repository
 * holds seed Example 1's mesh resources, the cluster its Services; Meshdeck's identity has the controller's
 * ClusterRole (deploy/rbac.yaml: impersonation only) and the automated sync acts as
 * `meshdeck:gitops-sync`, which deploy/gitops-sync.yaml lets write the mesh kinds. What runs is read by
 * real informers into a real ClusterMirror, as `meshdeck serve --kubeconfig` does.
 */
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { DEFAULT_SYNC_USER, type SyncAttempt } from '@/lib/gitops/autoSync';
import { MESH_CRD_KINDS } from '@/lib/kube/crds';
import { ApplyHistory } from '../console/ApplyHistory';
import { DraftRegistry } from '../console/DraftRegistry';
import { ClusterClient } from '../kube/clusterClient';
import { ClusterMirror } from '../kube/clusterMirror';
import { KubeSource } from '../kube/kubeSource';
import { installCrds, until } from '../kube/replicasTestKit';
import { type KubeApiServer, kubeRequest, startKubeApiServer } from '../kube/testing/kubeApiServer';
import { clusterSyncTarget } from './clusterSyncTarget';
import { GitAutoSync } from './GitAutoSync';
import { GitOpsService } from './GitOpsService';
import { GitSyncWatcher } from './GitSyncWatcher';
import { repositoryConfigFile } from './repositoryConfig';
import { type SyncOrigin, syncOrigin } from './testing/syncOrigin';

type Obj = Record<string, any>;
const ROOT = path.resolve(__dirname, '../..');
const EXAMPLE = path.join(ROOT, 'examples/seed-example-1');
const MESH = '/apis/msm.l7mp.io/v1/namespaces/default';
const quiet = { info: () => {}, warn: () => {}, error: () => {} };

let kube: KubeApiServer;
let tmp: string;
let origin: SyncOrigin;
let source: KubeSource;
let mirror: ClusterMirror;
let watcher: GitSyncWatcher;
let autoSync: GitAutoSync;
let history: ApplyHistory;
let leading = true;
const syncs: string[] = [];

const asAdmin = (method: string, p: string, body?: unknown) =>
  kubeRequest(kube.url, kube.admin, method, p, body);
/** `kubectl edit` of the gateway's port: a read and an update by another field manager. */
async function kubectlEditPort(port: number) {
  const p = `${MESH}/virtualservices/gateway-vsvc`;
  const vs = (await asAdmin('GET', p)).body as Obj;
  vs.spec.udp.port = port;
  const res = await asAdmin('PUT', `${p}?fieldManager=kubectl-edit`, vs);
  expect(res.status, res.text).toBe(200);
}
const docs = (file: string): Obj[] =>
  parseAllDocuments(readFileSync(file, 'utf8'))
    .map((d) => d.toJS() as Obj)
    .filter(Boolean);
/** Commits a file's new text (undefined: deletes it) on the base branch; the new commit's id. */
const commit = (file: string, text: string | undefined, message: string) =>
  origin.commit(file, () => text, message);
const last = async (): Promise<SyncAttempt | undefined> => (await autoSync.view()).last;
const gatewayPort = async () =>
  ((await asAdmin('GET', `${MESH}/virtualservices/gateway-vsvc`)).body as Obj).spec?.udp?.port;

const EXTRA = `apiVersion: msm.l7mp.io/v1
kind: VirtualService
metadata: { name: extra-vsvc, namespace: default }
spec:
  selector: { serviceName: gateway-svc }
  udp: { port: 9500 }
  rules:
    - action: { route: { destination: worker-svc } }
`;

beforeAll(async () => {
  kube = await startKubeApiServer();
  const admin = new k8s.KubeConfig();
  admin.loadFromFile(kube.admin.kubeconfigPath);
  await installCrds(kube, admin);
  // The cluster's own objects: Example 1's Services (its Pods are the local mesh's simulation).
  for (const svc of docs(path.join(EXAMPLE, 'cluster.yaml')).filter((d) => d.kind === 'Service')) {
    const res = await asAdmin('POST', '/api/v1/namespaces/default/services', svc);
    expect(res.status, res.text).toBe(201);
  }
  for (const file of ['deploy/rbac.yaml', 'deploy/gitops-sync.yaml']) {
    for (const d of docs(path.join(ROOT, file))) {
      if (d.kind === 'ClusterRole' || d.kind === 'ClusterRoleBinding') {
        const plural = d.kind === 'ClusterRole' ? 'clusterroles' : 'clusterrolebindings';
        const res = await asAdmin('POST', `/apis/rbac.authorization.k8s.io/v1/${plural}`, d);
        expect(res.status, res.text).toBe(201);
      }
    }
  }
  // Meshdeck's own identity: the controller's ClusterRole, bound to it as deploy/rbac.yaml binds the SA.
  const meshdeck = await kube.addUser('meshdeck-console');
  const bound = await asAdmin('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    metadata: { name: 'meshdeck-console' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'meshdeck-controller' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'meshdeck-console' }],
  });
  expect(bound.status, bound.text).toBe(201);
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(meshdeck.kubeconfigPath);

  tmp = await mkdtemp(path.join(os.tmpdir(), 'md-cluster-sync-'));
  await mkdir(path.join(tmp, 'origin'));
  origin = syncOrigin(path.join(tmp, 'origin'));
  await commit('mesh.yaml', readFileSync(path.join(EXAMPLE, 'mesh.yaml'), 'utf8'), 'Example 1');

  source = new KubeSource({ kubeConfig: admin, coalesceMs: 20, logger: quiet });
  source.start();
  await source.whenSynced(90_000);
  mirror = new ClusterMirror(path.join(tmp, 'cluster'), source, { coalesceMs: 50, logger: quiet });
  await mirror.writeNow();
  mirror.start();

  const stateDir = path.join(tmp, 'state');
  await origin.configure(stateDir, { prune: true, selfHeal: true });
  const drafts = new DraftRegistry({ meshDir: mirror.dir, stateDir, logger: quiet });
  const gitops = GitOpsService.start({ stateDir, examplesDir: path.join(ROOT, 'examples'), drafts });
  history = new ApplyHistory({ dir: path.join(stateDir, 'console', 'applies'), logger: quiet });
  const target = clusterSyncTarget({
    client: new ClusterClient(kc),
    kinds: MESH_CRD_KINDS,
    mirrorDir: mirror.dir,
    history,
  });
  autoSync = new GitAutoSync({
    gitops,
    dir: path.join(stateDir, 'gitops'),
    target: () => target,
    automated: () => leading,
    logger: quiet,
    onSync: (trigger, result) => syncs.push(`${trigger}:${result}`),
  });
  watcher = new GitSyncWatcher({
    gitops,
    meshDir: mirror.dir,
    kinds: () => MESH_CRD_KINDS,
    everyMs: 3_600_000,
    autoSync,
    logger: quiet,
  });
}, 30 * 60_000);

afterAll(async () => {
  await watcher?.stop();
  await mirror?.stop();
  await source?.stop();
  await kube?.stop();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe('sync from Git to a real kube-apiserver', () => {
  it("writes Git's mesh resources into the cluster as meshdeck:gitops-sync, with the cluster's Services resolving them", async () => {
    await watcher.compareNow();
    const first = await last();
    expect(first, JSON.stringify(first)).toMatchObject({
      trigger: 'new-commit',
      user: DEFAULT_SYNC_USER,
      result: 'synced',
      left: [],
    });
    expect([...first!.applied].sort()).toEqual([
      'VirtualService/default/gateway-vsvc',
      'VirtualService/default/transcoder-vsvc',
    ]);
    const vs = (await asAdmin('GET', `${MESH}/virtualservices/gateway-vsvc`)).body as Obj;
    expect(vs.spec.udp.port).toBe(9001);
    expect((vs.metadata.managedFields as Obj[]).map((m) => m.manager)).toContain('meshdeck');
    expect(watcher.last).toMatchObject({ counts: { modified: 0, missing: 0, extra: 0 } });
    const [record] = await history.list();
    expect(record).toMatchObject({
      target: 'cluster',
      user: DEFAULT_SYNC_USER,
      git: { trigger: 'new-commit' },
    });
  });

  it('a replica that does not hold the Lease compares and waits; the leader syncs the new commit', async () => {
    const text = readFileSync(path.join(origin.dir, 'mesh.yaml'), 'utf8');
    const c = await commit('mesh.yaml', text.replace('port: 9001', 'port: 9002'), 'gateway on 9002');
    leading = false;
    await watcher.compareNow();
    expect((await last())!.commit).not.toBe(c);
    expect((await autoSync.view()).waiting).toMatch(/the replica holding the Lease syncs them$/);
    expect(await gatewayPort()).toBe(9001);
    // Nor does it change the policy: it reads its own state directory's config, the Lease holder's syncs.
    const config = readFileSync(repositoryConfigFile(path.join(tmp, 'state')), 'utf8');
    expect(await autoSync.setPolicy({ user: 'ann', groups: [] }, null)).toEqual({
      status: 409,
      error: expect.stringMatching(/^this replica does not hold the Lease/),
    });
    expect((await autoSync.view()).policyReadOnly).toMatch(/^this replica does not hold the Lease/);
    expect(readFileSync(repositoryConfigFile(path.join(tmp, 'state')), 'utf8')).toBe(config);
    leading = true;
    await watcher.compareNow();
    expect(await last()).toMatchObject({
      commit: c,
      result: 'synced',
      applied: ['VirtualService/default/gateway-vsvc'],
    });
    expect(await gatewayPort()).toBe(9002);
  });

  it('self-heal takes back a kubectl edit (taking over its field), and prune deletes what Git dropped', async () => {
    await commit('extra.yaml', EXTRA, 'an extra VirtualService');
    await watcher.compareNow();
    expect((await asAdmin('GET', `${MESH}/virtualservices/extra-vsvc`)).status).toBe(200);

    await kubectlEditPort(9099);
    const c = await commit('extra.yaml', undefined, 'no extra VirtualService');
    await watcher.compareNow();
    expect(await last()).toMatchObject({
      commit: c,
      trigger: 'new-commit',
      result: 'synced',
      applied: ['VirtualService/default/gateway-vsvc'],
      deleted: ['VirtualService/default/extra-vsvc'],
    });
    expect(await gatewayPort()).toBe(9002);
    expect((await asAdmin('GET', `${MESH}/virtualservices/extra-vsvc`)).status).toBe(404);

    // The same commit, edited again: self-heal.
    await kubectlEditPort(9098);
    await until('the mirror shows the edit', async () => {
      await watcher.compareNow();
      return (await last())!.trigger === 'drift';
    });
    expect(await last()).toMatchObject({ commit: c, trigger: 'drift', result: 'synced' });
    expect(await gatewayPort()).toBe(9002);
  });

  it('holds a commit whose route names no Service in Git or the cluster; Sync now as a user without rights fails with Forbidden', async () => {
    const text = readFileSync(path.join(origin.dir, 'mesh.yaml'), 'utf8');
    const c = await commit(
      'mesh.yaml',
      text.replace('destination: worker-svc', 'destination: no-such-svc'),
      'typo',
    );
    await watcher.compareNow();
    const held = await last();
    expect(held).toMatchObject({ commit: c, result: 'held', applied: [] });
    expect(held!.diagnostics!.join('\n')).toContain('no-such-svc');
    expect(syncs.filter((s) => s.endsWith(':held'))).toHaveLength(1);

    await commit('mesh.yaml', text.replace('port: 9002', 'port: 9003'), 'fixed, gateway on 9003');
    const denied = await autoSync.syncNow({ user: 'bob@example.com', groups: [] }, false);
    expect(denied).toMatchObject({
      trigger: 'manual',
      user: 'bob@example.com',
      result: 'failed',
      applied: [],
    });
    expect((denied as SyncAttempt).error).toMatch(/refused the apply \(nothing was written\).*Forbidden/);
    expect(await gatewayPort()).toBe(9002);
  });
});
