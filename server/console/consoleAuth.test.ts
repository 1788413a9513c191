import { afterEach, describe, expect, it } from 'vitest';
import {
  ConsoleAuth,
  consoleTokenProblem,
  CSRF_HEADER,
  generateConsoleToken,
  originProblem,
  readCookie,
  requireSession,
  secretsEqual,
  SESSION_COOKIE,
  sessionCookie,
  setConsoleAuth,
} from './consoleAuth';

afterEach(() => setConsoleAuth(undefined));

describe('console token', () => {
  it('is 32 random bytes in base64url, different every time', () => {
    const a = generateConsoleToken();
    const b = generateConsoleToken();
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(a, 'base64url')).toHaveLength(32);
    expect(a).not.toBe(b);
    expect(consoleTokenProblem(a)).toBeUndefined();
  });

  it('given by hand must be URL-safe and at least 8 characters', () => {
    expect(consoleTokenProblem('e2e-token')).toBeUndefined();
    expect(consoleTokenProblem('short')).toMatch(/8 to 256 characters/);
    expect(consoleTokenProblem('has space in it')).toMatch(/A-Z a-z 0-9/);
    expect(consoleTokenProblem('x'.repeat(257))).toBeDefined();
  });

  it('secrets compare equal only when identical, whatever the lengths', () => {
    expect(secretsEqual('abc', 'abc')).toBe(true);
    expect(secretsEqual('abc', 'abd')).toBe(false);
    expect(secretsEqual('abc', 'abcd')).toBe(false);
    expect(secretsEqual('', 'a')).toBe(false);
  });
});

describe('ConsoleAuth sessions', () => {
  it('a login with the right token opens a session with its own CSRF token; a wrong token opens none', () => {
    const auth = new ConsoleAuth('right-token');
    expect(auth.login('wrong-token')).toBeUndefined();
    expect(auth.login('right-token ')).toBeUndefined();
    const s = auth.login('right-token')!;
    expect(s.id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(s.csrfToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(s.csrfToken).not.toBe(s.id);
    expect(auth.session(s.id)).toBe(s);
    expect(auth.session('nope')).toBeUndefined();
    auth.logout(s.id);
    expect(auth.session(s.id)).toBeUndefined();
  });

  it('a token session acts as local-admin; open() carries a verified identity; token sign-in can be off', () => {
    const auth = new ConsoleAuth('right-token');
    expect(auth.login('right-token')!.identity).toEqual({ user: 'local-admin', groups: [], method: 'token' });
    const groups = ['mesh-admins'];
    const s = auth.open({ user: 'alice@example.com', groups, method: 'oidc' });
    groups.push('later');
    expect(auth.session(s.id)!.identity).toEqual({
      user: 'alice@example.com',
      groups: ['mesh-admins'],
      method: 'oidc',
    });
    const oidcOnly = new ConsoleAuth('right-token', { tokenSignIn: false });
    expect(oidcOnly.login('right-token')).toBeUndefined();
    expect(oidcOnly.size).toBe(0);
  });

  it('keeps at most maxSessions, dropping the least recently used', () => {
    const auth = new ConsoleAuth('right-token', { maxSessions: 2 });
    const a = auth.login('right-token')!;
    const b = auth.login('right-token')!;
    expect(auth.session(a.id)).toBe(a); // a is now the most recently used
    const c = auth.login('right-token')!;
    expect(auth.size).toBe(2);
    expect(auth.session(b.id)).toBeUndefined();
    expect(auth.session(a.id)).toBe(a);
    expect(auth.session(c.id)).toBe(c);
  });

  it('a session unused for longer than the idle timeout is gone', () => {
    let now = 1000;
    const auth = new ConsoleAuth('right-token', { idleTimeoutMs: 100, now: () => now });
    const s = auth.login('right-token')!;
    now += 100;
    expect(auth.session(s.id)).toBe(s);
    now += 101;
    expect(auth.session(s.id)).toBeUndefined();
    expect(auth.size).toBe(0);
  });
});

describe('requests', () => {
  const url = 'http://127.0.0.1:3100/api/draft';

  it('reads one cookie among several', () => {
    const req = new Request(url, { headers: { cookie: `a=1; ${SESSION_COOKIE}=xyz; b=2` } });
    expect(readCookie(req, SESSION_COOKIE)).toBe('xyz');
    expect(readCookie(req, 'c')).toBeUndefined();
    expect(readCookie(new Request(url), SESSION_COOKIE)).toBeUndefined();
  });

  it('the session cookie is HttpOnly, SameSite=Strict, Path=/ (and Secure over https only)', () => {
    const c = sessionCookie(new Request(url), 'sid');
    expect(c).toBe(`${SESSION_COOKIE}=sid; HttpOnly; SameSite=Strict; Path=/`);
    expect(sessionCookie(new Request('https://console.example/api/session'), 'sid')).toContain('; Secure');
  });

  it('refuses other origins and foreign Host names (DNS rebinding), accepts same-origin and no Origin', () => {
    const req = (headers: Record<string, string>) => new Request(url, { headers });
    expect(originProblem(req({}), undefined)).toBeUndefined();
    expect(originProblem(req({ origin: 'http://127.0.0.1:3100' }), undefined)).toBeUndefined();
    expect(originProblem(req({ origin: 'http://evil.example' }), undefined)).toMatch(/cross-origin/);
    expect(originProblem(req({ origin: 'http://127.0.0.1:3101' }), undefined)).toMatch(/cross-origin/);
    expect(originProblem(req({ origin: 'null' }), undefined)).toMatch(/not a URL/);
    expect(originProblem(req({ host: 'evil.example:3100' }), undefined)).toMatch(/host name "evil.example"/);
    expect(originProblem(req({ host: 'localhost:3100', origin: 'http://localhost:3100' }), undefined)).toBe(
      undefined,
    );
    expect(originProblem(req({ host: '[::1]:3100' }), undefined)).toBeUndefined();
    const lan = new ConsoleAuth('right-token', { allowedHosts: ['meshdeck.lan'] });
    expect(originProblem(req({ host: 'meshdeck.lan:3100' }), lan)).toBeUndefined();
  });

  it('requireSession: 401 without a session, 403 without the CSRF header or from another origin', async () => {
    const auth = new ConsoleAuth('right-token');
    const s = auth.login('right-token')!;
    const post = (headers: Record<string, string>) => new Request(url, { method: 'PUT', headers });
    const cookie = `${SESSION_COOKIE}=${s.id}`;
    const status = (r: ReturnType<typeof requireSession>) => (r.ok ? 200 : r.response.status);

    expect(status(requireSession(post({ cookie, [CSRF_HEADER]: s.csrfToken })))).toBe(401); // no auth set up
    setConsoleAuth(auth);
    expect(status(requireSession(post({ [CSRF_HEADER]: s.csrfToken })))).toBe(401);
    expect(
      status(requireSession(post({ cookie: `${SESSION_COOKIE}=forged`, [CSRF_HEADER]: s.csrfToken }))),
    ).toBe(401);
    expect(status(requireSession(post({ cookie })))).toBe(403);
    expect(status(requireSession(post({ cookie, [CSRF_HEADER]: 'wrong' })))).toBe(403);
    const crossSite = requireSession(
      post({ cookie, [CSRF_HEADER]: s.csrfToken, origin: 'http://evil.example' }),
    );
    expect(status(crossSite)).toBe(403);
    if (!crossSite.ok) expect((await crossSite.response.json()).error).toMatch(/cross-origin/);
    const ok = requireSession(post({ cookie, [CSRF_HEADER]: s.csrfToken, origin: 'http://127.0.0.1:3100' }));
    expect(ok.ok && ok.session).toBe(s);
  });
});
