/**
 * The console's sign-in (issue 5 §5), as Jupyter does it: `meshdeck serve` makes a random token and
 * prints the console URL with it once; the browser trades the token for a session (an HttpOnly,
 * SameSite=Strict cookie) and a CSRF token. Every request that changes something needs the cookie,
 * the CSRF token in a header, and (when the browser sends one) a same-origin Origin header.
 *
 * Sessions live in memory on globalThis: route handlers are bundled apart from the server that
 * creates the ConsoleAuth (see server/controlPlane/registry.ts), and a restart signs everyone out.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { processSlot } from '../processSlot';

/** The session cookie's name. */
export const SESSION_COOKIE = 'meshdeck_session';
/** The header that must carry the session's CSRF token on every mutation. */
export const CSRF_HEADER = 'x-csrf-token';
/** The environment variable that sets the console token (for tests and scripts). */
export const CONSOLE_TOKEN_ENV = 'MESHDECK_CONSOLE_TOKEN';

/** Characters a token may use: it goes into a URL as is. */
const TOKEN_SHAPE = /^[A-Za-z0-9._~-]{8,256}$/;

/** A new random console token: 32 bytes, base64url. */
export function generateConsoleToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Why a token given on the command line or in the environment is refused, or undefined if it is fine. */
export function consoleTokenProblem(token: string): string | undefined {
  if (TOKEN_SHAPE.test(token)) return undefined;
  return 'a console token must be 8 to 256 characters from A-Z a-z 0-9 . _ ~ -';
}

/** Compares two secrets in constant time, whatever their lengths (both are hashed first). */
export function secretsEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a, 'utf8').digest();
  const hb = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(ha, hb);
}

/** Who a session acts for: later code impersonates this user and these groups against Kubernetes. */
export interface ConsoleIdentity {
  user: string;
  groups: readonly string[];
  /** How the session was opened: the console token, or an OpenID Connect provider. */
  method: 'token' | 'oidc';
}

/** The identity of a session opened with the console token (the local default). */
export const LOCAL_ADMIN: ConsoleIdentity = Object.freeze({
  user: 'local-admin',
  groups: [],
  method: 'token',
});

export interface ConsoleSession {
  id: string;
  csrfToken: string;
  createdAt: number;
  lastSeen: number;
  identity: ConsoleIdentity;
  /** The ID token of an OIDC sign-in, for the provider's logout; stays on the server (never answered). */
  idToken?: string;
}

export interface ConsoleAuthOptions {
  /** Sessions kept at most; the least recently used one is dropped beyond it (bounded memory). */
  maxSessions?: number;
  /** A session unused for this long is gone (default 7 days). */
  idleTimeoutMs?: number;
  /** Hostnames the console answers to besides loopback ones (e.g. the --host it binds); `*` for any. */
  allowedHosts?: readonly string[];
  /** Whether the console token opens sessions (default true); off when OIDC is the only sign-in. */
  tokenSignIn?: boolean;
  now?: () => number;
}

/** The console token and the sessions opened with it. */
export class ConsoleAuth {
  private readonly sessions = new Map<string, ConsoleSession>();
  private readonly maxSessions: number;
  private readonly idleTimeoutMs: number;
  private readonly now: () => number;
  readonly allowedHosts: readonly string[];
  readonly tokenSignIn: boolean;

  constructor(
    private readonly token: string,
    options: ConsoleAuthOptions = {},
  ) {
    this.maxSessions = options.maxSessions ?? 100;
    this.idleTimeoutMs = options.idleTimeoutMs ?? 7 * 24 * 3600 * 1000;
    this.now = options.now ?? Date.now;
    this.allowedHosts = options.allowedHosts ?? [];
    this.tokenSignIn = options.tokenSignIn ?? true;
  }

  /** Opens a session if token sign-in is on and `token` is the console token (constant-time), else undefined. */
  login(token: string): ConsoleSession | undefined {
    // Compared even when token sign-in is off, so that the answer takes the same time.
    const right = secretsEqual(token, this.token);
    if (!right || !this.tokenSignIn) return undefined;
    return this.open(LOCAL_ADMIN);
  }

  /** Opens a session for an identity a sign-in method has already verified (e.g. OIDC, with its ID token). */
  open(identity: ConsoleIdentity, idToken?: string): ConsoleSession {
    const now = this.now();
    const session: ConsoleSession = {
      id: randomBytes(32).toString('base64url'),
      csrfToken: randomBytes(32).toString('base64url'),
      createdAt: now,
      lastSeen: now,
      identity: { user: identity.user, groups: [...identity.groups], method: identity.method },
      ...(idToken ? { idToken } : {}),
    };
    this.sessions.set(session.id, session);
    // Map order is insertion order and lookups re-insert: the first key is the least recently used.
    while (this.sessions.size > this.maxSessions) {
      const oldest = this.sessions.keys().next().value as string;
      this.sessions.delete(oldest);
    }
    return session;
  }

  /** The live session with this id (refreshing its idle timer), or undefined. */
  session(id: string | undefined): ConsoleSession | undefined {
    if (!id) return undefined;
    const s = this.sessions.get(id);
    if (!s) return undefined;
    const now = this.now();
    if (now - s.lastSeen > this.idleTimeoutMs) {
      this.sessions.delete(id);
      return undefined;
    }
    s.lastSeen = now;
    this.sessions.delete(id);
    this.sessions.set(id, s);
    return s;
  }

  /** Ends a session (unknown ids are ignored): the session it ended, if any. */
  logout(id: string | undefined): ConsoleSession | undefined {
    if (!id) return undefined;
    const s = this.sessions.get(id);
    this.sessions.delete(id);
    return s;
  }

  /** How many sessions are open. */
  get size(): number {
    return this.sessions.size;
  }
}

const slot = processSlot<ConsoleAuth>('consoleAuth');

/** The console auth of this process (set by `meshdeck serve`), or undefined when sign-in is not set up. */
export function getConsoleAuth(): ConsoleAuth | undefined {
  return slot.get();
}

/** Installs (or removes) the console auth of this process. */
export function setConsoleAuth(auth: ConsoleAuth | undefined): void {
  slot.set(auth);
}

// ------------------------------------------------------------------ requests

/** The value of one cookie of a request, or undefined. */
export function readCookie(req: Request, name: string): string | undefined {
  const header = req.headers.get('cookie');
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The Set-Cookie value that opens a session in the browser. */
export function sessionCookie(req: Request, sessionId: string): string {
  return `${SESSION_COOKIE}=${sessionId}; HttpOnly; SameSite=Strict; Path=/${isHttps(req) ? '; Secure' : ''}`;
}

/** The Set-Cookie value that removes the session cookie. */
export function clearedSessionCookie(req: Request): string {
  return `${SESSION_COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0${isHttps(req) ? '; Secure' : ''}`;
}

function isHttps(req: Request): boolean {
  try {
    return new URL(req.url).protocol === 'https:';
  } catch {
    return false;
  }
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/** The Host the request was sent to (`host:port`), from the Host header, else the request URL. */
function requestHost(req: Request): string | undefined {
  const host = req.headers.get('host');
  if (host) return host.toLowerCase();
  try {
    return new URL(req.url).host.toLowerCase();
  } catch {
    return undefined;
  }
}

/**
 * Why the request must be refused before anything else, or undefined: a Host that is not this
 * console (a DNS-rebinding page talks to 127.0.0.1 under its own name), or a cross-origin Origin.
 */
export function originProblem(req: Request, auth: ConsoleAuth | undefined): string | undefined {
  const host = requestHost(req);
  if (!host) return 'the request names no Host';
  const hostname = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0]!;
  const allowed = auth?.allowedHosts ?? [];
  if (!LOOPBACK_HOSTS.has(hostname) && !allowed.includes('*') && !allowed.includes(hostname))
    return `this console does not answer to the host name "${hostname}"`;
  const origin = req.headers.get('origin');
  if (origin === null) return undefined;
  let originHost: string;
  try {
    originHost = new URL(origin).host.toLowerCase();
  } catch {
    return `cross-origin request refused (Origin "${origin}" is not a URL)`;
  }
  if (originHost !== host) return `cross-origin request refused (Origin ${origin} is not ${host})`;
  return undefined;
}

/** What a mutation guard decided: the session to act for, or the response that refuses the request. */
export type GuardResult = { ok: true; session: ConsoleSession } | { ok: false; response: Response };

/**
 * The check every request that changes something goes through: same origin (403), a session cookie
 * of a live session (401), and the session's CSRF token in the x-csrf-token header (403).
 */
export function requireSession(req: Request): GuardResult {
  const auth = getConsoleAuth();
  const refuse = (status: number, error: string): GuardResult => ({
    ok: false,
    response: Response.json({ error }, { status, headers: { 'Cache-Control': 'no-store' } }),
  });
  const problem = originProblem(req, auth);
  if (problem) return refuse(403, problem);
  if (!auth)
    return refuse(
      401,
      'console sign-in is not set up in this process: start the console with `meshdeck serve`',
    );
  const session = auth.session(readCookie(req, SESSION_COOKIE));
  if (!session)
    return refuse(
      401,
      'not signed in: open the console URL that `meshdeck serve` printed (it carries the token)',
    );
  const csrf = req.headers.get(CSRF_HEADER);
  if (csrf === null || !secretsEqual(csrf, session.csrfToken))
    return refuse(
      403,
      `missing or wrong ${CSRF_HEADER} header: send the CSRF token GET /api/session returns`,
    );
  return { ok: true, session };
}
