/**
 * The control plane's side of an endpoint change for proxyless gRPC clients, before any push: the
 * engine's update (MeshEngine.setServiceEndpointSlices, as ControlPlane and KubeController call it
 * on an EndpointSlice event; the fast path, a canary split's shares computed again) and
 * MeshXdsPublisher.publish (renderXdsProxy per distinct proxy into the SnapshotCache), for
 * examples/grpc-canary with its client scaled to N replicas (server/xds/testing/grpcCanaryReplicas.ts)
 * and one backend Pod's address moved each round. bench/xdsStreams.ts measures what follows (the
 * cache's publish to the streams) and bench/xdsEndToEnd.ts the whole path. The manifests are parsed
 * once, outside the timed part. Prints JSON (medians over the measured rounds); no assertions.
 * Run: `node --import tsx bench/xdsPublish.ts [clients...] [--rounds 12]`.
 */
import { MeshEngine } from '../lib/engine/meshEngine';
import { countsArg, numberArg } from './argv';
import { pct } from './pct';
import { parseManifests } from '../lib/parse/parseManifests';
import { MeshXdsPublisher } from '../server/xds/meshXds';
import {
  grpcCanaryReplicaFiles,
  movedBackendSlice,
  MOVED_SERVICE,
} from '../server/xds/testing/grpcCanaryReplicas';

const ROUNDS = numberArg('rounds', 12);
const WARMUP = 4;
const COUNTS = countsArg(['rounds'], [500, 2000]);

const median = (xs: number[]) => pct(xs, 50);

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
  const engine = new MeshEngine(parseManifests(grpcCanaryReplicaFiles(n)));
  let incremental = 0;
  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    const t0 = performance.now();
    const u = engine.setServiceEndpointSlices('default', MOVED_SERVICE, [movedBackendSlice(round)]);
    const t1 = performance.now();
    const r = publisher.publish(engine.current.mesh, (p) => p.role === 'grpc');
    const t2 = performance.now();
    changed = 0;
    publisher.cache.flush();
    const t3 = performance.now();
    if (round < WARMUP) continue;
    if (u.incremental) incremental++;
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
    engineUpdateMs: median(compileMs),
    engineIncrementalRounds: incremental,
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
      note: 'per endpoint change (an EndpointSlice update), medians; engineUpdate = MeshEngine.setServiceEndpointSlices (resolve + l7mp render, incremental where it can); publish = renderXdsProxy per proxy + SnapshotCache.setSnapshot',
      results,
    },
    null,
    2,
  ),
);
