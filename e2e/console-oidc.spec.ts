/**
 * OIDC sign-in end to end: a real Chromium signs in to a real console (`meshdeck serve`, spawned here
 * on a free port with an empty mesh, its own state directory and no xDS) through a REAL OpenID
 * Provider (oidc-provider, started in this worker by server/console/oidcTestProvider.ts with its login
 * form): the provider's login form, back in the console with the user's name in the toolbar, a
 * mutation (a new draft), sign-out that ends the session at the provider too, and the readable page
 * a failed callback shows (with the provider's words escaped).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, type Page, test } from '@playwright/test';
import { startTestProvider, type TestProvider } from '../server/console/oidcTestProvider';
import { SHOTS } from './consoleHelpers';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const PROVIDER_NAME = 'Test OP';
const LOGIN_PATH = '/api/auth/oidc/login';

let op: TestProvider;
let server: ChildProcess | undefined;
let serverLog = '';
let tmp = '';
let origin = '';

/** A port no one listens on now (the kernel's choice), for the spawned console. */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve, reject) => {
    s.once('error', reject);
    s.listen(0, '127.0.0.1', resolve);
  });
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

/** Polls `url` until it answers 200, the server exits, or `ms` pass. */
async function waitHealthy(url: string, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (server?.exitCode !== null) throw new Error(`meshdeck serve exited early:\n${serverLog}`);
    try {
      if ((await fetch(url, { signal: AbortSignal.timeout(2000) })).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`meshdeck serve did not answer ${url} within ${ms} ms:\n${serverLog}`);
}

/** Stops the spawned console (its whole process group), SIGKILL if it does not stop in time. */
async function stopServer(): Promise<void> {
  const child = server;
  if (!child?.pid || child.exitCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  process.kill(-child.pid, 'SIGTERM');
  const timer = setTimeout(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // gone already
    }
  }, 15_000);
  await exited;
  clearTimeout(timer);
}

test.describe.configure({ mode: 'serial' });
test.setTimeout(90_000);

test.beforeAll(async () => {
  test.setTimeout(120_000);
  tmp = await mkdtemp(path.join(os.tmpdir(), 'md-e2e-oidc-'));
  const port = await freePort();
  origin = `http://127.0.0.1:${port}`;
  op = await startTestProvider([`${origin}/api/auth/oidc/callback`], {
    loginForm: true,
    postLogoutRedirectUris: [`${origin}/`],
  });
  const secretFile = path.join(tmp, 'client-secret');
  await writeFile(secretFile, `${op.clientSecret}\n`, { mode: 0o600 });
  // An empty mesh: no proxies, so no fixed ports; a private state directory.
  const meshDir = path.join(tmp, 'mesh');
  await mkdir(meshDir);
  server = spawn(
    process.execPath,
    [
      'bin/meshdeck.mjs',
      'serve',
      meshDir,
      '--port',
      String(port),
      '--no-xds',
      '--token',
      'oidc-e2e-token',
      '--oidc-issuer',
      op.issuer,
      '--oidc-client-id',
      op.clientId,
      '--oidc-client-secret-file',
      secretFile,
      '--oidc-redirect-url',
      `${origin}/api/auth/oidc/callback`,
      '--oidc-provider-name',
      PROVIDER_NAME,
    ],
    {
      cwd: ROOT,
      env: { ...process.env, MESHDECK_STATE_DIR: path.join(tmp, 'state'), NEXT_TELEMETRY_DISABLED: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group: afterAll stops it and anything it started.
      detached: true,
    },
  );
  const log = (b: Buffer) => void (serverLog = (serverLog + b.toString('utf8')).slice(-20_000));
  server.stdout!.on('data', log);
  server.stderr!.on('data', log);
  await waitHealthy(`${origin}/api/health`, 90_000);
});

test.afterAll(async () => {
  await stopServer();
  await op?.close();
  if (tmp) await rm(tmp, { recursive: true, force: true });
  // What the console printed, for a failure's diagnosis (it carries no secret: checked below).
  await writeFile(`${SHOTS}/console-oidc-server.log`, serverLog);
  // The client secret must not show up in what the console printed.
  if (op) expect(serverLog).not.toContain(op.clientSecret);
});

/** Page errors, and console errors other than the status line of a page answered with an error. */
function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(m.text());
  });
  page.on('request', (r) => {
    const o = new URL(r.url()).origin;
    if (!r.url().startsWith('data:') && o !== origin && o !== op.issuer)
      errors.push(`off-origin: ${r.url()}`);
  });
  return errors;
}

async function signInAtProvider(page: Page, user: string, password: string): Promise<void> {
  await page.getByLabel('User name').fill(user);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

test('signs in through the OpenID Provider, makes a draft, and signs out at the console and the provider', async ({
  page,
}) => {
  const errors = watchErrors(page);
  await page.goto(`${origin}/`);
  await expect(page.getByTestId('session-status')).toHaveText('read-only');
  const signIn = page.getByTestId('oidc-sign-in');
  await expect(signIn).toHaveText(`Sign in with ${PROVIDER_NAME}`);
  await signIn.click();

  // The provider's own login form; a wrong password is refused there.
  await expect(page).toHaveURL(new RegExp(`^${op.issuer}/interaction/`));
  await expect(page.getByRole('heading', { name: 'Sign in to the test provider' })).toBeVisible();
  await page.screenshot({ path: `${SHOTS}/console-oidc-provider-login.png` });
  await signInAtProvider(page, 'alice', 'not-her-password');
  await expect(page.getByRole('alert')).toHaveText('Wrong user name or password.');
  await signInAtProvider(page, 'alice', op.accounts.alice!.password);

  // Back in the console, signed in as alice (no consent screen: a first-party client).
  await expect(page).toHaveURL(`${origin}/`);
  await expect(page.getByTestId('session-user')).toHaveText('alice@example.com');
  await expect(page.getByTestId('session-user')).toHaveAttribute('title', 'groups: meshdeck-admins, dev');
  await expect(page.getByTestId('sign-out')).toBeVisible();
  await expect(page.getByTestId('save-status')).toContainText('Saved');
  await page.screenshot({ path: `${SHOTS}/console-oidc-signed-in.png` });

  // A mutation through the UI with the OIDC session (cookie + CSRF token): a new draft.
  const name = `OIDC draft ${Date.now()}`;
  await page.getByTestId('draft-new').click();
  const dialog = page.getByTestId('draft-dialog');
  await dialog.getByTestId('draft-name').fill(name);
  await dialog.getByTestId('draft-submit').click();
  await expect(page).toHaveURL(/[?&]draft=oidc-draft-\d+/);
  await expect(page.getByTestId('draft-select').locator('option:checked')).toHaveText(name);

  // The ID token never reaches the browser's session answer.
  const me = await page.evaluate(async () => (await fetch('/api/session')).text());
  expect(me).toContain('"user":"alice@example.com"');
  expect(me).not.toContain('eyJ');

  // Sign out: the console session ends, then the provider asks to confirm its own logout.
  await page.getByTestId('sign-out').click();
  await expect(page).toHaveURL(new RegExp(`^${op.issuer}/session/end`));
  await expect(page.getByRole('button', { name: 'Yes, sign me out' })).toBeVisible();
  await page.screenshot({ path: `${SHOTS}/console-oidc-provider-logout.png` });
  await page.getByRole('button', { name: 'Yes, sign me out' }).click();
  // The provider sends the browser back to the console's root, signed out.
  await expect(page).toHaveURL(`${origin}/`);
  await expect(page.getByTestId('session-status')).toHaveText('read-only');
  await expect(page.getByTestId('oidc-sign-in')).toBeVisible();
  const after = await page.evaluate(async () => (await fetch('/api/session')).json());
  expect(after).toMatchObject({ authenticated: false });

  // Signed out at the provider too: signing in again shows its login form, not an instant return.
  await page.getByTestId('oidc-sign-in').click();
  await expect(page).toHaveURL(new RegExp(`^${op.issuer}/interaction/`));
  await expect(page.getByLabel('User name')).toBeVisible();
  expect(errors).toEqual([]);
});

test('a failed callback shows a readable page with the reason, the provider words escaped, and "Try again"', async ({
  page,
}) => {
  const errors = watchErrors(page);
  let dialogs = 0;
  page.on('dialog', (d) => {
    dialogs++;
    void d.dismiss();
  });
  // A real sign-in started in this browser (its cookie set), then the provider answers with an error.
  await page.goto(`${origin}${LOGIN_PATH}`);
  await expect(page).toHaveURL(new RegExp(`^${op.issuer}/interaction/`));
  const evil = '<script>alert(1)</script><img src=x onerror=alert(2)>';
  const callback = new URL(`${origin}/api/auth/oidc/callback`);
  callback.searchParams.set('error', 'access_denied');
  callback.searchParams.set('error_description', `The user said no ${evil}`);
  const res = await page.goto(callback.href);
  expect(res?.status()).toBe(401);
  await expect(page.getByRole('heading', { name: 'The OpenID provider refused the sign-in' })).toBeVisible();
  // The markup shows as text: no script ran, no image was made.
  await expect(page.getByTestId('provider-said')).toHaveText(`access_denied: The user said no ${evil}`);
  await expect(page.locator('img')).toHaveCount(0);
  await expect(page.getByTestId('token-note')).toContainText('?token=');
  await page.screenshot({ path: `${SHOTS}/console-oidc-error-page.png` });

  // The same callback again: the attempt is used up.
  const again = await page.goto(callback.href);
  expect(again?.status()).toBe(400);
  await expect(page.getByRole('heading', { name: 'This sign-in attempt is no longer valid' })).toBeVisible();

  // "Try again" starts a fresh sign-in at the provider.
  await page.getByTestId('try-again').click();
  await expect(page).toHaveURL(new RegExp(`^${op.issuer}/interaction/`));
  await expect(page.getByLabel('User name')).toBeVisible();
  expect(dialogs).toBe(0);
  expect(errors).toEqual([]);
});
