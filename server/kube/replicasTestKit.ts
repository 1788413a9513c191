// Test helpers shared by replicas.integration.test.ts and example2.integration.test.ts: a seed example put
// into a REAL API server as the cluster would hold it (mesh CRs, Services, Pods whose status.podIP is the
// loopback address of a real l7mp process, the msm.l7mp.io/api-port annotation naming its REST port), with
// the golden file localized the same way (proxy addresses and listener ports moved to this test's).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as k8s from '@kubernetes/client-node';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { meshCrds } from '@/lib/kube/crds';
import type { L7mpConfig } from '@/lib/model/l7mp';
import { convertSeedDialect } from '@/lib/parse/seedDialect';
import { L7mpRestClient } from '../l7mp/L7mpRestClient';
import type { L7mpProcess } from '../testing/startL7mp';
import { type KubeApiServer, kubeRequest } from './testing/kubeApiServer';

export const GOLDEN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../lib/engine/testdata');
export const NS = 'default';
export const GROUP = { group: 'msm.l7mp.io', version: 'v1' };
export const PLURAL: Record<string, string> = {
  VirtualService: 'virtualservices',
  Route: 'routes',
  Target: 'targets',
};
export const merge = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- parsed YAML and raw API objects
export type Obj = Record<string, any>;

/** Polls fn until it returns something truthy; throws after timeoutMs with `context()` appended. */
export async function until<T>(
  what: string,
  fn: () => T | Promise<T>,
  timeoutMs = 20_000,
  context: () => string = () => '',
  everyMs = 25,
) {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v as Exclude<T, false | null | undefined | 0 | ''>;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}\n` +
          context(),
      );
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Deep-replaces addresses (string parts) and `port` numbers by this test's. */
export function localizer(addresses: Record<string, string>, ports: Record<number, number>) {
  const localize = <T>(v: T): T => {
    if (typeof v === 'string') {
      let s: string = v;
      for (const [from, to] of Object.entries(addresses)) s = s.split(from).join(to);
      return s as T;
    }
    if (Array.isArray(v)) return v.map(localize) as T;
    if (v && typeof v === 'object') {
      return Object.fromEntries(
        Object.entries(v).map(([k, x]) => [
          k,
          k === 'port' && typeof x === 'number' && ports[x] !== undefined ? ports[x] : localize(x),
        ]),
      ) as T;
    }
    return v;
  };
  return localize;
}

export type Golden = Record<string, { config: L7mpConfig; operations: Record<string, unknown>[] }>;

/** A golden file's proxies (config and operations for an empty proxy), localized. */
export function golden(example: string, localize: <T>(v: T) => T): Golden {
  const out = parseYaml(readFileSync(path.join(GOLDEN, `${example}.out.yaml`), 'utf8')) as Obj;
  return localize(out.proxies);
}

/** What the l7mp process at ip runs, read over its REST API. */
export async function live(p: L7mpProcess, ip: string): Promise<L7mpConfig> {
  return (await new L7mpRestClient(`http://${ip}:${p.apiPort}`, { timeoutMs: 2000 }).readLive()).config;
}

export function endpointsOf(config: L7mpConfig, cluster: string): string[] {
  return (config.clusters.find((c) => c.name === cluster)?.endpoints ?? []).map((e) => e.spec.address).sort();
}

/** Installs the mesh CRDs (lib/kube/crds.ts) and waits until their resource paths serve. */
export async function installCrds(kube: KubeApiServer, kc: k8s.KubeConfig): Promise<void> {
  const ext = kc.makeApiClient(k8s.ApiextensionsV1Api);
  const custom = kc.makeApiClient(k8s.CustomObjectsApi);
  for (const crd of meshCrds()) {
    // Raw JSON: the client library's typed serializer drops `x-kubernetes-*` keys.
    const res = await kubeRequest(
      kube.url,
      kube.admin,
      'POST',
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
      crd,
    );
    if (res.status !== 201) throw new Error(`CRD ${crd.metadata.name}: HTTP ${res.status} ${res.text}`);
    await until(`CRD ${crd.metadata.name} Established`, async () => {
      const c = await ext.readCustomResourceDefinition({ name: crd.metadata.name });
      return c.status?.conditions?.some((x) => x.type === 'Established' && x.status === 'True');
    });
  }
  for (const plural of Object.values(PLURAL)) {
    await until(`${plural} served`, () =>
      custom.listNamespacedCustomObject({ ...GROUP, namespace: NS, plural }),
    );
  }
}

/** An EndpointSlice as the endpoint controller writes it for a Service's ready pods. */
export function endpointSlice(service: string, suffix: string, port: number, pods: [string, string][]) {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: `${service}-${suffix}`,
      namespace: NS,
      labels: {
        'kubernetes.io/service-name': service,
        'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io',
      },
    },
    addressType: 'IPv4',
    endpoints: pods.map(([pod, ip]) => ({
      addresses: [ip],
      conditions: { ready: true, serving: true, terminating: false },
      targetRef: { kind: 'Pod', namespace: NS, name: pod },
    })),
    ports: [{ name: '', port, protocol: 'UDP' }],
  } as k8s.V1EndpointSlice;
}

/**
 * Creates a seed example's Services, Pods (status through the status subresource; `apiPorts` by pod name
 * become the msm.l7mp.io/api-port annotation) and mesh resources, all localized. EndpointSlices are the
 * caller's.
 */
/** A Pod named by `metadata` in NS, Running at `podIP` as a kubelet would report it (none runs here). */
export async function createRunningPod(core: k8s.CoreV1Api, metadata: Obj, podIP: string): Promise<void> {
  await core.createNamespacedPod({
    namespace: NS,
    body: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata,
      spec: { containers: [{ name: 'app', image: 'registry.invalid/app:1' }] },
    },
  });
  await core.patchNamespacedPodStatus(
    {
      name: metadata.name as string,
      namespace: NS,
      body: { status: { phase: 'Running', podIP, podIPs: [{ ip: podIP }] } },
    },
    merge,
  );
}

export async function applySeed(
  kc: k8s.KubeConfig,
  example: string,
  localize: <T>(v: T) => T,
  apiPorts: Record<string, number>,
  beforeMesh: () => Promise<void> = async () => undefined,
): Promise<void> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const custom = kc.makeApiClient(k8s.CustomObjectsApi);
  const docs = parseAllDocuments(readFileSync(path.join(GOLDEN, `${example}.in.yaml`), 'utf8'))
    .map((d) => d.toJS() as Obj)
    .map((o) => localize(convertSeedDialect(o).object) as Obj);
  for (const o of docs) {
    if (o.kind === 'Service') await core.createNamespacedService({ namespace: NS, body: o as k8s.V1Service });
  }
  for (const o of docs) {
    if (o.kind !== 'Pod') continue;
    const name = o.metadata.name as string;
    const annotations = { ...o.metadata.annotations };
    if (apiPorts[name]) annotations['msm.l7mp.io/api-port'] = String(apiPorts[name]);
    await createRunningPod(core, { ...o.metadata, annotations }, o.status.podIP as string);
  }
  await beforeMesh();
  for (const o of docs) {
    if (o.apiVersion !== 'msm.l7mp.io/v1') continue;
    await custom.createNamespacedCustomObject({ ...GROUP, namespace: NS, plural: PLURAL[o.kind]!, body: o });
  }
}
