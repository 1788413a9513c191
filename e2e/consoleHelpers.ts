/**
 * Shared by the console's browser tests that run on scripts/e2e-server.sh (seed Example 1, token
 * e2e-token): sign-in with a fresh draft, and the checks every test ends with.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, type Locator, type Page, test } from '@playwright/test';
import type { DraftDoc } from '../lib/console/draftDoc';

export const ORIGIN = 'http://127.0.0.1:3100';
export const SHOTS = 'test-results';

/**
 * Fails a test whose page logs an error or sends a request off the origin (the console must work
 * offline). Call once at the top of a spec file; `origin` is the server the spec runs on; `allow`:
 * errors the spec provokes on purpose (Chromium logs every 4xx answer, a refusal the test expects too).
 */
export function guardPage(origin: string = ORIGIN, allow: readonly RegExp[] = []): void {
  let consoleErrors: string[] = [];
  let offOrigin: string[] = [];
  test.beforeEach(async ({ page }) => {
    consoleErrors = [];
    offOrigin = [];
    page.on('console', (msg) => {
      if (msg.type() === 'error' && !allow.some((r) => r.test(msg.text()))) consoleErrors.push(msg.text());
    });
    page.on('pageerror', (err) => consoleErrors.push(`pageerror: ${err.message}`));
    page.on('request', (req) => {
      const url = req.url();
      if (url.startsWith('data:') || url.startsWith('blob:')) return;
      if (new URL(url).origin !== origin) offOrigin.push(url);
    });
  });
  test.afterEach(() => {
    expect(consoleErrors).toEqual([]);
    expect(offOrigin).toEqual([]);
  });
}

/**
 * Resets the server's draft to the mesh directory's files (a session's mutation, with its CSRF token),
 * once the console's own save of the last edit has landed: a save still on its way would carry the
 * older base revision and meet a 409 that Chromium logs as an error.
 */
export async function resetDraft(page: Page): Promise<void> {
  const save = page.getByTestId('save-status');
  if ((await save.count()) > 0) await expect(save).toHaveClass(/save-status--saved/);
  const status = await page.evaluate(async () => {
    const s = (await (await fetch('/api/session')).json()) as { csrfToken: string };
    const r = await fetch('/api/draft/reset', { method: 'POST', headers: { 'x-csrf-token': s.csrfToken } });
    return r.status;
  });
  expect(status).toBe(200);
}

/** Applies the server's draft as it is (force: the directory may have moved), as the console's Apply does. */
export async function applyDraftNow(page: Page): Promise<number> {
  return page.evaluate(async () => {
    const s = (await (await fetch('/api/session')).json()) as { csrfToken: string };
    const { revision } = (await (await fetch('/api/draft')).json()) as { revision: number };
    const r = await fetch('/api/apply', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-csrf-token': s.csrfToken },
      body: JSON.stringify({ revision, force: true }),
    });
    return r.status;
  });
}

/** Saves `draft` as the server's draft over the current revision; the response status. */
export async function putDraft(page: Page, draft: DraftDoc): Promise<number> {
  return page.evaluate(async (d) => {
    const s = (await (await fetch('/api/session')).json()) as { csrfToken: string };
    const cur = (await (await fetch('/api/draft')).json()) as { revision: number };
    const r = await fetch('/api/draft', {
      method: 'PUT',
      headers: { 'content-type': 'application/json', 'x-csrf-token': s.csrfToken },
      body: JSON.stringify({ draft: d, baseRevision: cur.revision }),
    });
    return r.status;
  }, draft);
}

/** Signs in with the token URL, resets the draft to the mesh directory's files and waits for the layout. */
export async function openConsole(page: Page, firstNode: string): Promise<void> {
  await page.goto('/?token=e2e-token');
  await expect(page.getByTestId('session-status')).toHaveText('signed in');
  await resetDraft(page);
  await page.reload();
  await expect(page.getByTestId('save-status')).toContainText('Saved');
  await expect(page.getByTestId(`node-${firstNode}`)).toBeVisible();
  await expect(page.locator('.canvas__status')).toHaveText('');
}

/** Sets a port in the Inspector form of a node and waits until the draft is saved on the server. */
export async function setPort(page: Page, node: string, field: string, port: string): Promise<void> {
  await page.getByTestId(`node-${node}`).click();
  await page.getByTestId('tab-inspector').click();
  await page.locator(`[data-field-path="${field}"] input`).fill(port);
  await expect(page.getByTestId(`node-${node}`)).toContainText(`:${port}`);
  await expect(page.getByTestId('save-status')).toContainText('Saved');
}

/**
 * Records the page's requests for a draft (`/api/draft`, by query string) until `stop()`, which
 * returns them: a load asks once, by the page's inline script (components/console/earlyDraft.ts),
 * and the console takes that answer instead of asking again.
 */
export function recordDraftRequests(page: Page): { stop(): string[] } {
  const seen: string[] = [];
  const onRequest = (r: { url(): string }) => {
    const url = new URL(r.url());
    if (url.pathname === '/api/draft') seen.push(url.search);
  };
  page.on('request', onRequest);
  return {
    stop: () => {
      page.off('request', onRequest);
      return seen;
    },
  };
}

/**
 * Where a node is on the canvas, to poll for: 'centred' when it is in the pane's middle half at a
 * readable zoom (wider than 120 px: a node is 184 px at zoom 1), else how far off and how wide it is.
 */
export async function centring(page: Page, node: Locator): Promise<string> {
  const pane = await page.locator('.react-flow').boundingBox();
  const box = await node.boundingBox();
  if (!pane || !box) return 'not on the page';
  const dx = Math.abs(box.x + box.width / 2 - (pane.x + pane.width / 2));
  const dy = Math.abs(box.y + box.height / 2 - (pane.y + pane.height / 2));
  return dx < pane.width / 4 && dy < pane.height / 4 && box.width > 120
    ? 'centred'
    : `${Math.round(dx)}, ${Math.round(dy)} px off the centre, ${Math.round(box.width)} px wide`;
}

/** The UDP port the real gateway proxy's first listener runs on now (its l7mp REST API, read by the server). */
export async function gatewayPort(page: Page): Promise<number | null> {
  return page.evaluate(async () => {
    const r = await fetch(`/api/proxies/${encodeURIComponent('default/gateway-0')}/live`);
    if (!r.ok) return null;
    const { config } = (await r.json()) as { config: { listeners: { spec: { port?: number } }[] } };
    return config.listeners[0]?.spec.port ?? null;
  });
}

/** Replaces text in a draft file through Monaco's own Find/Replace (as a person would). */
export async function replaceInYaml(page: Page, file: string, pairs: [string, string][]): Promise<void> {
  await page.getByTestId('tab-yaml').click();
  await page.getByTestId('yaml-file').selectOption(file);
  const editor = page.getByTestId('yaml-editor').locator('.monaco-editor');
  await expect(editor).toBeVisible();
  await editor.locator('.view-lines').click();
  await page.keyboard.press('Control+H');
  for (const [from, to] of pairs) {
    await editor.locator('textarea[aria-label="Find"]').fill(from);
    await editor.locator('textarea[aria-label="Replace"]').fill(to);
    await editor.locator('[aria-label^="Replace All"]').click();
  }
  await page.keyboard.press('Escape');
}

/** A draft file's text as the server holds it. */
export async function draftFile(page: Page, file: string): Promise<string> {
  return page.evaluate(async (f) => {
    const d = (await (await fetch('/api/draft')).json()) as { draft: { files: Record<string, string> } };
    return d.draft.files[f] ?? '';
  }, file);
}

/** Commits `edit` of seed Example 1's mesh.yaml to main of the repository at `remoteGit`, as someone else. */
export function commitOnMain(remoteGit: string, message: string, edit: (text: string) => string): void {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'md-e2e-git-'));
  const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: dir, LC_ALL: 'C' };
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, env, encoding: 'utf8' });
  try {
    git('clone', '--quiet', remoteGit, 'w');
    const file = path.join(dir, 'w', 'examples', 'seed-example-1', 'mesh.yaml');
    writeFileSync(file, edit(readFileSync(file, 'utf8')));
    const w = (...args: string[]) =>
      execFileSync('git', ['-C', path.join(dir, 'w'), ...args], { env, encoding: 'utf8' });
    w('-c', 'user.name=Carol', '-c', 'user.email=carol@example.com', 'commit', '-qam', message);
    w('push', '--quiet', 'origin', 'main');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The gateway proxy's sessions of its `gateway` listener (probe flows), or 'not listed' (l7mp's 422). */
export async function gatewayProbeSessions(page: Page): Promise<number | 'not listed'> {
  return page.evaluate(async () => {
    const s = (await (await fetch('/api/state')).json()) as {
      proxies: Record<string, { sessions: { available: boolean; items?: { listener?: string }[] } }>;
    };
    const sessions = s.proxies['default/gateway-0']?.sessions;
    return sessions?.available
      ? sessions.items!.filter((x) => x.listener?.startsWith('gateway.default.')).length
      : 'not listed';
  });
}

/**
 * The canary example loaded into the draft and applied through the console. Its gateway's listener gets
 * removeOrphanSessions, so that putting back what ran deletes it with the sessions of a test's probes:
 * l7mp keeps a plain-deleted listener's sessions, and console.spec.ts's canary test, later on this
 * server, counts the sessions through a listener of the same name.
 */
export async function applyCanaryExample(page: Page): Promise<void> {
  const canary = page.getByTestId('node-Target/default/echo-canary');
  await page.getByTestId('import').click();
  await page.getByTestId('example-canary').click();
  await expect(canary).toBeVisible();
  await expect(page.getByTestId('save-status')).toContainText('Saved');
  const example = (await page.evaluate(async () => (await fetch('/api/draft')).json())) as {
    draft: DraftDoc;
  };
  const mesh = example.draft.files['mesh.yaml']!;
  expect(mesh).toContain('  udp: { port: 9100 }\n');
  const files = {
    ...example.draft.files,
    'mesh.yaml': mesh.replace(
      '  udp: { port: 9100 }\n',
      '  udp: { port: 9100 }\n  options: { removeOrphanSessions: true }\n',
    ),
  };
  expect(await putDraft(page, { ...example.draft, files })).toBe(200);
  await page.reload();
  await expect(page.getByTestId('save-status')).toContainText('Saved');
  await expect(canary).toBeVisible();
  await page.getByTestId('apply').click();
  await expect(page.getByTestId('apply-result')).toContainText('in sync', { timeout: 60_000 });
  await page.getByRole('button', { name: 'Close the apply panel' }).click();
  await expect(canary).toContainText('split 80/20');
}
