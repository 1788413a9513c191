// Against a REAL kube-apiserver and etcd: built from their Go modules by scripts/kube-build.sh (cached by
// version; a cold build takes long, so CI runs the script before the tests) and started on 127.0.0.1 by
// server/kube/testing/kubeApiServer.ts. Plain HTTPS with the identities' client certificates.
import { randomBytes } from 'node:crypto';
import { access, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { type KubeApiServer, kubeRequest, startKubeApiServer } from './kubeApiServer';

let kube: KubeApiServer;
const ns = `meshdeck-it-${randomBytes(4).toString('hex')}`;

const as = (who: 'admin' | 'restricted', method: string, p: string, body?: unknown) =>
  kubeRequest(kube.url, kube[who], method, p, body);

const configMap = (name: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: ns },
  data: { hello: 'world' },
});

beforeAll(async () => {
  // Long enough for a cold build of both binaries when the cache is empty (see scripts/kube-build.sh).
  kube = await startKubeApiServer();
}, 90 * 60_000);

afterAll(async () => {
  await kube?.stop();
});

describe('kube-apiserver test harness', () => {
  it('/version reports the version the binary was built from', async () => {
    const res = await as('admin', 'GET', '/version');
    expect(res.status).toBe(200);
    const v = res.body as { gitVersion: string; major: string; minor: string };
    expect(v.gitVersion).toBe(kube.binaries.kubeVersion);
    expect(v.gitVersion).toMatch(/^v1\.\d+\.\d+$/);
    expect(`v${v.major}.${v.minor}.`).toBe(v.gitVersion.replace(/\d+$/, ''));
    expect(kube.binaries.etcdVersion).toMatch(/^v3\.6\.\d+$/);
  });

  it('writes a kubeconfig file per identity that matches the returned object', async () => {
    for (const id of [kube.admin, kube.restricted]) {
      const file = parseYaml(await readFile(id.kubeconfigPath, 'utf8'));
      expect(file).toEqual(id.kubeconfig);
      expect(file.clusters[0].cluster.server).toBe(kube.url);
      expect(Buffer.from(file.users[0].user['client-certificate-data'], 'base64').toString()).toBe(
        id.tls.cert,
      );
    }
    expect(kube.admin.groups).toEqual(['system:masters']);
  });

  it('authenticates both identities by their client certificates', async () => {
    for (const who of ['admin', 'restricted'] as const) {
      const res = await as(who, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'SelfSubjectReview',
      });
      expect(res.status).toBe(201);
      const info = (res.body as any).status.userInfo;
      expect(info.username).toBe(kube[who].user);
      expect(info.groups).toEqual(expect.arrayContaining([...kube[who].groups, 'system:authenticated']));
    }
  });

  it('the admin creates a namespace and a ConfigMap in it', async () => {
    const created = await as('admin', 'POST', '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: ns },
    });
    expect(created.status).toBe(201);
    const cm = await as('admin', 'POST', `/api/v1/namespaces/${ns}/configmaps`, configMap('by-admin'));
    expect(cm.status).toBe(201);
    const read = await as('admin', 'GET', `/api/v1/namespaces/${ns}/configmaps/by-admin`);
    expect(read.status).toBe(200);
    expect((read.body as any).data).toEqual({ hello: 'world' });
    expect((read.body as any).metadata.uid).toBe((cm.body as any).metadata.uid);
  });

  it('the restricted identity is forbidden the same (403 from RBAC, naming the user)', async () => {
    const nsRes = await as('restricted', 'POST', '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: `${ns}-denied` },
    });
    expect(nsRes.status).toBe(403);
    expect((nsRes.body as any).reason).toBe('Forbidden');
    expect((nsRes.body as any).message).toContain(
      `User "${kube.restricted.user}" cannot create resource "namespaces"`,
    );

    const cm = await as(
      'restricted',
      'POST',
      `/api/v1/namespaces/${ns}/configmaps`,
      configMap('by-restricted'),
    );
    expect(cm.status).toBe(403);
    expect((cm.body as any).message).toContain('cannot create resource "configmaps"');
    expect((await as('restricted', 'GET', `/api/v1/namespaces/${ns}/configmaps/by-admin`)).status).toBe(403);
    expect((await as('admin', 'GET', `/api/v1/namespaces/${ns}/configmaps/by-restricted`)).status).toBe(404);
  });

  it('a Role and RoleBinding made by the admin grant the restricted identity rights in that namespace only', async () => {
    // Not the built-in `edit`/`view`/`admin` ClusterRoles: they are aggregated, and the aggregation
    // controller runs in kube-controller-manager, so here they have no rules at all.
    const rbac = `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}`;
    const role = await as('admin', 'POST', `${rbac}/roles`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'configmap-writer', namespace: ns },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'create'] }],
    });
    expect(role.status).toBe(201);
    const rb = await as('admin', 'POST', `${rbac}/rolebindings`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'restricted-configmap-writer', namespace: ns },
      subjects: [{ kind: 'User', name: kube.restricted.user, apiGroup: 'rbac.authorization.k8s.io' }],
      roleRef: { kind: 'Role', name: 'configmap-writer', apiGroup: 'rbac.authorization.k8s.io' },
    });
    expect(rb.status).toBe(201);
    // The RBAC authorizer reads bindings from an informer cache: the grant takes effect shortly after.
    let status = 0;
    for (let i = 0; i < 50 && status !== 201; i++) {
      status = (
        await as('restricted', 'POST', `/api/v1/namespaces/${ns}/configmaps`, configMap('by-restricted'))
      ).status;
      if (status === 403) await new Promise((r) => setTimeout(r, 200));
    }
    expect(status).toBe(201);
    expect((await as('restricted', 'GET', `/api/v1/namespaces/${ns}/configmaps/by-admin`)).status).toBe(200);
    // Only the verbs granted, only in that namespace.
    expect((await as('restricted', 'DELETE', `/api/v1/namespaces/${ns}/configmaps/by-admin`)).status).toBe(
      403,
    );
    expect((await as('restricted', 'GET', '/api/v1/namespaces/default/configmaps')).status).toBe(403);
  });

  it('stops etcd and kube-apiserver and removes its files', async () => {
    const dir = path.dirname(kube.admin.kubeconfigPath);
    await kube.stop();
    await expect(as('admin', 'GET', '/version')).rejects.toThrow(/ECONNREFUSED/);
    await expect(fetch(`${kube.etcdUrl}/health`)).rejects.toThrow();
    await expect(access(dir)).rejects.toThrow(/ENOENT/);
  });
});
