/**
 * The console in Debian's Chromium on generated meshes (issue 5, goals P7 and P8), printed as one JSON
 * object. Figures, never assertions; not part of `npm test`.
 *
 *   node --import tsx bench/ui.ts [--url http://127.0.0.1:3100] [--token e2e-token] [--sizes 500,1000,5000]
 *     [--p8-max 1000] [--shots test-results] [--no-warmup] [--no-server-compile] [--one-file]
 *
 * --no-warmup turns off the compile worker's idle-time JIT warm-up (lib/console/jitWarmup.ts), for an A/B.
 * --no-server-compile: the console compiles the draft it opens itself, not showing the server's compile
 * of it first (GET /api/draft/compiled), for an A/B.
 * --one-file writes the generated mesh as one file of documents (`mesh.yaml`), as an exported mesh is,
 * instead of a file per group.
 *
 * Without --url it starts scripts/e2e-server.sh (needs `next build`; port $E2E_PORT or 3100) and stops
 * it at the end. Each mesh is the synthetic mesh of bench/syntheticMesh.ts (VirtualService -> Route ->
 * Target -> naked Service per group, one file per group), sized to about N graph nodes, saved as the
 * server's draft (PUT /api/draft); the server's draft is reset to the mesh directory at the end.
 *
 * Per size:
 * - P7 earlyPictureMs (when the server has laid out the draft's first view): navigation start -> the
 *   server's picture of it drawn by the page's inline script, before the app has loaded
 *   (components/console/earlyPicture.ts); the app's canvas replaces it at firstDrawnMs.
 * - P7 firstDrawnMs (300 nodes or more): navigation start -> the graph drawn on the far canvas, its
 *   nodes not yet mounted (components/console/farCanvas.ts: a large graph's first view is staged).
 *   mountedMs: -> every node mounted (the canvas hands over to the DOM).
 * - P7 firstNodesMs: navigation start -> the first graph node in the DOM (draft fetched, engine run,
 *   React Flow rendered; below 300 nodes they wait in a column until ELK places them).
 * - P7 reload: the same three figures for the console opened again on the same draft, its layout in
 *   the browser's storage (no ELK run): what opening an existing mesh costs. draftMs: the draft (and
 *   its files already read) arrived; compiledMs: the last compile before the graph was drawn rendered
 *   (none when the page showed the server's compile: earlyCompileMs, when it was shown);
 *   page: where the time before the draft went (the HTML's request and response, the scripts, the
 *   largest scripts and when each had loaded, DOMContentLoaded, the draft's own request).
 * - P7 layoutMs: the canvas saying "Laying out N nodes…" (N > 0: the draft's graph, not the empty
 *   one shown while the draft loads) -> that status cleared (the layout in its worker).
 * - P7 elk: the console's `meshdeck:layout` User Timing entries (components/console/layoutGraph.ts):
 *   request -> answer of each layout, where it was made (`source`: the browser's layout worker, or,
 *   before our layered layout, the server), which `algorithm` (ELK under 300 nodes, layeredLayout.ts
 *   from there) and its own time (elkMs or layeredMs); for a server layout, its Server-Timing
 *   (`server`: waitMs in the request, compileMs and layoutMs in the server's worker, totalMs from the
 *   server's start on it). The rest of layoutMs is waiting and drawing the laid-out nodes.
 * - P7 serverReady: the same first figures in a new browser context (no stored layout) opened once the
 *   server has the draft's first-view layout (`serverStatus` 200 from GET /api/layouts/<hash>): opening
 *   a large mesh the console already serves; `layouts` says where each layout came from.
 * - P7 laidOutMs: navigation start -> layout applied: the first view. Above 1,500 nodes the canvas
 *   starts grouped (namespace, then service), so this is the grouped view's; `grouped` says so.
 * - P7 expandMs (grouped only): a click on a collapsed group -> its frame and members laid out.
 * - P7 pan: requestAnimationFrame callbacks counted during a scripted mouse-drag pan of the pane;
 *   fps = frames / seconds, plus the longest gap between frames (bench/uiPan.ts). Where a pan frame's
 *   time goes: `bench/uiProfile.ts --pan`.
 * - P8 editToMarkerMs (sizes up to --p8-max): a form edit that makes a Route's destination dangle ->
 *   the error badge on its node (the same compilation feeds the markers, the list and the preview),
 *   and the edit back -> the badge gone. Timed inside the page, from the input event to the DOM change;
 *   each edit then waits --settle ms (1500) and reports the main thread's long tasks meanwhile
 *   (mainThreadBusyMs: what the edit cost the page, including a layout it set off). partsMedianMs: input
 *   -> compile asked, the trip to the worker, the worker's reply -> the main thread, the result's render.
 *   The markers come first: the canvas's own render of the new graph follows (a deferred render,
 *   components/console/useCanvasGraph.ts); canvasMs: input -> the canvas's nodes changed.
 * - P8 structural edit: the dangling destination adds a node (the missing Target) and an edge, and the
 *   fix removes them again, so each edit above changes the graph's structure. layoutDoneMs: input event
 *   -> the canvas status cleared (no layout running: every node has its place); layouts: the
 *   `meshdeck:layout` entries the edit set off (their node counts), i.e. whether it ran ELK at all.
 *   An edit waits past --settle for a layout still running (up to a minute). Layouts are cached by
 *   graph hash, so with a full layout per edit only the first edit of each direction pays for ELK.
 *   mainThreadBusyMs counts only long tasks: since a compile result renders in one task (flushSync in
 *   components/console/useCompiledDraft.ts) an edit is one task over 50 ms where it used to be several
 *   under it, so a lower busy figure before that change did not mean less work.
 *
 * Where an edit's time goes: bench/uiProfile.ts (CPU profile and trace of one edit).
 *
 * The first full run hung: the observer below, compiled by tsx with keepNames, called an `__name`
 * helper the page does not have, so it never recorded anything and the wait ran out (see the init
 * script in main). ELK's default layered options were slow as well (19-33 s for 5,000 nodes in Node);
 * the canvas now groups large graphs and lays out with cheaper options (components/console/layoutGraph.ts).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { type Browser, chromium, type Page } from '@playwright/test';
import { compileDraft } from '../lib/console/compileDraft';
import type { DraftDoc } from '../lib/console/draftDoc';
import { draftFirstView } from '../lib/console/draftFirstView';
import { syntheticDraft } from './syntheticMesh';
import { pan } from './uiPan';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const sizes = (arg('sizes') ?? '500,1000,5000').split(',').map(Number);
const token = arg('token') ?? 'e2e-token';
const PROXIES = 10;
const EDITS = 5;
const SETTLE_MS = Number(arg('settle') ?? 1500);
const P8_MAX = Number(arg('p8-max') ?? 1000);
const SHOTS = arg('shots');
const NO_WARMUP = process.argv.includes('--no-warmup');
const NO_SERVER_COMPILE = process.argv.includes('--no-server-compile');
/**
 * With --no-server-compile the page's inline draft script's request for the server's compile is
 * dropped before the console takes it (components/console/earlyDraft.ts), so the console compiles the
 * draft itself, as before it had the server's: an A/B. The request itself is still made.
 */
const DROP_SERVER_COMPILE = `(() => { let held; Object.defineProperty(window, '__meshdeckEarlyDraft', { configurable: true, get: () => held, set: (v) => { if (v) v.compiled = Promise.resolve(null); held = v; } }); })();`;
/** Every page of the bench runs with this before the console's scripts. */
const INIT = `window.__name = (f) => f;${NO_WARMUP ? " localStorage.setItem('meshdeck:jit-warmup', 'off');" : ''}${NO_SERVER_COMPILE ? DROP_SERVER_COMPILE : ''}`;

const ONE_FILE = process.argv.includes('--one-file');
const draftOf = (groups: number): DraftDoc => {
  const d = syntheticDraft(groups, PROXIES);
  return ONE_FILE ? { files: { 'mesh.yaml': Object.values(d.files).join('---\n') }, layout: d.layout } : d;
};
const t0 = performance.now();
/** Progress on stderr, so a run that stalls says where. */
const step = (what: string) =>
  console.error(`[bench:ui ${Math.round((performance.now() - t0) / 1000)} s] ${what}`);

/** Graph nodes per group, measured on a small draft (the graph is linear in the groups). */
function nodesPerGroup(): number {
  const g = 20;
  return (compileDraft(draftOf(g), { xds: false }).graph.nodes.length - PROXIES) / g;
}

async function startServer(): Promise<{ url: string; child?: ChildProcess }> {
  const given = arg('url');
  if (given) return { url: given };
  const port = process.env.E2E_PORT ?? '3100';
  const child = spawn('bash', ['scripts/e2e-server.sh'], {
    env: {
      ...process.env,
      E2E_PORT: port,
      // The server's own layouts start a while after the draft settles (not the e2e second): the
      // first open, the pan and P8 run without a server job beside them; serverReady waits for it.
      MESHDECK_SERVER_LAYOUT_LATER_MS: process.env.MESHDECK_SERVER_LAYOUT_LATER_MS ?? '30000',
    },
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

/** Records, in the page, when graph nodes first appear and when the layout status comes and goes. */
const OBSERVER = () => {
  const w = window as unknown as { __ui: Record<string, number> };
  w.__ui = {};
  const check = () => {
    const ui = w.__ui;
    if (ui.firstNodes === undefined && document.querySelector('.react-flow__node'))
      ui.firstNodes = performance.now();
    // A large graph's first view on the far canvas while its nodes mount (components/console/farCanvas.ts).
    const far = document.querySelector<HTMLElement>('[data-testid="canvas"]')?.dataset.farCanvas;
    if (far === 'staging' && ui.firstDrawn === undefined) ui.firstDrawn = performance.now();
    // The server's picture of the first view, drawn by the page before the app has loaded
    // (components/console/earlyPicture.ts): when it was drawn.
    const early = document.getElementById('meshdeck-early-picture');
    if (early && ui.earlyPicture === undefined) ui.earlyPicture = Number(early.dataset.drawnAt);
    if (ui.firstDrawn !== undefined && far !== 'staging' && ui.mounted === undefined)
      ui.mounted = performance.now();
    const status = document.querySelector('.canvas__status')?.textContent ?? '';
    const laying = /^Laying out (\d+)/.exec(status);
    if (laying && Number(laying[1]) > 0 && ui.layoutStart === undefined) {
      ui.layoutStart = performance.now();
      ui.layoutNodes = Number(laying[1]);
    }
    if (ui.layoutStart !== undefined && ui.laidOut === undefined && status === '')
      ui.laidOut = performance.now();
  };
  new MutationObserver(check).observe(document, {
    subtree: true,
    childList: true,
    characterData: true,
    attributes: true,
    attributeFilter: ['data-far-canvas'],
  });
};

async function saveDraft(page: Page, draft: DraftDoc): Promise<void> {
  const status = await page.evaluate(async (d) => {
    const s = (await (await fetch('/api/session')).json()) as { csrfToken?: string };
    const cur = (await (await fetch('/api/draft')).json()) as { revision: number };
    const r = await fetch('/api/draft', {
      method: 'PUT',
      headers: { 'content-type': 'application/json', 'x-csrf-token': s.csrfToken ?? '' },
      body: JSON.stringify({ draft: d, baseRevision: cur.revision }),
    });
    // The console opens on a draft the server has read, as it has after any save (the save reads it
    // in the background): the first view is timed from opening, not from importing.
    if (r.ok) await (await fetch('/api/draft?parsed=1')).arrayBuffer();
    return `${r.status} ${r.ok ? '' : await r.text()}`;
  }, draft);
  if (!status.startsWith('200')) throw new Error(`PUT /api/draft answered ${status}`);
}

/** Clicks a collapsed group in the page and times until its frame is there and laid out. */
async function expandGroup(page: Page): Promise<{ group: string; members: number; expandMs: number }> {
  return page.evaluate(
    () =>
      new Promise<{ group: string; members: number; expandMs: number }>((resolve, reject) => {
        const node = document.querySelector<HTMLElement>('.react-flow__node-meshGroup');
        const id = node?.getAttribute('data-id');
        if (!node || !id) return reject(new Error('no collapsed group on the canvas'));
        const members = Number(node.querySelector('[data-members]')?.getAttribute('data-members'));
        const t0 = performance.now();
        node.dispatchEvent(new MouseEvent('click', { bubbles: true, clientX: 1, clientY: 1 }));
        const poll = () => {
          const frame = document.querySelector(`[data-testid="group-frame-${CSS.escape(id)}"]`);
          const status = document.querySelector('.canvas__status')?.textContent ?? '';
          if (frame && status === '') resolve({ group: id, members, expandMs: performance.now() - t0 });
          else if (performance.now() - t0 > 60_000) reject(new Error(`group ${id} did not expand`));
          else requestAnimationFrame(poll);
        };
        requestAnimationFrame(poll);
      }),
  );
}

/**
 * Sets the Inspector's destination field in the page and waits for the node's error count to match;
 * then waits `SETTLE_MS` more (the layout of a changed structure lands then). `ms`: input event ->
 * marker; `busyMs`: the main thread's long tasks (> 50 ms) from the input event to the end of the
 * wait, which a loaded machine stretches less than wall time.
 */
async function editToMarker(
  page: Page,
  nodeId: string,
  value: string,
  errors: boolean,
): Promise<EditFigures> {
  return page.evaluate(
    ({ nodeId, value, errors, settle }) =>
      new Promise<EditFigures>((resolve, reject) => {
        const input = document.querySelector<HTMLInputElement>(
          '[data-field-path="spec.destination"] input[type="text"]',
        );
        const node = document.querySelector(`[data-testid="node-${CSS.escape(nodeId)}"]`);
        if (!input || !node) return reject(new Error(`no destination field or node ${nodeId}`));
        const done = () => (node.getAttribute('data-errors') !== '0') === errors;
        let busyMs = 0;
        const po = new PerformanceObserver((l) => l.getEntries().forEach((e) => (busyMs += e.duration)));
        po.observe({ type: 'longtask' });
        let ms = 0;
        let layoutDoneMs: number | undefined;
        // The canvas's nodes changing (the missing Target's node added or removed): the canvas renders
        // after the markers (components/console/useCanvasGraph.ts).
        let canvasMs: number | undefined;
        const nodesObs = new MutationObserver(() => {
          canvasMs ??= performance.now() - t0;
          nodesObs.disconnect();
        });
        nodesObs.observe(document.querySelector('.react-flow__nodes')!, { childList: true });
        // The status says "Laying out N nodes…" in the same render as the new graph's markers.
        const poll = () => {
          const status = document.querySelector('.canvas__status')?.textContent ?? '';
          if (ms && status === '') layoutDoneMs = performance.now() - t0;
          else if (performance.now() - t0 < 60_000) requestAnimationFrame(poll);
        };
        const obs = new MutationObserver(() => {
          if (!done()) return;
          obs.disconnect();
          ms = performance.now() - t0;
          requestAnimationFrame(poll);
          // Settle, and longer if a layout is still running (up to the minute).
          const finish = () => {
            if (layoutDoneMs === undefined && performance.now() - t0 < 60_000) return setTimeout(finish, 100);
            po.disconnect();
            nodesObs.disconnect();
            const layouts = performance
              .getEntriesByName('meshdeck:layout')
              .filter((m) => m.startTime >= t0)
              .map((m) => ((m as PerformanceMeasure).detail as { nodes?: number } | null)?.nodes ?? 0);
            // The compile worker's own time for this edit (useCompiledDraft's `meshdeck:compile`).
            const compile = performance.getEntriesByName('meshdeck:compile').find((m) => m.startTime >= t0);
            const detail = ((compile as PerformanceMeasure | undefined)?.detail ?? {}) as Record<
              string,
              number | undefined
            >;
            resolve({
              ms,
              busyMs,
              layoutDoneMs: layoutDoneMs ?? NaN,
              canvasMs: canvasMs ?? NaN,
              layouts,
              workerMs: detail.workerMs ?? NaN,
              parts: {
                askedMs: compile ? compile.startTime - t0 : NaN,
                toWorkerMs: detail.toWorkerMs ?? NaN,
                fromWorkerMs: detail.fromWorkerMs ?? NaN,
                renderMs: detail.renderMs ?? NaN,
              },
            });
          };
          setTimeout(finish, settle);
        });
        obs.observe(node, { attributes: true, attributeFilter: ['data-errors'] });
        // React reads a controlled input's value through the native setter and an input event.
        Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')!.set!.call(input, value);
        const t0 = performance.now();
        input.dispatchEvent(new Event('input', { bubbles: true }));
      }),
    { nodeId, value, errors, settle: SETTLE_MS },
  );
}

interface EditFigures {
  ms: number;
  busyMs: number;
  layoutDoneMs: number;
  /** Input event -> the canvas's nodes changed (the edit adds or removes a node). */
  canvasMs: number;
  layouts: number[];
  workerMs: number;
  /** Where the edit's time went (useCompiledDraft's `meshdeck:compile`): input -> compile asked, the trips to and from the worker, the result's render. */
  parts: Record<'askedMs' | 'toWorkerMs' | 'fromWorkerMs' | 'renderMs', number>;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.floor(s.length / 2)]! * 10) / 10;
};

/**
 * The first figures of a console just opened (the __ui marks of OBSERVER) once its first view is
 * complete, and where its time went: the draft's arrival, then the compile that rendered last before
 * the graph was drawn (User Timing of components/console/queries.ts and useCompiledDraft.ts).
 */
async function openedFigures(page: Page) {
  await page.waitForFunction(
    () => {
      const u = (window as unknown as { __ui: Record<string, number | undefined> }).__ui;
      const far = document.querySelector<HTMLElement>('[data-testid="canvas"]')?.dataset.farCanvas;
      return u.firstNodes !== undefined && u.firstDrawn !== undefined
        ? u.mounted !== undefined
        : !far && u.firstNodes !== undefined;
    },
    null,
    { timeout: 120_000, polling: 100 },
  );
  const again = await page.evaluate(() => (window as unknown as { __ui: Record<string, number> }).__ui);
  const stages = await page.evaluate((drawn) => {
    const draft = performance.getEntriesByName('meshdeck:draft').at(-1)?.startTime;
    const early = performance.getEntriesByName('meshdeck:early-compile').at(-1)?.startTime;
    const compiles = performance
      .getEntriesByName('meshdeck:compile')
      .filter((m) => m.startTime + m.duration <= (drawn ?? Infinity));
    const last = compiles.at(-1);
    const layouts = performance
      .getEntriesByName('meshdeck:layout')
      .map((m) => ((m as PerformanceMeasure).detail as { source?: string } | null)?.source ?? 'browser');
    // Where the time before the draft went: the page, its scripts, the draft's request.
    // In the page: the browser's Performance, not the perf_hooks one this file imports.
    const perf = performance as unknown as Performance;
    const nav = perf.getEntriesByType('navigation')[0] as PerformanceNavigationTiming | undefined;
    const resources = perf.getEntriesByType('resource') as PerformanceResourceTiming[];
    const scripts = resources.filter((r) => r.initiatorType === 'script' || r.name.endsWith('.js'));
    const draftFetch = resources.find((r) => new URL(r.name).pathname === '/api/draft');
    const compiledFetch = resources.find((r) => new URL(r.name).pathname === '/api/draft/compiled');
    const ms = (x: number | undefined) => (x === undefined ? undefined : Math.round(x));
    const scriptTiming = (r: PerformanceResourceTiming) => ({
      name: new URL(r.name).pathname.split('/').pop(),
      kB: Math.round(r.decodedBodySize / 1024),
      initiator: r.initiatorType,
      requestedMs: Math.round(r.startTime),
      loadedMs: Math.round(r.responseEnd),
    });
    return {
      draftMs: draft === undefined ? undefined : Math.round(draft),
      compiledMs: last ? Math.round(last.startTime + last.duration) : undefined,
      earlyCompileMs: early === undefined ? undefined : Math.round(early),
      layouts,
      page: {
        htmlRequestMs: ms(nav?.requestStart),
        htmlResponseStartMs: ms(nav?.responseStart),
        htmlMs: ms(nav?.responseEnd),
        scriptsLoadedMs: ms(Math.max(0, ...scripts.map((r) => r.responseEnd))),
        scriptKB: Math.round(scripts.reduce((a, r) => a + (r.decodedBodySize || 0), 0) / 1024),
        // The largest scripts, when each was asked for and finished loading (its evaluation comes after).
        largestScripts: [...scripts]
          .sort((a, b) => b.decodedBodySize - a.decodedBodySize)
          .slice(0, 6)
          .map(scriptTiming),
        // The scripts that finished loading last (a worker's script comes when the app starts the worker).
        lastScripts: [...scripts]
          .sort((a, b) => b.responseEnd - a.responseEnd)
          .slice(0, 3)
          .map(scriptTiming),
        domContentLoadedMs: ms(nav?.domContentLoadedEventEnd),
        draftRequestMs: ms(draftFetch?.startTime),
        draftResponseStartMs: ms(draftFetch?.responseStart),
        draftResponseEndMs: ms(draftFetch?.responseEnd),
        compiledRequestMs: ms(compiledFetch?.startTime),
        compiledResponseEndMs: ms(compiledFetch?.responseEnd),
      },
    };
  }, again.firstDrawn ?? again.firstNodes);
  return {
    ...stages,
    earlyPictureMs: again.earlyPicture,
    firstDrawnMs: again.firstDrawn === undefined ? undefined : Math.round(again.firstDrawn),
    firstNodesMs: Math.round(again.firstNodes!),
    mountedMs: again.mounted === undefined ? undefined : Math.round(again.mounted),
  };
}

/**
 * Opens the console on the saved draft in a new browser context (empty storage) once the server has
 * the draft's first-view layout (GET /api/layouts/<hash> answers 200; it waits while one is made).
 */
async function openFresh(browser: Browser, url: string, n: number, groups: number) {
  const draft = draftOf(groups);
  const hash = draftFirstView(draft, { localMesh: true })?.hash;
  // 404 until the server starts on it (a while after the draft settled), then it waits for the job.
  let serverStatus: number | undefined;
  for (let i = 0; hash && i < 180 && serverStatus !== 200; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 500));
    serverStatus = (await fetch(`${url}/api/layouts/${hash}`)).status;
  }
  const context = await browser.newContext({ baseURL: url, viewport: { width: 1600, height: 900 } });
  try {
    const page = await context.newPage();
    await page.addInitScript({ content: INIT });
    await page.addInitScript(OBSERVER);
    await page.goto(`/?bench=${n}&fresh=1`);
    return { serverStatus, ...(await openedFigures(page)) };
  } finally {
    await context.close();
  }
}

async function main() {
  const perGroup = nodesPerGroup();
  const { url, child } = await startServer();
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'],
  });
  const results: Record<string, unknown>[] = [];
  try {
    const context = await browser.newContext({ baseURL: url, viewport: { width: 1600, height: 900 } });
    const page = await context.newPage();
    // tsx compiles this file with keepNames: functions passed to the page call its `__name` helper,
    // which the page lacks. Without this the observer threw at once and the first run waited 300 s
    // for a layout it could never see.
    await page.addInitScript({ content: INIT });
    await page.addInitScript(OBSERVER);
    await page.goto('/?token=' + encodeURIComponent(token));
    await page.waitForFunction(
      () => document.querySelector('[data-testid="session-status"]')?.textContent === 'signed in',
    );
    for (const n of sizes) {
      const groups = Math.max(1, Math.round((n - PROXIES) / perGroup));
      step(`${n} nodes: saving the draft (${groups} groups)`);
      const loadAtStart = loadavg().map((l) => Math.round(l * 10) / 10);
      const saveStart = performance.now();
      await saveDraft(page, draftOf(groups));
      const saveMs = performance.now() - saveStart;
      step(`${n} nodes: opening the console`);
      const route = `Route/default/route-${Math.floor(groups / 2)}`;
      // A deep link selects the Route, so its form is in the Inspector for P8; the query makes it a
      // new document (a hash change alone would not load the page again).
      await page.goto(`/?bench=${n}#node=${encodeURIComponent(route)}`);
      try {
        await page.waitForFunction(
          () => (window as unknown as { __ui: { laidOut?: number } }).__ui.laidOut,
          null,
          { timeout: Number(arg('layout-timeout') ?? 300_000), polling: 200 },
        );
      } catch (e) {
        const state = await page.evaluate(() => ({
          ui: (window as unknown as { __ui: unknown }).__ui,
          status: document.querySelector('.canvas__status')?.textContent,
          save: document.querySelector('[data-testid="save-status"]')?.textContent,
          nodes: document.querySelectorAll('.react-flow__node').length,
        }));
        throw new Error(`${n} nodes: not laid out (${JSON.stringify(state)}): ${(e as Error).message}`);
      }
      step(`${n} nodes: laid out`);
      // A staged first view hands over to the DOM once every node is mounted; the pan waits for that.
      await page.waitForFunction(
        () => !document.querySelector<HTMLElement>('[data-testid="canvas"]')?.dataset.farCanvas,
        null,
        { timeout: 120_000, polling: 100 },
      );
      const ui = await page.evaluate(() => (window as unknown as { __ui: Record<string, number> }).__ui);
      const elk = await page.evaluate(() =>
        performance.getEntriesByName('meshdeck:layout').map((m) => {
          const d = (m as PerformanceMeasure).detail as {
            nodes?: number;
            algorithm?: string;
            elkMs?: number;
            layeredMs?: number;
            toWorkerMs?: number;
            fromWorkerMs?: number;
            source?: string;
          } | null;
          const res = performance
            .getEntriesByType('resource')
            .filter((r) => r.name.includes('/api/layouts/'))
            .at(-1) as unknown as { serverTiming: { name: string; duration: number }[] } | undefined;
          const server =
            d?.source === 'server' && res
              ? Object.fromEntries(res.serverTiming.map((t) => [`${t.name}Ms`, Math.round(t.duration)]))
              : undefined;
          return {
            nodes: d?.nodes,
            source: d?.source,
            ms: Math.round(m.duration),
            ...(d?.algorithm === undefined ? {} : { algorithm: d.algorithm }),
            ...(d?.elkMs === undefined ? {} : { elkMs: Math.round(d.elkMs) }),
            ...(d?.layeredMs === undefined ? {} : { layeredMs: Math.round(d.layeredMs) }),
            ...(d?.toWorkerMs === undefined ? {} : { toWorkerMs: Math.round(d.toWorkerMs) }),
            ...(d?.fromWorkerMs === undefined ? {} : { fromWorkerMs: Math.round(d.fromWorkerMs) }),
            ...(server ? { server } : {}),
          };
        }),
      );
      const nodes = await page.locator('.react-flow__node').count();
      const edges = await page.locator('.react-flow__edge').count();
      const summary = await page.getByTestId('group-summary').textContent();
      const groupNodes = await page.locator('.react-flow__node-meshGroup').count();
      await page.waitForTimeout(500);
      if (SHOTS) await page.screenshot({ path: `${SHOTS}/bench-ui-${n}.png` });
      step(`${n} nodes: panning`);
      const panned = await pan(page);
      let expand: Awaited<ReturnType<typeof expandGroup>> | undefined;
      if (groupNodes > 0) {
        // d3-zoom swallows a click that follows a drag too closely; the pan just ended.
        await page.waitForTimeout(1000);
        expand = await expandGroup(page);
        expand.expandMs = Math.round(expand.expandMs);
        await page.waitForTimeout(500);
        if (SHOTS) await page.screenshot({ path: `${SHOTS}/bench-ui-${n}-expanded.png` });
      }
      let p8: Record<string, unknown> | undefined;
      if (n <= P8_MAX) {
        step(`${n} nodes: P8 edits`);
        await page.waitForSelector('[data-field-path="spec.destination"] input[type="text"]');
        const original = await page.inputValue('[data-field-path="spec.destination"] input[type="text"]');
        const toMarker: EditFigures[] = [];
        const back: EditFigures[] = [];
        for (let k = 0; k < EDITS; k++) {
          toMarker.push(await editToMarker(page, route, `${original}-nope`, true));
          if (SHOTS && k === 0) await page.screenshot({ path: `${SHOTS}/bench-ui-${n}-edited.png` });
          back.push(await editToMarker(page, route, original, false));
        }
        const figures = (xs: EditFigures[]) => ({
          median: median(xs.map((x) => x.ms)),
          all: xs.map((x) => Math.round(x.ms)),
          mainThreadBusyMs: {
            median: median(xs.map((x) => x.busyMs)),
            all: xs.map((x) => Math.round(x.busyMs)),
          },
          layoutDoneMs: {
            median: median(xs.map((x) => x.layoutDoneMs)),
            all: xs.map((x) => Math.round(x.layoutDoneMs)),
          },
          canvasMs: { median: median(xs.map((x) => x.canvasMs)), all: xs.map((x) => Math.round(x.canvasMs)) },
          layouts: xs.map((x) => x.layouts),
          // The engine's part in the compile worker (see --no-warmup).
          workerMs: { median: median(xs.map((x) => x.workerMs)), all: xs.map((x) => Math.round(x.workerMs)) },
          partsMedianMs: Object.fromEntries(
            (['askedMs', 'toWorkerMs', 'fromWorkerMs', 'renderMs'] as const).map((k) => [
              k,
              median(xs.map((x) => x.parts[k])),
            ]),
          ),
        });
        p8 = {
          objects: groups * 5 + PROXIES,
          settleMs: SETTLE_MS,
          editToMarkerMs: figures(toMarker),
          fixToMarkerGoneMs: figures(back),
        };
      }
      // The console opened again on the same draft: its layout is in the browser's storage (no ELK).
      step(`${n} nodes: reloading`);
      await page.goto(`/?bench=${n}&reload=1`);
      const reload = await openedFigures(page);
      // A browser that never opened this draft (no stored layout), once the server has laid it out:
      // opening a large mesh the console already serves (server/console/DraftLayouts.ts).
      step(`${n} nodes: a fresh browser, the server's layout ready`);
      const serverReady = await openFresh(browser, url, n, groups);
      const result = {
        requestedNodes: n,
        groups,
        graphNodes: Math.round(groups * perGroup + PROXIES),
        canvas: { summary, grouped: groupNodes > 0, flowNodes: nodes, groupNodes, flowEdges: edges },
        draftBytes: JSON.stringify(draftOf(groups)).length,
        saveDraftMs: Math.round(saveMs),
        p7: {
          earlyPictureMs: ui.earlyPicture,
          firstDrawnMs: ui.firstDrawn === undefined ? undefined : Math.round(ui.firstDrawn),
          firstNodesMs: Math.round(ui.firstNodes!),
          mountedMs: ui.mounted === undefined ? undefined : Math.round(ui.mounted),
          layoutMs: Math.round(ui.laidOut! - ui.layoutStart!),
          layoutNodes: ui.layoutNodes,
          laidOutMs: Math.round(ui.laidOut!),
          elk,
          pan: panned,
          reload,
          serverReady,
          ...(expand ? { expand } : {}),
        },
        ...(p8 ? { p8 } : {}),
      };
      results.push({
        ...result,
        loadavgAtStart: loadAtStart,
        loadavg1m: Math.round(loadavg()[0]! * 10) / 10,
      });
      // Progress, in case a bigger mesh does not finish.
      console.error(JSON.stringify(result));
    }
    // Leave the server's draft as the mesh directory has it.
    await page.evaluate(async () => {
      const s = (await (await fetch('/api/session')).json()) as { csrfToken?: string };
      await fetch('/api/draft/reset', { method: 'POST', headers: { 'x-csrf-token': s.csrfToken ?? '' } });
    });
  } finally {
    await browser.close();
    if (child?.pid) {
      // The script's process group: it stops meshdeck serve and removes its temp dir on SIGTERM.
      const exited = new Promise((r) => child.once('exit', r));
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        // Already gone.
      }
      if (child.exitCode === null) await exited;
    }
  }
  console.log(
    JSON.stringify(
      {
        bench: 'ui',
        browser: 'chromium (Debian)',
        viewport: '1600x900',
        jitWarmup: !NO_WARMUP,
        // Figures from a shared machine swing with its load; this says how loaded it was.
        cpus: cpus().length,
        loadavg1mAtEnd: Math.round(loadavg()[0]! * 10) / 10,
        nodesPerGroup: perGroup,
        results,
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
