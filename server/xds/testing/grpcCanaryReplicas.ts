/**
 * examples/grpc-canary with its one proxyless client scaled to `clients` replicas (Pods labelled
 * msm.l7mp.io/proxy: grpc that its VirtualService selects), for benches of the xDS path at scale:
 * bench/xdsPublish.ts and the end-to-end bench (bench/xdsEndToEnd.ts, through adsServerProcess.ts).
 * `movedBackendSlice` is an endpoint change as Kubernetes reports it: the v2 backend's EndpointSlice
 * with its Pod at another address, for MeshEngine.setServiceEndpointSlices (the control plane's path).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ManifestFile } from '@/lib/parse/parseManifests';
import { type EndpointSlice, SERVICE_NAME_LABEL } from '@/lib/model/kube';

const here = path.dirname(fileURLToPath(import.meta.url));
const example = (f: string) =>
  readFileSync(path.join(here, '..', '..', '..', 'examples', 'grpc-canary', f), 'utf8');

/** The backend Pod whose address an endpoint change moves. */
export const MOVED_POD = 'echo-v2-a';

/** The client replicas' node ids (`<namespace>/<pod>`). */
export function replicaNodeIds(clients: number): string[] {
  return Array.from({ length: clients }, (_, k) => `default/grpc-client-${k}`);
}

/** The example's manifests with `clients` client replicas instead of its one client Pod. */
export function grpcCanaryReplicaFiles(clients: number): ManifestFile[] {
  const docs = example('cluster.yaml').split(/^---$/m);
  const rest = docs.filter((d) => !/name: grpc-client\b/.test(d)).join('---');
  const pods = Array.from(
    { length: clients },
    (_, k) =>
      `apiVersion: v1\nkind: Pod\nmetadata:\n  name: grpc-client-${k}\n  namespace: default\n` +
      `  labels: { app: grpc-client, msm.l7mp.io/proxy: grpc }\n` +
      `status: { podIP: 127.1.${Math.floor(k / 250)}.${(k % 250) + 1} }\n`,
  );
  return [
    { path: 'mesh.yaml', content: example('mesh.yaml') },
    { path: 'cluster.yaml', content: [rest, ...pods].join('\n---\n') },
  ];
}

/** The Service whose endpoints an endpoint change moves (namespace default). */
export const MOVED_SERVICE = 'echo-v2';

/** MOVED_SERVICE's EndpointSlice with MOVED_POD at an address picked by `round`. */
export function movedBackendSlice(round: number): EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: `${MOVED_SERVICE}-bench`,
      namespace: 'default',
      labels: { [SERVICE_NAME_LABEL]: MOVED_SERVICE },
    },
    addressType: 'IPv4',
    endpoints: [
      {
        addresses: [`127.0.2.${(round % 250) + 1}`],
        conditions: { ready: true },
        targetRef: { kind: 'Pod', name: MOVED_POD },
      },
    ],
    ports: [{ port: 50051, protocol: 'TCP' }],
  };
}
