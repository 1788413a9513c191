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
 * [--changes 9] [--track] [--metrics] [--floor [--floor-chunk 64]]`. --metrics: the server reports to
 * a MeshMetrics sink, as `meshdeck serve`'s does (an A/B of the metrics' cost on the push path).
 *
 * --floor: the transport's own cost in the same run. As many streams again connect to
 * bench/xdsFloorServer.ts (a grpc-js server that only writes one pre-encoded EDS response to every
 * stream, `--floor-chunk` streams per event-loop turn), and each change is followed by one floor
 * push, timed the same way, so both see the same machine minute by minute. `overFloorMs` is the real
 * path's figure minus the floor's: what compile, publish and the ADS server's bookkeeping add to
 * writing the bytes. Issue 4's goals count on the transport costing ~19 ms (500) and ~86 ms (2,000);
 * on a slower or busier machine the floor says how much of a figure is the transport.
 */
import { TypeUrls } from '../server/xds/envoyProtos';
import { forkAdsServer, waitFor } from '../server/xds/testing/children';
import { connectLeanAds } from '../server/xds/testing/leanAdsClient';
import { countsArg, numberArg } from './argv';
import { pct } from './pct';
import { processCpuMs } from './processCpu';
import { startFloorStreams } from './xdsFloorStreams';

const WARMUP = numberArg('warmup', 20);
const CHANGES = numberArg('changes', 9);
const TRACK = process.argv.includes('--track');
const METRICS = process.argv.includes('--metrics');
const FLOOR = process.argv.includes('--floor');
const FLOOR_CHUNK = numberArg('floor-chunk', 64);
const COUNTS = countsArg(['warmup', 'changes', 'floor-chunk'], [500, 2000]);

type Client = ReturnType<typeof connectLeanAds>;
interface Push {
  p50: number;
  p99: number;
  max: number;
  serverCpuMs: number;
  lat: number[];
}

/** Times one push: `send` asks the server for it; done when every client's EDS version moved. */
async function timePush(
  clients: Client[],
  pid: number | undefined,
  send: () => Promise<unknown>,
): Promise<Push> {
  const before = clients.map((c) => c.latest.get(TypeUrls.endpoint)!.version);
  const cpu0 = processCpuMs(pid);
  const start = performance.now();
  await send();
  await waitFor(
    'EDS everywhere',
    () => clients.every((c, i) => c.latest.get(TypeUrls.endpoint)!.version !== before[i]),
    120_000,
    5,
  );
  const lat = clients.map((c) => c.latest.get(TypeUrls.endpoint)!.at - start);
  // The server's CPU up to 300 ms after the last receipt (its ACK handling included).
  await new Promise((r) => setTimeout(r, 300));
  return {
    p50: pct(lat, 50),
    p99: pct(lat, 99),
    max: pct(lat, 100),
    serverCpuMs: processCpuMs(pid) - cpu0,
    lat,
  };
}

/** The median push by p99, the worst, and p50/p99 pooled over every client of every push. */
function summary(runs: Push[]) {
  const sorted = [...runs].sort((a, b) => a.p99 - b.p99);
  const { lat: _lat, ...median } = sorted[Math.floor(sorted.length / 2)]!;
  const pooled = runs.flatMap((r) => r.lat);
  return {
    ...median,
    worstChangeP99: sorted.at(-1)!.p99,
    pooled: { p50: pct(pooled, 50), p99: pct(pooled, 99) },
    p99s: runs.map((r) => r.p99),
    serverCpuMsRuns: runs.map((r) => r.serverCpuMs),
  };
}

/** The floor server with `n` streams of its own, pushed to and timed as the real path is. */
async function startFloor(n: number) {
  const { child, clients, close } = await startFloorStreams(n);
  let version = 1;
  return {
    push: () =>
      timePush(clients, child.pid, async () => {
        const done = new Promise((r) => child.once('message', r));
        child.send({ push: `v${++version}`, chunk: FLOOR_CHUNK });
        await done;
      }),
    close,
  };
}

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

    const floor = FLOOR ? await startFloor(n) : undefined;
    const change = () =>
      timePush(clients, ads.proc.pid, () => ads.request('meshMove', { round: ++round }, 120_000));
    const runs: Push[] = [];
    const floorRuns: Push[] = [];
    for (let k = 0; k < WARMUP + CHANGES; k++) {
      const run = await change();
      const floorRun = await floor?.push();
      if (k < WARMUP) continue;
      runs.push(run);
      if (floorRun) floorRuns.push(floorRun);
    }
    const real = summary(runs);
    const result: Record<string, unknown> = {
      clients: n,
      connectAllConfiguredMs: connectMs,
      endpointChangeAckMs: real,
    };
    if (floor) {
      const floorSummary = summary(floorRuns);
      result.floorAckMs = { chunk: FLOOR_CHUNK, ...floorSummary };
      const round1 = (x: number) => Math.round(x * 10) / 10;
      result.overFloorMs = {
        medianChangeP99: round1(real.p99 - floorSummary.p99),
        pooledP99: round1(real.pooled.p99 - floorSummary.pooled.p99),
        pooledP50: round1(real.pooled.p50 - floorSummary.pooled.p50),
      };
      floor.close();
    }
    results.push(result);
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
        floor: FLOOR,
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
