/**
 * examples/grpc-canary with its one proxyless client scaled to `clients` replicas (Pods labelled
 * msm.l7mp.io/proxy: grpc that its VirtualService selects), for benches of the xDS path at scale:
 * bench/xdsPublish.ts and the end-to-end bench (bench/xdsEndToEnd.ts, through adsServerProcess.ts).
 * `moveBackend` gives the snapshot with the v2 backend Pod at another address: an endpoint change.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ManifestFile } from '@/lib/parse/parseManifests';
import type { Snapshot } from '@/lib/model/snapshot';

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

/** `snapshot` with MOVED_POD at an address picked by `round` (the other objects shared). */
export function moveBackend(snapshot: Snapshot, round: number): Snapshot {
  const podIP = `127.0.2.${(round % 250) + 1}`;
  return {
    ...snapshot,
    pods: snapshot.pods.map((p) =>
      p.metadata.name === MOVED_POD ? { ...p, status: { ...p.status, podIP } } : p,
    ),
  };
}
