/**
 * The admission webhook's decision (lib/kube/admission.ts) on a large cluster: bench/kube.ts's objects
 * (N Services with one EndpointSlice each, gateway Pods, M VirtualServices routing to M Targets), as the
 * informers hold them. Per review: an UPDATE of a Route-less VirtualService that changes its port (valid:
 * the mesh is compiled with it, and the diagnostics it adds are the warnings), a CREATE that fails the
 * schema (no compile), and a DELETE of a Target a VirtualService routes to (compiled without it). The
 * mesh's diagnostics before the change are computed once, as the server keeps them
 * (clusterFromObjects); `beforeMs` is that first compile. Figures as JSON, never assertions.
 *
 *   node --import tsx bench/admission.ts [--services 10000] [--endpoints 10] [--mesh-services 200]
 *     [--proxies 2] [--runs 15]
 */
import { performance } from 'node:perf_hooks';
import { meshDiagnostics, reviewAdmission } from '../lib/kube/admission';
import {
  type KubeObjects,
  type KubeSourceKind,
  type LeanKubeObject,
  leanKubeObject,
} from '../lib/kube/kubeSnapshot';
import { numberArg } from './argv';
import {
  backendService,
  backendSlice,
  BENCH_NAMESPACE,
  gatewayPod,
  meshServiceIndex,
  meshTarget,
  meshVirtualService,
} from './kubeObjects';
import { pct } from './pct';

const SERVICES = numberArg('services', 10_000);
const ENDPOINTS = numberArg('endpoints', 10);
const MESH = Math.min(numberArg('mesh-services', 200), SERVICES);
const PROXIES = numberArg('proxies', 2);
const RUNS = numberArg('runs', 15);

type Obj = Record<string, unknown>;

function objects(): { kube: KubeObjects; vs0: Obj; target0: Obj } {
  const raw: Record<KubeSourceKind, Obj[]> = {
    VirtualService: [],
    Route: [],
    Target: [],
    Service: [],
    EndpointSlice: [],
    Pod: [],
  };
  for (let i = 0; i < SERVICES; i++) {
    raw.Service.push(backendService(i));
    raw.EndpointSlice.push(backendSlice(i, ENDPOINTS));
  }
  for (let g = 0; g < PROXIES; g++) {
    const pod = gatewayPod(g, 30000 + g);
    raw.Pod.push({ ...pod, status: { podIP: `127.0.0.${10 + g}`, phase: 'Running' } });
  }
  for (let j = 0; j < MESH; j++) {
    raw.Target.push(meshTarget(j, meshServiceIndex(j, { services: SERVICES, meshServices: MESH })));
    raw.VirtualService.push(meshVirtualService(j, PROXIES, 40000 + j));
  }
  const kube = Object.fromEntries(
    Object.entries(raw).map(([k, list]) => [
      k,
      list.map((o) => leanKubeObject(k as KubeSourceKind, o)).filter((o): o is LeanKubeObject => !!o),
    ]),
  ) as unknown as KubeObjects;
  return { kube, vs0: raw.VirtualService[0]!, target0: raw.Target[0]! };
}

function review(kind: string, operation: string, name: string, object?: Obj, oldObject?: Obj) {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'bench',
      kind: { group: 'msm.l7mp.io', version: 'v1', kind },
      operation,
      namespace: BENCH_NAMESPACE,
      name,
      ...(object ? { object } : {}),
      ...(oldObject ? { oldObject } : {}),
    },
  };
}

function time(label: string, body: unknown, cluster: Parameters<typeof reviewAdmission>[1]) {
  const ms: number[] = [];
  let last: ReturnType<typeof reviewAdmission> | undefined;
  for (let r = 0; r < RUNS; r++) {
    const t = performance.now();
    last = reviewAdmission(body, cluster);
    ms.push(performance.now() - t);
  }
  const resp = last?.ok ? last.review.response : undefined;
  return {
    review: label,
    allowed: resp?.allowed,
    warnings: resp?.warnings?.length ?? 0,
    p50Ms: pct(ms, 50),
    maxMs: pct(ms, 100),
  };
}

const { kube, vs0, target0 } = objects();
const t0 = performance.now();
const before = meshDiagnostics(kube);
const beforeMs = Math.round(performance.now() - t0);
const cluster = { objects: kube, before };
const spec = vs0.spec as Obj;
const results = [
  time(
    'UPDATE VirtualService (new port)',
    review('VirtualService', 'UPDATE', 'vs-0', { ...vs0, spec: { ...spec, udp: { port: 39999 } } }, vs0),
    cluster,
  ),
  time(
    'CREATE Route failing the schema',
    review('Route', 'CREATE', 'bad', {
      apiVersion: 'msm.l7mp.io/v1',
      kind: 'Route',
      metadata: { name: 'bad', namespace: BENCH_NAMESPACE },
      spec: { destination: 42 },
    }),
    cluster,
  ),
  time(
    'DELETE Target a VirtualService routes to',
    review('Target', 'DELETE', 'target-0', undefined, target0),
    cluster,
  ),
];
console.log(
  JSON.stringify(
    {
      bench: 'admission',
      node: process.version,
      size: { services: SERVICES, endpointsPerService: ENDPOINTS, meshServices: MESH, proxies: PROXIES },
      runs: RUNS,
      beforeMs,
      beforeDiagnostics: before.length,
      results,
    },
    null,
    2,
  ),
);
