import {
  API_PORT_ANNOTATION,
  DEFAULT_L7MP_API_PORT,
  type EndpointSlice,
  type Pod,
  PROXY_LABEL,
  SERVICE_NAME_LABEL,
  type Service,
} from '../model/kube';
import type { ResolvedEndpoint } from './resolvedMesh';
import { urlHost } from '../util/urlHost';

/**
 * A pod that runs l7mp ("a Pod labelled msm.l7mp.io/proxy: sidecar or gateway"), or a proxyless gRPC
 * client (`msm.l7mp.io/proxy: grpc`): configured over xDS only, never given an l7mp config.
 */
export interface Proxy {
  /** `namespace/pod`. */
  id: string;
  namespace: string;
  pod: string;
  role: 'sidecar' | 'gateway' | 'grpc';
  address: string;
  apiPort: number;
  apiUrl: string;
}

/** A pod as the engine sees it. */
export interface PodInfo {
  key: string;
  namespace: string;
  name: string;
  labels: Record<string, string>;
  ip?: string;
  proxy?: Proxy;
}

export interface IndexProblem {
  podKey: string;
  namespace: string;
  name: string;
  code: string;
  message: string;
  path: string;
}

/** True for pods that run l7mp (sidecar, gateway); false for proxyless gRPC clients. */
export function isL7mpProxy(p: Proxy): boolean {
  return p.role !== 'grpc';
}

/** Indexes the Kubernetes objects of a snapshot for selector lookups. */
export class ClusterIndex {
  readonly pods = new Map<string, PodInfo>();
  readonly services = new Map<string, Service>();
  readonly slicesByService = new Map<string, EndpointSlice[]>();
  readonly proxies = new Map<string, Proxy>();
  readonly problems: IndexProblem[] = [];
  private readonly podsByLabel = new Map<string, string[]>();
  private readonly podsByNamespace = new Map<string, string[]>();

  constructor(services: readonly Service[], slices: readonly EndpointSlice[], pods: readonly Pod[]) {
    for (const s of services) this.services.set(`${s.metadata.namespace ?? 'default'}/${s.metadata.name}`, s);
    for (const es of slices) {
      const svc = es.metadata.labels?.[SERVICE_NAME_LABEL];
      if (!svc) continue;
      const key = `${es.metadata.namespace ?? 'default'}/${svc}`;
      const list = this.slicesByService.get(key) ?? [];
      list.push(es);
      this.slicesByService.set(key, list);
    }
    for (const list of this.slicesByService.values())
      list.sort((a, b) => cmp(a.metadata.name, b.metadata.name));
    const sortedPods = [...pods].sort((a, b) =>
      cmp(`${a.metadata.namespace}/${a.metadata.name}`, `${b.metadata.namespace}/${b.metadata.name}`),
    );
    for (const p of sortedPods) this.addPod(p);
  }

  private addPod(p: Pod): void {
    const namespace = p.metadata.namespace ?? 'default';
    const key = `${namespace}/${p.metadata.name}`;
    const labels = p.metadata.labels ?? {};
    const phase = p.status?.phase;
    const ip = phase === 'Failed' || phase === 'Succeeded' ? undefined : p.status?.podIP || undefined;
    const info: PodInfo = { key, namespace, name: p.metadata.name, labels, ip };
    const role = labels[PROXY_LABEL];
    if (role !== undefined) {
      if (role !== 'sidecar' && role !== 'gateway' && role !== 'grpc') {
        this.problems.push({
          podKey: key,
          namespace,
          name: p.metadata.name,
          code: 'bad-proxy-label',
          path: `metadata.labels["${PROXY_LABEL}"]`,
          message: `${PROXY_LABEL} must be "sidecar", "gateway" or "grpc", not "${role}"; the pod is not treated as a proxy`,
        });
      } else {
        const annotated = p.metadata.annotations?.[API_PORT_ANNOTATION];
        let apiPort = DEFAULT_L7MP_API_PORT;
        if (annotated !== undefined) {
          const n = Number(annotated);
          if (Number.isInteger(n) && n >= 1 && n <= 65535) apiPort = n;
          else
            this.problems.push({
              podKey: key,
              namespace,
              name: p.metadata.name,
              code: 'bad-api-port',
              path: `metadata.annotations["${API_PORT_ANNOTATION}"]`,
              message: `${API_PORT_ANNOTATION} "${annotated}" is not a port; using ${DEFAULT_L7MP_API_PORT}`,
            });
        }
        if (ip === undefined) {
          this.problems.push({
            podKey: key,
            namespace,
            name: p.metadata.name,
            code: 'proxy-without-ip',
            path: 'status.podIP',
            message:
              'proxy pod has no status.podIP (not running yet); nothing is rendered for it until it has one',
          });
        } else {
          const host = urlHost(ip);
          info.proxy = {
            id: key,
            namespace,
            pod: p.metadata.name,
            role,
            address: ip,
            apiPort,
            apiUrl: `http://${host}:${apiPort}`,
          };
          this.proxies.set(key, info.proxy);
        }
      }
    }
    this.pods.set(key, info);
    push(this.podsByNamespace, namespace, key);
    for (const [k, v] of Object.entries(labels))
      push(this.podsByLabel, `${namespace}\u0000${k}\u0000${v}`, key);
  }

  /** Pods in `namespace` carrying all `labels` (sorted by key). An empty selector selects nothing. */
  podsMatching(namespace: string, labels: Record<string, string>): PodInfo[] {
    // Called for every selector of a large mesh: no intermediate arrays or closures.
    let best: string[] | undefined;
    let n = 0;
    for (const k in labels) {
      n++;
      const list = this.podsByLabel.get(`${namespace}\u0000${k}\u0000${labels[k]}`);
      if (!list) return [];
      if (!best || list.length < best.length) best = list;
    }
    if (!best) return [];
    const out: PodInfo[] = [];
    for (const key of best) {
      const pod = this.pods.get(key)!;
      let all = true;
      if (n > 1) for (const k in labels) if (pod.labels[k] !== labels[k]) all = false;
      if (all) out.push(pod);
    }
    return out;
  }
}

/** The ready addresses of a Service's EndpointSlices, deduplicated and sorted. */
export function sliceEndpoints(namespace: string, slices: readonly EndpointSlice[]): ResolvedEndpoint[] {
  const seen = new Set<string>();
  const endpoints: ResolvedEndpoint[] = [];
  for (const s of slices) {
    for (const e of s.endpoints ?? []) {
      if (e.conditions?.ready === false) continue;
      for (const a of e.addresses) {
        if (seen.has(a)) continue;
        seen.add(a);
        const ep: ResolvedEndpoint = { address: a };
        if (e.targetRef?.kind === 'Pod' && e.targetRef.name) ep.pod = `${namespace}/${e.targetRef.name}`;
        endpoints.push(ep);
      }
    }
  }
  for (let i = 1; i < endpoints.length; i++)
    if (endpoints[i - 1]!.address > endpoints[i]!.address) return endpoints.sort(byAddress);
  return endpoints;
}

function byAddress(a: ResolvedEndpoint, b: ResolvedEndpoint): number {
  return a.address < b.address ? -1 : a.address > b.address ? 1 : 0;
}

function push(m: Map<string, string[]>, k: string, v: string): void {
  const list = m.get(k);
  if (list) list.push(v);
  else m.set(k, [v]);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
