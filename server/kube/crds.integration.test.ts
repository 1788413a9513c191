// The mesh CRDs against a REAL kube-apiserver and etcd (server/kube/testing/kubeApiServer.ts): the
// generated deploy/ manifests install, the seed examples round-trip unchanged, invalid objects are refused
// with the field named, the status subresource takes Gateway-API-style conditions, printer columns show
// in a Table, and the RBAC gives the controller exactly what it needs.
import { readFileSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify as toYaml } from 'yaml';
import { compileMesh } from '@/lib/engine/compileMesh';
import { crdFileName, crdPlural, MESH_CRD_KINDS, type MeshCrdKind } from '@/lib/kube/crds';
import { MESH_KINDS, Route } from '@/lib/model/resources';
import { parseManifests } from '@/lib/parse/parseManifests';
import { type KubeApiServer, startKubeApiServer } from './testing/kubeApiServer';

const ROOT = path.resolve(__dirname, '../..');
const MESH = '/apis/msm.l7mp.io/v1/namespaces/default';
const SA_USER = 'system:serviceaccount:meshdeck-system:meshdeck';

let kube: KubeApiServer;

type Obj = Record<string, any>;
interface Res {
  status: number;
  body: Obj;
  text: string;
  warnings: string[];
}
interface CallOptions {
  headers?: Record<string, string>;
  /** A bearer token instead of the admin's client certificate. */
  token?: string;
}

/** One request to the API server (the harness's kubeRequest takes no headers: Table, apply patches, impersonation need them). */
function call(method: string, p: string, body?: unknown, opts: CallOptions = {}): Promise<Res> {
  const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  const auth = opts.token
    ? { ca: kube.admin.tls.ca, headers: { authorization: `Bearer ${opts.token}` } }
    : { ...kube.admin.tls, headers: {} };
  return new Promise((resolve, reject) => {
    const req = https.request(
      new URL(p, kube.url),
      {
        method,
        ca: auth.ca,
        ...('cert' in auth ? { cert: auth.cert, key: auth.key } : {}),
        headers: {
          accept: 'application/json',
          ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
          ...auth.headers,
          ...opts.headers,
        },
        timeout: 15_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: Obj = {};
          try {
            parsed = JSON.parse(text) as Obj;
          } catch {
            parsed = { text };
          }
          const w = res.headers.warning;
          resolve({
            status: res.statusCode ?? 0,
            body: parsed,
            text,
            warnings: ([] as string[]).concat(w ?? []),
          });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${p}: no answer`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** Server-side apply of one object, as `kubectl apply --server-side` does. */
const apply = (o: Obj) =>
  call('PATCH', `${objectPath(o)}?fieldManager=meshdeck-test&fieldValidation=Strict`, toYaml(o), {
    headers: { 'content-type': 'application/apply-patch+yaml' },
  });

const PATHS: Record<string, [string, string]> = {
  Namespace: ['/api/v1', 'namespaces'],
  ServiceAccount: ['/api/v1', 'serviceaccounts'],
  Service: ['/api/v1', 'services'],
  Deployment: ['/apis/apps/v1', 'deployments'],
  ClusterRole: ['/apis/rbac.authorization.k8s.io/v1', 'clusterroles'],
  ClusterRoleBinding: ['/apis/rbac.authorization.k8s.io/v1', 'clusterrolebindings'],
  Role: ['/apis/rbac.authorization.k8s.io/v1', 'roles'],
  RoleBinding: ['/apis/rbac.authorization.k8s.io/v1', 'rolebindings'],
  CustomResourceDefinition: ['/apis/apiextensions.k8s.io/v1', 'customresourcedefinitions'],
  ValidatingWebhookConfiguration: [
    '/apis/admissionregistration.k8s.io/v1',
    'validatingwebhookconfigurations',
  ],
};
function objectPath(o: Obj): string {
  const [prefix, plural] = PATHS[o.kind] ?? [];
  if (!prefix) throw new Error(`no path for ${o.kind}`);
  const ns = o.metadata.namespace ? `/namespaces/${o.metadata.namespace}` : '';
  return `${prefix}${ns}/${plural}/${o.metadata.name}`;
}

const yamlDocs = (file: string): Obj[] =>
  parseAllDocuments(readFileSync(path.join(ROOT, file), 'utf8')).map((d) => d.toJS() as Obj);

async function poll<T>(what: string, probe: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const pluralOf = (kind: string) => crdPlural(kind as MeshCrdKind);
const create = (o: Obj, query = '?fieldValidation=Strict') =>
  call('POST', `${MESH}/${pluralOf(o.kind)}${query}`, o);
const get = (kind: MeshCrdKind, name: string) => call('GET', `${MESH}/${crdPlural(kind)}/${name}`);

/** The canonical mesh objects of a seed example (as parseManifests normalises the seed dialect) and its cluster snapshot. */
function example(dir: string) {
  const read = (f: string) => ({ path: f, content: readFileSync(path.join(ROOT, dir, f), 'utf8') });
  const snapshot = parseManifests([read('mesh.yaml')]);
  expect(snapshot.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  return {
    objects: [...snapshot.virtualServices, ...snapshot.routes, ...snapshot.targets] as Obj[],
    cluster: read('cluster.yaml'),
  };
}

beforeAll(async () => {
  kube = await startKubeApiServer();
}, 90 * 60_000);

afterAll(async () => {
  await kube?.stop();
});

describe('mesh CRDs on a real kube-apiserver', () => {
  it('the three generated CRDs install (server-side apply of deploy/crds/) and reach Established', async () => {
    for (const kind of MESH_CRD_KINDS) {
      const [crd] = yamlDocs(`deploy/crds/${crdFileName(kind)}`);
      const res = await apply(crd!);
      expect(res.status, res.text).toBe(201);
      expect(res.warnings).toEqual([]);
    }
    for (const kind of MESH_CRD_KINDS) {
      const crd = await poll(`${kind} Established`, async () => {
        const res = await call(
          'GET',
          `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crdPlural(kind)}.msm.l7mp.io`,
        );
        const conds = (res.body.status?.conditions ?? []) as Obj[];
        return conds.some((c) => c.type === 'Established' && c.status === 'True') ? res.body : undefined;
      });
      const types = (crd.status.conditions as Obj[]).map((c) => `${c.type}=${c.status}`);
      expect(types).toEqual(expect.arrayContaining(['NamesAccepted=True', 'Established=True']));
      // A non-structural schema would be reported here (and lose pruning, defaulting and apply).
      expect(types.join(' ')).not.toMatch(/NonStructuralSchema/);
      expect(crd.status.acceptedNames.shortNames).toHaveLength(1);
    }
  });

  it('discovery serves the group, the resources with short names, categories and status subresources', async () => {
    const list = await poll('discovery', async () => {
      const res = await call('GET', '/apis/msm.l7mp.io/v1');
      return res.status === 200 && (res.body.resources as Obj[]).length === 6 ? res.body : undefined;
    });
    const byName = Object.fromEntries((list.resources as Obj[]).map((r) => [r.name, r]));
    expect(
      ['virtualservices', 'routes', 'targets'].map((n) => [
        n,
        byName[n].kind,
        byName[n].shortNames,
        byName[n].namespaced,
      ]),
    ).toEqual([
      ['virtualservices', 'VirtualService', ['vsvc'], true],
      ['routes', 'Route', ['rt'], true],
      ['targets', 'Target', ['tgt'], true],
    ]);
    for (const n of ['virtualservices', 'routes', 'targets']) {
      expect(byName[n].categories).toEqual(['msm', 'meshdeck']);
      expect(byName[`${n}/status`].verbs).toEqual(expect.arrayContaining(['get', 'patch', 'update']));
    }
    const groups = await call('GET', '/apis');
    const group = (groups.body.groups as Obj[]).find((g) => g.name === 'msm.l7mp.io');
    expect(group?.preferredVersion.groupVersion).toBe('msm.l7mp.io/v1');
  });

  it.each(['examples/seed-example-1', 'examples/seed-example-2'])(
    '%s: every resource is accepted and read back unchanged; the engine compiles the same l7mp config from it',
    async (dir) => {
      const { objects, cluster } = example(dir);
      expect(objects.length).toBeGreaterThan(1);
      const readBack: Obj[] = [];
      for (const o of objects) {
        const res = await create(o);
        expect(res.status, `${o.kind}/${o.metadata.name}: ${res.text}`).toBe(201);
        expect(res.warnings, `${o.kind}/${o.metadata.name}`).toEqual([]);
        const back = await get(o.kind, o.metadata.name);
        expect(back.status).toBe(200);
        expect(back.body.apiVersion).toBe(o.apiVersion);
        expect(back.body.kind).toBe(o.kind);
        expect(back.body.metadata).toMatchObject(o.metadata);
        // Nothing pruned, nothing defaulted: the spec is exactly what was sent.
        expect(back.body.spec).toEqual(o.spec);
        readBack.push(back.body);
      }
      const sent = parseManifests([
        { path: 'mesh.yaml', content: objects.map((o) => toYaml(o)).join('---\n') },
        cluster,
      ]);
      const served = parseManifests([
        { path: 'served.yaml', content: readBack.map((o) => toYaml(o)).join('---\n') },
        cluster,
      ]);
      expect(served.diagnostics.filter((d) => d.severity !== 'info')).toEqual(
        sent.diagnostics.filter((d) => d.severity !== 'info'),
      );
      expect(compileMesh(served).l7mp).toEqual(compileMesh(sent).l7mp);
    },
  );

  describe("the seed dialect's caveats hold on a real API server", () => {
    const vs = (name: string, extra: Obj = {}, spec: Obj = {}) => ({
      apiVersion: 'msm.l7mp.io/v1',
      kind: 'VirtualService',
      metadata: { name, namespace: 'default', ...extra },
      spec: { selector: { serviceName: 'gateway-svc' }, udp: { port: 9100 }, ...spec },
    });

    it('`selector` under metadata is pruned (a warning), or refused with strict field validation', async () => {
      const strict = await create(vs('meta-selector-strict', { selector: { serviceName: 'x' } }));
      expect(strict.status).toBe(400);
      expect(strict.body.message).toContain('unknown field "metadata.selector"');
      const lax = await create(vs('meta-selector', { selector: { serviceName: 'x' } }), '');
      expect(lax.status).toBe(201);
      // The Warning header quotes the message: 299 - "unknown field \"metadata.selector\"".
      expect(lax.warnings.join('\n')).toMatch(/unknown field \\?"metadata\.selector\\?"/);
      const back = await get('VirtualService', 'meta-selector');
      expect(back.body.metadata.selector).toBeUndefined();
      expect(back.body.spec.selector).toEqual({ serviceName: 'gateway-svc' });
    });

    it('`port: 8001,` (a string) and `rules` as one object are refused, naming the field', async () => {
      const port = await create(vs('port-string', {}, { udp: { port: '8001,' } }), '');
      expect(port.status).toBe(422);
      expect(port.body.details.causes).toEqual(
        expect.arrayContaining([expect.objectContaining({ field: 'spec.udp.port' })]),
      );
      expect(port.body.message).toMatch(/spec\.udp\.port.*must be of type integer/);
      const rules = await create(vs('rules-object', {}, { rules: { action: { route: 'r' } } }), '');
      expect(rules.status).toBe(422);
      expect(rules.body.message).toMatch(/spec\.rules.*must be of type array/);
    });

    it('the seed apiVersion l7mp.io/MSM/v1 is no group the API server serves', async () => {
      expect((await call('GET', '/apis/l7mp.io')).status).toBe(404);
    });
  });

  describe('invalid resources are refused with the field named', () => {
    const route = (name: string, spec: Obj) => ({
      apiVersion: 'msm.l7mp.io/v1',
      kind: 'Route',
      metadata: { name, namespace: 'default' },
      spec,
    });

    it.each([
      [
        'a wrong type',
        'bad-type',
        { destination: { udp: { port: 'x' } } },
        'spec.destination.udp.port',
        /must be of type integer/,
      ],
      [
        'a port out of range',
        'bad-port',
        { destination: { tcp: { port: 70000 } } },
        'spec.destination.tcp.port',
        /less than or equal to 65535/,
      ],
      [
        'an unknown enum value',
        'bad-enum',
        { destination: 'x', retry: { retry_on: 'sometimes' } },
        'spec.retry.retry_on',
        /Unsupported value: "sometimes"/,
      ],
      [
        'a missing required field',
        'no-destination',
        { retry: { retry_on: 'always' } },
        'spec.destination',
        /Required value/,
      ],
      ['an empty name', 'empty-name', { destination: '' }, 'spec.destination', /at least 1 chars long/],
    ])('%s', async (_what, name, spec, field, message) => {
      const res = await create(route(name, spec));
      expect(res.status, res.text).toBe(422);
      expect(res.body.reason).toBe('Invalid');
      expect(res.body.details.causes).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
      expect(res.body.message).toMatch(message);
    });

    it("an unknown field is refused with strict field validation (kubectl's default), pruned otherwise", async () => {
      const strict = await create(
        route('unknown-field', { destination: 'x', retry: { retry_on: 'always', tries: 3 } }),
      );
      expect(strict.status).toBe(400);
      expect(strict.body.message).toContain('unknown field "spec.retry.tries"');
      const lax = await create(
        route('unknown-field', { destination: 'x', retry: { retry_on: 'always', tries: 3 } }),
        '',
      );
      expect(lax.status).toBe(201);
      expect(lax.warnings.join('\n')).toMatch(/unknown field \\?"spec\.retry\.tries\\?"/);
      expect((await get('Route', 'unknown-field')).body.spec.retry).toEqual({ retry_on: 'always' });
    });

    it("the engine's refinements run as CEL with the engine's messages", async () => {
      const two = await create({
        apiVersion: 'msm.l7mp.io/v1',
        kind: 'VirtualService',
        metadata: { name: 'two-protocols', namespace: 'default' },
        spec: { selector: { serviceName: 's' }, udp: { port: 1 }, tcp: { port: 2 } },
      });
      expect(two.status).toBe(422);
      expect(two.body.details.causes).toEqual([
        expect.objectContaining({
          field: 'spec',
          message: expect.stringContaining('a VirtualService needs exactly one protocol key'),
        }),
      ]);
      const sel = await create({
        apiVersion: 'msm.l7mp.io/v1',
        kind: 'Target',
        metadata: { name: 'two-selectors', namespace: 'default' },
        spec: { selector: { serviceName: 's', matchLabels: { app: 'a' } }, echo: {} },
      });
      expect(sel.status).toBe(422);
      expect(sel.body.message).toContain('spec.selector: Invalid value');
      expect(sel.body.message).toContain('selector needs exactly one of serviceName or matchLabels');
    });

    it('what a structural schema cannot say (a name or an inline Target) is left to the engine', async () => {
      // `destination` is a string or an object: no structural type covers both, so the API server takes a number...
      const o = route('number-destination', { destination: 5 });
      expect((await create(o)).status).toBe(201);
      // ...and the engine refuses it, naming the field (the controller reports it in the Accepted condition).
      const back = (await get('Route', 'number-destination')).body;
      const parsed = Route.safeParse(back);
      expect(parsed.success).toBe(false);
      expect(parsed.error!.issues.map((i) => i.path.join('.'))).toContain('spec.destination');
    });
  });

  describe('status subresource', () => {
    const conditions = (gen: number, status: 'True' | 'False') => [
      {
        type: 'Accepted',
        status,
        reason: status === 'True' ? 'Accepted' : 'Invalid',
        message: status === 'True' ? '' : 'spec.rules[0]: route r: not found',
        lastTransitionTime: '2026-01-02T03:04:05Z',
        observedGeneration: gen,
      },
      {
        type: 'ResolvedRefs',
        status: 'True',
        reason: 'ResolvedRefs',
        message: '',
        lastTransitionTime: '2026-01-02T03:04:05Z',
        observedGeneration: gen,
      },
      {
        type: 'Programmed',
        status: 'Unknown',
        reason: 'Pending',
        message: 'no proxy synced yet',
        lastTransitionTime: '2026-01-02T03:04:05Z',
        observedGeneration: gen,
      },
    ];

    it('takes Gateway-API-style conditions and observedGeneration, and the main resource ignores status', async () => {
      const before = (await get('VirtualService', 'gateway-vsvc')).body;
      const gen = before.metadata.generation as number;
      const res = await call(
        'PATCH',
        `${MESH}/virtualservices/gateway-vsvc/status`,
        { status: { observedGeneration: gen, conditions: conditions(gen, 'True') } },
        { headers: { 'content-type': 'application/merge-patch+json' } },
      );
      expect(res.status, res.text).toBe(200);
      const after = (await get('VirtualService', 'gateway-vsvc')).body;
      expect(after.status).toEqual({ observedGeneration: gen, conditions: conditions(gen, 'True') });
      expect(after.metadata.generation).toBe(gen);
      expect(after.spec).toEqual(before.spec);
      // Status written through the main resource is dropped (the status subresource owns it).
      const put = await call('PUT', `${MESH}/virtualservices/gateway-vsvc`, {
        ...after,
        status: { observedGeneration: 99 },
      });
      expect(put.status).toBe(200);
      expect(put.body.status.observedGeneration).toBe(gen);
    });

    it('refuses a bad condition, naming the field, and a duplicate type (a list-map keyed by type)', async () => {
      const gen = 1;
      const bad = conditions(gen, 'False').map((c, i) => (i === 0 ? { ...c, status: 'Maybe' } : c));
      const res = await call(
        'PATCH',
        `${MESH}/virtualservices/transcoder-vsvc/status`,
        { status: { conditions: bad } },
        { headers: { 'content-type': 'application/merge-patch+json' } },
      );
      expect(res.status).toBe(422);
      expect(res.body.message).toContain('status.conditions[0].status');
      const dup = conditions(gen, 'False');
      const res2 = await call(
        'PATCH',
        `${MESH}/virtualservices/transcoder-vsvc/status`,
        { status: { conditions: [...dup, dup[0]] } },
        { headers: { 'content-type': 'application/merge-patch+json' } },
      );
      expect(res2.status).toBe(422);
      expect(res2.body.message).toMatch(/status\.conditions\[3\]: Duplicate value/);
    });
  });

  it('printer columns appear in a Table request (what `kubectl get` prints)', async () => {
    const table = async (kind: MeshCrdKind) => {
      const res = await call('GET', `${MESH}/${crdPlural(kind)}`, undefined, {
        headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
      });
      expect(res.status).toBe(200);
      expect(res.body.kind).toBe('Table');
      const cols = (res.body.columnDefinitions as Obj[]).map((c) => c.name as string);
      const rows = Object.fromEntries(
        (res.body.rows as Obj[]).map((r) => [
          r.cells[0],
          Object.fromEntries(cols.map((c, i) => [c, r.cells[i]])),
        ]),
      );
      return { cols, rows };
    };
    const vs = await table('VirtualService');
    expect(vs.cols).toEqual([
      'Name',
      'Port',
      'JSONSocket-Port',
      'Socket',
      'Service',
      'Labels',
      'Accepted',
      'Programmed',
      'Age',
    ]);
    expect(vs.rows['gateway-vsvc']).toMatchObject({
      Port: 9001,
      Service: 'gateway-svc',
      Accepted: 'True',
      Programmed: 'Unknown',
    });
    expect(vs.rows['worker-vsvc']).toMatchObject({ 'JSONSocket-Port': 19000, Service: 'worker-svc' });
    expect(vs.rows['transcoder-vsvc']).toMatchObject({ Port: 8888, Labels: '{"app":"transcoder"}' });
    expect(vs.rows['gateway-vsvc']!.Age).toMatch(/^\d+[smhd]/);
    const rt = await table('Route');
    expect(rt.rows['gateway-route']).toMatchObject({ Destination: 'worker-target', Retry: 'always' });
    const tgt = await table('Target');
    expect(tgt.rows['worker-target']).toMatchObject({
      'Endpoints-From': 'worker-vsvc',
      LB: 'ConsistentHash',
      Service: 'gateway-vsvc',
    });
    expect(tgt.rows['transcoder-target']).toMatchObject({ Endpoints: '127.0.0.1', Service: 'worker-svc' });
  });

  describe('deploy/ RBAC and console', () => {
    it('the namespace, RBAC, Deployment, Service and webhook configuration are accepted (server-side apply, strict)', async () => {
      const files = [
        'deploy/namespace.yaml',
        'deploy/rbac.yaml',
        'deploy/console.yaml',
        'deploy/webhook.yaml',
      ];
      for (const file of files) {
        for (const o of yamlDocs(file)) {
          const res = await apply(o);
          expect(res.status, `${o.kind}/${o.metadata.name}: ${res.text}`).toBe(201);
          expect(res.warnings, `${o.kind}/${o.metadata.name}`).toEqual([]);
        }
      }
      // No Meshdeck runs behind the Service here: take the webhook away again (failurePolicy Ignore would
      // let writes through, after the API server's attempt to reach it).
      const vwc = yamlDocs('deploy/webhook.yaml')[0]!;
      expect((await call('DELETE', objectPath(vwc))).status).toBe(200);
    });

    const review = async (attrs: Obj) => {
      const res = await call('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user: SA_USER,
          groups: [
            'system:serviceaccounts',
            'system:serviceaccounts:meshdeck-system',
            'system:authenticated',
          ],
          resourceAttributes: attrs,
        },
      });
      expect(res.status).toBe(201);
      return res.body.status.allowed === true;
    };

    it('the controller may read the mesh and write its status, read Services/EndpointSlices/Pods, hold its Lease, impersonate', async () => {
      const allowed: Obj[] = [
        ...MESH_KINDS.flatMap((k) =>
          ['list', 'watch'].map((verb) => ({ group: 'msm.l7mp.io', resource: crdPlural(k), verb })),
        ),
        ...MESH_KINDS.map((k) => ({
          group: 'msm.l7mp.io',
          resource: crdPlural(k),
          subresource: 'status',
          verb: 'patch',
          namespace: 'default',
        })),
        { resource: 'services', verb: 'watch' },
        { resource: 'pods', verb: 'list' },
        { group: 'discovery.k8s.io', resource: 'endpointslices', verb: 'watch' },
        { group: 'coordination.k8s.io', resource: 'leases', verb: 'update', namespace: 'meshdeck-system' },
        // Each replica's own Lease (replicaPeers.ts): listed to find the others, deleted on a stop.
        { group: 'coordination.k8s.io', resource: 'leases', verb: 'list', namespace: 'meshdeck-system' },
        {
          group: 'coordination.k8s.io',
          resource: 'leases',
          verb: 'delete',
          namespace: 'meshdeck-system',
          name: 'meshdeck-replica-meshdeck-7d9f-b',
        },
        { resource: 'users', verb: 'impersonate', name: 'alice' },
        { resource: 'groups', verb: 'impersonate', name: 'developers' },
        // The admission webhook: its CA's Secret, and the caBundle of its own configuration; the ADS
        // server's CA.
        { resource: 'secrets', verb: 'get', namespace: 'meshdeck-system', name: 'meshdeck-webhook-ca' },
        { resource: 'secrets', verb: 'get', namespace: 'meshdeck-system', name: 'meshdeck-xds-ca' },
        { resource: 'secrets', verb: 'create', namespace: 'meshdeck-system' },
        // The xDS CA's signing service checks pods' tokens; its root goes to the proxies' namespaces.
        { group: 'authentication.k8s.io', resource: 'tokenreviews', verb: 'create' },
        { resource: 'pods', verb: 'get', namespace: 'ns1', name: 'client-0' },
        { resource: 'configmaps', verb: 'get', namespace: 'ns1', name: 'meshdeck-xds-ca-root' },
        { resource: 'configmaps', verb: 'update', namespace: 'ns1', name: 'meshdeck-xds-ca-root' },
        { resource: 'configmaps', verb: 'create', namespace: 'ns1' },
        {
          group: 'admissionregistration.k8s.io',
          resource: 'validatingwebhookconfigurations',
          verb: 'update',
          name: 'meshdeck-validator',
        },
      ];
      const denied: Obj[] = [
        { group: 'msm.l7mp.io', resource: 'virtualservices', verb: 'create', namespace: 'default' },
        { group: 'msm.l7mp.io', resource: 'targets', verb: 'patch', namespace: 'default' },
        { group: 'coordination.k8s.io', resource: 'leases', verb: 'update', namespace: 'default' },
        { group: 'coordination.k8s.io', resource: 'leases', verb: 'delete', namespace: 'kube-system' },
        { resource: 'pods', verb: 'delete', namespace: 'default' },
        { resource: 'secrets', verb: 'get', namespace: 'meshdeck-system' },
        { resource: 'secrets', verb: 'get', namespace: 'meshdeck-system', name: 'meshdeck-console' },
        { resource: 'secrets', verb: 'create', namespace: 'default' },
        { resource: 'configmaps', verb: 'get', namespace: 'ns1', name: 'app-settings' },
        { resource: 'configmaps', verb: 'update', namespace: 'ns1', name: 'app-settings' },
        { resource: 'configmaps', verb: 'list', namespace: 'ns1' },
        {
          group: 'admissionregistration.k8s.io',
          resource: 'validatingwebhookconfigurations',
          verb: 'update',
          name: 'someone-elses',
        },
        { resource: 'serviceaccounts', verb: 'impersonate', namespace: 'default' },
      ];
      for (const a of allowed) expect(await review(a), JSON.stringify(a)).toBe(true);
      for (const a of denied) expect(await review(a), JSON.stringify(a)).toBe(false);
    });

    it("with the controller's token, an impersonated user gets the user's rights, not the controller's", async () => {
      const tr = await call('POST', '/api/v1/namespaces/meshdeck-system/serviceaccounts/meshdeck/token', {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { expirationSeconds: 600 },
      });
      expect(tr.status, tr.text).toBe(201);
      const token = tr.body.status.token as string;
      const asController = await call('GET', `${MESH}/virtualservices`, undefined, { token });
      expect(asController.status).toBe(200);
      const asUser = await call('GET', `${MESH}/virtualservices`, undefined, {
        token,
        headers: { 'impersonate-user': kube.restricted.user, 'impersonate-group': 'meshdeck:restricted' },
      });
      expect(asUser.status).toBe(403);
      expect(asUser.body.message).toContain(
        `User "${kube.restricted.user}" cannot list resource "virtualservices"`,
      );
    });
  });
});
