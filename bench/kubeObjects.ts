/**
 * The objects bench/kube.ts writes into a real API server, and the small pure helpers it uses: Services
 * backend-<i> with one EndpointSlice each (addresses in 10.1.0.0 - 10.95.255.255: the API server refuses
 * loopback addresses in a slice, and nothing connects to these), l7mp gateway pods, and the mesh on them
 * (VirtualService vs-<j> on gateway j % P, routing to Target target-<j>, which follows one of the Services).
 */

export const BENCH_NAMESPACE = 'default';
/** The UDP port of every backend Service (and of its EndpointSlice). */
export const BACKEND_PORT = 20000;

export interface KubeBenchSize {
  /** Kubernetes Services, one EndpointSlice each. */
  services: number;
  endpointsPerService: number;
  /** VirtualServices (and as many Targets), each following a different Service. */
  meshServices: number;
  /** l7mp gateway pods the VirtualServices are spread over. */
  proxies: number;
}

type Obj = Record<string, unknown>;

function ip10(second: number, n: number): string {
  return `10.${second}.${(n >> 8) & 255}.${n & 255}`;
}

/** The k-th bulk endpoint address (10.1.0.0 upwards); throws past 10.95.255.255 (10.96/16 holds the ClusterIPs). */
export function endpointAddress(k: number): string {
  if (!Number.isInteger(k) || k < 0 || k >= 95 * 65536) throw new Error(`endpoint index ${k} out of range`);
  return ip10(1 + Math.floor(k / 65536), k % 65536);
}

/** The address change c puts first in a slice (10.200.0.0 upwards): unique, never a bulk address. */
export function changeAddress(c: number): string {
  if (!Number.isInteger(c) || c < 0 || c >= 50 * 65536) throw new Error(`change index ${c} out of range`);
  return ip10(200 + Math.floor(c / 65536), c % 65536);
}

/** The Service the j-th mesh service follows: spread evenly over all Services, distinct for j < services. */
export function meshServiceIndex(j: number, size: Pick<KubeBenchSize, 'services' | 'meshServices'>): number {
  return Math.floor((j * size.services) / Math.max(1, size.meshServices));
}

export function backendService(i: number): Obj {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: `backend-${i}`, namespace: BENCH_NAMESPACE },
    spec: { selector: { app: `backend-${i}` }, ports: [{ protocol: 'UDP', port: BACKEND_PORT }] },
  };
}

/** Service i's EndpointSlice with `count` ready endpoints; `first` replaces the first address (a change). */
export function backendSlice(i: number, count: number, first?: string): Obj {
  const endpoints = [];
  for (let e = 0; e < count; e++)
    endpoints.push({
      addresses: [e === 0 && first !== undefined ? first : endpointAddress(i * count + e)],
      conditions: { ready: true, serving: true, terminating: false },
    });
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: `backend-${i}`,
      namespace: BENCH_NAMESPACE,
      labels: {
        'kubernetes.io/service-name': `backend-${i}`,
        'endpointslice.kubernetes.io/managed-by': 'meshdeck-bench',
      },
    },
    addressType: 'IPv4',
    endpoints,
    ports: [{ name: '', port: BACKEND_PORT, protocol: 'UDP' }],
  };
}

/** An l7mp gateway pod whose REST API listens on `apiPort` (the pod IP is set via the status subresource). */
export function gatewayPod(g: number, apiPort: number): Obj {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `bench-gw-${g}`,
      namespace: BENCH_NAMESPACE,
      labels: { app: `bench-gw-${g}`, 'msm.l7mp.io/proxy': 'gateway' },
      annotations: { 'msm.l7mp.io/api-port': String(apiPort) },
    },
    spec: { containers: [{ name: 'l7mp', image: 'registry.invalid/l7mp:0.5.7' }] },
  };
}

export function meshTarget(j: number, serviceIndex: number): Obj {
  return {
    apiVersion: 'msm.l7mp.io/v1',
    kind: 'Target',
    metadata: { name: `target-${j}`, namespace: BENCH_NAMESPACE },
    spec: { serviceName: `backend-${serviceIndex}` },
  };
}

/** VirtualService j: a UDP listener on gateway j % proxies, routing to Target j. */
export function meshVirtualService(j: number, proxies: number, udpPort: number): Obj {
  return {
    apiVersion: 'msm.l7mp.io/v1',
    kind: 'VirtualService',
    metadata: { name: `vs-${j}`, namespace: BENCH_NAMESPACE },
    spec: {
      selector: { matchLabels: { app: `bench-gw-${j % proxies}` } },
      udp: { port: udpPort },
      rules: [{ action: { route: { destination: `target-${j}` } } }],
    },
  };
}

/** The p-th percentile (0-100) of ascending `sorted` (nearest rank below); NaN when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export interface PoolResult {
  done: number;
  failed: number;
  /** Indices never started because the deadline passed. */
  skipped: number;
  firstError?: string;
}

/**
 * Runs fn(0..count-1) with at most `concurrency` in flight; stops starting new ones once `deadline`
 * (a Date.now() value) passes. A rejection counts as a failure and does not stop the others.
 */
export async function runPool(
  count: number,
  concurrency: number,
  deadline: number,
  fn: (i: number) => Promise<void>,
): Promise<PoolResult> {
  const result: PoolResult = { done: 0, failed: 0, skipped: 0 };
  let next = 0;
  const worker = async () => {
    while (next < count) {
      if (Date.now() > deadline) break;
      const i = next++;
      try {
        await fn(i);
        result.done++;
      } catch (e) {
        result.failed++;
        result.firstError ??= e instanceof Error ? e.message : String(e);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, count)) }, worker));
  result.skipped = count - next;
  return result;
}
