/**
 * bench/kube (issue 7 §6): Meshdeck's Kubernetes mode at scale against a REAL kube-apiserver + etcd
 * (server/kube/testing/kubeApiServer.ts) and real l7mp 0.5.7 gateway proxies on loopback. Prints one
 * JSON object; figures, never assertions.
 *
 *   node --expose-gc --import tsx bench/kube.ts [--services 10000] [--endpoints-per-service 10]
 *     [--mesh-services 200] [--proxies 2] [--changes 50] [--concurrency 16] [--timeout-min 60]
 *
 * 1. Creates the CRDs, N Services with one EndpointSlice of M endpoints each (10.x addresses nothing
 *    connects to), P gateway pods (status.podIP 127.0.0.241+ through the status subresource, their l7mp
 *    REST API on a free port named by msm.l7mp.io/api-port) and K VirtualServices (a UDP listener on a
 *    free port) + K Targets, each following a different Service; bounded concurrency, timed per kind.
 * 2. Starts a KubeController (active, as the leader) in this process: time until every informer listed,
 *    until the first full render ('update' with initial), until the reconciler says every proxy is in
 *    sync; RSS and heap after that (with a GC first under --expose-gc) and the peak RSS.
 * 3. Replaces C EndpointSlices of Services the mesh uses, one at a time (the first address becomes a new
 *    one), and times the write -> the proxy's REST API (GET /api/v1/clusters/<name>/endpoints, polled
 *    every 5 ms) lists the new address, with the engine update and the push as stages.
 * The API server's and etcd's own RSS come from /proc/<pid>/status. Nothing binds a fixed port (the
 * proxies' loopback addresses are not used by any test), so no machine-wide lock is needed.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import * as k8s from '@kubernetes/client-node';
import {
  KUBE_SOURCE_KINDS,
  type KubeObjects,
  type KubeSourceKind,
  type LeanKubeObject,
  leanKubeObject,
  snapshotFromKube,
} from '../lib/kube/kubeSnapshot';
import { KubeController } from '../server/kube/KubeController';
import { installCrds, until as pollUntil } from '../server/kube/replicasTestKit';
import { type KubeApiServer, kubeRequest, startKubeApiServer } from '../server/kube/testing/kubeApiServer';
import { freePort, type L7mpProcess, startL7mp } from '../server/testing/startL7mp';
import {
  BENCH_NAMESPACE as NS,
  backendService,
  backendSlice,
  changeAddress,
  endpointAddress,
  gatewayPod,
  type KubeBenchSize,
  meshServiceIndex,
  meshTarget,
  meshVirtualService,
  percentile,
  type PoolResult,
  runPool,
} from './kubeObjects';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isFinite(v) || v < 0) throw new Error(`--${name} must be a non-negative number`);
  return v;
}

const size: KubeBenchSize = {
  services: arg('services', 10_000),
  endpointsPerService: arg('endpoints-per-service', 10),
  meshServices: arg('mesh-services', 200),
  proxies: Math.max(1, arg('proxies', 2)),
};
size.meshServices = Math.min(size.meshServices, size.services);
const CHANGES = arg('changes', 50);
const CONCURRENCY = Math.max(1, arg('concurrency', 16));
const DEADLINE = Date.now() + arg('timeout-min', 60) * 60_000;
/** The proxies' pod IPs: 127.0.0.241, .242, ... (no test uses these). */
const proxyIp = (g: number) => `127.0.0.${241 + g}`;
if (size.proxies > 14) throw new Error('--proxies: at most 14');

const t = () => performance.now();
const r1 = (x: number) => Math.round(x * 10) / 10;
const mb = (bytes: number) => r1(bytes / 1048576);
const benchStart = t();
const progress = (m: string) =>
  process.stderr.write(`[bench:kube +${r1((t() - benchStart) / 1000)} s] ${m}\n`);
const left = (capMs: number) => Math.max(1000, Math.min(capMs, DEADLINE - Date.now()));

/** Polls until fn returns something truthy, within the run's deadline. */
function until<T>(what: string, fn: () => T | Promise<T>, timeoutMs: number, everyMs: number) {
  return pollUntil(what, fn, left(timeoutMs), () => '', everyMs);
}

/** A write through the admin identity, retried on 429/5xx/timeouts; 409 (already there) is success. */
async function write(kube: KubeApiServer, method: string, path: string, body: unknown): Promise<void> {
  let lastError = '';
  for (let attempt = 0; attempt < 6; attempt++) {
    if (attempt > 0) await new Promise((r) => setTimeout(r, 200 * 2 ** attempt));
    try {
      const res = await kubeRequest(kube.url, kube.admin, method, path, body, 60_000);
      if (res.status < 300 || (method === 'POST' && res.status === 409)) return;
      lastError = `${method} ${path}: HTTP ${res.status} ${res.text.slice(0, 300)}`;
      if (res.status !== 429 && res.status < 500) break;
    } catch (e) {
      lastError = `${method} ${path}: ${e instanceof Error ? e.message : String(e)}`;
    }
  }
  throw new Error(lastError);
}

interface Created {
  count: number;
  ms: number;
  perSecond: number;
  failed: number;
  skipped: number;
  firstError?: string;
}

async function createAll(
  kube: KubeApiServer,
  what: string,
  count: number,
  path: string,
  make: (i: number) => unknown,
): Promise<Created> {
  const s = t();
  let reported = s;
  let n = 0;
  const res: PoolResult = await runPool(count, CONCURRENCY, DEADLINE, async (i) => {
    await write(kube, 'POST', path, make(i));
    n++;
    if (t() - reported > 15_000) {
      reported = t();
      progress(`${what}: ${n}/${count} (${Math.round(n / ((t() - s) / 1000))}/s)`);
    }
  });
  const ms = t() - s;
  progress(
    `${what}: ${res.done} created in ${r1(ms / 1000)} s, ${res.failed} failed, ${res.skipped} skipped`,
  );
  return {
    count: res.done,
    ms: Math.round(ms),
    perSecond: Math.round(res.done / (ms / 1000)),
    failed: res.failed,
    skipped: res.skipped,
    ...(res.firstError ? { firstError: res.firstError } : {}),
  };
}

/** VmRSS and VmHWM (peak) of this process's kube-apiserver and etcd children, from /proc. */
function childRss(): Record<string, { rssMb: number; peakRssMb: number }> {
  const out: Record<string, { rssMb: number; peakRssMb: number }> = {};
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const field = (k: string) => new RegExp(`^${k}:\\s*(\\S+)`, 'm').exec(status)?.[1];
      const name = field('Name');
      if (Number(field('PPid')) !== process.pid || (name !== 'kube-apiserver' && name !== 'etcd')) continue;
      const kb = (k: string) => Number(/(\d+)/.exec(field(k) ?? '')?.[1] ?? NaN);
      out[name] = { rssMb: r1(kb('VmRSS') / 1024), peakRssMb: r1(kb('VmHWM') / 1024) };
    } catch {
      // The process went away while we read.
    }
  }
  return out;
}

async function etcdDbMb(kube: KubeApiServer): Promise<number | undefined> {
  try {
    const text = await (await fetch(`${kube.etcdUrl}/metrics`, { signal: AbortSignal.timeout(5000) })).text();
    const m = /^etcd_mvcc_db_total_size_in_bytes (\S+)$/m.exec(text);
    return m ? mb(Number(m[1])) : undefined;
  } catch {
    return undefined;
  }
}

function memory() {
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  return {
    rssMb: mb(m.rss),
    heapUsedMb: mb(m.heapUsed),
    heapTotalMb: mb(m.heapTotal),
    externalMb: mb(m.external),
    arrayBuffersMb: mb(m.arrayBuffers),
  };
}

type StageName = 'writeMs' | 'snapshotMs' | 'engineMs' | 'pushMs' | 'visibleMs';

const LIST_PATHS: Record<KubeSourceKind, string> = {
  VirtualService: '/apis/msm.l7mp.io/v1/virtualservices',
  Route: '/apis/msm.l7mp.io/v1/routes',
  Target: '/apis/msm.l7mp.io/v1/targets',
  Service: '/api/v1/services',
  EndpointSlice: '/apis/discovery.k8s.io/v1/endpointslices',
  Pod: '/api/v1/pods',
};

/**
 * What KubeSource does on every change, EndpointSlice-only ones included: snapshotFromKube over every
 * lean object (sort + schema parse). Timed here on the same objects, listed from the API server.
 */
async function timeFullSnapshot(kube: KubeApiServer) {
  const objects = {} as Record<KubeSourceKind, LeanKubeObject[]>;
  for (const kind of KUBE_SOURCE_KINDS) {
    const res = await kubeRequest(kube.url, kube.admin, 'GET', LIST_PATHS[kind], undefined, 120_000);
    const items = (res.body as { items?: unknown[] }).items ?? [];
    objects[kind] = items.flatMap((o) => leanKubeObject(kind, o) ?? []);
  }
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const s = t();
    snapshotFromKube(objects as KubeObjects);
    times.push(t() - s);
  }
  times.sort((a, b) => a - b);
  return { medianMs: r1(times[1]!), runsMs: times.map(r1), note: 'snapshotFromKube over all lean objects' };
}

interface EndpointsAnswer {
  spec?: { address?: string };
}

async function proxyEndpoints(apiUrl: string, cluster: string): Promise<string[]> {
  const res = await fetch(`${apiUrl}/api/v1/clusters/${encodeURIComponent(cluster)}/endpoints`, {
    signal: AbortSignal.timeout(2000),
  });
  const body = JSON.parse(await res.text()) as EndpointsAnswer[];
  return Array.isArray(body) ? body.map((e) => e.spec?.address ?? '') : [];
}

async function main(): Promise<void> {
  const out: Record<string, unknown> = {
    scenario: {
      ...size,
      endpoints: size.services * size.endpointsPerService,
      changes: CHANGES,
      concurrency: CONCURRENCY,
    },
  };
  // Validates the address range before anything starts.
  endpointAddress(size.services * size.endpointsPerService - 1);
  if (CHANGES > 0) changeAddress(CHANGES - 1);

  progress(`starting kube-apiserver + etcd and ${size.proxies} l7mp proxies`);
  let kube: KubeApiServer | undefined;
  const proxies: L7mpProcess[] = [];
  let controller: KubeController | undefined;
  const logs: string[] = [];
  const logger = {
    info: (m: string) => logs.push(`info ${m}`),
    warn: (m: string) => logs.push(`warn ${m}`),
    error: (m: string) => logs.push(`error ${m}`),
  };
  try {
    const s0 = t();
    const started = await Promise.all([
      startKubeApiServer(),
      ...Array.from({ length: size.proxies }, () => startL7mp()),
    ]);
    kube = started[0] as KubeApiServer;
    proxies.push(...(started.slice(1) as L7mpProcess[]));
    out.startMs = Math.round(t() - s0);
    out.kubeVersion = kube.binaries.kubeVersion;
    out.etcdVersion = kube.binaries.etcdVersion;

    const kc = new k8s.KubeConfig();
    kc.loadFromFile(kube.admin.kubeconfigPath);
    const core = kc.makeApiClient(k8s.CoreV1Api);

    // ------------------------------------------------------------------ 1. objects
    const c0 = t();
    await installCrds(kube, kc);
    const crdMs = Math.round(t() - c0);
    const udpPorts = new Set<number>();
    for (let i = 0; udpPorts.size < size.meshServices && i < size.meshServices * 4 + 100; i++)
      udpPorts.add(await freePort('udp', '0.0.0.0'));
    if (udpPorts.size < size.meshServices) throw new Error('not enough free UDP ports');
    const ports = [...udpPorts];
    const created: Record<string, unknown> = { crdsMs: crdMs };
    created.services = await createAll(
      kube,
      'Services',
      size.services,
      `/api/v1/namespaces/${NS}/services`,
      (i) => backendService(i),
    );
    created.endpointSlices = await createAll(
      kube,
      'EndpointSlices',
      size.services,
      `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`,
      (i) => backendSlice(i, size.endpointsPerService),
    );
    const g0 = t();
    for (let g = 0; g < size.proxies; g++) {
      const pod = gatewayPod(g, proxies[g]!.apiPort) as k8s.V1Pod;
      await core.createNamespacedPod({ namespace: NS, body: pod });
      // No kubelet runs: the status a kubelet would report goes through the status subresource.
      await core.patchNamespacedPodStatus(
        {
          name: pod.metadata!.name!,
          namespace: NS,
          body: { status: { phase: 'Running', podIP: proxyIp(g), podIPs: [{ ip: proxyIp(g) }] } },
        },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
    }
    created.proxyPodsMs = Math.round(t() - g0);
    created.targets = await createAll(
      kube,
      'Targets',
      size.meshServices,
      `/apis/msm.l7mp.io/v1/namespaces/${NS}/targets`,
      (j) => meshTarget(j, meshServiceIndex(j, size)),
    );
    created.virtualServices = await createAll(
      kube,
      'VirtualServices',
      size.meshServices,
      `/apis/msm.l7mp.io/v1/namespaces/${NS}/virtualservices`,
      (j) => meshVirtualService(j, size.proxies, ports[j]!),
    );
    created.totalMs = Math.round(t() - c0);
    out.create = created;
    out.apiServerAfterCreate = { ...childRss(), etcdDbMb: await etcdDbMb(kube) };
    const memBefore = memory();
    out.benchBeforeController = memBefore;
    progress(`objects created; apiserver/etcd ${JSON.stringify(out.apiServerAfterCreate)}`);

    // ------------------------------------------------------------------ 2. controller
    controller = new KubeController({ kubeConfig: kc, logger });
    const ctl = controller;
    const informerSyncedAt: Record<string, number> = {};
    let snapshotAt: number | undefined;
    let initialUpdate: { at: number; changedProxies: number } | undefined;
    const updates: { at: number; incremental: boolean; changedProxies: string[] }[] = [];
    const snapshots: number[] = [];
    const pushes: { id: string; at: number; ok: boolean; ops: number }[] = [];
    ctl.source.prependListener('snapshot', (_ks, change) => {
      if (change.initial) snapshotAt ??= t();
      else snapshots.push(t());
    });
    ctl.on('update', (u) => {
      if (u.initial) initialUpdate ??= { at: t(), changedProxies: u.changedProxies.length };
      else updates.push({ at: t(), incremental: u.incremental, changedProxies: u.changedProxies });
    });
    ctl.reconciler.on('pushed', (id, res) =>
      pushes.push({ id, at: t(), ok: res.ok, ops: res.applied.length }),
    );
    let peakRss = process.memoryUsage().rss;
    const sampler = setInterval(() => {
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
      for (const s of ctl.informerStates()) if (s.synced) informerSyncedAt[s.kind] ??= t();
    }, 10);
    const s1 = t();
    ctl.source.start();
    await ctl.whenSynced(left(30 * 60_000));
    const syncedAt = t();
    await until(
      'every proxy in sync',
      () => {
        const st = ctl.syncStates();
        return st.length === size.proxies && st.every((x) => x.inSync && x.phase === 'synced');
      },
      30 * 60_000,
      10,
    );
    const inSyncAt = t();
    clearInterval(sampler);
    const compiled = ctl.compiled!;
    const errors = compiled.diagnostics.filter((d) => d.severity === 'error');
    const memAfter = memory();
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
    out.controller = {
      informerSyncedMs: Object.fromEntries(
        Object.entries(informerSyncedAt).map(([k, v]) => [k, Math.round(v - s1)]),
      ),
      snapshotMs: snapshotAt === undefined ? null : Math.round(snapshotAt - s1),
      firstRenderMs: initialUpdate ? Math.round(initialUpdate.at - s1) : null,
      whenSyncedMs: Math.round(syncedAt - s1),
      proxiesInSyncMs: Math.round(inSyncAt - s1),
      initialPushes: pushes.map((p) => ({
        id: p.id,
        ok: p.ok,
        operations: p.ops,
        doneAtMs: Math.round(p.at - s1),
        durationMs: ctl.syncStates().find((x) => x.id === p.id)?.lastPush?.durationMs,
      })),
      informerObjects: Object.fromEntries(ctl.informerStates().map((s) => [s.kind, s.objects])),
      counts: {
        virtualServices: Object.keys(compiled.mesh.virtualServices).length,
        targets: Object.keys(compiled.mesh.targets).length,
        proxies: Object.keys(compiled.l7mp.proxies).length,
        clustersPerProxy: Object.values(compiled.l7mp.proxies).map((p) => p.config.clusters.length),
        listenersPerProxy: Object.values(compiled.l7mp.proxies).map((p) => p.config.listeners.length),
        diagnostics: compiled.diagnostics.length,
        errors: errors.length,
      },
    };
    out.memoryAfterSync = {
      ...memAfter,
      rssDeltaMb: r1(memAfter.rssMb - memBefore.rssMb),
      heapDeltaMb: r1(memAfter.heapUsedMb - memBefore.heapUsedMb),
      peakRssSampledMb: mb(peakRss),
      maxRssMb: mb(process.resourceUsage().maxRSS * 1024),
      gc: typeof (globalThis as { gc?: unknown }).gc === 'function',
    };
    out.apiServerAfterSync = childRss();
    progress(`controller synced: ${JSON.stringify(out.controller).slice(0, 400)}`);
    if (errors.length) progress(`engine errors, first: ${errors[0]!.message}`);

    // ------------------------------------------------------------------ 3. EndpointSlice changes
    // Where each mesh Service's endpoints live: the cluster holding its first bulk address, on which proxy.
    const where = new Map<number, { apiUrl: string; cluster: string; id: string }>();
    for (const [id, p] of Object.entries(ctl.desiredConfigs())) {
      for (const c of p.config.clusters)
        for (const e of c.endpoints ?? []) {
          const a = e.spec.address;
          const m = /^10\.(\d+)\.(\d+)\.(\d+)$/.exec(a);
          if (!m || Number(m[1]) >= 96) continue;
          const k = (Number(m[1]) - 1) * 65536 + Number(m[2]) * 256 + Number(m[3]);
          if (k % size.endpointsPerService === 0)
            where.set(k / size.endpointsPerService, { apiUrl: p.apiUrl, cluster: c.name, id });
        }
    }
    let peakRssChanges = process.memoryUsage().rss;
    const changeSampler = setInterval(
      () => (peakRssChanges = Math.max(peakRssChanges, process.memoryUsage().rss)),
      10,
    );
    const latencies: number[] = [];
    const stages: Record<StageName, number>[] = [];
    let timeouts = 0;
    const u0 = updates.length;
    for (let c = 0; c < CHANGES && Date.now() < DEADLINE; c++) {
      const i = meshServiceIndex(c % size.meshServices, size);
      const loc = where.get(i);
      if (!loc) throw new Error(`no cluster on any proxy follows backend-${i}`);
      const address = changeAddress(c);
      const updatesBefore = updates.length;
      const pushesBefore = pushes.length;
      const snapshotsBefore = snapshots.length;
      const w0 = t();
      await write(
        kube,
        'PUT',
        `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices/backend-${i}`,
        backendSlice(i, size.endpointsPerService, address),
      );
      const writtenAt = t();
      try {
        await until(
          `${loc.id} ${loc.cluster} lists ${address}`,
          async () => (await proxyEndpoints(loc.apiUrl, loc.cluster)).includes(address),
          30_000,
          5,
        );
      } catch (e) {
        timeouts++;
        progress(`change ${c}: ${e instanceof Error ? e.message : String(e)}`);
        continue;
      }
      const visible = t() - w0;
      latencies.push(visible);
      const u = updates.slice(updatesBefore)[0];
      const p = pushes.slice(pushesBefore).find((x) => x.id === loc.id);
      const snap = snapshots[snapshotsBefore];
      stages.push({
        writeMs: r1(writtenAt - w0),
        snapshotMs: snap !== undefined ? r1(snap - w0) : -1,
        engineMs: u ? r1(u.at - w0) : -1,
        pushMs: p ? r1(p.at - w0) : -1,
        visibleMs: r1(visible),
      });
      // Settle: the next change starts with the proxy in sync.
      await until('in sync', () => ctl.syncStates().every((x) => x.inSync), 30_000, 5);
    }
    clearInterval(changeSampler);
    const sorted = [...latencies].sort((a, b) => a - b);
    const stageP = (k: StageName) => {
      const v = stages
        .map((s) => s[k])
        .filter((x) => x >= 0)
        .sort((a, b) => a - b);
      return { p50: r1(percentile(v, 50)), p99: r1(percentile(v, 99)), max: r1(v.at(-1) ?? NaN) };
    };
    const later = updates.slice(u0);
    out.endpointSliceChange = {
      n: sorted.length,
      timeouts,
      p50Ms: r1(percentile(sorted, 50)),
      p99Ms: r1(percentile(sorted, 99)),
      maxMs: r1(sorted.at(-1) ?? NaN),
      minMs: r1(sorted[0] ?? NaN),
      stagesNote:
        'ms after the write started: API answered, informer snapshot emitted, engine updated, push done',
      writeAnsweredMs: stageP('writeMs'),
      snapshotMs: stageP('snapshotMs'),
      engineUpdatedMs: stageP('engineMs'),
      pushDoneMs: stageP('pushMs'),
      allIncremental: later.every((x) => x.incremental),
      proxiesPerChange: r1(
        later.reduce((a, x) => a + x.changedProxies.length, 0) / Math.max(1, later.length),
      ),
      note: 'write -> GET /api/v1/clusters/<name>/endpoints on the real proxy lists the new address, polled every 5 ms',
    };
    out.memoryEnd = {
      ...memory(),
      peakRssDuringChangesMb: mb(peakRssChanges),
      maxRssMb: mb(process.resourceUsage().maxRSS * 1024),
    };
    out.fullSnapshot = await timeFullSnapshot(kube);
    out.apiServerEnd = { ...childRss(), etcdDbMb: await etcdDbMb(kube) };
    out.controllerLog = {
      warnings: logs.filter((l) => l.startsWith('warn')).length,
      errors: logs.filter((l) => l.startsWith('error')).length,
      first: logs.filter((l) => !l.startsWith('info')).slice(0, 5),
    };
  } finally {
    progress('stopping');
    await controller?.stop().catch(() => undefined);
    await Promise.all(proxies.map((p) => p.stop().catch(() => undefined)));
    await kube?.stop().catch(() => undefined);
  }
  out.node = process.version;
  out.wallS = r1((t() - benchStart) / 1000);
  console.log(JSON.stringify(out));
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e instanceof Error ? (e.stack ?? e.message) : String(e));
    process.exit(1);
  },
);
