/**
 * The console's OIDC sign-in against a REAL OpenID Provider (oidc-provider, in this process): the
 * whole authorization code flow through the real route handlers, the browser played by fetch with
 * cookie jars following redirects; every way a sign-in must be refused, with no session made (and
 * the readable page a browser gets then); and the sign-out that ends the session at the provider too.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GET as callbackGet } from '@/app/api/auth/oidc/callback/route';
import { GET as loginGet } from '@/app/api/auth/oidc/login/route';
import { DELETE as deleteSession, GET as getSession, POST as postSession } from '@/app/api/session/route';
import {
  ConsoleAuth,
  CSRF_HEADER,
  getConsoleAuth,
  requireSession,
  SESSION_COOKIE,
  setConsoleAuth,
} from './consoleAuth';
import {
  createOidcSignIn,
  OIDC_CALLBACK_PATH,
  OIDC_LOGIN_PATH,
  OIDC_TX_COOKIE,
  setOidcSignIn,
  type OidcConfigInput,
  type OidcSignIn,
} from './oidc';
import { startTestProvider, type TestProvider } from './oidcTestProvider';

const BASE = 'http://127.0.0.1:3100';
const REDIRECT = `${BASE}${OIDC_CALLBACK_PATH}`;
/** What Chromium sends when it navigates: the callback answers it with HTML. */
const BROWSER_ACCEPT =
  'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8';

let tp: TestProvider;
let tmp: string;
/** Everything the console and the provider answered, and every log line: the secret must be in none. */
const seen: string[] = [];
const logger = { warn: (m: string) => void seen.push(m) };

type Jar = Map<string, string>;

function cookieHeader(jar: Jar): string {
  return [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
}

function keep(jar: Jar, res: Response): void {
  for (const c of res.headers.getSetCookie()) {
    const pair = c.split(';')[0]!;
    const eq = pair.indexOf('=');
    const name = pair.slice(0, eq).trim();
    const value = pair.slice(eq + 1).trim();
    if (/;\s*max-age=0/i.test(c) || value === '') jar.delete(name);
    else jar.set(name, value);
  }
}

async function record(res: Response): Promise<Response> {
  const body = await res.clone().text();
  seen.push(`${res.status} ${JSON.stringify([...res.headers])} ${body}`);
  return res;
}

/** A request to the console as its API client sends them (JSON unless the caller says otherwise). */
function consoleReq(url: string, jar: Jar, init: RequestInit = {}): Request {
  const headers = new Headers(init.headers);
  if (!headers.has('accept')) headers.set('accept', 'application/json');
  if (jar.size > 0) headers.set('cookie', cookieHeader(jar));
  return new Request(url, { ...init, headers });
}

interface Flow {
  /** The console's last answer: the callback's (or the login route's when it refused). */
  response: Response;
  /** The URL the provider sent the browser back to. */
  callbackUrl?: string;
  /** The sign-in cookie the login route set (an attacker may keep a copy). */
  txCookie?: string;
  /** The provider URLs the browser went through (a login prompt shows as /interaction/…). */
  hops: string[];
}

/**
 * A browser signing in: the login route, the provider's redirects (its own cookie jar), and the
 * callback route with the console's jar. `editAuthUrl` changes the request to the provider;
 * `editCallbackUrl` changes the URL the browser comes back with (undefined: stop before it).
 */
async function signIn(
  jar: Jar,
  o: {
    editAuthUrl?: (u: URL) => void;
    editCallbackUrl?: ((u: URL) => void) | null;
    /** The browser's cookies at the provider (a fresh jar unless given: no session there). */
    providerJar?: Jar;
    /** The Accept header of the callback request (JSON unless given). */
    accept?: string;
  } = {},
): Promise<Flow> {
  const login = await record(
    await loginGet(
      consoleReq(`${BASE}${OIDC_LOGIN_PATH}`, jar, { headers: { accept: o.accept ?? 'application/json' } }),
    ),
  );
  keep(jar, login);
  if (login.status !== 302) return { response: login, hops: [] };
  const txCookie = jar.get(OIDC_TX_COOKIE);
  const auth = new URL(login.headers.get('location')!);
  o.editAuthUrl?.(auth);
  const providerJar: Jar = o.providerJar ?? new Map();
  const hops: string[] = [];
  let url = auth.href;
  for (let hop = 0; hop < 20; hop++) {
    if (url.startsWith(REDIRECT)) {
      if (o.editCallbackUrl === null) return { response: login, callbackUrl: url, txCookie, hops };
      const u = new URL(url);
      o.editCallbackUrl?.(u);
      const res = await record(
        await callbackGet(consoleReq(u.href, jar, { headers: { accept: o.accept ?? 'application/json' } })),
      );
      keep(jar, res);
      return { response: res, callbackUrl: url, txCookie, hops };
    }
    hops.push(url);
    const res = await record(
      await fetch(url, { redirect: 'manual', headers: { cookie: cookieHeader(providerJar) } }),
    );
    keep(providerJar, res);
    const next = res.headers.get('location');
    if (!next) throw new Error(`the provider stopped the flow at ${url}: ${res.status} ${await res.text()}`);
    url = new URL(next, url).href;
  }
  throw new Error('too many redirects');
}

async function errorOf(res: Response): Promise<string> {
  return ((await res.json()) as { error: string }).error;
}

async function useOidc(
  extra: Partial<OidcConfigInput> = {},
  provider: TestProvider = tp,
): Promise<OidcSignIn> {
  const oidc = await createOidcSignIn(
    {
      issuer: provider.issuer,
      clientId: provider.clientId,
      redirectUrl: REDIRECT,
      ...extra,
    },
    { logger, env: { MESHDECK_OIDC_CLIENT_SECRET: provider.clientSecret } },
  );
  setOidcSignIn(oidc);
  return oidc;
}

beforeAll(async () => {
  tp = await startTestProvider([REDIRECT], { postLogoutRedirectUris: [`${BASE}/`] });
  tmp = await mkdtemp(path.join(os.tmpdir(), 'md-oidc-'));
});
afterAll(async () => {
  setOidcSignIn(undefined);
  setConsoleAuth(undefined);
  await tp?.close();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});
beforeEach(() => {
  tp.nextAccount = 'alice';
  tp.tamperIdToken = undefined;
  setConsoleAuth(new ConsoleAuth('console-token-for-tests'));
});

describe('OIDC sign-in with a real provider', () => {
  it('signs alice in: a session that carries her user name and groups; GET /api/session answers them', async () => {
    const oidc = await useOidc();
    const jar: Jar = new Map();
    const { response } = await signIn(jar);
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe(`${BASE}/`);
    expect(jar.has(SESSION_COOKIE)).toBe(true);
    expect(jar.has(OIDC_TX_COOKIE)).toBe(false);
    expect(response.headers.getSetCookie().find((c) => c.startsWith(SESSION_COOKIE))).toMatch(
      /HttpOnly; SameSite=Strict/,
    );
    expect(oidc.pendingCount).toBe(0);

    const me = (await (await record(getSession(consoleReq(`${BASE}/api/session`, jar)))).json()) as Record<
      string,
      unknown
    >;
    // Groups come from the provider's UserInfo (its ID tokens carry no scope claims in the code flow).
    expect(me).toEqual({
      authenticated: true,
      csrfToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      user: 'alice@example.com',
      groups: ['meshdeck-admins', 'dev'],
      signIn: { token: true, oidc: { provider: '127.0.0.1', loginUrl: OIDC_LOGIN_PATH } },
    });
    // The session passes the mutation guard and says whom to impersonate.
    const guard = requireSession(
      consoleReq(`${BASE}/api/draft`, jar, {
        method: 'PUT',
        headers: { [CSRF_HEADER]: me.csrfToken as string, origin: BASE },
      }),
    );
    expect(guard.ok && guard.session.identity).toEqual({
      user: 'alice@example.com',
      groups: ['meshdeck-admins', 'dev'],
      method: 'oidc',
    });
    // Without the CSRF header, the OIDC session cannot change anything either.
    const noCsrf = requireSession(consoleReq(`${BASE}/api/draft`, jar, { method: 'PUT' }));
    expect(!noCsrf.ok && noCsrf.response.status).toBe(403);
  });

  it('the user claim can be chosen (preferred_username)', async () => {
    await useOidc({ userClaim: 'preferred_username' });
    const jar: Jar = new Map();
    expect((await signIn(jar)).response.status).toBe(302);
    const me = (await getSession(consoleReq(`${BASE}/api/session`, jar)).json()) as { user: string };
    expect(me.user).toBe('alice');
  });

  it('refuses a callback with the wrong state: no session', async () => {
    await useOidc();
    const jar: Jar = new Map();
    const { response } = await signIn(jar, { editCallbackUrl: (u) => u.searchParams.set('state', 'forged') });
    expect(response.status).toBe(400);
    expect(await errorOf(response)).toMatch(/state does not match/);
    expect(jar.has(SESSION_COOKIE)).toBe(false);
    expect(getConsoleAuth()!.size).toBe(0);
  });

  it('refuses a callback without the sign-in cookie (another browser): no session', async () => {
    await useOidc();
    const jar: Jar = new Map();
    const flow = await signIn(jar, { editCallbackUrl: null });
    const res = await record(await callbackGet(consoleReq(flow.callbackUrl!, new Map())));
    expect(res.status).toBe(400);
    expect(await errorOf(res)).toMatch(/no sign-in is in progress in this browser/);
    expect(getConsoleAuth()!.size).toBe(0);
  });

  it('refuses a replayed code: the same callback again, and the code inside another sign-in', async () => {
    await useOidc();
    const first: Jar = new Map();
    const a = await signIn(first);
    expect(a.response.status).toBe(302);
    expect(getConsoleAuth()!.size).toBe(1);
    // An attacker who kept the callback URL and the sign-in cookie replays them.
    const replay = await record(
      await callbackGet(consoleReq(a.callbackUrl!, new Map([[OIDC_TX_COOKIE, a.txCookie!]]))),
    );
    expect(replay.status).toBe(400);
    expect(await errorOf(replay)).toMatch(/no sign-in is in progress/);
    // The used code slipped into a fresh sign-in of its own: the provider refuses it.
    const second: Jar = new Map();
    const b = await signIn(second, {
      editCallbackUrl: (u) => u.searchParams.set('code', new URL(a.callbackUrl!).searchParams.get('code')!),
    });
    expect(b.response.status).toBe(401);
    expect(await errorOf(b.response)).toMatch(/answer was refused: invalid_grant/);
    expect(second.has(SESSION_COOKIE)).toBe(false);
    expect(getConsoleAuth()!.size).toBe(1);
  });

  it('refuses an ID token with the wrong nonce: no session', async () => {
    await useOidc();
    const jar: Jar = new Map();
    const { response } = await signIn(jar, {
      editAuthUrl: (u) => u.searchParams.set('nonce', 'not-the-nonce'),
    });
    expect(response.status).toBe(401);
    expect(await errorOf(response)).toMatch(/nonce/);
    expect(jar.has(SESSION_COOKIE)).toBe(false);
    expect(getConsoleAuth()!.size).toBe(0);
  });

  it('refuses a tampered ID token (its signature no longer fits): no session', async () => {
    await useOidc();
    tp.tamperIdToken = (p) => ({ ...p, sub: 'bob' });
    const jar: Jar = new Map();
    const { response } = await signIn(jar);
    expect(response.status).toBe(401);
    expect(await errorOf(response)).toMatch(/answer was refused: .*signature/i);
    expect(jar.has(SESSION_COOKIE)).toBe(false);
    expect(getConsoleAuth()!.size).toBe(0);
  });

  it('refuses a provider whose issuer is not the configured one: no redirect, no session', async () => {
    // Same server under another name: its metadata names http://127.0.0.1:…, not http://localhost:….
    await useOidc({ issuer: tp.issuer.replace('127.0.0.1', 'localhost') });
    const jar: Jar = new Map();
    const { response } = await signIn(jar);
    expect(response.status).toBe(502);
    expect(response.headers.get('location')).toBeNull();
    expect(await errorOf(response)).toMatch(
      /cannot use the OpenID provider http:\/\/localhost:\d+: .*issuer/,
    );
    expect(jar.has(OIDC_TX_COOKIE)).toBe(false);
    expect(getConsoleAuth()!.size).toBe(0);
  });

  it('refuses a user outside the allowed groups (secret read from a file): no session', async () => {
    const secretFile = path.join(tmp, 'client-secret');
    await writeFile(secretFile, `${tp.clientSecret}\n`, { mode: 0o600 });
    await useOidc({ allowedGroups: ['meshdeck-admins'], clientSecretFile: secretFile });
    tp.nextAccount = 'bob';
    const bob: Jar = new Map();
    const refused = await signIn(bob);
    expect(refused.response.status).toBe(403);
    expect(await errorOf(refused.response)).toBe(
      'sign-in failed: bob@example.com may not use this console: not a member of "meshdeck-admins"',
    );
    expect(bob.has(SESSION_COOKIE)).toBe(false);
    expect(getConsoleAuth()!.size).toBe(0);
    tp.nextAccount = 'alice';
    const alice: Jar = new Map();
    expect((await signIn(alice)).response.status).toBe(302);
    expect(getConsoleAuth()!.size).toBe(1);
  });

  it('OIDC can be the only sign-in: the console token opens no session then', async () => {
    await useOidc({ tokenSignIn: false });
    setConsoleAuth(new ConsoleAuth('console-token-for-tests', { tokenSignIn: false }));
    const res = await record(
      await postSession(
        new Request(`${BASE}/api/session`, {
          method: 'POST',
          body: JSON.stringify({ token: 'console-token-for-tests' }),
          headers: { 'content-type': 'application/json' },
        }),
      ),
    );
    expect(res.status).toBe(401);
    expect(await errorOf(res)).toMatch(/sign in with the OpenID provider/);
    const anon = (await getSession(new Request(`${BASE}/api/session`)).json()) as Record<string, unknown>;
    expect(anon).toEqual({
      authenticated: false,
      signIn: { token: false, oidc: { provider: '127.0.0.1', loginUrl: OIDC_LOGIN_PATH } },
    });
    expect((await signIn(new Map())).response.status).toBe(302);
  });

  it('a browser gets a readable page for a wrong state: status 400, what and why, "Try again", the token note; no code', async () => {
    await useOidc();
    const jar: Jar = new Map();
    const flow = await signIn(jar, {
      accept: BROWSER_ACCEPT,
      editCallbackUrl: (u) => u.searchParams.set('state', 'forged'),
    });
    const res = flow.response;
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    expect(res.headers.get('content-security-policy')).not.toMatch(/script-src/);
    const html = await res.text();
    expect(html).toContain('<h1>The sign-in could not be verified</h1>');
    expect(html).toContain('does not belong to the sign-in this browser started');
    expect(html).toContain(
      `<a class="button" href="${OIDC_LOGIN_PATH}" data-testid="try-again">Try again</a>`,
    );
    expect(html).toContain('signs you in too');
    // The code the provider issued (and the sign-in cookie) appear nowhere on the page.
    const code = new URL(flow.callbackUrl!).searchParams.get('code')!;
    expect(code.length).toBeGreaterThan(10);
    expect(html).not.toContain(code);
    expect(html).not.toContain(flow.txCookie!);
    expect(res.headers.getSetCookie().join()).toMatch(new RegExp(`${OIDC_TX_COOKIE}=; .*Max-Age=0`));
    expect(jar.has(SESSION_COOKIE)).toBe(false);
  });

  it('a provider error with markup in error_description is shown escaped (no reflected XSS); JSON when asked', async () => {
    await useOidc();
    const evil = '<script>alert("owned")</script><img src=x onerror=alert(1)> & \'quoted\'';
    const asProviderError = (u: URL) => {
      u.searchParams.delete('code');
      u.searchParams.set('error', 'access_denied');
      u.searchParams.set('error_description', evil);
    };
    const page = (await signIn(new Map(), { accept: BROWSER_ACCEPT, editCallbackUrl: asProviderError }))
      .response;
    expect(page.status).toBe(401);
    const html = await page.text();
    expect(html).toContain('<h1>The OpenID provider refused the sign-in</h1>');
    expect(html).toContain(
      '<blockquote data-testid="provider-said">access_denied: &lt;script&gt;alert(&quot;owned&quot;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt; &amp; &#39;quoted&#39;</blockquote>',
    );
    expect(html).not.toContain('<script');
    expect(html).not.toContain('<img');
    // An API client that asks for JSON gets the reason as JSON.
    const json = (await signIn(new Map(), { editCallbackUrl: asProviderError })).response;
    expect(json.status).toBe(401);
    expect(json.headers.get('content-type')).toBe('application/json');
    expect(await errorOf(json)).toBe(
      `sign-in failed: the OpenID provider refused the sign-in: access_denied: ${evil}`,
    );
    expect(getConsoleAuth()!.size).toBe(0);
  });

  it('readable pages for an expired attempt (400) and a user outside the allowed groups (403, OIDC only: no token note)', async () => {
    await useOidc({ allowedGroups: ['meshdeck-admins'], tokenSignIn: false });
    setConsoleAuth(new ConsoleAuth('console-token-for-tests', { tokenSignIn: false }));
    const flow = await signIn(new Map(), { editCallbackUrl: null });
    // The same callback in a browser that holds no sign-in (expired, used, or another browser).
    const expired = await record(
      await callbackGet(consoleReq(flow.callbackUrl!, new Map(), { headers: { accept: BROWSER_ACCEPT } })),
    );
    expect(expired.status).toBe(400);
    const expiredHtml = await expired.text();
    expect(expiredHtml).toContain('<h1>This sign-in attempt is no longer valid</h1>');
    expect(expiredHtml).not.toContain('signs you in too');

    tp.nextAccount = 'bob';
    const bob = await signIn(new Map(), { accept: BROWSER_ACCEPT });
    expect(bob.response.status).toBe(403);
    const html = await bob.response.text();
    expect(html).toContain('<h1>You may not use this console</h1>');
    expect(html).toContain(
      '403: bob@example.com may not use this console: not a member of &quot;meshdeck-admins&quot;',
    );
    expect(html).not.toContain('signs you in too');
    expect(getConsoleAuth()!.size).toBe(0);
  });

  it('a provider that is down: 502 pages, at the callback (token exchange) and at the login (discovery)', async () => {
    const other = await startTestProvider([REDIRECT]);
    let closed = false;
    try {
      await useOidc({}, other);
      const jar: Jar = new Map();
      const flow = await signIn(jar, { editCallbackUrl: null });
      await other.close();
      closed = true;
      const res = await record(
        await callbackGet(consoleReq(flow.callbackUrl!, jar, { headers: { accept: BROWSER_ACCEPT } })),
      );
      expect(res.status).toBe(502);
      const html = await res.text();
      expect(html).toContain('<h1>The OpenID provider cannot be reached</h1>');
      expect(html).toMatch(/502: cannot reach the OpenID provider to finish the sign-in: fetch failed/);
      expect(html).not.toContain(new URL(flow.callbackUrl!).searchParams.get('code')!);
      // A console that has not discovered the provider yet cannot start a sign-in either.
      await useOidc({}, other);
      const login = await record(
        await loginGet(
          consoleReq(`${BASE}${OIDC_LOGIN_PATH}`, new Map(), { headers: { accept: BROWSER_ACCEPT } }),
        ),
      );
      expect(login.status).toBe(502);
      expect(login.headers.get('location')).toBeNull();
      expect(await login.text()).toContain('<h1>The OpenID provider cannot be reached</h1>');
    } finally {
      if (!closed) await other.close();
    }
  });

  it('signing out of an OIDC session ends it at the provider too (RP-initiated logout): the next sign-in prompts again', async () => {
    await useOidc();
    const jar: Jar = new Map();
    const providerJar: Jar = new Map();
    const first = await signIn(jar, { providerJar });
    expect(first.response.status).toBe(302);
    // The first sign-in went through the provider's login (its interaction).
    expect(first.hops.some((u) => new URL(u).pathname.startsWith('/interaction/'))).toBe(true);
    // With the provider's session alive, another sign-in needs no login there.
    const again = await signIn(new Map(), { providerJar });
    expect(again.response.status).toBe(302);
    expect(again.hops.some((u) => new URL(u).pathname.startsWith('/interaction/'))).toBe(false);

    // The session answer never carries the ID token.
    const me = await (await record(getSession(consoleReq(`${BASE}/api/session`, jar)))).text();
    expect(me).toContain('"authenticated":true');
    expect(me).not.toMatch(/eyJ/);

    const out = await record(deleteSession(consoleReq(`${BASE}/api/session`, jar, { method: 'DELETE' })));
    keep(jar, out);
    expect(out.status).toBe(200);
    const body = (await out.json()) as { signedOut: boolean; endSessionUrl: string };
    expect(body.signedOut).toBe(true);
    const end = new URL(body.endSessionUrl);
    expect(`${end.origin}${end.pathname}`).toBe(`${tp.issuer}/session/end`);
    expect(end.searchParams.get('client_id')).toBe(tp.clientId);
    expect(end.searchParams.get('post_logout_redirect_uri')).toBe(`${BASE}/`);
    const hint = end.searchParams.get('id_token_hint')!;
    const claims = JSON.parse(Buffer.from(hint.split('.')[1]!, 'base64url').toString('utf8')) as {
      sub: string;
      aud: string;
    };
    expect(claims).toMatchObject({ sub: 'alice', aud: tp.clientId });
    expect(jar.has(SESSION_COOKIE)).toBe(false);
    expect(getConsoleAuth()!.size).toBe(1); // the other sign-in's session

    // The browser at the provider: the logout page asks to confirm (a form with its xsrf token).
    const ask = await record(await fetch(end, { headers: { cookie: cookieHeader(providerJar) } }));
    keep(providerJar, ask);
    expect(ask.status).toBe(200);
    const form = await ask.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(form)![1]!;
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(form)![1]!;
    const confirm = await record(
      await fetch(new URL(action, tp.issuer), {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: cookieHeader(providerJar), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ xsrf, logout: 'yes' }).toString(),
      }),
    );
    keep(providerJar, confirm);
    expect(confirm.status).toBe(303);
    // Back to the console's root.
    expect(confirm.headers.get('location')).toBe(`${BASE}/`);

    // The provider's session is over: the next sign-in goes through its login again.
    const after = await signIn(new Map(), { providerJar });
    expect(after.response.status).toBe(302);
    expect(after.hops.some((u) => new URL(u).pathname.startsWith('/interaction/'))).toBe(true);
  });

  it('signing out of a token session names no provider logout', async () => {
    await useOidc();
    const session = getConsoleAuth()!.login('console-token-for-tests')!;
    const out = await record(
      deleteSession(
        consoleReq(`${BASE}/api/session`, new Map([[SESSION_COOKIE, session.id]]), { method: 'DELETE' }),
      ),
    );
    expect(await out.json()).toEqual({ authenticated: false, signedOut: true });
    expect(getConsoleAuth()!.size).toBe(0);
  });

  it('the client secret is in no answer, no log line, and not in the sign-in object as printed', async () => {
    const oidc = await useOidc();
    expect(seen.length).toBeGreaterThan(20);
    // The issuer-mismatch test logged a warning: log lines are in `seen` too.
    expect(seen.some((l) => l.startsWith('meshdeck console: cannot use the OpenID provider'))).toBe(true);
    for (const line of seen) expect(line).not.toContain(tp.clientSecret);
    expect(JSON.stringify(oidc)).not.toContain(tp.clientSecret);
    expect(inspect(oidc, { depth: 10, showHidden: true })).not.toContain(tp.clientSecret);
  });
});
