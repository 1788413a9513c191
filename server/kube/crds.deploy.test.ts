// deploy/: the install manifests are valid YAML, the Kustomize base lists them all, and they fit together
// (the Deployment's arguments are ones `meshdeck serve` accepts, the Service selects the pods, the RBAC
// binds the Deployment's ServiceAccount). server/kube/crds.integration.test.ts applies them to a real API server.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { DEFAULT_WEBHOOK_CONFIG, parseArgs } from '@/server/cli/args';
import { IN_CLUSTER, WEBHOOK_CA_SECRET } from './kubeControlPlaneServe';
import { XDS_CA_SECRET } from './sharedCaSecret';
import { ADMISSION_PATH } from './admissionWebhook';

const DEPLOY = path.resolve(__dirname, '../../deploy');

type Obj = Record<string, any>;

function yamlFiles(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? yamlFiles(path.join(dir, e.name), `${prefix}${e.name}/`)
      : e.name.endsWith('.yaml')
        ? [`${prefix}${e.name}`]
        : [],
  );
}

function docs(file: string): Obj[] {
  const parsed = parseAllDocuments(readFileSync(path.join(DEPLOY, file), 'utf8'));
  return parsed.map((d) => {
    expect(d.errors, `${file}: ${d.errors.map((e) => e.message).join('; ')}`).toEqual([]);
    return d.toJS() as Obj;
  });
}

/** The optional monitoring Kustomization (Prometheus Operator kinds), and its Prometheus rule file (no object). */
const MONITORING = 'monitoring/';
const RULE_FILE = 'monitoring/meshdeck.rules.yaml';

const kustomization = docs('kustomization.yaml')[0]!;
const manifests = (kustomization.resources as string[]).flatMap((f) => docs(f));
const find = (kind: string, name: string) => {
  const o = manifests.find((m) => m.kind === kind && m.metadata.name === name);
  expect(o, `${kind}/${name}`).toBeDefined();
  return o!;
};

describe('deploy/ manifests', () => {
  it('every YAML file parses and every object has apiVersion, kind and a name', () => {
    for (const file of yamlFiles(DEPLOY).filter((f) => f !== RULE_FILE)) {
      for (const o of docs(file)) {
        expect(o.apiVersion, file).toMatch(/^[a-z0-9.]+(\/v\w+)?$/);
        expect(o.kind, file).toMatch(/^[A-Z]\w+$/);
        if (o.kind !== 'Kustomization') expect(o.metadata?.name, file).toMatch(/^[a-z0-9][-a-z0-9.]*$/);
      }
    }
  });

  it('the Kustomize base lists every manifest in deploy/ but the optional monitoring/', () => {
    expect(kustomization).toMatchObject({
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
    });
    const listed = [...(kustomization.resources as string[])].sort();
    expect(listed).toEqual(
      yamlFiles(DEPLOY)
        .filter((f) => f !== 'kustomization.yaml' && !f.startsWith(MONITORING))
        .sort(),
    );
    expect(
      manifests.filter((m) => m.kind === 'CustomResourceDefinition').map((m) => m.metadata.name),
    ).toEqual(['virtualservices.msm.l7mp.io', 'routes.msm.l7mp.io', 'targets.msm.l7mp.io']);
  });

  it("monitoring/ lists its manifests; its ServiceMonitor scrapes the console Service's http port", () => {
    const k = docs('monitoring/kustomization.yaml')[0]!;
    expect(k).toMatchObject({ kind: 'Kustomization', namespace: 'meshdeck-system' });
    expect((k.resources as string[]).map((f) => `${MONITORING}${f}`).sort()).toEqual(
      yamlFiles(DEPLOY)
        .filter((f) => f.startsWith(MONITORING) && f !== RULE_FILE && f !== 'monitoring/kustomization.yaml')
        .sort(),
    );
    const monitor = docs('monitoring/servicemonitor.yaml')[0]!;
    const service = find('Service', 'meshdeck');
    expect(monitor.kind).toBe('ServiceMonitor');
    expect(service.metadata.labels).toMatchObject(monitor.spec.selector.matchLabels);
    const port = monitor.spec.endpoints[0];
    expect(service.spec.ports.map((p: Obj) => p.name)).toContain(port.port);
    expect(port.path).toBe('/metrics');
    // The dashboard ConfigMap is generated from a file that must exist.
    for (const g of k.configMapGenerator as Obj[])
      for (const f of g.files as string[]) expect(readdirSync(path.join(DEPLOY, MONITORING))).toContain(f);
  });

  it('namespaced objects live in meshdeck-system, which the base creates', () => {
    find('Namespace', 'meshdeck-system');
    const clusterScoped = new Set([
      'Namespace',
      'CustomResourceDefinition',
      'ClusterRole',
      'ClusterRoleBinding',
      'ValidatingWebhookConfiguration',
    ]);
    for (const m of manifests) {
      if (!clusterScoped.has(m.kind))
        expect(m.metadata.namespace, `${m.kind}/${m.metadata.name}`).toBe('meshdeck-system');
    }
  });

  it('the console listens on the pod address with flags `meshdeck serve` accepts', () => {
    const deploy = find('Deployment', 'meshdeck');
    const pod = deploy.spec.template;
    const container = pod.spec.containers[0];
    const cmd = parseArgs(container.args);
    expect(cmd).toMatchObject({
      command: 'serve',
      host: '0.0.0.0',
      port: 3000,
      xds: { host: '0.0.0.0', port: 18000 },
      // Kubernetes mode with the pod's service account; the election names the pod and its namespace.
      kube: {
        kubeconfig: IN_CLUSTER,
        webhook: { host: '0.0.0.0', port: 9443, config: DEFAULT_WEBHOOK_CONFIG },
      },
    });
    const env = Object.fromEntries(container.env.map((e: Obj) => [e.name, e.valueFrom?.fieldRef?.fieldPath]));
    expect(env).toMatchObject({ POD_NAME: 'metadata.name', POD_NAMESPACE: 'metadata.namespace' });
    const ports = Object.fromEntries(container.ports.map((p: Obj) => [p.name, p.containerPort]));
    expect(ports).toEqual({ http: 3000, xds: 18000, webhook: 9443 });
    expect(deploy.spec.selector.matchLabels).toEqual(
      Object.fromEntries(
        Object.keys(deploy.spec.selector.matchLabels).map((k) => [k, pod.metadata.labels[k]]),
      ),
    );
    const svc = find('Service', 'meshdeck');
    for (const [k, v] of Object.entries(svc.spec.selector)) expect(pod.metadata.labels[k]).toBe(v);
    for (const p of svc.spec.ports) expect(Object.keys(ports)).toContain(p.targetPort);
    expect(pod.spec.serviceAccountName).toBe('meshdeck');
    find('ServiceAccount', 'meshdeck');
  });

  it('RBAC: the controller reads the mesh, writes only status, reads Services/EndpointSlices/Pods, impersonates', () => {
    const role = find('ClusterRole', 'meshdeck-controller');
    const verbsOn = (group: string, resource: string) =>
      new Set(
        (role.rules as Obj[])
          .filter((r) => r.apiGroups.includes(group) && r.resources.includes(resource))
          .flatMap((r) => r.verbs as string[]),
      );
    for (const r of ['virtualservices', 'routes', 'targets']) {
      expect([...verbsOn('msm.l7mp.io', r)].sort()).toEqual(['get', 'list', 'watch']);
      expect([...verbsOn('msm.l7mp.io', `${r}/status`)].sort()).toEqual(['get', 'patch', 'update']);
    }
    for (const [g, r] of [
      ['', 'services'],
      ['', 'pods'],
      ['discovery.k8s.io', 'endpointslices'],
    ] as const)
      expect([...verbsOn(g, r)].sort()).toEqual(['get', 'list', 'watch']);
    expect([...verbsOn('', 'users')]).toEqual(['impersonate']);
    expect([...verbsOn('', 'groups')]).toEqual(['impersonate']);
    const binding = find('ClusterRoleBinding', 'meshdeck-controller');
    expect(binding.roleRef).toMatchObject({ kind: 'ClusterRole', name: 'meshdeck-controller' });
    expect(binding.subjects).toEqual([
      { kind: 'ServiceAccount', name: 'meshdeck', namespace: 'meshdeck-system' },
    ]);
    const leases = find('Role', 'meshdeck-leader-election');
    expect(leases.rules).toEqual([
      expect.objectContaining({ apiGroups: ['coordination.k8s.io'], resources: ['leases'] }),
    ]);
    expect(find('RoleBinding', 'meshdeck-leader-election').subjects[0].name).toBe('meshdeck');
    // The webhook's caBundle: its own configuration only; the CA Secrets (the webhook's, the ADS
    // server's): read by name, created here.
    expect(role.rules).toContainEqual({
      apiGroups: ['admissionregistration.k8s.io'],
      resources: ['validatingwebhookconfigurations'],
      resourceNames: [DEFAULT_WEBHOOK_CONFIG],
      verbs: ['get', 'update'],
    });
    expect(find('Role', 'meshdeck-webhook-ca').rules).toEqual([
      {
        apiGroups: [''],
        resources: ['secrets'],
        resourceNames: [WEBHOOK_CA_SECRET, XDS_CA_SECRET],
        verbs: ['get'],
      },
      { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
    ]);
    expect(find('RoleBinding', 'meshdeck-webhook-ca').subjects[0].name).toBe('meshdeck');
  });

  it('the webhook configuration sends the mesh kinds to the Service on the path the server answers', () => {
    const vwc = find('ValidatingWebhookConfiguration', DEFAULT_WEBHOOK_CONFIG);
    expect(vwc.apiVersion).toBe('admissionregistration.k8s.io/v1');
    const hook = (vwc.webhooks as Obj[])[0]!;
    expect(vwc.webhooks).toHaveLength(1);
    expect(hook).toMatchObject({
      admissionReviewVersions: ['v1'],
      sideEffects: 'None',
      failurePolicy: 'Ignore',
      clientConfig: { service: { name: 'meshdeck', namespace: 'meshdeck-system', path: ADMISSION_PATH } },
    });
    // Meshdeck writes the caBundle itself.
    expect(hook.clientConfig.caBundle).toBeUndefined();
    expect(hook.rules).toEqual([
      expect.objectContaining({
        apiGroups: ['msm.l7mp.io'],
        apiVersions: ['v1'],
        operations: ['CREATE', 'UPDATE', 'DELETE'],
        resources: ['virtualservices', 'routes', 'targets'],
      }),
    ]);
    const svc = find('Service', 'meshdeck');
    const port = (svc.spec.ports as Obj[]).find((p) => p.port === hook.clientConfig.service.port);
    expect(port?.targetPort).toBe('webhook');
  });
});
