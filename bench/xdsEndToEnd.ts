/**
 * P2 end to end: an endpoint change -> every proxyless client's receipt (and ACK), through the whole
 * control plane path in the server process: the engine's update (MeshEngine.setServiceEndpointSlices,
 * as on an EndpointSlice event), the MeshXdsPublisher's render into the SnapshotCache, the ADS
 * server's push. bench/xdsStreams.ts starts
 * at the cache (a snapshot set for every node) and bench/xdsPublish.ts stops before the push.
 *
 * The mesh is examples/grpc-canary with its client scaled to N replicas
 * (server/xds/testing/grpcCanaryReplicas.ts); each change moves one backend Pod in its Service's
 * EndpointSlice, which changes every client's EDS. The clients are the lean raw ADS streams of bench/xdsStreams.ts, one HTTP/2
 * connection each, subscribing to what their snapshot holds. Unmeasured changes come first (V8's
 * steady state, as in bench/xdsStreams.ts). Per change: p50/p99/max over the clients from the IPC
 * request; over the changes: the median change by p99, the worst, and p50/p99 pooled.
 * Prints JSON; no assertions. Run: `node --import tsx bench/xdsEndToEnd.ts [clients...] [--warmup 20]
 * [--changes 9] [--track] [--metrics]`. --metrics: the server reports to a MeshMetrics sink, as
 * `meshdeck serve`'s does (an A/B of the metrics' cost on the push path).
 */
import { TypeUrls } from '../server/xds/envoyProtos';
import { forkAdsServer, waitFor } from '../server/xds/testing/children';
import { connectLeanAds } from '../server/xds/testing/leanAdsClient';
import { countsArg, numberArg } from './argv';
import { pct } from './pct';
import { processCpuMs } from './processCpu';

const WARMUP = numberArg('warmup', 20);
const CHANGES = numberArg('changes', 9);
const TRACK = process.argv.includes('--track');
const METRICS = process.argv.includes('--metrics');
const COUNTS = countsArg(['warmup', 'changes'], [500, 2000]);

async function main() {
  const results: unknown[] = [];
  let round = 0;
  for (const n of COUNTS) {
    // A fresh server per size: the mesh is the server's whole state.
    const ads = await forkAdsServer();
    const port = await ads.request<number>('listen', { options: { insecure: true }, metrics: METRICS });
    if (TRACK) await ads.request('track');
    const { nodeIds, subscriptions } = await ads.request<{
      nodeIds: string[];
      subscriptions: [string, string[]][];
    }>('meshInit', { clients: n }, 120_000);
    const t0 = performance.now();
    const clients = nodeIds.map((nodeId) =>
      connectLeanAds({ address: `127.0.0.1:${port}`, nodeId, subscriptions }),
    );
    await waitFor('all clients configured', () => clients.every((c) => c.latest.size === 4), 120_000, 10);
    const connectMs = Math.round(performance.now() - t0);
    await new Promise((r) => setTimeout(r, 500));

    const change = async () => {
      const before = clients.map((c) => c.latest.get(TypeUrls.endpoint)!.version);
      const cpu0 = processCpuMs(ads.proc.pid);
      const start = performance.now();
      await ads.request('meshMove', { round: ++round }, 120_000);
      await waitFor(
        'EDS everywhere',
        () => clients.every((c, i) => c.latest.get(TypeUrls.endpoint)!.version !== before[i]),
        120_000,
        5,
      );
      const lat = clients.map((c) => c.latest.get(TypeUrls.endpoint)!.at - start);
      await new Promise((r) => setTimeout(r, 300));
      return {
        p50: pct(lat, 50),
        p99: pct(lat, 99),
        max: pct(lat, 100),
        serverCpuMs: processCpuMs(ads.proc.pid) - cpu0,
        lat,
      };
    };
    for (let k = 0; k < WARMUP; k++) await change();
    const runs = [];
    for (let k = 0; k < CHANGES; k++) runs.push(await change());
    const sorted = [...runs].sort((a, b) => a.p99 - b.p99);
    const { lat: _lat, ...median } = sorted[Math.floor(sorted.length / 2)]!;
    const pooled = runs.flatMap((r) => r.lat);
    results.push({
      clients: n,
      connectAllConfiguredMs: connectMs,
      endpointChangeAckMs: {
        ...median,
        worstChangeP99: sorted.at(-1)!.p99,
        pooled: { p50: pct(pooled, 50), p99: pct(pooled, 99) },
        p99s: runs.map((r) => r.p99),
        serverCpuMsRuns: runs.map((r) => r.serverCpuMs),
      },
    });
    for (const c of clients) c.close();
    await ads.kill();
    await new Promise((r) => setTimeout(r, 1000));
  }
  console.log(
    JSON.stringify(
      {
        bench: 'xdsEndToEnd',
        node: process.version,
        warmupChanges: WARMUP,
        measuredChanges: CHANGES,
        statusTracked: TRACK,
        metricsSink: METRICS,
        note: 'latency = from asking the server process (IPC) to apply an EndpointSlice change, through the engine, publish and push, to each client receiving its new EDS (and ACKing it); client and server share this machine',
        results,
      },
      null,
      2,
    ),
  );
  process.exit(0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
