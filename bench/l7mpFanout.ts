/**
 * bench/l7mpFanout: a change that touches every proxy, pushed to N real l7mp processes (default 20),
 * timed from the change until the last proxy is configured (p50/p99 over --changes rounds). Also the
 * memory of the local mesh (RSS of every l7mp process and of this control plane). Prints one JSON
 * object; figures, never assertions. `npm run bench:l7mp`.
 *
 * The change moves one endpoint of the Service every proxy routes to, which costs each proxy two calls
 * (l7mp has no update: DELETE the old endpoint, POST the new one). Rounds are spaced by --gap-ms
 * (default 50) and the first --warmup rounds (default 150) are not counted: a freshly started l7mp runs
 * its first calls unoptimised, which a running mesh has long left behind (its drift checks and endpoint
 * churn have sent each proxy hundreds of calls). 10 warm-up rounds were not enough: measured on a loaded
 * machine, l7mp's CPU per round was 300-310 ms after 10 rounds and 210 ms after 150. The first 10 rounds
 * are reported apart (`firstRounds`), so a cold mesh's figure is not hidden. `changeToFirstRequestMs`
 * is the control plane's own share: until the first request is written to its socket (Node's
 * `http.client.request.start`, published from ClientRequest#_finish) no proxy has work. The CPU time
 * each round costs the l7mp processes and this control plane is reported too, because on a 2-core
 * machine it bounds the latency: no push can beat (l7mp CPU + our CPU) / 2. `l7mpThreadsPerRoundMs`
 * splits l7mp's CPU into its main threads (the REST calls) and its other threads (V8's GC helpers and
 * compilers), from /proc/<pid>/task/<tid>/schedstat over all measured rounds.
 *
 * `--turbofan` keeps V8's optimizing compiler on in the proxies after start-up
 * (server/localMesh/l7mpChild.cjs says why it is off), for an A/B.
 *
 * `--floor-cpu-ms X` runs the same rounds against bench/l7mpFloorServer.mjs instead of l7mp (see
 * there): the floor this machine's scheduling leaves for X ms of CPU per call.
 */
import { fork, type ChildProcess } from 'node:child_process';
import diagnostics from 'node:diagnostics_channel';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { MeshEngine } from '../lib/engine/meshEngine';
import type { EndpointSlice } from '../lib/model/kube';
import { emptySnapshot, type Snapshot } from '../lib/model/snapshot';
import { Reconciler } from '../server/l7mp/Reconciler';
import { L7mpSupervisor } from '../server/localMesh/L7mpSupervisor';
import { processCpuMs } from './processCpu';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}
const proxies = arg('proxies', 20);
const changes = arg('changes', 50);
const warmup = arg('warmup', 150);
const gapMs = arg('gap-ms', 50);
const basePort = arg('base-port', 21000);
/**
 * With --floor-cpu-ms X the proxies are bench/l7mpFloorServer.mjs, not l7mp: servers that accept every
 * call after spending X ms of CPU on it. Set X to l7mp's CPU per call (cpuPerRoundMs.l7mpMedian of a real
 * run / requestsPerRound) to see the floor this machine's scheduling leaves for that cost.
 */
const floorCpuMs = arg('floor-cpu-ms', NaN);
const floor = Number.isFinite(floorCpuMs);
/** --turbofan keeps V8's optimizing compiler on in the proxies after start-up (l7mpChild.cjs turns it off). */
const turbofan = process.argv.includes('--turbofan');
if (turbofan) process.env.MESHDECK_L7MP_TURBOFAN = '1';
/** Rounds right after startup reported apart: what a freshly started mesh shows. */
const FIRST_ROUNDS = 10;

/** N gateway pods, each with a UDP listener whose route goes to the shared backend Service. */
function mesh(): Snapshot {
  const s = emptySnapshot();
  for (let i = 0; i < proxies; i++) {
    s.pods.push({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: `gw-${i}`,
        namespace: 'default',
        labels: { app: `gw-${i}`, 'msm.l7mp.io/proxy': 'gateway' },
        annotations: { 'msm.l7mp.io/api-port': String(basePort + i) },
      },
      status: { podIP: `127.0.0.${10 + i}`, phase: 'Running' },
    });
    s.virtualServices.push({
      apiVersion: 'msm.l7mp.io/v1',
      kind: 'VirtualService',
      metadata: { name: `gw-${i}`, namespace: 'default' },
      spec: {
        selector: { matchLabels: { app: `gw-${i}` } },
        udp: { port: 22000, address: `127.0.0.${10 + i}` },
        rules: [{ action: { route: { destination: 'backend' } } }],
      },
    });
  }
  s.services.push({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'backend', namespace: 'default' },
    spec: { ports: [{ protocol: 'UDP', port: 23000 }] },
  });
  s.endpointSlices.push(slice(0));
  return s;
}

function slice(round: number): EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: 'backend-1',
      namespace: 'default',
      labels: { 'kubernetes.io/service-name': 'backend' },
    },
    endpoints: [0, 1, 2].map((e) => ({
      addresses: [`127.0.1.${((round + e) % 200) + 1}`],
      conditions: { ready: true },
    })),
  };
}

/** CPU ms of every thread of `pids`: main threads (tid = pid) and all others, from schedstat (ns). */
function threadCpuMs(pids: readonly number[]): { main: number; other: number } {
  const out = { main: 0, other: 0 };
  for (const pid of pids) {
    let tids: string[] = [];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tids) {
      try {
        const ns = Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
        out[Number(tid) === pid ? 'main' : 'other'] += ns / 1e6;
      } catch {
        // The thread ended between the listing and the read.
      }
    }
  }
  return out;
}

function rssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

const stateDir = await mkdtemp(path.join(os.tmpdir(), 'md-bench-'));
const supervisor = new L7mpSupervisor({ stateDir, warmSpares: 0, startTimeoutMs: 120000 });
const floorServers: ChildProcess[] = [];

/** Starts one floor server (see --floor-cpu-ms) and resolves once it listens. */
async function startFloorServer(host: string, port: number): Promise<void> {
  const args = [host, String(port), String(floorCpuMs)];
  const child = fork(new URL('./l7mpFloorServer.mjs', import.meta.url), args, {
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  floorServers.push(child);
  await once(child.stdout!, 'data');
}
const reconciler = new Reconciler({
  driftIntervalMs: 0,
  logger: { info() {}, warn() {}, error: console.error } as never,
});
try {
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: proxies }, (_, i) =>
      floor
        ? startFloorServer(`127.0.0.${10 + i}`, basePort + i)
        : supervisor.start({ id: `default/gw-${i}`, apiPort: basePort + i }),
    ),
  );
  const startupMs = performance.now() - t0;
  const engine = new MeshEngine(mesh());
  const desired = () =>
    Object.fromEntries(
      Object.entries(engine.current.l7mp.proxies).map(([id, p]) => [
        id,
        { apiUrl: p.proxy.apiUrl, config: p.config },
      ]),
    );
  reconciler.setDesired(desired());
  await reconciler.whenIdle();
  const initialPushMs = performance.now() - t0 - startupMs;

  const pids = floor
    ? floorServers.flatMap((c) => (c.pid ? [c.pid] : []))
    : supervisor.statuses().flatMap((st) => (st.pid ? [st.pid] : []));
  const l7mpCpu = () => pids.reduce((sum, pid) => sum + (processCpuMs(pid) || 0), 0);
  const times: number[] = [];
  // When the first request of a round is written: the control plane's own share of the critical path
  // (engine, coalescing timer, diff, building 40 requests), during which every proxy is still idle.
  let firstRequestAt: number | undefined;
  const onRequest = () => (firstRequestAt ??= performance.now());
  diagnostics.subscribe('http.client.request.start', onRequest);
  const firstRequest: number[] = [];
  const rounds: { ms: number; firstRequestMs: number }[] = [];
  const firstRounds: number[] = [];
  const l7mpCpuPerRound: number[] = [];
  const ourCpuPerRound: number[] = [];
  let threads0 = threadCpuMs(pids);
  for (let round = 1; round <= warmup + changes; round++) {
    await new Promise((resolve) => setTimeout(resolve, gapMs));
    const c0 = l7mpCpu();
    const m0 = process.cpuUsage();
    firstRequestAt = undefined;
    const s = performance.now();
    const u = engine.setServiceEndpointSlices('default', 'backend', [slice(round)]);
    reconciler.setDesired(desired());
    await reconciler.whenIdle();
    const t = performance.now() - s;
    if (!reconciler.states().every((x) => x.inSync))
      throw new Error(
        `round ${round}: not every proxy in sync: ${JSON.stringify(reconciler.states().find((x) => !x.inSync))}`,
      );
    if (u.changedProxies.length !== proxies)
      throw new Error(`round ${round}: ${u.changedProxies.length} proxies changed`);
    if (round <= FIRST_ROUNDS) firstRounds.push(t);
    if (round === warmup) threads0 = threadCpuMs(pids);
    if (round <= warmup) continue;
    if (firstRequestAt !== undefined) firstRequest.push(firstRequestAt - s);
    times.push(t);
    rounds.push({ ms: t, firstRequestMs: firstRequestAt === undefined ? NaN : firstRequestAt - s });
    l7mpCpuPerRound.push(l7mpCpu() - c0);
    const m = process.cpuUsage(m0);
    ourCpuPerRound.push((m.user + m.system) / 1000);
  }
  diagnostics.unsubscribe('http.client.request.start', onRequest);
  const threads1 = threadCpuMs(pids);
  times.sort((a, b) => a - b);
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
  const pct = (p: number) => times[Math.min(times.length - 1, Math.floor((p / 100) * times.length))] ?? NaN;
  const l7mpRss = pids.reduce((sum, pid) => sum + rssMb(pid), 0);
  const r = (x: number) => Math.round(x * 10) / 10;
  console.log(
    JSON.stringify({
      proxies,
      ...(floor ? { floorServersNotL7mp: { cpuMsPerCall: floorCpuMs } } : {}),
      ...(turbofan ? { turbofan } : {}),
      changes,
      warmup,
      gapMs,
      startupMs: r(startupMs),
      initialPushMs: r(initialPushMs),
      changeToFirstRequestMs: {
        p50: r(median(firstRequest)),
        max: r(Math.max(...firstRequest)),
      },
      changeToLastProxyConfiguredMs: {
        p50: r(pct(50)),
        p90: r(pct(90)),
        p95: r(pct(95)),
        p99: r(pct(99)),
        max: r(times[times.length - 1] ?? NaN),
        // With 100 rounds or fewer the p99 is the slowest round: how many rounds missed the goal says more.
        over150: times.filter((t) => t > 150).length,
      },
      // Whether the slowest rounds were late in the control plane (first request) or in the proxies.
      slowestRounds: [...rounds]
        .sort((a, b) => b.ms - a.ms)
        .slice(0, 5)
        .map((x) => ({ ms: r(x.ms), firstRequestMs: r(x.firstRequestMs) })),
      firstRounds: {
        rounds: firstRounds.length,
        p50: r(median(firstRounds)),
        max: r(Math.max(...firstRounds)),
      },
      cpuPerRoundMs: {
        l7mpMedian: r(median(l7mpCpuPerRound)),
        controlPlaneMedian: r(median(ourCpuPerRound)),
      },
      l7mpThreadsPerRoundMs: {
        main: r((threads1.main - threads0.main) / changes),
        other: r((threads1.other - threads0.other) / changes),
      },
      requestsPerRound: proxies * 2,
      memoryMb: {
        l7mpTotal: r(l7mpRss),
        l7mpPerProxy: r(l7mpRss / proxies),
        controlPlane: r(process.memoryUsage().rss / 1048576),
      },
    }),
  );
} finally {
  await reconciler.stop();
  await supervisor.stopAll();
  for (const child of floorServers) child.kill();
  await rm(stateDir, { recursive: true, force: true });
}
