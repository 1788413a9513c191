/**
 * bench/l7mpPush: pushes through the reconciler to real l7mp 0.5.7 processes on loopback and prints one
 * JSON object. Figures, never assertions.
 *
 *   node --import tsx bench/l7mpPush.ts [--clusters 200] [--listeners 200] [--changes 50] [--small 10]
 *     [--lb ConsistentHash|Trivial]
 *
 * - `push`: a fresh proxy per run, N clusters (UDP, one endpoint each, `--lb` load balancer, the
 *   engine's default is ConsistentHash) + N listeners (UDP on 127.0.1.1, inline rule to a cluster).
 *   `raw` sends diffL7mp's calls with a bare sequential fetch loop (the note's §11 method, the proxy's
 *   own floor on this machine right now); the others go through ProxyReconciler.reconcile with
 *   maxInFlight 1 and 4, followed by a reconcile with nothing to do (the cost of reading live state).
 * - `latency`: a Reconciler (defaults: 20 ms coalescing, maxInFlight 4, drift check every 5 s) on one
 *   proxy; each change is setDesired with one cluster's port changed (delete + re-add), timed until the
 *   state says synced for that version; the next change starts after that. Once on a small proxy
 *   (`--small` clusters and listeners) and once on the big one.
 */
import { performance } from 'node:perf_hooks';
import { diffL7mp } from '../lib/l7mp/diffL7mp';
import { emptyL7mpConfig, type L7mpConfig } from '../lib/model/l7mp';
import { L7mpRestClient } from '../server/l7mp/L7mpRestClient';
import { ProxyReconciler } from '../server/l7mp/ProxyReconciler';
import { type ProxySyncState, Reconciler } from '../server/l7mp/Reconciler';
import { freePort, type L7mpProcess, startL7mp } from '../server/testing/startL7mp';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const CLUSTERS = arg('clusters', 200);
const LISTENERS = arg('listeners', 200);
const CHANGES = arg('changes', 50);
const SMALL = arg('small', 10);
const LB = process.argv.includes('--lb') ? process.argv[process.argv.indexOf('--lb') + 1]! : 'ConsistentHash';
const LISTEN_ADDRESS = '127.0.1.1';
const RETRY = { retry_on: 'never', num_retries: 1, timeout: 2000 };

const r1 = (x: number) => Math.round(x * 10) / 10;

/** `clusters` UDP clusters and `listeners` UDP listeners on the given ports; `bump` shifts one cluster's port. */
function syntheticConfig(
  clusters: number,
  listenerPorts: number[],
  bump?: { cluster: number; by: number },
): L7mpConfig {
  return {
    clusters: Array.from({ length: clusters }, (_, i) => ({
      name: `svc-${i}`,
      spec: { protocol: 'UDP', port: 30000 + i + (bump?.cluster === i ? bump.by : 0) },
      endpoints: [
        { name: `svc-${i}@127.0.2.${1 + (i % 250)}`, spec: { address: `127.0.2.${1 + (i % 250)}` } },
      ],
      loadbalancer: { policy: LB },
    })),
    routes: [],
    listeners: listenerPorts.map((port, i) => ({
      name: `vsvc-${i}`,
      spec: { protocol: 'UDP', port, address: LISTEN_ADDRESS },
      rules: [{ action: { route: { destination: `svc-${i % clusters}`, retry: RETRY } } }],
    })),
  };
}

async function listenerPorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < n) ports.add(await freePort('udp', LISTEN_ADDRESS));
  return [...ports];
}

/** A fresh proxy, past the slow first calls after startup (note §1). */
async function freshProxy(): Promise<L7mpProcess> {
  // A loaded machine can take much longer than the usual 2.3 s.
  const proxy = await startL7mp({ startTimeoutMs: 60_000 });
  const client = new L7mpRestClient(proxy.apiUrl);
  for (let i = 0; i < 10; i++) await client.get('/api/v1/clusters');
  return proxy;
}

function percentiles(samples: number[]): Record<string, number> {
  const sorted = [...samples].sort((a, b) => a - b);
  const pct = (p: number) =>
    sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
  return {
    n: sorted.length,
    p50: r1(pct(50)),
    p90: r1(pct(90)),
    p99: r1(pct(99)),
    max: r1(sorted.at(-1) ?? NaN),
    mean: r1(sorted.reduce((a, b) => a + b, 0) / Math.max(1, sorted.length)),
  };
}

/** The same calls without the reconciler: one fetch after the other, keep-alive, no reads. */
async function rawRun(ports: number[]) {
  const proxy = await freshProxy();
  try {
    const ops = diffL7mp(emptyL7mpConfig(), syntheticConfig(CLUSTERS, ports));
    const t0 = performance.now();
    for (const op of ops) {
      const res = await fetch(`${proxy.apiUrl}${op.path}`, {
        method: op.method,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(op.body),
      });
      await res.text();
      if (res.status !== 200) throw new Error(`${op.method} ${op.path}: ${res.status}`);
    }
    const pushMs = performance.now() - t0;
    return {
      maxInFlight: 'raw sequential fetch',
      operations: ops.length,
      pushMs: r1(pushMs),
      perOperationMs: r1(pushMs / ops.length),
    };
  } finally {
    await proxy.stop();
  }
}

async function pushRun(maxInFlight: number, ports: number[]) {
  const proxy = await freshProxy();
  try {
    const reconciler = new ProxyReconciler(new L7mpRestClient(proxy.apiUrl, { timeoutMs: 30_000 }), {
      maxInFlight,
    });
    const desired = syntheticConfig(CLUSTERS, ports);
    const t0 = performance.now();
    const push = await reconciler.reconcile(desired);
    const pushMs = performance.now() - t0;
    const again = await reconciler.reconcile(desired);
    return {
      maxInFlight,
      ok: push.ok,
      operations: push.applied.length,
      pushMs: r1(pushMs),
      perOperationMs: r1(pushMs / Math.max(1, push.applied.length)),
      noopReconcileMs: r1(again.durationMs),
      noopDrift: again.drift.length,
      ...(push.failed ? { failed: push.failed.error.message } : {}),
    };
  } finally {
    await proxy.stop();
  }
}

async function latencyRun(clusters: number, ports: number[]) {
  const proxy = await freshProxy();
  const reconciler = new Reconciler({ logger: { info() {}, warn: console.warn, error: console.error } });
  try {
    const apiUrl = proxy.apiUrl;
    reconciler.setDesired({ p: { apiUrl, config: syntheticConfig(clusters, ports) } });
    await reconciler.whenIdle();
    if (reconciler.state('p')?.phase !== 'synced')
      throw new Error(`initial push: ${JSON.stringify(reconciler.state('p'))}`);
    const samples: number[] = [];
    const pushMs: number[] = [];
    for (let c = 1; c <= CHANGES; c++) {
      const version = reconciler.state('p')!.desiredVersion + 1;
      const synced = new Promise<ProxySyncState>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`change ${c}: not synced within 30 s`)), 30_000);
        const onState = (s: ProxySyncState) => {
          if (s.desiredVersion === version && s.phase === 'synced' && s.inSync) {
            clearTimeout(timer);
            reconciler.off('state', onState);
            resolve(s);
          }
        };
        reconciler.on('state', onState);
      });
      const t0 = performance.now();
      reconciler.setDesired({
        p: {
          apiUrl,
          config: syntheticConfig(clusters, ports, {
            cluster: (c * 7) % clusters,
            by: c % 2 === 1 ? 1000 : 0,
          }),
        },
      });
      const state = await synced;
      samples.push(performance.now() - t0);
      pushMs.push(state.lastPush?.durationMs ?? NaN);
    }
    return {
      clusters,
      listeners: ports.length,
      changeToSyncedMs: percentiles(samples),
      reconcileMs: percentiles(pushMs),
    };
  } finally {
    await reconciler.stop();
    await proxy.stop();
  }
}

const ports = await listenerPorts(LISTENERS);
const push: object[] = [await rawRun(ports)];
for (const maxInFlight of [1, 4]) push.push(await pushRun(maxInFlight, ports));
const latency: object[] = [];
latency.push(await latencyRun(SMALL, ports.slice(0, SMALL)));
latency.push(await latencyRun(CLUSTERS, ports));
console.log(
  JSON.stringify(
    {
      scenario: {
        clusters: CLUSTERS,
        listeners: LISTENERS,
        changes: CHANGES,
        small: SMALL,
        loadbalancer: LB,
      },
      node: process.version,
      push,
      latency,
    },
    null,
    2,
  ),
);
