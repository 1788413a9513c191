/**
 * ADS fan-out bench: raw SotW streams (gRPC over node:http2, one HTTP/2 connection per stream, each
 * subscribing LDS/RDS/CDS/EDS by name and ACKing every response immediately, like grpc-js-xds)
 * against the ADS server in a forked process (server/xds/testing/adsServerProcess.ts). The streams
 * are lean (server/xds/testing/leanAdsClient.ts: no grpc-js client stack, responses scanned, not
 * decoded) because this one process plays thousands of proxies on the server's two cores.
 * bench/xdsFloor.ts measures the same pushes against a server that does nothing but write.
 *
 * For 500 and 2,000 streams:
 * - connect: all streams opened at once until every one has LDS, RDS, CDS and EDS (ms)
 * - eds: one endpoint change for every node -> per-stream ACK time (the client writes its ACK as the
 *   response arrives), p50/p99/max ms from the moment the bench asked the server to set it
 * - rds: one route added to every node's RouteConfiguration, same figures
 * - rds, one proxy: a route added for a single node (30 times) while every stream stays connected
 * - serverCpuMs per push: the server process's CPU time (user + system, /proc, 10 ms ticks) from the
 *   request to 300 ms after the last receipt: what the server spends per push, far less sensitive to
 *   the machine's load than the latencies
 * - clientCpuMs per push: this process's CPU over the same span (the load generator's share of the
 *   two cores)
 * - rss: server RSS idle (snapshots loaded) and with the streams, and per stream (KB)
 * Before the measured pushes, `--warmup` unmeasured EDS+RDS pairs: the first pushes run V8's
 * unoptimised code (at 500 streams the first three pushes' p99 was 82-92 ms, the steady state
 * about 50), and a control plane that has run for a while has long compiled its push path. Each
 * figure is the median push by p99 (worstPushP99 and p99s give the spread over `--pushes`), and
 * `pooled` the percentiles over every stream of every measured push.
 * Prints JSON; no assertions. Run: `node --import tsx bench/xdsStreams.ts [counts...] [--warmup 20] [--pushes 9] [--track]`.
 */
import * as grpc from '@grpc/grpc-js';
import { TypeUrls } from '../server/xds/envoyProtos';
import { forkAdsServer, waitFor } from '../server/xds/testing/children';
import { demoSnapshot } from '../server/xds/testing/demoSnapshot';
import { connectLeanAds, type LeanAdsClient } from '../server/xds/testing/leanAdsClient';
import { countsArg, numberArg } from './argv';
import { pct } from './pct';
import { processCpuMs } from './processCpu';

// A control plane runs for days: V8 has long since optimised its push path. Unmeasured pushes first,
// as bench:l7mp does, so the figures are the steady state and not the first compiles.
const WARMUP = numberArg('warmup', 20);
// --track: live sync state follows the streams as in the console and Kubernetes mode.
const TRACK = process.argv.includes('--track');
const PUSHES = numberArg('pushes', 9);
const COUNTS = countsArg(['warmup', 'pushes'], [500, 2000]);

const snap = (ports: number[], extraRoutes = 0) =>
  demoSnapshot({
    clusters: [
      { name: 'cluster-a', weight: 80, ports },
      { name: 'cluster-b', weight: 20, ports: [20000] },
    ],
    extraRoutes,
  });

const SUBS: [string, string[]][] = [
  [TypeUrls.listener, ['demo-service']],
  [TypeUrls.route, ['demo-service-route']],
  [TypeUrls.cluster, []],
  [TypeUrls.endpoint, ['cluster-a-eds', 'cluster-b-eds']],
];

async function main() {
  const ads = await forkAdsServer();
  const port = await ads.request<number>('listen', { options: { insecure: true } });
  if (TRACK) await ads.request('track');
  const results: unknown[] = [];
  let round = 0;
  for (const n of COUNTS) {
    round++;
    const nodeIds = Array.from({ length: n }, (_, i) => `bench/pod-${round}-${i}`);
    await ads.request('setMany', { nodeIds, snapshot: snap([10000 + round]) }, 120_000);
    await ads.request('flush');
    await new Promise((r) => setTimeout(r, 300));
    const rssIdle = await ads.request<number>('rss');

    const t0 = performance.now();
    const clients: LeanAdsClient[] = nodeIds.map((nodeId) =>
      connectLeanAds({
        address: `127.0.0.1:${port}`,
        nodeId,
        subscriptions: SUBS,
      }),
    );
    await waitFor('all streams configured', () => clients.every((c) => c.latest.size === 4), 120_000, 10);
    const connectMs = Math.round(performance.now() - t0);
    await new Promise((r) => setTimeout(r, 500));
    const rssStreams = await ads.request<number>('rss');

    const push = async (type: string, snapshot: ReturnType<typeof snap>) => {
      const before = clients.map((c) => c.latest.get(type)!.version);
      const cpu0 = processCpuMs(ads.proc.pid);
      const clientCpu0 = process.cpuUsage();
      const start = performance.now();
      await ads.request('setMany', { nodeIds, snapshot }, 120_000);
      if (process.env.BENCH_DEBUG) console.error('setMany ipc ms', performance.now() - start);
      await waitFor(
        `${type} everywhere`,
        () => clients.every((c, i) => c.latest.get(type)!.version !== before[i]),
        120_000,
        5,
      );
      const lat = clients.map((c) => c.latest.get(type)!.at - start);
      // The last ACKs are still in flight to the server: let it handle them before reading its CPU.
      await new Promise((r) => setTimeout(r, 300));
      const serverCpuMs = processCpuMs(ads.proc.pid) - cpu0;
      const c = process.cpuUsage(clientCpu0);
      const clientCpuMs = Math.round((c.user + c.system) / 1000);
      return { p50: pct(lat, 50), p99: pct(lat, 99), max: pct(lat, 100), serverCpuMs, clientCpuMs, lat };
    };
    let port2 = 11000;
    let routes = 0;
    for (let k = 0; k < WARMUP; k++) {
      await push(TypeUrls.endpoint, snap([10000 + round, ++port2], routes));
      await push(TypeUrls.route, snap([10000 + round, port2], ++routes));
    }
    const eds = [];
    const rds = [];
    for (let k = 0; k < PUSHES; k++) {
      eds.push(await push(TypeUrls.endpoint, snap([10000 + round, ++port2], routes)));
      rds.push(await push(TypeUrls.route, snap([10000 + round, port2], ++routes)));
    }
    // P3 as one operator edit: a route added for one proxy while all the others stay connected.
    const one: number[] = [];
    for (let k = 1; k <= 30; k++) {
      const c = clients[k % n]!;
      const before = c.latest.get(TypeUrls.route)!.version;
      const start = performance.now();
      await ads.request('setMany', {
        nodeIds: [nodeIds[k % n]!],
        snapshot: snap([10000 + round, port2], routes + k),
      });
      await waitFor('route on one node', () => c.latest.get(TypeUrls.route)!.version !== before, 10_000, 1);
      one.push(c.latest.get(TypeUrls.route)!.at - start);
      await new Promise((r) => setTimeout(r, 20));
    }
    // Per push: p50/p99/max over the streams. Over the pushes: the median push by p99, the worst, and
    // p50/p99 over every stream of every measured push pooled.
    const summary = (
      xs: {
        p50: number;
        p99: number;
        max: number;
        serverCpuMs: number;
        clientCpuMs: number;
        lat: number[];
      }[],
    ) => {
      const s = [...xs].sort((a, b) => a.p99 - b.p99);
      const { lat: _lat, ...median } = s[Math.floor(s.length / 2)]!;
      const pooled = xs.flatMap((x) => x.lat);
      return {
        ...median,
        pooled: { p50: pct(pooled, 50), p99: pct(pooled, 99) },
        worstPushP99: s[s.length - 1]!.p99,
        p99s: xs.map((x) => x.p99),
        serverCpuMsRuns: xs.map((x) => x.serverCpuMs),
        clientCpuMsRuns: xs.map((x) => x.clientCpuMs),
      };
    };
    results.push({
      streams: n,
      connections: n,
      connectAllConfiguredMs: connectMs,
      edsChangeAckMs: summary(eds),
      routeAddAckMs: summary(rds),
      routeAddOneProxyAckMs: { p50: pct(one, 50), p99: pct(one, 99), max: pct(one, 100), runs: one.length },
      serverRssMB: { idle: Math.round(rssIdle / 1e6), withStreams: Math.round(rssStreams / 1e6) },
      serverRssPerStreamKB: Math.round((rssStreams - rssIdle) / n / 1024),
    });
    for (const c of clients) c.close();
    await new Promise((r) => setTimeout(r, 1000));
  }
  await ads.kill();
  console.log(
    JSON.stringify(
      {
        bench: 'xdsStreams',
        node: process.version,
        grpcJs: (grpc as unknown as { version?: string }).version ?? '1.14.7',
        warmupPushesPerType: WARMUP,
        statusTracked: TRACK,
        measuredPushesPerType: PUSHES,
        note: 'latency = time from asking the server process (IPC) to set every node, to the stream receiving and ACKing; client and server share this machine',
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
