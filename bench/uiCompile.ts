/**
 * P8 in Chromium (issue 5): a form edit -> the diagnostics (markers, list, preview: one compilation)
 * updated, on a generated ~500-object draft, and what the edit costs the main thread. Figures as
 * JSON, never assertions; not part of `npm test`.
 *
 *   node --import tsx bench/uiCompile.ts [--url http://127.0.0.1:3100] [--groups 100] [--edits 10]
 *
 * Without --url it starts scripts/e2e-server.sh (needs `next build`; port $E2E_PORT or 3100) and stops
 * it at the end; the server's draft is reset to the mesh directory afterwards. The draft is the one of
 * scripts/bench-ui-compile.ts (per group a VirtualService, Route, Target, Service and EndpointSlice;
 * 10 proxies). Each edit sets Route route-<groups/2>'s destination in the Inspector to a Target that
 * does not exist (errors: the route and what uses it are dropped) and back (the errors gone). Per edit, timed in the page from the
 * input event: `toDiagnosticsMs` until the error count shows it; `nextFrameMs` until the next frame
 * (how long typing would wait); `longestTaskMs` the longest main-thread task meanwhile.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { chromium, type Page } from '@playwright/test';
import { Document } from 'yaml';
import type { DraftDoc } from '../lib/console/draftDoc';
import { syntheticMesh } from './syntheticMesh';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const groups = Number(arg('groups') ?? 100);
const edits = Number(arg('edits') ?? 10);
const PROXIES = 10;

function draftOf(): DraftDoc {
  const snap = syntheticMesh({ services: groups, endpoints: groups * 4, proxies: PROXIES });
  const yaml = (o: unknown) => new Document(o).toString({ lineWidth: 0 });
  const files: Record<string, string> = {};
  for (let i = 0; i < groups; i++)
    files[`mesh-${i}.yaml`] = [
      snap.virtualServices[i],
      snap.routes[i],
      snap.targets[i],
      snap.services[i],
      snap.endpointSlices[i],
    ]
      .map(yaml)
      .join('---\n');
  files['pods.yaml'] = snap.pods.map(yaml).join('---\n');
  return { files, layout: {} };
}

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

async function mutate(page: Page, what: 'save' | 'reset', draft?: DraftDoc): Promise<void> {
  const status = await page.evaluate(
    async ({ what, draft }) => {
      const s = (await (await fetch('/api/session')).json()) as { csrfToken?: string };
      const headers = { 'content-type': 'application/json', 'x-csrf-token': s.csrfToken ?? '' };
      if (what === 'reset') return (await fetch('/api/draft/reset', { method: 'POST', headers })).status;
      const cur = (await (await fetch('/api/draft')).json()) as { revision: number };
      const body = JSON.stringify({ draft, baseRevision: cur.revision });
      return (await fetch('/api/draft', { method: 'PUT', headers, body })).status;
    },
    { what, draft },
  );
  if (status !== 200) throw new Error(`${what} the draft answered ${status}`);
}

interface EditFigures {
  toDiagnosticsMs: number;
  nextFrameMs: number;
  longestTaskMs: number;
}

/**
 * Sets the destination field in the page and waits until the error count differs from `base`
 * (`broken`) or is `base` again. Page code is a
 * string: tsx would wrap named functions in a helper the page does not have.
 */
const EDIT_IN_PAGE = `({ value, base, broken }) =>
  new Promise((resolve, reject) => {
    const input = document.querySelector('[data-field-path="spec.destination"] input[type="text"]');
    const count = document.querySelector('[data-testid="count-error"]');
    if (!input || !count) return reject(new Error('no destination field or error count'));
    let longest = 0;
    const tasks = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) longest = Math.max(longest, e.duration);
    });
    tasks.observe({ type: 'longtask' });
    let nextFrame;
    let toDiagnostics;
    const finish = () => {
      if (nextFrame === undefined || toDiagnostics === undefined) return;
      // Long tasks are reported after they end: let the last one arrive.
      setTimeout(() => {
        for (const e of tasks.takeRecords()) longest = Math.max(longest, e.duration);
        tasks.disconnect();
        resolve({ toDiagnosticsMs: toDiagnostics, nextFrameMs: nextFrame, longestTaskMs: longest });
      }, 50);
    };
    const timer = setTimeout(() => reject(new Error('the error count did not follow within 20 s')), 20000);
    const obs = new MutationObserver(() => {
      if ((count.textContent !== String(base)) !== broken) return;
      clearTimeout(timer);
      obs.disconnect();
      toDiagnostics = performance.now() - t0;
      finish();
    });
    obs.observe(count, { childList: true, characterData: true, subtree: true });
    Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set.call(input, value);
    const t0 = performance.now();
    input.dispatchEvent(new Event('input', { bubbles: true }));
    requestAnimationFrame(() => {
      nextFrame = performance.now() - t0;
      finish();
    });
  })`;

function edit(page: Page, value: string, base: number, broken: boolean): Promise<EditFigures> {
  return page.evaluate(
    `(${EDIT_IN_PAGE})(${JSON.stringify({ value, base, broken })})`,
  ) as Promise<EditFigures>;
}

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p: number) => Math.round(s[Math.min(s.length - 1, Math.floor(p * s.length))]! * 10) / 10;
  return { median: q(0.5), p95: q(0.95), max: q(1), n: s.length };
};

async function main() {
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
    await page.goto('/?token=e2e-token');
    await page.waitForFunction(
      () => document.querySelector('[data-testid="session-status"]')?.textContent === 'signed in',
    );
    const draft = draftOf();
    await mutate(page, 'save', draft);
    const route = `Route/default/route-${Math.floor(groups / 2)}`;
    await page.goto(`/?bench=p8#node=${encodeURIComponent(route)}`);
    const field = '[data-field-path="spec.destination"] input[type="text"]';
    await page.waitForSelector(field, { timeout: 120_000 });
    await page.waitForFunction(() => document.querySelector('[data-testid="count-error"]') !== null);
    const original = await page.inputValue(field);
    const base = Number(await page.textContent('[data-testid="count-error"]'));
    await page.waitForTimeout(1000);
    const runs: EditFigures[] = [];
    for (let k = 0; k < edits; k++) {
      runs.push(await edit(page, `${original}-nope`, base, true));
      runs.push(await edit(page, original, base, false));
    }
    await mutate(page, 'reset');
    const pick = (f: keyof EditFigures) => stats(runs.map((r) => r[f]));
    console.log(
      JSON.stringify({
        bench: 'ui-compile (P8)',
        objects: groups * 5 + PROXIES,
        files: Object.keys(draft.files).length,
        toDiagnosticsMs: pick('toDiagnosticsMs'),
        nextFrameMs: pick('nextFrameMs'),
        longestTaskMs: pick('longestTaskMs'),
      }),
    );
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

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
