// The console in Kubernetes mode, against a REAL kube-apiserver and REAL l7mp processes: seed Example 2 as
// custom resources; the replica leads (a real Lease); the drafts start from the cluster's objects (the
// mirror directory); the console's own route handlers dry-run and apply an edit with server-side apply as
// the signed-in user; the edit reaches the CR, the l7mp proxy, the mirror and the live state. The local
// apply (POST /api/apply) is refused here: it would only write into the mirror.
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify as stringifyYaml } from 'yaml';
import { liveSync } from '@/lib/gitops/liveSync';
import { POST as postLocalApply } from '@/app/api/apply/route';
import { POST as postApply } from '@/app/api/cluster/apply/route';
import { POST as postDryRun } from '@/app/api/cluster/dry-run/route';
import { GET as getEvents } from '@/app/api/cluster/events/route';
import { GET as getDisk } from '@/app/api/draft/disk/route';
import { POST as postRebase } from '@/app/api/draft/rebase/route';
import { compileMesh } from '@/lib/engine/compileMesh';
import { MESH_CRD_KINDS } from '@/lib/kube/kubeSnapshot';
import { parseManifests } from '@/lib/parse/parseManifests';
import { convertSeedDialect } from '@/lib/parse/seedDialect';
import { ConsoleAuth, CSRF_HEADER, SESSION_COOKIE, setConsoleAuth } from '../console/consoleAuth';
import { setConsoleContext } from '../console/consoleContext';
import { ApplyHistory } from '../console/ApplyHistory';
import { DraftRegistry } from '../console/DraftRegistry';
import { setControlPlane } from '../controlPlane/registry';
import { freePort, type L7mpProcess, startL7mp } from '../testing/startL7mp';
import { ClusterClient } from './clusterClient';
import { setClusterContext } from './clusterContext';
import { ClusterMirror } from './clusterMirror';
import { KubeConsole } from './kubeConsole';
import { KubeControlPlane } from './kubeControlPlane';
import {
  applySeed,
  GOLDEN,
  GROUP,
  installCrds,
  live,
  localizer,
  NS,
  type Obj,
  until,
} from './replicasTestKit';
import { type KubeApiServer, startKubeApiServer } from './testing/kubeApiServer';

const PROXIES: Record<string, { pod: string; goldenIp: string; ip: string }> = {
  [`${NS}/gateway-0`]: { pod: 'gateway-0', goldenIp: '10.0.1.1', ip: '127.0.0.6' },
  [`${NS}/worker-0`]: { pod: 'worker-0', goldenIp: '10.0.4.1', ip: '127.0.0.7' },
  [`${NS}/worker-1`]: { pod: 'worker-1', goldenIp: '10.0.4.2', ip: '127.0.0.8' },
};
/** The admin kubeconfig's user: Meshdeck's own identity here, and the console user it acts for. */
const ADMIN = { user: 'admin', groups: ['system:masters'] };

let kube: KubeApiServer;
let kc: k8s.KubeConfig;
let tmp: string;
const procs: Record<string, L7mpProcess> = {};
let ports: Record<number, number>;
let cp: KubeControlPlane;
let mirror: ClusterMirror;
let view: KubeConsole;
let drafts: DraftRegistry;
let applies: ApplyHistory;
const auth = new ConsoleAuth('kube-console-test-token');
const logs: string[] = [];
const context = () => `log:\n${logs.slice(-30).join('\n')}`;
const logger = {
  info: (m: string) => logs.push(`info ${m}`),
  warn: (m: string) => logs.push(`warn ${m}`),
  error: (m: string) => logs.push(`error ${m}`),
};

beforeAll(async () => {
  const ids = Object.keys(PROXIES);
  const started = await Promise.all([startKubeApiServer(), ...ids.map(() => startL7mp())]);
  kube = started[0] as KubeApiServer;
  ids.forEach((id, i) => (procs[id] = started[i + 1] as L7mpProcess));
  ports = {};
  for (const p of [8001, 8002, 19000, 19001]) ports[p] = await freePort('udp', '0.0.0.0');
  const localize = localizer(
    Object.fromEntries(Object.values(PROXIES).map((p) => [p.goldenIp, p.ip])),
    ports,
  );
  kc = new k8s.KubeConfig();
  kc.loadFromFile(kube.admin.kubeconfigPath);
  await installCrds(kube, kc);
  await applySeed(
    kc,
    'seed-example-2',
    localize,
    Object.fromEntries(ids.map((id) => [PROXIES[id]!.pod, procs[id]!.apiPort])),
  );
  cp = KubeControlPlane.start({
    kubeConfig: kc,
    identity: 'console-replica',
    leaseDurationSeconds: 3,
    renewDeadlineMs: 2000,
    retryPeriodMs: 300,
    controller: { reconciler: { driftIntervalMs: 1000 }, statusCoalesceMs: 50 },
    logger,
  });
  // Generous: on a loaded 2-core machine six informers' first lists can take long.
  await cp.controller.whenSynced(90_000);
  tmp = await mkdtemp(path.join(os.tmpdir(), 'md-kube-console-'));
  // Wired as kubeControlPlaneServe.ts does: the view hears the mirror's writes after its first one.
  mirror = new ClusterMirror(path.join(tmp, 'cluster'), cp.controller.source, {
    coalesceMs: 50,
    logger,
    onWritten: (paths) => view?.mirrored(paths),
  });
  await mirror.writeNow();
  mirror.start();
  view = new KubeConsole({ cp, server: kc.getCurrentCluster()!.server, pollMs: 200 });
  drafts = new DraftRegistry({ meshDir: mirror.dir, stateDir: path.join(tmp, 'state'), logger });
  setConsoleAuth(auth);
  applies = new ApplyHistory({ dir: path.join(tmp, 'applies'), logger });
  setConsoleContext({ drafts, applies, examplesDir: path.join(tmp, 'no-examples') });
  setControlPlane(view);
  setClusterContext({ client: new ClusterClient(kc), applyKinds: MESH_CRD_KINDS });
}, 240_000);

afterAll(async () => {
  setConsoleAuth(undefined);
  setConsoleContext(undefined);
  setControlPlane(undefined);
  setClusterContext(undefined);
  view?.stop();
  await mirror?.stop();
  await cp?.stop();
  await Promise.all(Object.values(procs).map((p) => p.stop()));
  await kube?.stop();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

const sessionHeaders = () => {
  const session = auth.open({ ...ADMIN, method: 'oidc' });
  return {
    'content-type': 'application/json',
    cookie: `${SESSION_COOKIE}=${session.id}`,
    [CSRF_HEADER]: session.csrfToken,
  };
};

const post = (handler: (r: Request) => Promise<Response>, route: string, body: unknown) =>
  handler(
    new Request(`http://127.0.0.1:3100${route}`, {
      method: 'POST',
      headers: sessionHeaders(),
      body: JSON.stringify(body),
    }),
  );

const mirrorFiles = async () =>
  Object.fromEntries(
    await Promise.all(
      ['default/mesh.yaml', 'default/cluster.yaml'].map(
        async (f) => [f, await readFile(path.join(mirror.dir, f), 'utf8').catch(() => '')] as const,
      ),
    ),
  );

describe('the console in Kubernetes mode (real API server, real l7mp)', () => {
  it('shows the cluster: live state in Kubernetes mode, the leader, every proxy in sync', async () => {
    await until(
      'leading, three proxies synced',
      () => {
        const s = view.live.get();
        const proxies = Object.values(s.proxies);
        return (
          s.mesh.cluster?.leading === true &&
          proxies.length === 3 &&
          proxies.every((p) => p.inSync && p.phase === 'synced')
        );
      },
      30_000,
      context,
    );
    const s = view.live.get();
    expect(s.mesh).toMatchObject({
      mode: 'kubernetes',
      cluster: { server: kube.url, leader: 'console-replica', leading: true },
    });
    expect(Object.keys(s.proxies).sort()).toEqual(Object.keys(PROXIES).sort());
    expect(s.proxies[`${NS}/gateway-0`]!.apiUrl).toBe(
      `http://127.0.0.6:${procs[`${NS}/gateway-0`]!.apiPort}`,
    );
    expect(s.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  });

  it("starts drafts from the cluster's objects, which compile to exactly what the controller pushes", async () => {
    const files = await mirrorFiles();
    expect(files['default/mesh.yaml']).toContain('name: gateway-user-a-vsvc');
    expect(files['default/cluster.yaml']).toContain('kind: Pod');
    const draft = (await (await drafts.get('main'))!.get()).draft;
    expect(Object.keys(draft.files).sort()).toEqual(['default/cluster.yaml', 'default/mesh.yaml']);
    const compiled = compileMesh(
      parseManifests(Object.entries(draft.files).map(([p, content]) => ({ path: p, content }))),
    );
    expect(compiled.l7mp.proxies).toEqual(cp.controller.compiled!.l7mp.proxies);
  });

  it("what runs vs. Git: the cluster's mesh objects, through the API server and the mirror, are what Git holds", async () => {
    // Git holds what was applied (applySeed: the seed's objects converted, then given this test's
    // addresses and ports). lib/gitops/liveSync.ts compares values, so the round trip through the API
    // server (server metadata, status) and the mirror's own layout must leave every mesh object in sync,
    // and the cluster's Pods out of the comparison. (Git in the seed's dialect: lib/gitops/liveSync.test.ts.)
    const localize = localizer(
      Object.fromEntries(Object.values(PROXIES).map((p) => [p.goldenIp, p.ip])),
      ports,
    );
    const golden = readFileSync(path.join(GOLDEN, 'seed-example-2.in.yaml'), 'utf8');
    const meshDocs = parseAllDocuments(golden)
      .map((d) => d.toJS() as Obj)
      .filter((o) => o && /MSM|msm/.test(String(o.apiVersion)))
      .map((o) => stringifyYaml(localize(convertSeedDialect(o).object)));
    expect(meshDocs.length).toBe(7);
    const git = { 'mesh.yaml': `# as applied\n${meshDocs.join('---\n')}` };
    const s = liveSync(git, await mirrorFiles(), MESH_CRD_KINDS);
    expect(s.counts).toEqual({ synced: 7, modified: 0, missing: 0, extra: 0 });
    expect(s.entries.every((e) => e.kind !== 'Pod' && e.kind !== 'Service')).toBe(true);
    // One field changed in Git: named, with both values.
    const changed = { 'mesh.yaml': git['mesh.yaml'].replace('num_retries: 3', 'num_retries: 4') };
    expect(changed['mesh.yaml']).not.toBe(git['mesh.yaml']);
    const d = liveSync(changed, await mirrorFiles(), MESH_CRD_KINDS);
    expect(d.counts.modified).toBe(1);
    expect(d.entries[0]).toMatchObject({
      key: `Route/${NS}/gateway-route`,
      fields: [{ path: 'spec.retry.num_retries', before: 4, after: 3 }],
    });
  });

  it('dry-runs and applies an edited draft with server-side apply; the proxy, the mirror and live state follow', async () => {
    const store = (await drafts.get('main'))!;
    const state = await store.get();
    const newPort = await freePort('udp', '0.0.0.0');
    const docs = parseAllDocuments(state.draft.files['default/mesh.yaml']!);
    const vsvc = docs.find((d) => d.getIn(['metadata', 'name']) === 'gateway-user-a-vsvc')!;
    expect(vsvc.getIn(['spec', 'udp', 'port'])).toBe(ports[8001]);
    vsvc.setIn(['spec', 'udp', 'port'], newPort);
    const edited = docs.map((d) => d.toString()).join('---\n');
    const saved = await store.save({
      draft: { ...state.draft, files: { ...state.draft.files, 'default/mesh.yaml': edited } },
      baseRevision: state.revision,
    });
    expect(saved.ok, JSON.stringify(saved)).toBe(true);
    const revision = (saved as { revision: number }).revision;

    // The local apply would write into the mirror: refused, with where to go instead.
    const local = await post(postLocalApply, '/api/apply', { revision });
    expect(local.status).toBe(409);
    expect(((await local.json()) as Obj).error).toMatch(/\/api\/cluster\/apply/);

    // The seed's objects were created by another client, which owns spec.udp.port: a conflict, named.
    const first = (await (await post(postDryRun, '/api/cluster/dry-run', {})).json()) as Obj;
    const conflict = (first.objects as Obj[]).find(
      (o) => o.ref.key === 'VirtualService/default/gateway-user-a-vsvc',
    )!;
    expect(conflict.action).toBe('conflict');
    expect(conflict.conflicts).toContainEqual(expect.objectContaining({ field: 'spec.udp.port' }));
    expect(first.ok).toBe(false);

    const dry = await post(postDryRun, '/api/cluster/dry-run', { force: true });
    const plan = (await dry.json()) as Obj;
    expect(dry.status, JSON.stringify(plan)).toBe(200);
    const byKey = Object.fromEntries((plan.objects as Obj[]).map((o) => [o.ref.key, o]));
    expect(byKey['VirtualService/default/gateway-user-a-vsvc']).toMatchObject({ action: 'update' });
    expect(byKey['VirtualService/default/gateway-user-a-vsvc']!.diff).toContainEqual(
      expect.objectContaining({ path: 'spec.udp.port', before: ports[8001], after: newPort }),
    );
    expect(byKey['VirtualService/default/gateway-user-b-vsvc']).toMatchObject({ action: 'unchanged' });
    // The cluster's own Services, read back into the draft, are never taken over by the console.
    expect(byKey['Service/default/gateway-svc']).toMatchObject({ action: 'skipped' });
    expect(plan.access).toMatchObject({ allowed: true });

    const applied = await post(postApply, '/api/cluster/apply', { revision: plan.revision, force: true });
    const result = (await applied.json()) as Obj;
    expect(applied.status, JSON.stringify(result)).toBe(200);

    const custom = kc.makeApiClient(k8s.CustomObjectsApi);
    const cr = (await custom.getNamespacedCustomObject({
      ...GROUP,
      namespace: NS,
      plural: 'virtualservices',
      name: 'gateway-user-a-vsvc',
    })) as Obj;
    expect(cr.spec.udp.port).toBe(newPort);
    const gw = procs[`${NS}/gateway-0`]!;
    await until(
      'the gateway listens on the new port',
      async () => (await live(gw, '127.0.0.6')).listeners.some((l) => l.spec.port === newPort),
      30_000,
      context,
    );
    await until('the mirror shows the new port', async () =>
      (await mirrorFiles())['default/mesh.yaml']!.includes(`port: ${newPort}`),
    );
    await until('live state shows the gateway in sync again', () => {
      const g = view.live.get().proxies[`${NS}/gateway-0`];
      return g?.inSync && g.phase === 'synced';
    });
  });

  it('a draft behind the cluster: named, refused at apply, rebased onto the cluster, or overwritten on request', async () => {
    const store = (await drafts.get('main'))!;
    const summary = async () =>
      (await (await getDisk(new Request('http://127.0.0.1:3100/api/draft/disk?summary=1'))).json()) as Obj;
    // The draft's own applied edit (the port above) is in the cluster too: not a change to warn about.
    expect((await summary()).cluster).toEqual([]);
    const mirroredAt = view.live.get().mesh.cluster?.mirroredAt;

    // Someone else (kubectl edit, a GitOps tool) changes a Route the draft did not touch.
    const custom = kc.makeApiClient(k8s.CustomObjectsApi);
    const route = { ...GROUP, namespace: NS, plural: 'routes', name: 'gateway-route' };
    const setRetries = async (n: number) => {
      // A merge patch, as `kubectl patch --type merge` sends: no resourceVersion to race the status writes.
      await custom.patchNamespacedCustomObject(
        { ...route, body: { spec: { retry: { num_retries: n } } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
      await until(`the mirror shows num_retries ${n}`, async () =>
        (await mirrorFiles())['default/mesh.yaml']!.includes(`num_retries: ${n}`),
      );
    };
    await setRetries(5);
    // The mirror's write of a mesh object tells the console to ask again.
    await until(
      'live state says the mirror wrote',
      () => view.live.get().mesh.cluster?.mirroredAt !== mirroredAt,
    );
    const behind = {
      key: `Route/${NS}/gateway-route`,
      change: 'modified',
      fields: ['spec.retry.num_retries'],
      draftChanged: false,
    };
    expect((await summary()).cluster).toEqual([expect.objectContaining(behind)]);
    // The dialog's files: the mesh files only (a large cluster's Services and EndpointSlices stay home).
    const full = (await (await getDisk(new Request('http://127.0.0.1:3100/api/draft/disk'))).json()) as Obj;
    expect(Object.keys(full.disk.files)).toEqual(['default/mesh.yaml']);
    expect(Object.keys(full.base.files)).toEqual(['default/mesh.yaml']);
    expect(full.disk.files['default/mesh.yaml']).toContain('num_retries: 5');
    const dry = (await (await post(postDryRun, '/api/cluster/dry-run', { force: true })).json()) as Obj;
    expect(dry.clusterChanges).toEqual([expect.objectContaining(behind)]);

    // Applying the draft as it is would set num_retries back to 3: refused, naming the object and field.
    const refused = await post(postApply, '/api/cluster/apply', { revision: dry.revision, force: true });
    const refusal = (await refused.json()) as Obj;
    expect(refused.status).toBe(409);
    expect(refusal.error).toContain('gateway-route (modified in the cluster: spec.retry.num_retries)');
    expect(refusal.clusterChanges).toEqual([expect.objectContaining(behind)]);
    expect(((await custom.getNamespacedCustomObject(route)) as Obj).spec.retry.num_retries).toBe(5);

    // Rebased onto the cluster: the draft keeps its own edit and takes the cluster's change.
    const { revision } = await store.get();
    const rebased = await postRebase(
      new Request('http://127.0.0.1:3100/api/draft/rebase', {
        method: 'POST',
        headers: sessionHeaders(),
        body: JSON.stringify({ revision }),
      }),
    );
    expect(rebased.status, await rebased.clone().text()).toBe(200);
    const draftMesh = (await store.get()).draft.files['default/mesh.yaml']!;
    expect(draftMesh).toContain('num_retries: 5');
    expect((await summary()).cluster).toEqual([]);
    const again = (await (await post(postDryRun, '/api/cluster/dry-run', { force: true })).json()) as Obj;
    expect(again.clusterChanges).toEqual([]);
    const applied = await post(postApply, '/api/cluster/apply', { revision: again.revision, force: true });
    expect(applied.status, await applied.clone().text()).toBe(200);
    expect(((await custom.getNamespacedCustomObject(route)) as Obj).spec.retry.num_retries).toBe(5);

    // Changed again; the user chooses Overwrite: the draft's value goes back in.
    await setRetries(6);
    await until(
      'the summary names the Route again',
      async () => ((await summary()).cluster as Obj[]).length === 1,
    );
    const third = (await (await post(postDryRun, '/api/cluster/dry-run', { force: true })).json()) as Obj;
    const overwritten = await post(postApply, '/api/cluster/apply', {
      revision: third.revision,
      force: true,
      overwrite: true,
    });
    expect(overwritten.status, await overwritten.clone().text()).toBe(200);
    // The apply history says what the apply undid, besides who and when.
    const { historyId } = (await overwritten.json()) as Obj;
    expect((await applies.get(historyId as number))?.overwrote).toEqual([`Route/${NS}/gateway-route`]);
    expect(((await custom.getNamespacedCustomObject(route)) as Obj).spec.retry.num_retries).toBe(5);
    await until(
      'the mirror shows the draft again, and nothing is behind',
      async () =>
        ((await summary()).cluster as Obj[]).length === 0 &&
        (await mirrorFiles())['default/mesh.yaml']!.includes('num_retries: 5'),
    );
  });

  it("an object's Events, as kubectl describe lists them: Meshdeck's own and the kubelet's", async () => {
    const events = async (kind: string, name: string) => {
      const res = await getEvents(
        new Request(`http://127.0.0.1:3100/api/cluster/events?kind=${kind}&namespace=${NS}&name=${name}`),
      );
      expect(res.status, await res.clone().text()).toBe(200);
      return ((await res.json()) as { events: Obj[] }).events;
    };
    // The controller (leading) recorded the VirtualService being programmed on its proxies.
    const vs = await until('a Programmed event about the VirtualService', async () => {
      const es = await events('VirtualService', 'gateway-user-b-vsvc');
      return es.some((e) => e.reason === 'Programmed') ? es : undefined;
    });
    expect(vs.find((e) => e.reason === 'Programmed')).toMatchObject({
      type: 'Normal',
      from: 'msm.l7mp.io/meshdeck (console-replica)',
    });
    // A kubelet's event about a proxy's Pod comes along too.
    await kc.makeApiClient(k8s.CoreV1Api).createNamespacedEvent({
      namespace: NS,
      body: {
        metadata: { name: 'gateway-0.kubelet-test', namespace: NS },
        involvedObject: { apiVersion: 'v1', kind: 'Pod', namespace: NS, name: 'gateway-0' },
        type: 'Warning',
        reason: 'BackOff',
        message: 'Back-off restarting failed container l7mp',
        count: 4,
        firstTimestamp: new Date(Date.now() - 600_000),
        lastTimestamp: new Date(),
        source: { component: 'kubelet', host: 'node-1' },
      },
    });
    const pod = await events('Pod', 'gateway-0');
    expect(pod).toContainEqual(
      expect.objectContaining({
        type: 'Warning',
        reason: 'BackOff',
        count: 4,
        note: 'Back-off restarting failed container l7mp',
        from: 'kubelet (node-1)',
      }),
    );
    // Only that object's: nothing about the other VirtualService.
    expect((await events('VirtualService', 'no-such-vsvc')).length).toBe(0);
    // A field selector cannot be widened through the query.
    const bad = await getEvents(
      new Request(`http://127.0.0.1:3100/api/cluster/events?kind=Pod&namespace=${NS}&name=a,type=Normal`),
    );
    expect(bad.status).toBe(400);
  });

  it('follows the cluster: an object created or deleted by someone else appears in and leaves the mirror', async () => {
    const custom = kc.makeApiClient(k8s.CustomObjectsApi);
    await custom.createNamespacedCustomObject({
      ...GROUP,
      namespace: 'kube-public',
      plural: 'virtualservices',
      body: {
        apiVersion: 'msm.l7mp.io/v1',
        kind: 'VirtualService',
        metadata: { name: 'other-team-vsvc', namespace: 'kube-public' },
        spec: {
          selector: { matchLabels: { app: 'other' } },
          udp: { port: 9 },
          rules: [{ action: { route: { destination: 'nowhere' } } }],
        },
      },
    });
    const file = path.join(mirror.dir, 'kube-public', 'mesh.yaml');
    await until('the new namespace file', async () =>
      (await readFile(file, 'utf8').catch(() => '')).includes('other-team-vsvc'),
    );
    await custom.deleteNamespacedCustomObject({
      ...GROUP,
      namespace: 'kube-public',
      plural: 'virtualservices',
      name: 'other-team-vsvc',
    });
    await until(
      'the file is gone',
      async () => (await readFile(file, 'utf8').catch(() => 'gone')) === 'gone',
    );
  });
});
