/**
 * Progressive rollouts in Kubernetes mode against a REAL kube-apiserver and etcd: the Target is applied
 * as the console applies it (field manager `meshdeck`, as a user RBAC lets write the mesh kinds), what
 * runs is read by real informers into a real ClusterMirror, and each step is a server-side apply of the
 * split alone by Meshdeck's own identity (deploy/rbac.yaml: impersonation only) acting as the user who
 * started the rollout. Steps are judged by real webhooks on 127.0.0.1 (ephemeral ports).
 */
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { POST as postClusterApply } from '@/app/api/cluster/apply/route';
import { POST as postClusterDryRun } from '@/app/api/cluster/dry-run/route';
import { GET as getRollouts, POST as postRollout } from '@/app/api/rollouts/route';
import { MESH_CRD_KINDS } from '@/lib/kube/crds';
import { ROLLOUT_IN_PROGRESS, splitOwners } from '@/lib/kube/rolloutSplit';
import { ENDED_PHASES, type RolloutSpecInput, type RolloutState } from '@/lib/rollout/rollout';
import { ApplyHistory } from '../console/ApplyHistory';
import { ConsoleAuth, getConsoleAuth, setConsoleAuth } from '../console/consoleAuth';
import { setConsoleContext } from '../console/consoleContext';
import { DraftRegistry } from '../console/DraftRegistry';
import { SELF_HEAL_CONFLICT, SERVER_LAYOUTS_ENV, serveConsole } from '../console/serveConsole';
import { jsonPost } from '../console/testing/jsonPost';
import { clusterSyncTarget } from '../gitops/clusterSyncTarget';
import { syncOrigin } from '../gitops/testing/syncOrigin';
import { ClusterApply } from '../kube/clusterApply';
import { ClusterClient } from '../kube/clusterClient';
import { setClusterContext } from '../kube/clusterContext';
import { ClusterMirror } from '../kube/clusterMirror';
import { KubeSource } from '../kube/kubeSource';
import { installCrds, type Obj, until } from '../kube/replicasTestKit';
import { type KubeApiServer, kubeRequest, startKubeApiServer } from '../kube/testing/kubeApiServer';
import { clusterRolloutTarget, NOT_LEADER, ROLLOUT_FIELD_MANAGER } from './clusterRolloutTarget';
import { NO_PROBES, RolloutRunner } from './RolloutRunner';
import type { RolloutTarget } from './RolloutTarget';

const ROOT = path.resolve(__dirname, '../..');
const TARGET_PATH = '/apis/msm.l7mp.io/v1/namespaces/default/targets/echo-canary';
const REF = { namespace: 'default', name: 'echo-canary' };
const quiet = { info: () => {}, warn: () => {}, error: () => {} };
/** May write the mesh kinds (deploy/gitops-sync.yaml's ClusterRole, bound to her here). */
const ANN = { user: 'ann', groups: ['mesh-admins'] };
/** May read Targets, not patch them. */
const BOB = { user: 'bob', groups: [] };
/** The console's own field manager (server/kube/clusterApply.ts). */
const CONSOLE_MANAGER = 'meshdeck';

/** The Target as a draft has it: a load balancer and a label besides the split, so other fields exist. */
const targetYaml = (w1: number, w2: number) => `apiVersion: msm.l7mp.io/v1
kind: Target
metadata:
  name: echo-canary
  namespace: default
  labels: { app: echo }
spec:
  loadbalancer: { policy: ConsistentHash, key: /IP/src_addr }
  split:
    - { serviceName: echo-v1, weight: ${w1} }
    - { serviceName: echo-v2, weight: ${w2} }
`;

let kube: KubeApiServer;
let tmp: string;
let source: KubeSource;
let mirror: ClusterMirror;
let client: ClusterClient;
let history: ApplyHistory;
let target: RolloutTarget;
let runner: RolloutRunner;
let leading = true;
const ended: string[] = [];

const asAdmin = (method: string, p: string, body?: unknown) =>
  kubeRequest(kube.url, kube.admin, method, p, body);
const docs = (file: string): Obj[] =>
  parseAllDocuments(readFileSync(file, 'utf8'))
    .map((d) => d.toJS() as Obj)
    .filter(Boolean);
const liveTarget = async () => {
  const res = await asAdmin('GET', TARGET_PATH);
  expect(res.status, res.text).toBe(200);
  return res.body as Obj;
};
const liveWeights = async () =>
  ((await liveTarget()).spec.split as Obj[]).map((e) => `${e.serviceName} ${e.weight}`);
const managers = (t: Obj): Record<string, Obj> =>
  Object.fromEntries((t.metadata.managedFields as Obj[]).map((m) => [m.manager, m]));
/** The split of the Target in a file map (a history record's side). */
const splitIn = (files: Record<string, string>) =>
  Object.values(files)
    .flatMap((text) => parseAllDocuments(text).map((d) => d.toJS() as Obj))
    .find((d) => d?.kind === 'Target' && d.metadata?.name === 'echo-canary')
    ?.spec.split.map((e: Obj) => `${e.serviceName} ${e.weight}`);

const started = async (spec: RolloutSpecInput, actor = ANN): Promise<RolloutState> => {
  const out = await runner.start(spec, actor);
  if (!('rollout' in out)) throw new Error(`not started: ${JSON.stringify(out)}`);
  return out.rollout;
};
/** The rollout once it ended or paused (bounded). */
const settled = (id: string) =>
  until(
    `rollout ${id} to settle`,
    () => {
      const s = runner.get(id);
      return s && (ENDED_PHASES.has(s.phase) || s.phase === 'paused') && s;
    },
    60_000,
    () => JSON.stringify(runner.get(id)),
  );

/** A webhook on 127.0.0.1 (an ephemeral port): each call's body, answered with `answer(call index)`. */
async function judge(answer: (i: number) => number | Promise<number>) {
  const calls: Obj[] = [];
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      const i = calls.push(JSON.parse(text) as Obj) - 1;
      void Promise.resolve(answer(i)).then((status) => res.writeHead(status).end());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/judge`,
    calls,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

beforeAll(async () => {
  kube = await startKubeApiServer();
  const admin = new k8s.KubeConfig();
  admin.loadFromFile(kube.admin.kubeconfigPath);
  await installCrds(kube, admin);
  for (const file of ['deploy/rbac.yaml', 'deploy/gitops-sync.yaml']) {
    for (const d of docs(path.join(ROOT, file))) {
      if (d.kind === 'ClusterRole' || d.kind === 'ClusterRoleBinding') {
        const plural = d.kind === 'ClusterRole' ? 'clusterroles' : 'clusterrolebindings';
        const res = await asAdmin('POST', `/apis/rbac.authorization.k8s.io/v1/${plural}`, d);
        expect(res.status, res.text).toBe(201);
      }
    }
  }
  const rbac = [
    // ann may write the mesh kinds, with the role deploy/ gives the sync from Git.
    ['clusterrolebindings', { name: 'ann', role: 'meshdeck-gitops-sync', user: 'ann' }],
    // Meshdeck's own identity: the controller's ClusterRole (impersonation, no writes of its own).
    [
      'clusterrolebindings',
      { name: 'meshdeck-console', role: 'meshdeck-controller', user: 'meshdeck-console' },
    ],
    ['clusterrolebindings', { name: 'bob', role: 'target-reader', user: 'bob' }],
  ] as const;
  const reader = await asAdmin('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
    metadata: { name: 'target-reader' },
    rules: [{ apiGroups: ['msm.l7mp.io'], resources: ['targets'], verbs: ['get', 'list', 'watch'] }],
  });
  expect(reader.status, reader.text).toBe(201);
  for (const [plural, b] of rbac) {
    const res = await asAdmin('POST', `/apis/rbac.authorization.k8s.io/v1/${plural}`, {
      metadata: { name: b.name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: b.role },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: b.user }],
    });
    expect(res.status, res.text).toBe(201);
  }
  const meshdeck = await kube.addUser('meshdeck-console');
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(meshdeck.kubeconfigPath);
  client = new ClusterClient(kc);

  // The Target as the console's Apply writes it: field manager `meshdeck`, as ann.
  const applied = await new ClusterApply(client, ANN).apply({ 'default/mesh.yaml': targetYaml(80, 20) });
  expect(applied.ok, JSON.stringify(applied.objects)).toBe(true);

  tmp = await mkdtemp(path.join(os.tmpdir(), 'md-cluster-rollout-'));
  source = new KubeSource({ kubeConfig: admin, coalesceMs: 20, logger: quiet });
  source.start();
  await source.whenSynced(90_000);
  // A mirror slower than the steps: a step that did not wait for it would be read back stale.
  mirror = new ClusterMirror(path.join(tmp, 'cluster'), source, { coalesceMs: 400, logger: quiet });
  await mirror.writeNow();
  mirror.start();
  history = new ApplyHistory({ dir: path.join(tmp, 'state', 'console', 'applies'), logger: quiet });
  target = clusterRolloutTarget({
    client,
    mirrorDir: mirror.dir,
    leading: () => leading,
    history,
    logger: quiet,
  });
  runner = new RolloutRunner({
    target,
    stateDir: path.join(tmp, 'state'),
    logger: quiet,
    metrics: { ended: (x) => ended.push(x), analysed: () => {} },
  });
  await runner.load();
}, 30 * 60_000);

afterAll(async () => {
  await runner?.stop();
  await mirror?.stop();
  await source?.stop();
  await kube?.stop();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe('progressive rollouts in Kubernetes mode (a real kube-apiserver, real webhooks)', () => {
  it('steps 50 and 100 judged by a webhook take the split to 0/100 in the cluster; the rollout owns spec.split alone', async () => {
    const hook = await judge(() => 200);
    try {
      expect(await target.split(REF)).toEqual([
        { serviceName: 'echo-v1', weight: 80 },
        { serviceName: 'echo-v2', weight: 20 },
      ]);
      const r = await started({
        target: REF,
        canary: 'echo-v2',
        steps: [50, 100],
        pauseS: 0,
        analysis: { webhook: { url: hook.url } },
      });
      expect(r).toMatchObject({ target: 'cluster', user: 'ann', initial: [80, 20] });
      const done = await settled(r.id);
      // Read back at once: each step waited for the mirror (slower than the steps) to show it.
      expect(await target.split(REF)).toEqual([
        { serviceName: 'echo-v1', weight: 0 },
        { serviceName: 'echo-v2', weight: 100 },
      ]);
      expect(done.phase, done.message).toBe('succeeded');
      expect(done.weights).toEqual([0, 100]);
      expect(hook.calls.map((c) => [c.step, c.weights])).toEqual([
        [0, [50, 50]],
        [1, [0, 100]],
      ]);
      expect(await liveWeights()).toEqual(['echo-v1 0', 'echo-v2 100']);

      // The other fields stay, and stay the console's; the rollout's manager owns spec.split alone.
      const live = await liveTarget();
      expect(live.spec.loadbalancer).toEqual({ policy: 'ConsistentHash', key: '/IP/src_addr' });
      expect(live.metadata.labels).toEqual({ app: 'echo' });
      const byManager = managers(live);
      expect(byManager[ROLLOUT_FIELD_MANAGER]).toMatchObject({
        operation: 'Apply',
        fieldsV1: { 'f:spec': { 'f:split': {} } },
      });
      const consoleFields = byManager[CONSOLE_MANAGER]!.fieldsV1 as Obj;
      expect(consoleFields['f:spec']).toEqual({ 'f:loadbalancer': { 'f:key': {}, 'f:policy': {} } });
      expect(consoleFields['f:metadata']).toEqual({ 'f:labels': { 'f:app': {} } });

      // One record per step, as ann, each a diff of the weights alone.
      const records = (await history.list()).filter((h) => h.rollout?.id === r.id);
      expect(records.map((h) => h.rollout)).toEqual([
        { id: r.id, step: 1, of: 2, percent: 100, action: 'step' },
        { id: r.id, step: 0, of: 2, percent: 50, action: 'step' },
      ]);
      for (const h of records)
        expect(h).toMatchObject({
          target: 'cluster',
          user: 'ann',
          draft: 'rollout',
          applied: ['default/mesh.yaml'],
          objects: [{ key: 'Target/default/echo-canary', action: 'update', done: true }],
          force: true,
        });
      expect(done.steps.map((s) => s.historyId)).toEqual(records.map((h) => h.id).reverse());
      const last = (await history.get(records[0]!.id))!;
      expect(splitIn(last.before.files)).toEqual(['echo-v1 50', 'echo-v2 50']);
      expect(splitIn(last.after.files)).toEqual(['echo-v1 0', 'echo-v2 100']);
      const file = 'default/mesh.yaml';
      expect(last.after.files[file]!.replace(/weight: \d+/g, 'weight: N')).toBe(
        last.before.files[file]!.replace(/weight: \d+/g, 'weight: N'),
      );

      // The console's next apply of a draft that changes the split sees whose it is now.
      const plan = await new ClusterApply(client, ANN).dryRun({ [file]: targetYaml(80, 20) });
      const conflict = plan.objects.find((o) => o.ref.key === 'Target/default/echo-canary');
      expect(conflict?.action, JSON.stringify(conflict)).toBe('conflict');
      expect(conflict!.conflicts).toEqual([
        expect.objectContaining({ manager: ROLLOUT_FIELD_MANAGER, field: 'spec.split' }),
      ]);
      expect(ended).toEqual(['succeeded']);
    } finally {
      await hook.close();
    }
  });

  it('a webhook answering 500 rolls the split back to its weights before the rollout', async () => {
    const hook = await judge(() => 500);
    try {
      const r = await started({
        target: REF,
        canary: 'echo-v1',
        steps: [50, 100],
        pauseS: 0,
        analysis: { webhook: { url: hook.url } },
      });
      expect(r.initial).toEqual([0, 100]);
      const done = await settled(r.id);
      expect(done.phase, done.message).toBe('rolled-back');
      expect(done.message).toBe(
        'step 1 of 2 (50%) failed: the webhook answered 500; rolled back to echo-v1 0, echo-v2 100',
      );
      expect(await liveWeights()).toEqual(['echo-v1 0', 'echo-v2 100']);
      // The step ran (50/50 in the cluster, judged by the webhook), then the rollback.
      expect(hook.calls.map((c) => c.weights)).toEqual([[50, 50]]);
      const records = (await history.list()).filter((h) => h.rollout?.id === r.id);
      expect(records.map((h) => [h.id, h.rollout?.action, h.rollout?.percent])).toEqual([
        [done.rollbackHistoryId, 'rollback', 0],
        [done.steps[0]!.historyId, 'step', 50],
      ]);
      const rollback = (await history.get(done.rollbackHistoryId!))!;
      expect(splitIn(rollback.before.files)).toEqual(['echo-v1 50', 'echo-v2 50']);
      expect(splitIn(rollback.after.files)).toEqual(['echo-v1 0', 'echo-v2 100']);
      expect(ended.at(-1)).toBe('rolled-back');
    } finally {
      await hook.close();
    }
  });

  it('a user without patch on targets: the step fails with Forbidden, nothing changes in the cluster', async () => {
    const before = await liveTarget();
    const weights = await liveWeights();
    const records = (await history.list()).length;
    const r = await started({ target: REF, canary: 'echo-v1', steps: [50], pauseS: 0 }, BOB);
    const done = await settled(r.id);
    expect(done.steps[0]!.error).toMatch(
      /^the API server refused the split of Target default\/echo-canary: Forbidden: .*User "bob" cannot patch resource "targets"/,
    );
    expect(done.steps[0]!.appliedAt).toBeUndefined();
    // The runner rolls back; bob may not write the weights before the rollout either.
    expect(done.phase, done.message).toBe('failed');
    expect(done.message).toMatch(
      /^step 1 of 1 \(50%\) failed: applying it failed: .*Forbidden.*; rolling back failed: .*Forbidden/,
    );
    const after = await liveTarget();
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(await liveWeights()).toEqual(weights);
    expect(await history.list()).toHaveLength(records);
    expect(ended.at(-1)).toBe('failed');
  });

  it('refuses a probe analysis (422 on analysis.probe): probes are sent on the local mesh only', async () => {
    const count = runner.list().length;
    const weights = await liveWeights();
    const out = await runner.start(
      {
        target: REF,
        canary: 'echo-v1',
        steps: [50],
        analysis: { probe: { listener: 'gateway' }, webhook: { url: 'http://127.0.0.1:9/' } },
      },
      ANN,
    );
    expect(out).toEqual({
      status: 422,
      error: NO_PROBES,
      fields: [{ path: 'analysis.probe', message: NO_PROBES }],
    });
    expect(runner.list()).toHaveLength(count);
    expect(await liveWeights()).toEqual(weights);
  });

  it('a replica that loses the Lease during a step writes nothing more: paused, actions refused (503) until it leads again', async () => {
    let release: (() => void) | undefined;
    const hook = await judge((i) =>
      i === 0 ? new Promise<number>((resolve) => (release = () => resolve(200))) : 200,
    );
    try {
      const r = await started({
        target: REF,
        canary: 'echo-v1',
        steps: [50, 100],
        pauseS: 0,
        analysis: { webhook: { url: hook.url, timeoutMs: 60_000 } },
      });
      await until('the first step to be judged', () => release !== undefined);
      leading = false;
      release!();
      const paused = await settled(r.id);
      expect(paused.phase, paused.message).toBe('paused');
      expect(paused.message).toBe(
        `step 1 of 2 (50%) passed; paused, nothing more written: ${NOT_LEADER}. Resume or abort once rollouts run here again`,
      );
      expect(await liveWeights()).toEqual(['echo-v1 50', 'echo-v2 50']);
      for (const action of ['resume', 'abort', 'pause', 'promote'] as const)
        expect(await runner.act(r.id, action, ANN)).toEqual({ status: 503, error: NOT_LEADER });
      expect(await runner.start({ target: REF, canary: 'echo-v2', steps: [100] }, ANN)).toEqual({
        status: 503,
        error: NOT_LEADER,
      });
      // The target refuses on its own too (a step already under way when the Lease goes).
      expect(
        await target.setWeights(REF, [100, 0], {
          actor: ANN,
          rollout: { id: r.id, step: 1, of: 2, percent: 100, action: 'step' },
        }),
      ).toEqual({ error: NOT_LEADER });
      expect(await liveWeights()).toEqual(['echo-v1 50', 'echo-v2 50']);

      leading = true;
      expect(await runner.act(r.id, 'resume', ANN)).toMatchObject({ rollout: { phase: 'progressing' } });
      const done = await settled(r.id);
      expect(done.phase, done.message).toBe('succeeded');
      expect(await liveWeights()).toEqual(['echo-v1 100', 'echo-v2 0']);
      expect(hook.calls.map((c) => [c.step, c.weights])).toEqual([
        [0, [50, 50]],
        [0, [50, 50]],
        [1, [100, 0]],
      ]);
      // The resumed step's weights ran already: nothing new written, so no record for it.
      const records = (await history.list()).filter((h) => h.rollout?.id === r.id);
      expect(records.map((h) => h.rollout?.percent)).toEqual([100, 50]);
    } finally {
      release?.();
      leading = true;
      await hook.close();
    }
  });

  it('a part of an object the cluster does not have is refused (NotFound), not created', async () => {
    const partial = JSON.stringify({
      apiVersion: 'msm.l7mp.io/v1',
      kind: 'Target',
      metadata: { name: 'no-such-target', namespace: 'default' },
      spec: { split: [{ serviceName: 'echo-v1', weight: 1 }] },
    });
    const out = await new ClusterApply(client, ANN).apply(
      { 'part.yaml': partial },
      { force: true, kinds: ['Target'], partial: { fieldManager: ROLLOUT_FIELD_MANAGER } },
    );
    expect(out).toMatchObject({ applied: false, ok: false });
    expect(out.objects).toEqual([
      expect.objectContaining({
        action: 'error',
        done: false,
        error: expect.objectContaining({ reason: 'NotFound' }),
      }),
    ]);
    const res = await asAdmin('GET', '/apis/msm.l7mp.io/v1/namespaces/default/targets/no-such-target');
    expect(res.status).toBe(404);
  });

  it('serveConsole wires the cluster target: a replica without the Lease answers 503 (GET lists, unavailable), self-heal 409', async () => {
    const stateDir = path.join(tmp, 'served');
    const originDir = path.join(tmp, 'origin');
    await mkdir(originDir, { recursive: true });
    const origin = syncOrigin(originDir);
    // Read once at start: GitOps's config holds the policy the console runs with.
    await origin.configure(stateDir, { prune: false, selfHeal: true });
    const layouts = process.env[SERVER_LAYOUTS_ENV];
    process.env[SERVER_LAYOUTS_ENV] = '0';
    const served = await serveConsole({
      meshDir: mirror.dir,
      host: '127.0.0.1',
      port: 3987,
      token: 'cluster-rollout-token',
      stateDir,
      examplesDir: path.join(ROOT, 'examples'),
      localMesh: false,
      logger: quiet,
      gitSyncEveryMs: 0,
      sync: {
        target: (h) =>
          clusterSyncTarget({ client, kinds: MESH_CRD_KINDS, mirrorDir: mirror.dir, history: h }),
        automated: () => false,
      },
      rollouts: {
        target: (h) =>
          clusterRolloutTarget({ client, mirrorDir: mirror.dir, leading: () => leading, history: h }),
      },
    });
    try {
      const session = getConsoleAuth()!.open({ ...ANN, method: 'oidc' });
      const base = 'http://127.0.0.1:3100/api/rollouts';
      const spec = JSON.stringify({ target: REF, canary: 'echo-v2', steps: [50], pauseS: 0 });
      const weights = await liveWeights();
      leading = false;
      const listed = await getRollouts(new Request(base));
      expect(await listed.json()).toEqual({ available: false, reason: NOT_LEADER, rollouts: [] });
      const refused = await postRollout(jsonPost(base, spec, session));
      expect(refused.status).toBe(503);
      expect(await refused.json()).toEqual({ error: NOT_LEADER });

      leading = true;
      expect(await (await getRollouts(new Request(base))).json()).toMatchObject({ available: true });
      const healing = await postRollout(jsonPost(base, spec, session));
      expect(healing.status).toBe(409);
      expect(await healing.json()).toEqual({ error: SELF_HEAL_CONFLICT });
      expect(await liveWeights()).toEqual(weights);
    } finally {
      leading = true;
      await served.dispose();
      if (layouts === undefined) delete process.env[SERVER_LAYOUTS_ENV];
      else process.env[SERVER_LAYOUTS_ENV] = layouts;
    }
  });
});

describe("a console apply or a sync from Git and a rollout's split (a real kube-apiserver)", () => {
  const PROMOTE = { namespace: 'default', name: 'echo-promote' };
  const PROMOTE_PATH = '/apis/msm.l7mp.io/v1/namespaces/default/targets/echo-promote';
  const KEY = 'Target/default/echo-promote';
  /** The Target as a draft has it: a load balancer and a label besides its backends (`spec` lines). */
  const promoteYaml = (backends: string, label = 'echo') => `apiVersion: msm.l7mp.io/v1
kind: Target
metadata:
  name: echo-promote
  namespace: default
  labels: { app: ${label} }
spec:
  loadbalancer: { policy: ConsistentHash, key: /IP/src_addr }
${backends}`;
  const withSplit = (w1: number, w2: number) =>
    `  split:\n    - { serviceName: echo-v1, weight: ${w1} }\n    - { serviceName: echo-v2, weight: ${w2} }\n`;
  /** The canary promoted: the Target sends everything to echo-v2 by name, with no split. */
  const promoted = '  serviceName: echo-v2\n';
  /** Another object of the same draft, which a refused apply must not create either. */
  const side = `---
apiVersion: msm.l7mp.io/v1
kind: Target
metadata: { name: echo-side, namespace: default }
spec: { serviceName: echo-v1 }
`;
  const auth = new ConsoleAuth('rollout-split-route-token');
  let drafts = 0;
  const livePromote = async () => {
    const res = await asAdmin('GET', PROMOTE_PATH);
    expect(res.status, res.text).toBe(200);
    return res.body as Obj;
  };
  /** The split's owners, and whether the rollout's manager has an entry at all. */
  const ownership = (t: Obj) => ({
    split: splitOwners(t).map((o) => o.manager),
    rolloutEntry: (t.metadata.managedFields as Obj[]).some((m) => m.manager === ROLLOUT_FIELD_MANAGER),
  });
  /** The mirror shows echo-promote's split at these weights (what a rollout reads), bounded. */
  const mirrored = (weights: number[]) =>
    until(`the mirror to show echo-promote at ${weights.join('/')}`, async () => {
      const split = await target.split(PROMOTE);
      return !('error' in split) && split.map((e) => e.weight).join('/') === weights.join('/');
    });

  /**
   * The console's Apply of a draft holding `mesh`, through the route handlers as the browser calls them
   * (ann's session, the dry-run for the revision, then the apply), with the console's rollout runner.
   */
  async function consoleApply(mesh: string, options: { force?: boolean } = {}) {
    const dir = path.join(tmp, `drafts-${++drafts}`);
    await mkdir(path.join(dir, 'mesh'), { recursive: true });
    await writeFile(path.join(dir, 'mesh', 'mesh.yaml'), mesh);
    const registry = new DraftRegistry({
      meshDir: path.join(dir, 'mesh'),
      stateDir: path.join(dir, 'state'),
      logger: quiet,
    });
    setConsoleContext({ drafts: registry, examplesDir: path.join(ROOT, 'examples'), rollouts: runner });
    const session = auth.open({ ...ANN, method: 'oidc' });
    const base = 'http://127.0.0.1:3100/api/cluster';
    const dry = await postClusterDryRun(jsonPost(`${base}/dry-run`, JSON.stringify(options), session));
    expect(dry.status).toBe(200);
    const plan = (await dry.json()) as Obj;
    const res = await postClusterApply(
      jsonPost(`${base}/apply`, JSON.stringify({ ...options, revision: plan.revision }), session),
    );
    const answer = (await res.json()) as Obj;
    const row = (x: Obj) => (x.objects as Obj[]).find((o) => o.ref.key === KEY)!;
    return { plan, planned: row(plan), status: res.status, answer, outcome: row(answer) };
  }

  beforeAll(async () => {
    setConsoleAuth(auth);
    setClusterContext({ client, applyKinds: MESH_CRD_KINDS });
    const created = await consoleApply(promoteYaml(withSplit(80, 20)));
    expect(created.status, JSON.stringify(created.answer)).toBe(200);
    await mirrored([80, 20]);
  });
  afterAll(() => {
    setConsoleAuth(undefined);
    setConsoleContext(undefined);
    setClusterContext(undefined);
  });

  it("after a rollout, a draft with the split as it runs is applied; one that promotes to a serviceName releases the rollout's split", async () => {
    const r = await started({ target: PROMOTE, canary: 'echo-v2', steps: [50], pauseS: 0 });
    const done = await settled(r.id);
    expect(done.phase, done.message).toBe('succeeded');
    expect(ownership(await livePromote())).toEqual({ split: [ROLLOUT_FIELD_MANAGER], rolloutEntry: true });

    // Nothing runs: a draft that leaves the split as it runs goes through (the console's manager shares it).
    const kept = await consoleApply(promoteYaml(withSplit(50, 50), 'echo-kept'));
    expect(kept.status, JSON.stringify(kept.answer)).toBe(200);
    expect(kept.planned).not.toHaveProperty('release');
    const afterKept = await livePromote();
    expect(afterKept.metadata.labels).toEqual({ app: 'echo-kept' });
    expect(afterKept.spec.split.map((e: Obj) => e.weight)).toEqual([50, 50]);
    expect(ownership(afterKept).split.sort()).toEqual([CONSOLE_MANAGER, ROLLOUT_FIELD_MANAGER]);

    // Promoted by name: the dry-run shows the split's removal and the release, and writes nothing.
    const promote = await consoleApply(promoteYaml(promoted, 'echo-kept'));
    expect(promote.planned, JSON.stringify(promote.plan)).toMatchObject({
      action: 'update',
      release: { manager: ROLLOUT_FIELD_MANAGER, field: 'spec.split' },
      note: expect.stringContaining(`spec.split is released from ${ROLLOUT_FIELD_MANAGER}`),
    });
    expect(promote.planned.diff).toEqual([
      { path: 'spec.serviceName', after: 'echo-v2' },
      { path: 'spec.split', before: afterKept.spec.split },
    ]);
    expect(promote.plan.ok).toBe(true);
    expect(promote.status, JSON.stringify(promote.answer)).toBe(200);
    expect(promote.outcome).toMatchObject({
      action: 'update',
      done: true,
      note: `released spec.split from ${ROLLOUT_FIELD_MANAGER}: the split is gone, as the draft has it`,
    });
    const live = await livePromote();
    expect(live.spec).toEqual({
      loadbalancer: { policy: 'ConsistentHash', key: '/IP/src_addr' },
      serviceName: 'echo-v2',
    });
    expect(ownership(live)).toEqual({ split: [], rolloutEntry: false });
    expect(managers(live)[CONSOLE_MANAGER]!.fieldsV1['f:spec']).toHaveProperty('f:serviceName');
  });

  it('a rollout that runs holds an apply or a sync that would undo its split (409, nothing written); once aborted, a sync without the split removes it', async () => {
    const reset = await consoleApply(promoteYaml(withSplit(80, 20)));
    expect(reset.status, JSON.stringify(reset.answer)).toBe(200);
    await mirrored([80, 20]);
    const hook = await judge(() => 500);
    try {
      const r = await started({
        target: PROMOTE,
        canary: 'echo-v2',
        steps: [50, 100],
        pauseS: 0,
        analysis: { webhook: { url: hook.url } },
        onFailure: 'pause',
      });
      const paused = await settled(r.id);
      expect(paused.phase, paused.message).toBe('paused');
      const before = await livePromote();
      expect(before.spec.split.map((e: Obj) => e.weight)).toEqual([50, 50]);

      for (const [mesh, force] of [
        [promoteYaml(promoted) + side, false],
        [promoteYaml(promoted) + side, true],
        [promoteYaml(withSplit(80, 20)) + side, true],
      ] as const) {
        const held = await consoleApply(mesh, { force });
        expect(held.status, JSON.stringify(held.answer)).toBe(409);
        expect(held.planned).toMatchObject({
          action: 'error',
          error: { status: 409, reason: ROLLOUT_IN_PROGRESS },
        });
        expect(held.plan.ok).toBe(false);
        expect(held.answer).toMatchObject({ applied: false, ok: false });
        expect(held.answer.error).toContain(
          `Target default/echo-promote: rollout ${r.id} of echo-v2 is paused at step 1 of 2 (50%)`,
        );
        expect(held.answer.error).toContain('Abort or finish the rollout first');
        expect((held.answer.objects as Obj[]).every((o) => !o.done)).toBe(true);
      }
      expect((await livePromote()).metadata.resourceVersion).toBe(before.metadata.resourceVersion);
      expect((await asAdmin('GET', '/apis/msm.l7mp.io/v1/namespaces/default/targets/echo-side')).status).toBe(
        404,
      );

      // The split as it runs: the apply goes through while the rollout runs.
      const asRuns = await consoleApply(promoteYaml(withSplit(50, 50), 'echo-during'));
      expect(asRuns.status, JSON.stringify(asRuns.answer)).toBe(200);
      expect((await livePromote()).metadata.labels).toEqual({ app: 'echo-during' });

      // Sync from Git: the same refusal is the sync's error, nothing written (a prune of the Target too).
      const sync = clusterSyncTarget({
        client,
        kinds: MESH_CRD_KINDS,
        mirrorDir: mirror.dir,
        rollouts: () => runner.list(),
        settleMs: 5_000,
      });
      const how = { actor: ANN, commit: 'c0ffee0', trigger: 'manual' as const };
      const refused = await sync.apply({ 'mesh.yaml': promoteYaml(promoted) }, { ...how, prune: false });
      expect(refused).toMatchObject({ applied: [], deleted: [] });
      expect(refused.error).toMatch(
        new RegExp(
          `^the dry-run gate refused the apply \\(nothing was written\\): ${KEY}: ${ROLLOUT_IN_PROGRESS}: .*rollout ${r.id} .*remove its split`,
        ),
      );
      const pruned = await sync.apply({ 'mesh.yaml': side }, { ...how, prune: true });
      expect(pruned).toMatchObject({ applied: [], deleted: [] });
      expect(pruned.error).toMatch(/this apply would delete the Target/);
      const during = await livePromote();
      expect(during.spec.split.map((e: Obj) => e.weight)).toEqual([50, 50]);

      expect(await runner.act(r.id, 'abort', ANN)).toMatchObject({ rollout: { id: r.id } });
      const aborted = await settled(r.id);
      expect(aborted.phase, aborted.message).toBe('aborted');
      await mirrored([80, 20]);
      // The rollback was forced over the console's share: the rollout's manager owns the split alone.
      expect(ownership(await livePromote())).toEqual({ split: [ROLLOUT_FIELD_MANAGER], rolloutEntry: true });

      const synced = await sync.apply({ 'mesh.yaml': promoteYaml(promoted) }, { ...how, prune: false });
      expect(synced.error).toBeUndefined();
      expect(synced.applied).toEqual([KEY]);
      const live = await livePromote();
      expect(live.spec).toEqual({
        loadbalancer: { policy: 'ConsistentHash', key: '/IP/src_addr' },
        serviceName: 'echo-v2',
      });
      expect(ownership(live)).toEqual({ split: [], rolloutEntry: false });
    } finally {
      await hook.close();
    }
  });
});
