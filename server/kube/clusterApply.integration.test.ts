// Apply from the console (issue 7 §4) against a REAL kube-apiserver and etcd: server-side dry-run and
// apply as field manager `meshdeck` with Meshdeck's own identity impersonating the console user, so the
// users' Roles decide; diffs, the API server's own validation errors, field-manager conflicts and force,
// pruning, and the access review that chooses between "Apply" and "Open PR".
import { readFileSync } from 'node:fs';
import { cp as copyDir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify as toYaml } from 'yaml';
import { POST as postApply } from '@/app/api/cluster/apply/route';
import { POST as postDryRun } from '@/app/api/cluster/dry-run/route';
import { crdFileName, MESH_CRD_KINDS } from '@/lib/kube/crds';
import { ConsoleAuth, CSRF_HEADER, SESSION_COOKIE, setConsoleAuth } from '@/server/console/consoleAuth';
import { setConsoleContext } from '@/server/console/consoleContext';
import { DraftRegistry } from '@/server/console/DraftRegistry';
import { canApply } from './accessReview';
import { ClusterApply, type ObjectPlan } from './clusterApply';
import { ClusterClient } from './clusterClient';
import { setClusterContext } from './clusterContext';
import { type KubeApiServer, kubeRequest, startKubeApiServer } from './testing/kubeApiServer';

const ROOT = path.resolve(__dirname, '../..');
const EXAMPLE = path.join(ROOT, 'examples/seed-example-1');
const MESH = '/apis/msm.l7mp.io/v1/namespaces/default';
const WRITER = { user: 'alice@example.com', groups: ['mesh-writers'] };
const READER = { user: 'bob@example.com', groups: ['mesh-readers'] };
const PRUNER = { user: 'alice@example.com', groups: ['mesh-writers', 'mesh-pruners'] };

type Obj = Record<string, any>;
let kube: KubeApiServer;
let client: ClusterClient;

const files = (mesh = readFileSync(path.join(EXAMPLE, 'mesh.yaml'), 'utf8')) => ({
  'mesh.yaml': mesh,
  'cluster.yaml': readFileSync(path.join(EXAMPLE, 'cluster.yaml'), 'utf8'),
});
const asAdmin = (method: string, p: string, body?: unknown) =>
  kubeRequest(kube.url, kube.admin, method, p, body);
const live = async (p: string) => (await asAdmin('GET', p)).body as Obj;
const byKey = (objects: ObjectPlan[]) => Object.fromEntries(objects.map((o) => [o.ref.key, o]));
const yamlDocs = (file: string): Obj[] =>
  parseAllDocuments(readFileSync(path.join(ROOT, file), 'utf8')).map((d) => d.toJS() as Obj);

async function created(method: string, p: string, body: unknown) {
  const res = await asAdmin(method, p, body);
  expect(res.status, res.text).toBeLessThan(300);
}

beforeAll(async () => {
  kube = await startKubeApiServer();
  for (const kind of MESH_CRD_KINDS) {
    await created(
      'POST',
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
      yamlDocs(`deploy/crds/${crdFileName(kind)}`)[0],
    );
  }
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await asAdmin('GET', '/apis/msm.l7mp.io/v1');
    if (res.status === 200 && ((res.body as Obj).resources as Obj[]).length === 6) break;
    if (Date.now() > deadline) throw new Error('the mesh CRDs were not served within 30 s');
    await new Promise((r) => setTimeout(r, 200));
  }
  // Meshdeck's own identity gets the controller's ClusterRole from deploy/rbac.yaml (impersonate users and groups).
  const meshdeck = await kube.addUser('meshdeck-console');
  const role = yamlDocs('deploy/rbac.yaml').find((d) => d.kind === 'ClusterRole')!;
  await created('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', role);
  await created('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    metadata: { name: 'meshdeck-console' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role.metadata.name },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'meshdeck-console' }],
  });
  const roleFor = async (name: string, group: string, verbs: string[]) => {
    const rbac = '/apis/rbac.authorization.k8s.io/v1/namespaces/default';
    await created('POST', `${rbac}/roles`, {
      metadata: { name },
      rules: [
        { apiGroups: ['msm.l7mp.io'], resources: ['virtualservices', 'routes', 'targets'], verbs },
        { apiGroups: [''], resources: ['services'], verbs },
      ],
    });
    await created('POST', `${rbac}/rolebindings`, {
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: group }],
    });
  };
  // Server-side apply needs exactly patch and create; pruning also list and delete.
  await roleFor('mesh-writer', 'mesh-writers', ['patch', 'create']);
  await roleFor('mesh-pruner', 'mesh-pruners', ['list', 'delete']);
  await roleFor('mesh-reader', 'mesh-readers', ['get', 'list', 'watch']);
  const kc = new KubeConfig();
  kc.loadFromFile(meshdeck.kubeconfigPath);
  client = new ClusterClient(kc);
}, 90 * 60_000);

afterAll(async () => {
  await kube?.stop();
});

describe('apply from the console on a real kube-apiserver', () => {
  it('seed Example 1: the dry-run shows creates and writes nothing; the apply creates; then no diff', async () => {
    const writer = new ClusterApply(client, WRITER);
    const plan = await writer.dryRun(files());
    expect(plan.ok, JSON.stringify(plan.objects, null, 1)).toBe(true);
    const actions = Object.fromEntries(plan.objects.map((o) => [o.ref.key, o.action]));
    expect(actions).toEqual({
      'VirtualService/default/transcoder-vsvc': 'create',
      'VirtualService/default/gateway-vsvc': 'create',
      'Service/default/gateway-svc': 'create',
      'Service/default/worker-svc': 'create',
      'Pod/default/gateway-0': 'skipped',
      'Pod/default/transcoder-0': 'skipped',
      'Pod/default/worker-0': 'skipped',
      'Pod/default/worker-1': 'skipped',
    });
    const vs = byKey(plan.objects)['VirtualService/default/transcoder-vsvc']!;
    expect(vs.live).toBeNull();
    expect(vs.result?.spec).toMatchObject({
      websocket: { port: 8888 },
      selector: { matchLabels: { app: 'transcoder' } },
    });
    expect(vs.diff).toEqual([{ path: '', after: expect.objectContaining({ kind: 'VirtualService' }) }]);
    expect((await asAdmin('GET', `${MESH}/virtualservices/transcoder-vsvc`)).status).toBe(404);

    const applied = await writer.apply(files());
    expect(applied.ok, JSON.stringify(applied.objects, null, 1)).toBe(true);
    expect(applied.applied).toBe(true);
    const stored = await live(`${MESH}/virtualservices/transcoder-vsvc`);
    expect(stored.spec.websocket.port).toBe(8888);
    expect((stored.metadata.managedFields as Obj[]).map((m) => [m.manager, m.operation])).toEqual([
      ['meshdeck', 'Apply'],
    ]);

    // alice may patch and create but not get: the live object comes from a dry-run apply of its bare identity.
    const get = await client.request({
      method: 'GET',
      path: `${MESH}/virtualservices/transcoder-vsvc`,
      as: WRITER,
    });
    expect(get.status).toBe(403);
    const again = await writer.dryRun(files());
    for (const o of again.objects.filter((x) => x.action !== 'skipped')) {
      expect([o.ref.key, o.action, o.diff]).toEqual([o.ref.key, 'unchanged', []]);
    }
  });

  it('an edited port shows exactly that field in the diff', async () => {
    const mesh = readFileSync(path.join(EXAMPLE, 'mesh.yaml'), 'utf8').replace('port: 8888', 'port: 8889');
    const plan = await new ClusterApply(client, WRITER).dryRun(files(mesh));
    expect(plan.ok).toBe(true);
    const changed = plan.objects.filter((o) => o.action !== 'unchanged' && o.action !== 'skipped');
    expect(changed.map((o) => [o.ref.key, o.action, o.diff])).toEqual([
      [
        'VirtualService/default/transcoder-vsvc',
        'update',
        [{ path: 'spec.websocket.port', before: 8888, after: 8889 }],
      ],
    ]);
    expect((await live(`${MESH}/virtualservices/transcoder-vsvc`)).spec.websocket.port).toBe(8888);
  });

  it("an invalid object gets the API server's own error with the field path, and nothing is applied", async () => {
    const withRoute = (spec: Obj) =>
      `${readFileSync(path.join(EXAMPLE, 'mesh.yaml'), 'utf8').replace('port: 8888', 'port: 8889')}---\n${toYaml(
        {
          apiVersion: 'msm.l7mp.io/v1',
          kind: 'Route',
          metadata: { name: 'bad-port', namespace: 'default' },
          spec,
        },
      )}`;
    const writer = new ClusterApply(client, WRITER);
    const unknownField = await writer.dryRun(
      files(withRoute({ destination: 'worker-svc', retry: { retry_on: 'always', tries: 3 } })),
    );
    expect(unknownField.ok).toBe(false);
    const route = byKey(unknownField.objects)['Route/default/bad-port']!;
    expect(route.action).toBe('error');
    expect(route.ref).toMatchObject({ file: 'mesh.yaml', line: expect.any(Number) });
    // Strict field validation: an unknown field is refused, not pruned, and the error names it. (kube-apiserver
    // 1.36 answers an apply patch it cannot type with 500 InternalError; a create would get 400.)
    expect([400, 500], JSON.stringify(route.error)).toContain(route.error?.status);
    expect(route.error?.message).toMatch(/bad-port.*field not declared in schema/);
    expect(route.error?.causes.map((c) => c.field)).toContain('spec.retry.tries');

    const outOfRange = withRoute({ destination: { tcp: { port: 70000 } } });
    const invalid = byKey((await writer.dryRun(files(outOfRange))).objects)['Route/default/bad-port']!;
    expect(invalid.error).toMatchObject({ status: 422, reason: 'Invalid' });
    expect(invalid.error?.message).toMatch(/bad-port/);
    expect(invalid.error?.causes).toEqual(
      expect.arrayContaining([expect.objectContaining({ field: 'spec.destination.tcp.port' })]),
    );

    const result = await writer.apply(files(outOfRange));
    expect(result.applied).toBe(false);
    expect(result.objects.every((o) => !o.done)).toBe(true);
    expect((await live(`${MESH}/virtualservices/transcoder-vsvc`)).spec.websocket.port).toBe(8888);
    expect((await asAdmin('GET', `${MESH}/routes/bad-port`)).status).toBe(404);
  });

  it('a read-only user gets 403 naming the user and canApply=false; the writer canApply=true', async () => {
    const mesh = readFileSync(path.join(EXAMPLE, 'mesh.yaml'), 'utf8').replace('port: 8888', 'port: 8889');
    const plan = await new ClusterApply(client, READER).dryRun(files(mesh));
    expect(plan.ok).toBe(false);
    const vs = byKey(plan.objects)['VirtualService/default/transcoder-vsvc']!;
    expect(vs.action).toBe('error');
    expect(vs.error).toMatchObject({ status: 403, reason: 'Forbidden' });
    expect(vs.error?.message).toContain('User "bob@example.com" cannot patch resource "virtualservices"');
    const applied = await new ClusterApply(client, READER).apply(files(mesh));
    expect(applied.applied).toBe(false);
    expect((await live(`${MESH}/virtualservices/transcoder-vsvc`)).spec.websocket.port).toBe(8888);

    const targets = plan.objects.filter((o) => o.action !== 'skipped').map((o) => o.ref);
    const reader = await canApply(client, READER, targets);
    expect(reader.allowed).toBe(false);
    expect(reader.user).toBe('bob@example.com');
    expect(reader.denied).toEqual(
      expect.arrayContaining(['patch virtualservices.msm.l7mp.io in default', 'create services in default']),
    );
    const writer = await canApply(client, WRITER, targets);
    expect(writer.checks.length).toBe(4);
    expect(writer).toMatchObject({ allowed: true, denied: [] });
    // Pods are not granted to the writer: asking about them is a denial.
    expect((await canApply(client, WRITER, [{ kind: 'Pod', namespace: 'default' }])).allowed).toBe(false);
  });

  it('Meshdeck without the right to impersonate gets nothing done as anyone', async () => {
    const kc = new KubeConfig();
    kc.loadFromFile(kube.restricted.kubeconfigPath);
    const plan = await new ClusterApply(new ClusterClient(kc), WRITER).dryRun(files());
    expect(plan.ok).toBe(false);
    const vs = byKey(plan.objects)['VirtualService/default/gateway-vsvc']!;
    expect(vs.error?.status).toBe(403);
    expect(vs.error?.message).toMatch(/cannot impersonate/);
  });

  it('a conflict with another field manager names it and the field; force takes the field over', async () => {
    // Another manager sets the port (forcing it away from meshdeck), as `kubectl apply --server-side` would.
    const patch = await client.request({
      method: 'PATCH',
      path: `${MESH}/virtualservices/transcoder-vsvc`,
      query: { fieldManager: 'other', force: 'true' },
      contentType: 'application/apply-patch+yaml',
      body: {
        apiVersion: 'msm.l7mp.io/v1',
        kind: 'VirtualService',
        metadata: { name: 'transcoder-vsvc', namespace: 'default' },
        spec: { websocket: { port: 9999 } },
      },
      as: WRITER,
    });
    expect(patch.status, JSON.stringify(patch.body)).toBe(200);

    const writer = new ClusterApply(client, WRITER);
    const plan = await writer.dryRun(files());
    expect(plan.ok).toBe(false);
    const vs = byKey(plan.objects)['VirtualService/default/transcoder-vsvc']!;
    expect(vs.action).toBe('conflict');
    expect(vs.conflicts).toEqual([
      expect.objectContaining({ manager: 'other', field: 'spec.websocket.port' }),
    ]);

    const refused = await writer.apply(files());
    expect(refused.applied).toBe(false);
    expect((await live(`${MESH}/virtualservices/transcoder-vsvc`)).spec.websocket.port).toBe(9999);

    const forcedPlan = await writer.dryRun(files(), { force: true });
    expect(byKey(forcedPlan.objects)['VirtualService/default/transcoder-vsvc']!.diff).toEqual([
      { path: 'spec.websocket.port', before: 9999, after: 8888 },
    ]);
    const forced = await writer.apply(files(), { force: true });
    expect(forced.ok, JSON.stringify(forced.objects, null, 1)).toBe(true);
    const stored = await live(`${MESH}/virtualservices/transcoder-vsvc`);
    expect(stored.spec.websocket.port).toBe(8888);
    const owners = (stored.metadata.managedFields as Obj[]).filter(
      (m) => m.fieldsV1?.['f:spec']?.['f:websocket'],
    );
    expect(owners.map((m) => m.manager)).toEqual(['meshdeck']);
  });

  it('objects the draft removed are listed as orphans, and deleted only when pruning is asked for', async () => {
    const mesh = readFileSync(path.join(EXAMPLE, 'mesh.yaml'), 'utf8');
    const withoutGateway = mesh.slice(
      0,
      mesh.indexOf('---\napiVersion: l7mp.io/MSM/v1\nkind: VirtualService\nmetadata:\n  name: gateway-vsvc'),
    );
    expect(withoutGateway).toContain('transcoder-vsvc');
    expect(withoutGateway).not.toContain('gateway-vsvc');
    // alice as a member of mesh-pruners too: listing what Meshdeck applied and deleting it need list and delete.
    const writer = new ClusterApply(client, PRUNER);
    const kept = await writer.apply(files(withoutGateway));
    expect(kept.ok).toBe(true);
    expect(byKey(kept.objects)['VirtualService/default/gateway-vsvc']!.action).toBe('orphan');
    expect((await asAdmin('GET', `${MESH}/virtualservices/gateway-vsvc`)).status).toBe(200);

    const plan = await writer.dryRun(files(withoutGateway), { prune: true });
    expect(byKey(plan.objects)['VirtualService/default/gateway-vsvc']!.action).toBe('delete');
    expect((await asAdmin('GET', `${MESH}/virtualservices/gateway-vsvc`)).status).toBe(200);
    // The reader may not delete: the gate refuses and nothing happens.
    const readerPrune = await new ClusterApply(client, READER).apply(files(withoutGateway), { prune: true });
    expect(readerPrune.applied).toBe(false);

    const pruned = await writer.apply(files(withoutGateway), { prune: true });
    expect(pruned.ok, JSON.stringify(pruned.objects, null, 1)).toBe(true);
    expect(byKey(pruned.objects)['VirtualService/default/gateway-vsvc']!).toMatchObject({
      action: 'delete',
      done: true,
    });
    expect((await asAdmin('GET', `${MESH}/virtualservices/gateway-vsvc`)).status).toBe(404);
  });
});

describe('POST /api/cluster/dry-run and /api/cluster/apply (the route handlers, real sessions)', () => {
  let tmp: string;
  const auth = new ConsoleAuth('cluster-route-test-token');
  beforeAll(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'md-cluster-routes-'));
    const meshDir = path.join(tmp, 'mesh');
    await copyDir(EXAMPLE, meshDir, { recursive: true });
    const drafts = new DraftRegistry({
      meshDir,
      stateDir: path.join(tmp, 'state'),
      logger: { warn: () => {} },
    });
    setConsoleAuth(auth);
    setConsoleContext({ drafts, examplesDir: path.join(ROOT, 'examples') });
    setClusterContext({ client });
  });
  afterAll(async () => {
    setConsoleAuth(undefined);
    setConsoleContext(undefined);
    setClusterContext(undefined);
    await rm(tmp, { recursive: true, force: true });
  });

  const post = (
    handler: (r: Request) => Promise<Response>,
    route: string,
    body: unknown,
    who = WRITER,
    csrf = true,
  ) => {
    const session = auth.open({ ...who, method: 'oidc' });
    return handler(
      new Request(`http://127.0.0.1:3100${route}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          cookie: `${SESSION_COOKIE}=${session.id}`,
          ...(csrf ? { [CSRF_HEADER]: session.csrfToken } : {}),
        },
        body: JSON.stringify(body),
      }),
    );
  };

  it("the dry-run acts as the session's user and says whether it may apply; the apply takes the reviewed revision", async () => {
    const writer = await post(postDryRun, '/api/cluster/dry-run', {});
    expect(writer.status).toBe(200);
    const plan = (await writer.json()) as Obj;
    expect(plan.user).toEqual(WRITER);
    expect(plan.access).toMatchObject({ allowed: true, user: WRITER.user, denied: [] });
    // The earlier prune removed gateway-vsvc; the mesh directory's draft still has it.
    expect(byKey(plan.objects)['VirtualService/default/gateway-vsvc']!.action).toBe('create');

    const reader = (await (await post(postDryRun, '/api/cluster/dry-run', {}, READER)).json()) as Obj;
    expect(reader.ok).toBe(false);
    expect(reader.access.allowed).toBe(false);
    expect(reader.access.denied).toContain('create virtualservices.msm.l7mp.io in default');

    expect((await post(postDryRun, '/api/cluster/dry-run', {}, WRITER, false)).status).toBe(403);
    const stale = await post(postApply, '/api/cluster/apply', { revision: plan.revision + 1 });
    expect(stale.status).toBe(409);
    const refused = await post(postApply, '/api/cluster/apply', { revision: plan.revision }, READER);
    expect(refused.status).toBe(422);
    expect((await asAdmin('GET', `${MESH}/virtualservices/gateway-vsvc`)).status).toBe(404);

    const applied = await post(postApply, '/api/cluster/apply', { revision: plan.revision });
    const result = (await applied.json()) as Obj;
    expect(applied.status, JSON.stringify(result)).toBe(200);
    expect(result).toMatchObject({ applied: true, ok: true });
    expect((await asAdmin('GET', `${MESH}/virtualservices/gateway-vsvc`)).status).toBe(200);

    setClusterContext(undefined);
    const none = await post(postDryRun, '/api/cluster/dry-run', {});
    expect(none.status).toBe(503);
    expect(((await none.json()) as Obj).error).toMatch(/--kubeconfig/);
    setClusterContext({ client });
  });
});
