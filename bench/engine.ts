/**
 * bench/engine: full resolve+render of a synthetic mesh, and one-endpoint incremental updates.
 * Prints one JSON object. `npm run bench:engine` runs the P1 scenario of issue 2; pass
 * `--services N --endpoints M --proxies P` for others. Figures, never assertions.
 *
 * The first full render is measured in a fresh process, as a control plane starts; a 2-core VM shared
 * with other work varies by a third from run to run, so `--runs R` (default 5) cold processes are
 * measured and the median is reported beside every run's figure and the worst.
 */
import { execFileSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { MeshEngine } from '../lib/engine/meshEngine';
import { backendSlice, P1, type SyntheticMeshSize, syntheticMesh } from './syntheticMesh';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

if (!process.argv.includes('--child')) {
  const runs = arg('runs', 5);
  const results: Record<string, unknown>[] = [];
  for (let i = 0; i < runs; i++) {
    const out = execFileSync(
      process.execPath,
      [...process.execArgv, process.argv[1]!, ...process.argv.slice(2), '--child'],
      {
        encoding: 'utf8',
        maxBuffer: 1 << 20,
      },
    );
    results.push(JSON.parse(out) as Record<string, unknown>);
  }
  const nums = (k: string) => results.map((r) => r[k] as number).sort((a, b) => a - b);
  const median = (k: string) => nums(k)[Math.floor(runs / 2)]!;
  const max = (k: string) => nums(k)[runs - 1]!;
  console.log(
    JSON.stringify({
      ...results[0],
      runs,
      wallMs: median('wallMs'),
      wallMsMax: max('wallMs'),
      wallMsRuns: results.map((r) => r.wallMs),
      warmWallMs: median('warmWallMs'),
      cpuMs: median('cpuMs'),
      rssMb: max('rssMb'),
      incrementalMs: median('incrementalMs'),
      incrementalP99Ms: median('incrementalP99Ms'),
      incrementalP99MsMax: max('incrementalP99Ms'),
      incrementalMaxMs: max('incrementalMaxMs'),
      incrementalAllFastPath: results.every((r) => r.incrementalAllFastPath === true),
    }),
  );
  process.exit(0);
}

const size: SyntheticMeshSize = {
  services: arg('services', P1.services),
  endpoints: arg('endpoints', P1.endpoints),
  proxies: arg('proxies', P1.proxies),
};
const changes = arg('changes', 200);
const gc = (globalThis as { gc?: () => void }).gc;

const snapshot = syntheticMesh(size);
gc?.();
const rssBefore = process.memoryUsage().rss;
let peakRss = rssBefore;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 5);

const cpu0 = process.cpuUsage();
const t0 = performance.now();
const engine = new MeshEngine(snapshot);
const wallMs = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
peakRss = Math.max(peakRss, process.memoryUsage().rss);

const perService = Math.max(1, Math.floor(size.endpoints / size.services));
const times: number[] = [];
let incrementalAll = true;
let proxiesTouched = 0;
for (let c = 0; c < changes; c++) {
  const i = (c * 7919) % size.services;
  const slice = backendSlice(i, perService, 1 + (c % 3));
  const s = performance.now();
  const u = engine.setServiceEndpointSlices('default', `backend-${i}`, [slice]);
  times.push(performance.now() - s);
  incrementalAll &&= u.incremental;
  proxiesTouched += u.changedProxies.length;
}
// A full recompute in a warm process, as a mesh edit costs once the server runs (setSnapshot, which also
// compares every proxy's config with the previous one): the same mesh again.
const warm: number[] = [];
for (let i = 0; i < 3; i++) {
  const again = syntheticMesh(size);
  const s = performance.now();
  engine.setSnapshot(again);
  warm.push(performance.now() - s);
}
warm.sort((a, b) => a - b);
clearInterval(sampler);
peakRss = Math.max(peakRss, process.memoryUsage().rss, process.resourceUsage().maxRSS * 1024);
times.sort((a, b) => a - b);
const pct = (p: number) => times[Math.min(times.length - 1, Math.floor((p / 100) * times.length))] ?? NaN;
const { mesh, l7mp } = engine.current;
const r = (x: number) => Math.round(x * 100) / 100;
console.log(
  JSON.stringify({
    scenario: size,
    wallMs: r(wallMs),
    warmWallMs: r(warm[1] ?? NaN),
    cpuMs: r((cpu.user + cpu.system) / 1000),
    rssMb: r(peakRss / 1048576),
    rssBeforeMb: r(rssBefore / 1048576),
    incrementalMs: r(pct(50)),
    incrementalP99Ms: r(pct(99)),
    incrementalMaxMs: r(times[times.length - 1] ?? NaN),
    incrementalChanges: changes,
    incrementalAllFastPath: incrementalAll,
    proxiesPerChange: r(proxiesTouched / changes),
    counts: {
      virtualServices: Object.keys(mesh.virtualServices).length,
      targets: Object.keys(mesh.targets).length,
      proxies: Object.keys(l7mp.proxies).length,
      diagnostics: engine.current.diagnostics.length,
    },
    node: process.version,
  }),
);
