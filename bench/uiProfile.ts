/**
 * Where one canvas edit's main-thread time goes (issue 5, P8), in Debian's Chromium: a CPU profile
 * (CDP Profiler) and a trace (CDP Tracing) around one Inspector edit on a generated mesh, summarised
 * as JSON: self time per script and per function, the trace's top-level main-thread events (script,
 * style, layout, paint), the long tasks, and the User Timing measures the console records
 * (`meshdeck:*`). Figures, never assertions; not part of `npm test`.
 *
 *   node --import tsx bench/uiProfile.ts [--url http://127.0.0.1:3100] [--nodes 1000] [--out test-results]
 *     [--pan | --load | --edits 10] [--variants base,viewport-layer,...] [--runs 2]
 *
 * With --edits N it profiles nothing: it times N edits and N edits back (P8) with each of EDIT_VARIANTS and
 * prints, per variant, the median of: input event -> marker (`toMarkerMs`), input event -> compile asked
 * (`askedMs`: the edit's own handling), the compile worker's engine time (`workerMs`), and asked -> result
 * rendered (`compileMs`, the `meshdeck:compile` measure); with --out, one CPU profile of each variant's
 * edits (`ui-edits-N-variant.cpuprofile`).
 *
 * With --frames it profiles nothing: per EDIT_VARIANT, the median cost of a frame that changes one node's
 * colour (as a marker's change does), from its animation frame callback to a task posted there (the frame's
 * style, layout, paint and layerization on the main thread), over 30 frames. `--where side` changes the
 * side panel's colour instead (an edit's own frame changes the form, outside the canvas).
 *
 * With --load it profiles the page's main thread from a reload to the graph laid out (P7's first view);
 * with --fresh as well, the browser's storage is cleared first, so the page lays the graph out itself
 * (no layout kept from an earlier view); with --cold, the HTTP cache (and with it V8's code cache) is
 * cleared too: a first visit's scripts.
 *
 * With --pan it profiles the scripted pan of bench/ui.ts (P7) instead of an edit: a CPU profile and a
 * trace of one pan, summarised per thread (main, compositor, raster workers), and the pan's fps with
 * each of PAN_VARIANTS: a style sheet put into the page that switches one part of the canvas off or
 * changes how it is painted, to see what a pan frame's time is spent on without a build per guess.
 *
 * Without --url it starts scripts/e2e-server.sh (needs `next build`; port $E2E_PORT or 3100) and stops
 * it at the end; the server's draft is reset to the mesh directory afterwards. With --out the raw
 * profile (.cpuprofile) and trace (.json) are written there, to open in Chromium's DevTools, and with
 * --pan two screenshots: mid-drag and after it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { chromium, type CDPSession, type Page } from '@playwright/test';
import { compileDraft } from '../lib/console/compileDraft';
import { syntheticDraft } from './syntheticMesh';
import { pan, panStart } from './uiPan';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const NODES = Number(arg('nodes') ?? 1000);
const OUT = arg('out');
const PROXIES = 10;
const PAN = process.argv.includes('--pan');
const LOAD = process.argv.includes('--load');
const RUNS = Number(arg('runs') ?? 2);
const EDITS = Number(arg('edits') ?? 0);
const FRAMES = process.argv.includes('--frames');

/** Style sheets tried with --edits: what the page paints around an edit, without a build per guess. */
const EDIT_VARIANTS: Record<string, string> = {
  base: '',
  'canvas-layer': '.canvas { will-change: transform; }',
  'no-minimap': '.canvas-minimap { display: none; }',
  'no-canvas': '.react-flow__viewport { display: none; }',
  'far-canvas-gone': '.canvas:not([data-far-canvas]) .canvas__far { display: none; }',
  'no-edges': '.react-flow__edges { display: none; }',
  'no-nodes': '.react-flow__nodes { display: none; }',
  'no-handles': '.react-flow__handle { display: none; }',
  'nodes-contain': '.react-flow__node { contain: strict; }',
  'no-node-content': '.mesh-node > * { display: none !important; }',
  'nodes-layer': '.react-flow__nodes { will-change: transform; }',
  'edges-layer': '.react-flow__edges { will-change: transform; }',
  'both-layers': '.react-flow__nodes, .react-flow__edges { will-change: transform; }',
  'no-handles+no-edges': '.react-flow__handle, .react-flow__edges { display: none; }',
  'plain-nodes':
    '.mesh-node { border-radius: 0 !important; box-shadow: none !important; border-width: 0 !important; }',
  // Nodes piled at the origin: what the nodes' own transforms (a paint chunk each) cost a frame (500
  // nodes, `--frames --where side`: nothing measurable, 10.6 vs 10.4 ms; the whole canvas: 4.6 ms).
  'no-node-transforms': '.react-flow__node { transform: none !important; }',
};

/** Style sheets tried during a pan; `base` is the console as built. */
const PAN_VARIANTS: Record<string, string> = {
  base: '',
  'viewport-layer': '.react-flow__viewport { will-change: transform; }',
  'nodes-layer': '.react-flow__nodes { will-change: transform; }',
  'no-minimap': '.canvas-minimap { display: none; }',
  'no-background': '.react-flow__background { display: none; }',
  'no-edges': '.react-flow__edges { display: none; }',
  'no-edge-animation': '.react-flow__edge.animated path { animation: none; }',
  'no-edge-markers': '.react-flow__edge path { marker-end: none !important; }',
  'no-nodes': '.react-flow__nodes { display: none; }',
  'plain-nodes':
    '.mesh-node { border-radius: 0 !important; box-shadow: none !important; border-width: 0 !important; }',
  'layer+no-minimap+no-background':
    '.react-flow__viewport { will-change: transform; } .canvas-minimap, .react-flow__background { display: none; }',
};

async function startServer(): Promise<{ url: string; child?: ChildProcess }> {
  const given = arg('url');
  if (given) return { url: given };
  const port = process.env.E2E_PORT ?? '3100';
  const child = spawn('bash', ['scripts/e2e-server.sh'], {
    env: { ...process.env, E2E_PORT: port },
    stdio: ['ignore', 'ignore', 'inherit'],
    detached: true,
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 360; i++) {
    try {
      if ((await fetch(`${url}/api/health`)).ok) return { url, child };
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`the e2e server did not answer on ${url} within 180 s`);
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Where a minified script position came from, when the build has source maps (`productionBrowserSourceMaps`). */
type Mapper = (url: string, line: number, col: number) => string | undefined;

/**
 * Fetches each script's source map (its `sourceMappingURL`) once and maps positions to `name@file:line`. The
 * bench's own console build has no maps; a copy built with them names the console's own functions.
 * source-map-js comes with Next (postcss); without it or without maps the names stay minified.
 */
async function sourceMapper(urls: string[]): Promise<Mapper> {
  let lib: typeof import('source-map-js') | undefined;
  try {
    lib = await import('source-map-js');
  } catch {
    return () => undefined;
  }
  const maps = new Map<string, InstanceType<typeof lib.SourceMapConsumer>>();
  for (const url of new Set(urls)) {
    if (!url.startsWith('http')) continue;
    try {
      // Turbopack names a chunk's map in its last line, not always `<chunk>.map`.
      const js = await (await fetch(url)).text();
      const name = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(js)?.[1];
      if (!name) continue;
      const r = await fetch(new URL(name, url));
      if (r.ok) maps.set(url, new lib.SourceMapConsumer(await r.json()));
    } catch {
      // No map for this script.
    }
  }
  return (url, line, col) => {
    const m = maps.get(url);
    // A frame without a position (-1), e.g. a script's top level seen from a reload.
    if (!m || line < 0 || col < 0) return undefined;
    const o = m.originalPositionFor({ line: line + 1, column: col });
    if (!o.source) return undefined;
    const file = o.source.replace(/^.*?(node_modules\/|\/(?=(components|lib|app)\/))/, '');
    return `${o.name ?? '?'}@${file}:${o.line}`;
  };
}

/**
 * Self time per script, per function and per source file, and total (inclusive) time per function,
 * in ms, largest first. Functions are named by the source map where there is one.
 */
function summariseProfile(p: Profile, mapped: Mapper) {
  const self = new Map<number, number>();
  p.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0) / 1000));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const nameOf = new Map<number, string>();
  const fileOf = new Map<number, string>();
  for (const n of p.nodes) {
    const script = n.callFrame.url.replace(/^.*\//, '') || n.callFrame.functionName;
    const where = mapped(n.callFrame.url, n.callFrame.lineNumber, n.callFrame.columnNumber);
    const fn = n.callFrame.functionName || '(anonymous)';
    nameOf.set(
      n.id,
      where ? `${fn} ${where}` : `${fn}@${script}:${n.callFrame.lineNumber}:${n.callFrame.columnNumber}`,
    );
    fileOf.set(n.id, where ? where.replace(/^.*@/, '').replace(/:\d+$/, '') : script);
  }
  const byScript = new Map<string, number>();
  const byFunction = new Map<string, number>();
  const bySource = new Map<string, number>();
  const total = new Map<string, number>();
  const add = (m: Map<string, number>, k: string, ms: number) => m.set(k, (m.get(k) ?? 0) + ms);
  for (const n of p.nodes) {
    const ms = self.get(n.id) ?? 0;
    if (!ms) continue;
    add(byScript, n.callFrame.url.replace(/^.*\//, '') || n.callFrame.functionName, ms);
    add(byFunction, nameOf.get(n.id)!, ms);
    add(bySource, fileOf.get(n.id)!, ms);
    // Each function once per stack, so recursion is not counted twice.
    const seen = new Set<string>();
    for (let id: number | undefined = n.id; id !== undefined; id = parent.get(id)) {
      const name = nameOf.get(id)!;
      if (seen.has(name) || byId.get(id)!.callFrame.functionName === '(root)') continue;
      seen.add(name);
      add(total, name, ms);
    }
  }
  const top = (m: Map<string, number>, k: number) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, k)
      .map(([name, ms]) => ({ name, ms: Math.round(ms * 10) / 10 }));
  const sampled = [...self.values()].reduce((a, b) => a + b, 0);
  return {
    sampledMs: Math.round(sampled),
    byScript: top(byScript, 12),
    bySource: top(bySource, 25),
    selfByFunction: top(byFunction, 40),
    totalByFunction: top(total, 60),
  };
}

interface TraceEvent {
  name: string;
  ph: string;
  dur?: number;
  tid: number;
  pid: number;
  args?: { data?: { frame?: string } };
}

/** Durations of the main thread's events by name (script, style, layout, paint...), in ms. */
function summariseTrace(events: TraceEvent[]) {
  const names = events.filter((e) => e.name === 'thread_name' && e.ph === 'M') as unknown as {
    pid: number;
    tid: number;
    args: { name: string };
  }[];
  const main = names.filter((e) => e.args.name === 'CrRendererMain');
  const isMain = (e: TraceEvent) => main.some((m) => m.pid === e.pid && m.tid === e.tid);
  const sum = new Map<string, number>();
  const wanted = new Set([
    'RunTask',
    'FunctionCall',
    'EventDispatch',
    'TimerFire',
    'FireAnimationFrame',
    'RunMicrotasks',
    'V8.GC_SCAVENGER',
    'MajorGC',
    'MinorGC',
    'UpdateLayoutTree',
    'Layout',
    'PrePaint',
    'Paint',
    'Layerize',
    'UpdateLayer',
    'HitTest',
    'ParseHTML',
    'v8.callFunction',
  ]);
  for (const e of events) {
    if (e.ph !== 'X' || !e.dur || !isMain(e) || !wanted.has(e.name)) continue;
    sum.set(e.name, (sum.get(e.name) ?? 0) + e.dur / 1000);
  }
  return Object.fromEntries([...sum].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, Math.round(v)]));
}

/** Durations of every thread's complete events by name, in ms (nested events count in both). */
function summariseThreads(events: TraceEvent[]) {
  const names = new Map<string, string>();
  for (const e of events)
    if (e.name === 'thread_name' && e.ph === 'M')
      names.set(`${e.pid}:${e.tid}`, (e.args as unknown as { name: string }).name);
  const per = new Map<string, Map<string, number>>();
  for (const e of events) {
    if (e.ph !== 'X' || !e.dur) continue;
    const t = (names.get(`${e.pid}:${e.tid}`) ?? 'other').replace(/\d+$/, '');
    const m = per.get(t) ?? new Map<string, number>();
    per.set(t, m);
    m.set(e.name, (m.get(e.name) ?? 0) + e.dur / 1000);
  }
  return Object.fromEntries(
    [...per].map(([t, m]) => [
      t,
      Object.fromEntries(
        [...m]
          .sort((a, b) => b[1] - a[1])
          .slice(0, 14)
          .map(([k, v]) => [k, Math.round(v)]),
      ),
    ]),
  );
}

async function trace(
  cdp: CDPSession,
  run: () => Promise<unknown>,
  extra: string[] = [],
): Promise<TraceEvent[]> {
  const events: TraceEvent[] = [];
  cdp.on('Tracing.dataCollected', (e) => events.push(...(e.value as unknown as TraceEvent[])));
  const done = new Promise<void>((r) => cdp.once('Tracing.tracingComplete', () => r()));
  await cdp.send('Tracing.start', {
    transferMode: 'ReportEvents',
    traceConfig: {
      includedCategories: [
        'devtools.timeline',
        'disabled-by-default-devtools.timeline',
        'v8',
        'blink.user_timing',
        ...extra,
      ],
    },
  });
  await run();
  await cdp.send('Tracing.end');
  await done;
  return events;
}

/**
 * Sets the Inspector's destination field and resolves when the node's error badge says so: `ms`, and
 * `canvasMs` when the canvas's nodes changed (the dangling destination adds a node, the fix removes
 * it; the canvas renders after the markers, see components/console/nodeMarks.ts).
 */
async function edit(
  page: Page,
  nodeId: string,
  value: string,
  errors: boolean,
): Promise<{ ms: number; canvasMs?: number; paintMs?: number }> {
  return page.evaluate(
    ({ nodeId, value, errors }) =>
      new Promise<{ ms: number; canvasMs?: number; paintMs?: number }>((resolve, reject) => {
        const input = document.querySelector<HTMLInputElement>(
          '[data-field-path="spec.destination"] input[type="text"]',
        );
        const node = document.querySelector(`[data-testid="node-${CSS.escape(nodeId)}"]`);
        if (!input || !node) return reject(new Error(`no destination field or node ${nodeId}`));
        const w = window as unknown as { __long: { start: number; ms: number }[] };
        w.__long = [];
        const po = new PerformanceObserver((l) =>
          l.getEntries().forEach((e) => w.__long.push({ start: e.startTime, ms: e.duration })),
        );
        po.observe({ type: 'longtask' });
        const done = () => (node.getAttribute('data-errors') !== '0') === errors;
        let canvasMs: number | undefined;
        const nodesObs = new MutationObserver(() => {
          canvasMs ??= performance.now() - t0;
          nodesObs.disconnect();
        });
        nodesObs.observe(document.querySelector('.react-flow__nodes')!, { childList: true });
        const obs = new MutationObserver(() => {
          if (!done()) return;
          obs.disconnect();
          const ms = performance.now() - t0;
          // The frame that shows the marker: its rendering is done when a task posted from its
          // requestAnimationFrame callback runs (an upper bound: the task may queue behind others).
          let paintMs: number | undefined;
          requestAnimationFrame(() => {
            const ch = new MessageChannel();
            ch.port1.onmessage = () => (paintMs = performance.now() - t0);
            ch.port2.postMessage(0);
          });
          // Long tasks are reported after they end; give the last one a moment.
          setTimeout(() => {
            po.disconnect();
            nodesObs.disconnect();
            w.__long = w.__long.map((l) => ({ start: Math.round(l.start - t0), ms: Math.round(l.ms) }));
            resolve({ ms, canvasMs, paintMs });
          }, 200);
        });
        obs.observe(node, { attributes: true, attributeFilter: ['data-errors'] });
        Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')!.set!.call(input, value);
        performance.clearMeasures();
        const t0 = performance.now();
        (w as unknown as { __t0: number }).__t0 = t0;
        input.dispatchEvent(new Event('input', { bubbles: true }));
      }),
    { nodeId, value, errors },
  );
}

async function main() {
  const perGroup =
    (compileDraft(syntheticDraft(20, PROXIES), { xds: false }).graph.nodes.length - PROXIES) / 20;
  const groups = Math.max(1, Math.round((NODES - PROXIES) / perGroup));
  const { url, child } = await startServer();
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'],
  });
  try {
    const page = await (
      await browser.newContext({ baseURL: url, viewport: { width: 1600, height: 900 } })
    ).newPage();
    await page.addInitScript({ content: 'window.__name = (f) => f;' });
    await page.goto('/?token=e2e-token');
    await page.waitForFunction(
      () => document.querySelector('[data-testid="session-status"]')?.textContent === 'signed in',
    );
    await page.evaluate(
      async (d) => {
        const s = (await (await fetch('/api/session')).json()) as { csrfToken?: string };
        const cur = (await (await fetch('/api/draft')).json()) as { revision: number };
        const r = await fetch('/api/draft', {
          method: 'PUT',
          headers: { 'content-type': 'application/json', 'x-csrf-token': s.csrfToken ?? '' },
          body: JSON.stringify({ draft: d, baseRevision: cur.revision }),
        });
        if (!r.ok) throw new Error(`PUT /api/draft: ${r.status}`);
        // Opened on a draft the server has read, as after any save (bench/ui.ts does the same).
        await (await fetch('/api/draft?parsed=1')).arrayBuffer();
      },
      syntheticDraft(groups, PROXIES),
    );
    const route = `Route/default/route-${Math.floor(groups / 2)}`;
    await page.goto(`/?profile=${NODES}#node=${encodeURIComponent(route)}`);
    await page.waitForSelector(`[data-testid="node-${route}"]`, { timeout: 300_000 });
    await page.waitForFunction(() => document.querySelector('.canvas__status')?.textContent === '', null, {
      timeout: 300_000,
    });
    await page.waitForTimeout(1000);
    if (PAN) {
      await profilePan(page);
    } else if (LOAD) {
      await profileLoad(page, route);
    } else if (FRAMES) {
      await timeFrames(page, route);
    } else if (EDITS > 0) {
      // As bench/ui.ts does before its P8 edits.
      if (process.argv.includes('--after-pan')) await pan(page);
      await timeEdits(page, route);
    } else {
      if (process.argv.includes('--after-pan')) await pan(page);
      await profileEdit(page, route);
    }
    await page.evaluate(async () => {
      const s = (await (await fetch('/api/session')).json()) as { csrfToken?: string };
      await fetch('/api/draft/reset', { method: 'POST', headers: { 'x-csrf-token': s.csrfToken ?? '' } });
    });
  } finally {
    await browser.close();
    if (child?.pid) {
      const exited = new Promise((r) => child.once('exit', r));
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        // Already gone.
      }
      if (child.exitCode === null) await exited;
    }
  }
}

/** The pan's fps with each style variant, then a CPU profile and a trace of one pan as built. */
async function profilePan(page: Page) {
  const names = arg('variants')?.split(',') ?? Object.keys(PAN_VARIANTS);
  const variants: Record<string, unknown> = {};
  for (const name of names) {
    await putStyle(page, PAN_VARIANTS[name] ?? '');
    await page.waitForTimeout(300);
    const runs = [];
    for (let i = 0; i < RUNS; i++) runs.push(await pan(page));
    variants[name] = runs.map((r) => `${r.fps} fps, max gap ${r.maxFrameGapMs} ms`);
    console.error(`[uiProfile] ${name}: ${JSON.stringify(variants[name])}`);
  }
  await page.evaluate(() => document.getElementById('bench-variant')?.remove());
  await page.waitForTimeout(300);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
  await cdp.send('Profiler.start');
  const profiled = await pan(page);
  const { profile } = (await cdp.send('Profiler.stop')) as unknown as { profile: Profile };
  await page.waitForTimeout(300);
  let traced: Awaited<ReturnType<typeof pan>> | undefined;
  const events = await trace(cdp, async () => {
    traced = await pan(page);
  }, ['cc', 'viz', 'disabled-by-default-devtools.timeline.frame']);
  if (OUT) {
    // What a pan looks like: mid-drag (components/console/farCanvas.ts draws it) and once it stops.
    const start = await panStart(page);
    await page.mouse.move(start.x, start.y);
    await page.mouse.down();
    for (let i = 1; i <= 10; i++) await page.mouse.move(start.x + i * 8, start.y + i * 4);
    await page.screenshot({ path: `${OUT}/ui-pan-${NODES}-moving.png` });
    await page.mouse.up();
    await page.waitForTimeout(500);
    await page.screenshot({ path: `${OUT}/ui-pan-${NODES}-still.png` });
    writeFileSync(`${OUT}/ui-pan-${NODES}.cpuprofile`, JSON.stringify(profile));
    writeFileSync(`${OUT}/ui-pan-${NODES}.trace.json`, JSON.stringify({ traceEvents: events }));
  }
  console.log(
    JSON.stringify(
      {
        bench: 'uiProfile --pan',
        nodes: NODES,
        flowNodes: await page.locator('.react-flow__node').count(),
        flowEdges: await page.locator('.react-flow__edge').count(),
        zoom: await page.evaluate(
          () => document.querySelector<HTMLElement>('.react-flow__viewport')?.style.transform,
        ),
        loadavg1m: Math.round(loadavg()[0]! * 10) / 10,
        variants,
        profiledPan: profiled,
        cpu: summariseProfile(profile, await sourceMapper(profile.nodes.map((n) => n.callFrame.url))),
        tracedPan: traced,
        threads: summariseThreads(events),
      },
      null,
      2,
    ),
  );
}

/**
 * The profile cut into busy stretches (runs of samples with less than 20 ms of idle between them),
 * longest first, each summarised on its own: which work a long task was.
 */
function busyStretches(p: Profile, mapped: Mapper, count: number) {
  const idle = new Set(p.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id));
  const stretches: { from: number; to: number; ms: number }[] = [];
  let idleRun = 0;
  let cur: { from: number; to: number; ms: number } | undefined;
  p.samples.forEach((id, i) => {
    const dt = (p.timeDeltas[i] ?? 0) / 1000;
    if (idle.has(id)) {
      idleRun += dt;
      if (cur && idleRun >= 20) {
        stretches.push(cur);
        cur = undefined;
      }
      return;
    }
    idleRun = 0;
    cur ??= { from: i, to: i, ms: 0 };
    cur.to = i;
    cur.ms += dt;
  });
  if (cur) stretches.push(cur);
  return stretches
    .sort((a, b) => b.ms - a.ms)
    .slice(0, count)
    .map((s) => {
      const part = {
        ...p,
        samples: p.samples.slice(s.from, s.to + 1),
        timeDeltas: p.timeDeltas.slice(s.from, s.to + 1),
      };
      const sum = summariseProfile(part, mapped);
      return { busyMs: Math.round(s.ms), totalByFunction: sum.totalByFunction.slice(0, 40) };
    });
}

/**
 * A CPU profile of the page's main thread from a reload to the graph laid out (P7 first view), with the
 * long tasks and the console's User Timing entries (`meshdeck:compile`, `meshdeck:layout`).
 */
async function profileLoad(page: Page, route: string) {
  await page.addInitScript({
    content: `window.__long = []; new PerformanceObserver((l) => { for (const e of l.getEntries())
      window.__long.push({ at: Math.round(e.startTime), ms: Math.round(e.duration) }); })
      .observe({ type: 'longtask', buffered: true });
      new MutationObserver(() => { if (!window.__first && document.querySelector('.react-flow__node'))
      window.__first = performance.now(); }).observe(document, { subtree: true, childList: true });`,
  });
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 500 });
  if (process.argv.includes('--fresh')) await page.evaluate(() => localStorage.clear());
  // A first visit's scripts: no HTTP cache, so no V8 code cache either (bench/ui.ts's serverReady).
  if (process.argv.includes('--cold')) await cdp.send('Network.clearBrowserCache');
  await cdp.send('Profiler.start');
  await page.reload();
  await page.waitForSelector(`[data-testid="node-${route}"]`, { timeout: 300_000 });
  await page.waitForFunction(() => document.querySelector('.canvas__status')?.textContent === '', null, {
    timeout: 300_000,
  });
  const laidOut = await page.evaluate(() => performance.now());
  await page.waitForTimeout(500);
  const { profile } = (await cdp.send('Profiler.stop')) as unknown as { profile: Profile };
  const page_ = await page.evaluate(() => {
    const w = window as unknown as { __long: unknown[]; __first: number };
    return {
      firstNodesMs: Math.round(w.__first),
      longTasks: w.__long,
      measures: performance.getEntriesByType('measure').map((m) => ({
        name: m.name,
        at: Math.round(m.startTime),
        ms: Math.round(m.duration),
        detail: (m as PerformanceMeasure).detail as unknown,
      })),
    };
  });
  if (OUT) writeFileSync(`${OUT}/ui-load-${NODES}.cpuprofile`, JSON.stringify(profile));
  const mapper = await sourceMapper(profile.nodes.map((n) => n.callFrame.url));
  console.log(
    JSON.stringify(
      {
        bench: 'uiProfile --load',
        nodes: NODES,
        loadavg1m: Math.round(loadavg()[0]! * 10) / 10,
        laidOutMs: Math.round(laidOut),
        ...page_,
        cpu: summariseProfile(profile, mapper),
        busiest: busyStretches(profile, mapper, 3),
      },
      null,
      2,
    ),
  );
}

/** Puts `css` into the page as its one bench style sheet. */
async function putStyle(page: Page, css: string) {
  await page.evaluate((css) => {
    let el = document.getElementById('bench-variant');
    if (!el) {
      el = document.createElement('style');
      el.id = 'bench-variant';
      document.head.append(el);
    }
    el.textContent = css;
  }, css);
}

/** --frames: a one-node change's frame cost with each of EDIT_VARIANTS (see the header). */
async function timeFrames(page: Page, route: string) {
  const names = arg('variants')?.split(',') ?? Object.keys(EDIT_VARIANTS);
  const out: Record<string, unknown> = {};
  for (const name of names) {
    await putStyle(page, EDIT_VARIANTS[name] ?? '');
    await page.waitForTimeout(300);
    const ms = await page.evaluate(
      ({ id, where }) =>
        new Promise<number[]>((resolve) => {
          const node =
            where === 'side'
              ? document.querySelector('.console__side')!
              : document.querySelector(`[data-testid="node-${CSS.escape(id)}"]`)!;
          const all: number[] = [];
          const one = () => {
            // A colour every variant paints (a variant may drop the marker's shadow).
            (node as HTMLElement).style.backgroundColor =
              all.length % 2 ? 'rgb(200, 0, 0)' : 'rgb(0, 0, 200)';
            requestAnimationFrame(() => {
              const start = performance.now();
              const ch = new MessageChannel();
              ch.port1.onmessage = () => {
                all.push(performance.now() - start);
                if (all.length < 30) setTimeout(one, 50);
                else resolve(all);
              };
              ch.port2.postMessage(0);
            });
          };
          one();
        }),
      { id: route, where: arg('where') ?? 'node' },
    );
    const s = [...ms].sort((a, b) => a - b);
    out[name] = { medianMs: Math.round(s[s.length >> 1]! * 10) / 10, p90Ms: Math.round(s[27]! * 10) / 10 };
    console.error(`[uiProfile] frames ${name}: ${JSON.stringify(out[name])}`);
  }
  console.log(JSON.stringify({ bench: 'uiProfile --frames', nodes: NODES, variants: out }, null, 2));
}

/** Median figures of --edits edits (and edits back) with each of EDIT_VARIANTS (see the header). */
async function timeEdits(page: Page, route: string) {
  const field = '[data-field-path="spec.destination"] input[type="text"]';
  await page.waitForSelector(field);
  const original = await page.inputValue(field);
  const names = arg('variants')?.split(',') ?? Object.keys(EDIT_VARIANTS);
  const med = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length === 0 ? undefined : Math.round(s[s.length >> 1]! * 10) / 10;
  };
  const out: Record<string, unknown> = {};
  for (const name of names) {
    await putStyle(page, EDIT_VARIANTS[name] ?? '');
    await page.waitForTimeout(300);
    type Row = { toMarkerMs: number; askedMs?: number; compileMs?: number } & Record<
      string,
      number | undefined
    >;
    const rows: Row[] = [];
    // --out: one CPU profile over all of a variant's edits, where a single edit's is mostly noise.
    const cdp = OUT ? await page.context().newCDPSession(page) : undefined;
    if (cdp) {
      await cdp.send('Profiler.enable');
      await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
      await cdp.send('Profiler.start');
    }
    for (let i = 0; i < EDITS * 2; i++) {
      const bad = i % 2 === 0;
      const {
        ms: toMarkerMs,
        canvasMs,
        paintMs,
      } = await edit(page, route, bad ? `${original}-nope` : original, bad);
      const m = await page.evaluate(() => {
        const e = performance.getEntriesByName('meshdeck:compile').at(-1) as PerformanceMeasure | undefined;
        const t0 = (window as unknown as { __t0?: number }).__t0 ?? 0;
        return e
          ? { askedMs: e.startTime - t0, compileMs: e.duration, ...(e.detail as Record<string, number>) }
          : {};
      });
      // The first pair warms up.
      if (i >= 2) rows.push({ toMarkerMs, paintMs, canvasMs, ...m });
      await page.waitForTimeout(400);
    }
    if (cdp) {
      const { profile } = (await cdp.send('Profiler.stop')) as unknown as { profile: Profile };
      writeFileSync(`${OUT}/ui-edits-${NODES}-${name}.cpuprofile`, JSON.stringify(profile));
      await cdp.detach();
    }
    const pick = (k: string) => med(rows.map((r) => r[k]).filter((x): x is number => typeof x === 'number'));
    out[name] = {
      toMarkerMs: pick('toMarkerMs'),
      askedMs: pick('askedMs'),
      compileMs: pick('compileMs'),
      toWorkerMs: pick('toWorkerMs'),
      workerMs: pick('workerMs'),
      fromWorkerMs: pick('fromWorkerMs'),
      renderMs: pick('renderMs'),
      markerPaintedMs: pick('paintMs'),
      canvasMs: pick('canvasMs'),
      allToMarkerMs: rows.map((r) => Math.round(r.toMarkerMs)),
    };
    console.error(`[uiProfile] ${name}: ${JSON.stringify(out[name])}`);
  }
  await page.evaluate(() => document.getElementById('bench-variant')?.remove());
  console.log(
    JSON.stringify(
      {
        bench: 'uiProfile --edits',
        nodes: NODES,
        loadavg1m: Math.round(loadavg()[0]! * 10) / 10,
        edits: out,
      },
      null,
      2,
    ),
  );
}

/** A CPU profile of one Inspector edit and a trace of the edit back. */
async function profileEdit(page: Page, route: string) {
  const field = '[data-field-path="spec.destination"] input[type="text"]';
  await page.waitForSelector(field);
  const original = await page.inputValue(field);
  const variant = arg('variants');
  if (variant) await putStyle(page, EDIT_VARIANTS[variant] ?? '');
  // One warm-up round trip, so the profile shows a steady-state edit.
  await edit(page, route, `${original}-nope`, true);
  await edit(page, route, original, false);
  await page.waitForTimeout(500);

  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
  await cdp.send('Profiler.start');
  const { ms: profiledMs } = await edit(page, route, `${original}-nope`, true);
  const { profile } = (await cdp.send('Profiler.stop')) as unknown as { profile: Profile };
  const measures1 = await page.evaluate(() =>
    performance.getEntriesByType('measure').map((m) => ({ name: m.name, ms: Math.round(m.duration) })),
  );
  const long1 = await page.evaluate(() => (window as unknown as { __long: unknown }).__long);
  await page.waitForTimeout(500);

  let tracedMs = 0;
  const events = await trace(cdp, async () => {
    tracedMs = (await edit(page, route, original, false)).ms;
  });
  const long2 = await page.evaluate(() => (window as unknown as { __long: unknown }).__long);
  if (OUT) {
    writeFileSync(`${OUT}/ui-edit-${NODES}.cpuprofile`, JSON.stringify(profile));
    writeFileSync(`${OUT}/ui-edit-${NODES}.trace.json`, JSON.stringify({ traceEvents: events }));
  }
  const flowNodes = await page.locator('.react-flow__node').count();
  const flowEdges = await page.locator('.react-flow__edge').count();
  console.log(
    JSON.stringify(
      {
        bench: 'uiProfile',
        nodes: NODES,
        flowNodes,
        flowEdges,
        loadavg1m: Math.round(loadavg()[0]! * 10) / 10,
        profiledEdit: { toMarkerMs: Math.round(profiledMs), longTasks: long1, measures: measures1 },
        cpu: summariseProfile(profile, await sourceMapper(profile.nodes.map((n) => n.callFrame.url))),
        tracedEdit: {
          toMarkerMs: Math.round(tracedMs),
          longTasks: long2,
          mainThread: summariseTrace(events),
        },
      },
      null,
      2,
    ),
  );
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
