import { Document } from 'yaml';
import type { DraftDoc } from '../lib/console/draftDoc';
import type { EndpointSlice, Pod, Service } from '../lib/model/kube';
import type { Route, Target, VirtualService } from '../lib/model/resources';
import { emptySnapshot, type Snapshot } from '../lib/model/snapshot';

export interface SyntheticMeshSize {
  /** VirtualServices, Routes and Targets (N of each). */
  services: number;
  /** Endpoints in total, spread evenly over the N backend Services' EndpointSlices. */
  endpoints: number;
  /** Proxy pods; the N VirtualServices are spread evenly over them. */
  proxies: number;
}

/** The P1 scenario of issue 2: 5,000 VirtualServices/Routes/Targets, 50,000 endpoints, 500 proxies. */
export const P1: SyntheticMeshSize = { services: 5000, endpoints: 50000, proxies: 500 };

/**
 * A synthetic mesh: proxy pods gw-<p>, VirtualService vs-<i> on proxy i % P (UDP port 10000 + i / P,
 * unique per proxy) whose rule uses Route route-<i>, whose destination is Target target-<i>, which
 * follows the naked Service backend-<i> (an EndpointSlice with endpoints/N addresses).
 */
export function syntheticMesh(size: SyntheticMeshSize): Snapshot {
  const s = emptySnapshot();
  const perService = Math.max(1, Math.floor(size.endpoints / size.services));
  for (let p = 0; p < size.proxies; p++) {
    const pod: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: `gw-${p}`,
        namespace: 'default',
        labels: { app: `gw-${p}`, 'msm.l7mp.io/proxy': 'sidecar' },
      },
      status: { podIP: ip(1, p), phase: 'Running' },
    };
    s.pods.push(pod);
  }
  for (let i = 0; i < size.services; i++) {
    const vs: VirtualService = {
      apiVersion: 'msm.l7mp.io/v1',
      kind: 'VirtualService',
      metadata: { name: `vs-${i}`, namespace: 'default' },
      spec: {
        selector: { matchLabels: { app: `gw-${i % size.proxies}` } },
        udp: { port: 10000 + Math.floor(i / size.proxies) },
        rules: [{ action: { route: `route-${i}` } }],
      },
    };
    const route: Route = {
      apiVersion: 'msm.l7mp.io/v1',
      kind: 'Route',
      metadata: { name: `route-${i}`, namespace: 'default' },
      spec: { destination: `target-${i}`, retry: { retry_on: 'always', num_retries: 3, timeout: 2000 } },
    };
    const target: Target = {
      apiVersion: 'msm.l7mp.io/v1',
      kind: 'Target',
      metadata: { name: `target-${i}`, namespace: 'default' },
      spec: { serviceName: `backend-${i}`, loadbalancer: { policy: 'ConsistentHash' } },
    };
    const svc: Service = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: `backend-${i}`, namespace: 'default' },
      spec: { selector: { app: `backend-${i}` }, ports: [{ protocol: 'UDP', port: 20000 }] },
    };
    s.virtualServices.push(vs);
    s.routes.push(route);
    s.targets.push(target);
    s.services.push(svc);
    s.endpointSlices.push(backendSlice(i, perService, 0));
  }
  return s;
}

/** Backend i's EndpointSlice; `shift` moves its first address, for one-endpoint changes. */
export function backendSlice(i: number, count: number, shift: number): EndpointSlice {
  const endpoints = [];
  for (let e = 0; e < count; e++)
    endpoints.push({
      addresses: [ip(2 + Math.floor(i / 250), (i % 250) * count + e + (e === 0 ? shift : 0))],
      conditions: { ready: true },
    });
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: `backend-${i}-slice`,
      namespace: 'default',
      labels: { 'kubernetes.io/service-name': `backend-${i}` },
    },
    addressType: 'IPv4',
    endpoints,
    ports: [{ port: 20000, protocol: 'UDP' }],
  };
}

function ip(a: number, n: number): string {
  return `10.${a}.${Math.floor(n / 256) % 256}.${n % 256}`;
}

/**
 * The synthetic mesh as a console draft: one file per group (VirtualService, Route, Target, Service,
 * EndpointSlice) and the proxy pods in pods.yaml; the canvas draws about 5 nodes per group plus the
 * proxies (bench/ui.ts, e2e/console-large.spec.ts).
 */
export function syntheticDraft(groups: number, proxies = 10): DraftDoc {
  const snap = syntheticMesh({ services: groups, endpoints: groups * 2, proxies });
  const yaml = (o: unknown) => new Document(o).toString({ lineWidth: 0 });
  const files: Record<string, string> = {};
  for (let i = 0; i < groups; i++)
    files[`mesh-${i}.yaml`] = [
      snap.virtualServices[i],
      snap.routes[i],
      snap.targets[i],
      snap.services[i],
      snap.endpointSlices[i],
    ]
      .map(yaml)
      .join('---\n');
  files['pods.yaml'] = snap.pods.map(yaml).join('---\n');
  return { files, layout: {} };
}
