/**
 * The control plane's side of an endpoint change for proxyless gRPC clients, before any push: the
 * engine's compile of the mesh (resolve + l7mp render) and MeshXdsPublisher.publish (renderXdsProxy
 * per proxy into the SnapshotCache), for examples/grpc-canary with its client scaled to N replicas
 * (Pods labelled msm.l7mp.io/proxy: grpc, all selected by one VirtualService) and one backend Pod's
 * address moved each round. bench/xdsStreams.ts measures what follows (the cache's publish to the
 * streams). The manifests are parsed outside the timed part: the local mesh and Kubernetes mode get
 * objects, not YAML. Prints JSON (medians over the measured rounds); no assertions.
 * Run: `node --import tsx bench/xdsPublish.ts [clients...] [--rounds 12]`.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileMesh } from '../lib/engine/compileMesh';
import { parseManifests } from '../lib/parse/parseManifests';
import { MeshXdsPublisher } from '../server/xds/meshXds';

const here = path.dirname(fileURLToPath(import.meta.url));
const example = (f: string) => readFileSync(path.join(here, '../examples/grpc-canary', f), 'utf8');
const i = process.argv.indexOf('--rounds');
const ROUNDS = i >= 0 ? Number(process.argv[i + 1]) : 12;
const WARMUP = 4;
const counts = process.argv
  .slice(2)
  .filter((a, k, all) => !a.startsWith('--') && all[k - 1] !== '--rounds')
  .map(Number)
  .filter(Boolean);
const COUNTS = counts.length ? counts : [500, 2000];

/** cluster.yaml with the one client Pod replaced by `n` replicas and echo-v2-a at a round's address. */
function cluster(n: number, round: number): string {
  const docs = example('cluster.yaml').split(/^---$/m);
  const rest = docs.filter((d) => !/name: grpc-client\b/.test(d)).join('---');
  const moved = rest.replace('127.0.0.72', `127.0.2.${(round % 250) + 1}`);
  const pods = Array.from(
    { length: n },
    (_, k) =>
      `apiVersion: v1\nkind: Pod\nmetadata:\n  name: grpc-client-${k}\n  namespace: default\n` +
      `  labels: { app: grpc-client, msm.l7mp.io/proxy: grpc }\n` +
      `status: { podIP: 127.1.${Math.floor(k / 250)}.${(k % 250) + 1} }\n`,
  );
  return [moved, ...pods].join('\n---\n');
}

const median = (xs: number[]) =>
  Math.round([...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]! * 10) / 10;

const results = [];
for (const n of COUNTS) {
  const publisher = new MeshXdsPublisher();
  let changed = 0;
  publisher.cache.on('change', () => changed++);
  const compileMs: number[] = [];
  const publishMs: number[] = [];
  const flushMs: number[] = [];
  let proxies = 0;
  let pushed = 0;
  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    const snapshot = parseManifests([
      { path: 'mesh.yaml', content: example('mesh.yaml') },
      { path: 'cluster.yaml', content: cluster(n, round) },
    ]);
    const t0 = performance.now();
    const compiled = compileMesh(snapshot);
    const t1 = performance.now();
    const r = publisher.publish(compiled.mesh);
    const t2 = performance.now();
    changed = 0;
    publisher.cache.flush();
    const t3 = performance.now();
    if (round < WARMUP) continue;
    compileMs.push(t1 - t0);
    publishMs.push(t2 - t1);
    flushMs.push(t3 - t2);
    proxies = Object.keys(r.snapshots).length;
    pushed = changed;
  }
  results.push({
    clients: n,
    proxies,
    proxiesChangedPerRound: pushed,
    compileMs: median(compileMs),
    publishMs: median(publishMs),
    cacheFlushMs: median(flushMs),
    encodedResources: publisher.cache.encodedCount(),
  });
}
console.log(
  JSON.stringify(
    {
      bench: 'xdsPublish',
      node: process.version,
      rounds: ROUNDS,
      note: 'per endpoint change, medians; compile = resolve + l7mp render; publish = renderXdsProxy per proxy + SnapshotCache.setSnapshot',
      results,
    },
    null,
    2,
  ),
);
