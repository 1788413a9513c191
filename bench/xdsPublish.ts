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
import { compileMesh } from '../lib/engine/compileMesh';
import { parseManifests } from '../lib/parse/parseManifests';
import { MeshXdsPublisher } from '../server/xds/meshXds';
import { grpcCanaryReplicaFiles, moveBackend } from '../server/xds/testing/grpcCanaryReplicas';

const i = process.argv.indexOf('--rounds');
const ROUNDS = i >= 0 ? Number(process.argv[i + 1]) : 12;
const WARMUP = 4;
const counts = process.argv
  .slice(2)
  .filter((a, k, all) => !a.startsWith('--') && all[k - 1] !== '--rounds')
  .map(Number)
  .filter(Boolean);
const COUNTS = counts.length ? counts : [500, 2000];

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
  const parsed = parseManifests(grpcCanaryReplicaFiles(n));
  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    const snapshot = moveBackend(parsed, round);
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
