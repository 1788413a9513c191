/**
 * The console's OpenID Connect sign-in (issue 7 §4): the authorization code flow with PKCE, state
 * and nonce, through openid-client. Login start keeps the flow's secrets (state, nonce, PKCE
 * verifier) on the server, in a bounded map keyed by a random id that a short-lived HttpOnly
 * SameSite=Lax cookie binds to the browser (Lax: the provider's redirect back is a cross-site
 * navigation, which a Strict cookie would not survive). The callback checks state, trades the code,
 * lets openid-client validate the ID token (signature, issuer, audience, expiry, nonce) and yields
 * the identity a console session carries: `{user, groups}`, and the ID token, which the session keeps
 * on the server for the provider's logout (RP-initiated: `endSessionUrl`).
 *
 * The client secret is read by reference (a file or an environment variable), kept in a private
 * field, and never logged, put in an error message or sent to the browser.
 */
import { readFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import * as client from 'openid-client';
import { z } from 'zod';
import { secretsEqual, type ConsoleIdentity } from './consoleAuth';
import { processSlot } from '../processSlot';

/** The environment variable that holds the client secret when no file is given. */
export const OIDC_CLIENT_SECRET_ENV = 'MESHDECK_OIDC_CLIENT_SECRET';
/** The cookie that ties a browser to its sign-in in progress. */
export const OIDC_TX_COOKIE = 'meshdeck_oidc_tx';
/** Where the console starts an OIDC sign-in. */
export const OIDC_LOGIN_PATH = '/api/auth/oidc/login';
/** Where the provider sends the browser back (the path of the redirect URL to register). */
export const OIDC_CALLBACK_PATH = '/api/auth/oidc/callback';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** How `meshdeck serve` is told to sign in with an OpenID Provider. */
export const OidcConfig = z.strictObject({
  /** The issuer URL (https, or http on a loopback address for tests). */
  issuer: z.url(),
  clientId: z.string().min(1),
  /** A file that holds the client secret (trailing newline ignored). */
  clientSecretFile: z.string().min(1).optional(),
  /** The environment variable that holds the client secret when no file is given. */
  clientSecretEnv: z.string().min(1).default(OIDC_CLIENT_SECRET_ENV),
  /** The console's callback URL as registered at the provider (…/api/auth/oidc/callback). */
  redirectUrl: z.url(),
  scopes: z
    .array(z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/))
    .default(['openid', 'email', 'profile', 'groups']),
  /** The claim that names the user; without it `email`, then `preferred_username`. */
  userClaim: z.string().min(1).optional(),
  groupsClaim: z.string().min(1).default('groups'),
  /** When set, only members of one of these groups may sign in. */
  allowedGroups: z.array(z.string().min(1)).optional(),
  /** The name on the "Sign in with …" button; the issuer's host name without it. */
  providerName: z.string().min(1).optional(),
  /** Whether the console token still opens sessions besides OIDC (default true). */
  tokenSignIn: z.boolean().default(true),
});
export type OidcConfig = z.infer<typeof OidcConfig>;
export type OidcConfigInput = z.input<typeof OidcConfig>;

const OIDC_ERROR = Symbol.for('meshdeck.oidcError');

/** Why a sign-in was refused, in the words the readable error page uses as its heading. */
export type OidcFailure =
  | 'expired'
  | 'state'
  | 'provider-refused'
  | 'answer-refused'
  | 'no-user'
  | 'not-allowed'
  | 'provider-unreachable';

/**
 * A refused sign-in: the HTTP status to answer, a message fit to show (never a secret, code or
 * token), what kind of failure it is, and the provider's own words when it gave a reason (untrusted
 * text: escape it wherever it is shown).
 */
export class OidcError extends Error {
  /**
   * `instanceof` by brand, not by prototype: the sign-in object that throws is made by `meshdeck serve`
   * and the route handlers that catch are bundled apart by Next, each with its own copy of this class.
   */
  static [Symbol.hasInstance](value: unknown): boolean {
    return (
      typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[OIDC_ERROR] === true
    );
  }

  readonly [OIDC_ERROR] = true;

  constructor(
    readonly status: number,
    message: string,
    readonly failure: OidcFailure = 'answer-refused',
    readonly providerSaid?: string,
  ) {
    super(message);
    this.name = 'OidcError';
  }
}

/** A finished sign-in: who signed in, and the ID token (kept on the server for the provider's logout). */
export interface OidcSignInResult {
  identity: ConsoleIdentity;
  idToken: string;
}

/** Reads the client secret the config refers to; throws naming the file or variable, never the value. */
export async function readClientSecret(
  config: OidcConfig,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<string> {
  let secret: string | undefined;
  let where: string;
  if (config.clientSecretFile !== undefined) {
    where = `the client secret file ${config.clientSecretFile}`;
    try {
      secret = (await readFile(config.clientSecretFile, 'utf8')).replace(/\r?\n$/, '');
    } catch (e) {
      throw new Error(`cannot read ${where}: ${(e as NodeJS.ErrnoException).code ?? 'error'}`);
    }
  } else {
    where = `$${config.clientSecretEnv}`;
    secret = env[config.clientSecretEnv];
  }
  if (!secret) throw new Error(`${where} is empty: the OIDC client secret is needed`);
  return secret;
}

interface Pending {
  state: string;
  nonce: string;
  verifier: string;
  expires: number;
}

export interface OidcSignInOptions {
  /** Sign-ins in progress kept at most (the oldest is dropped beyond it). */
  maxPending?: number;
  /** How long a sign-in may take at the provider (default 10 minutes). */
  pendingTtlMs?: number;
  logger?: Pick<Console, 'warn'>;
  now?: () => number;
}

/** One configured OpenID Provider: starts sign-ins and turns their callbacks into identities. */
export class OidcSignIn {
  readonly #secret: string;
  readonly #pending = new Map<string, Pending>();
  #discovered: Promise<client.Configuration> | undefined;
  /** The discovered metadata once it is there (sign-out builds its URL without waiting). */
  #config: client.Configuration | undefined;
  private readonly maxPending: number;
  private readonly pendingTtlMs: number;
  private readonly logger: Pick<Console, 'warn'>;
  private readonly now: () => number;
  /** The name the console shows on its sign-in button. */
  readonly providerName: string;

  constructor(
    readonly config: OidcConfig,
    clientSecret: string,
    options: OidcSignInOptions = {},
  ) {
    const issuer = new URL(config.issuer);
    if (issuer.protocol !== 'https:' && !LOOPBACK.has(issuer.hostname))
      throw new Error(
        `the OIDC issuer must be an https URL (http only on a loopback address): ${config.issuer}`,
      );
    if (!config.scopes.includes('openid')) throw new Error('the OIDC scopes must include "openid"');
    this.#secret = clientSecret;
    this.maxPending = options.maxPending ?? 1000;
    this.pendingTtlMs = options.pendingTtlMs ?? 10 * 60 * 1000;
    this.logger = options.logger ?? console;
    this.now = options.now ?? Date.now;
    this.providerName = config.providerName ?? issuer.hostname;
  }

  /** How many sign-ins are in progress. */
  get pendingCount(): number {
    return this.#pending.size;
  }

  /** The provider's metadata, discovered once (a failed discovery is retried on the next sign-in). */
  private configuration(): Promise<client.Configuration> {
    if (!this.#discovered) {
      const issuer = new URL(this.config.issuer);
      this.#discovered = client
        .discovery(issuer, this.config.clientId, undefined, client.ClientSecretPost(this.#secret), {
          // Verify the ID token's signature too (openid-client trusts TLS alone by default): a
          // token altered on the way, or by a proxy, is refused.
          execute: [
            client.enableNonRepudiationChecks,
            ...(issuer.protocol === 'https:' ? [] : [client.allowInsecureRequests]),
          ],
        })
        .then(
          (c) => (this.#config = c),
          (e: unknown) => {
            this.#discovered = undefined;
            const message = `cannot use the OpenID provider ${this.config.issuer}: ${describe(e)}`;
            this.logger.warn(`meshdeck console: ${message}`);
            throw new OidcError(502, message, 'provider-unreachable');
          },
        );
    }
    return this.#discovered;
  }

  /** Starts a sign-in: the provider URL to send the browser to, and the id its cookie must carry back. */
  async start(): Promise<{ url: URL; txId: string }> {
    const config = await this.configuration();
    const verifier = client.randomPKCECodeVerifier();
    const pending: Pending = {
      state: client.randomState(),
      nonce: client.randomNonce(),
      verifier,
      expires: this.now() + this.pendingTtlMs,
    };
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: this.config.redirectUrl,
      scope: this.config.scopes.join(' '),
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: pending.state,
      nonce: pending.nonce,
    });
    const txId = randomBytes(32).toString('base64url');
    this.prune();
    this.#pending.set(txId, pending);
    while (this.#pending.size > this.maxPending) this.#pending.delete(this.#pending.keys().next().value!);
    return { url, txId };
  }

  /**
   * Finishes the sign-in `txId` started with the parameters the provider sent back: the identity and
   * ID token, or an OidcError. A sign-in is used up by its first callback, whatever the outcome.
   */
  async finish(txId: string | undefined, params: URLSearchParams): Promise<OidcSignInResult> {
    const pending = txId === undefined ? undefined : this.#pending.get(txId);
    if (txId !== undefined) this.#pending.delete(txId);
    if (!pending || pending.expires < this.now())
      throw new OidcError(
        400,
        'no sign-in is in progress in this browser (it expired, was used already, or cookies are off): sign in again',
        'expired',
      );
    const error = params.get('error');
    if (error !== null) {
      const said = `${error}${params.has('error_description') ? `: ${params.get('error_description')}` : ''}`;
      throw new OidcError(401, `the OpenID provider refused the sign-in: ${said}`, 'provider-refused', said);
    }
    const state = params.get('state');
    if (state === null || !secretsEqual(state, pending.state))
      throw new OidcError(
        400,
        'the sign-in state does not match (a forged or crossed callback): sign in again',
        'state',
      );
    const config = await this.configuration();
    // The redirect URL as registered, not the request's own URL: behind a proxy they differ.
    const current = new URL(this.config.redirectUrl);
    current.search = params.toString();
    let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
    try {
      tokens = await client.authorizationCodeGrant(config, current, {
        pkceCodeVerifier: pending.verifier,
        expectedState: pending.state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
    } catch (e) {
      if (unreachable(e))
        throw new OidcError(
          502,
          `cannot reach the OpenID provider to finish the sign-in: ${describe(e)}`,
          'provider-unreachable',
        );
      throw new OidcError(401, `the OpenID provider's answer was refused: ${describe(e)}`, 'answer-refused');
    }
    let claims: Record<string, unknown> = { ...tokens.claims()! };
    const { userClaim, groupsClaim } = this.config;
    const missing = (c: Record<string, unknown>) =>
      (userClaim
        ? c[userClaim] === undefined
        : c.email === undefined && c.preferred_username === undefined) || c[groupsClaim] === undefined;
    // Many providers put groups (or the e-mail) only in the UserInfo answer.
    if (missing(claims) && config.serverMetadata().userinfo_endpoint) {
      try {
        const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub as string);
        claims = { ...info, ...claims };
      } catch (e) {
        throw new OidcError(
          502,
          `cannot read the user's claims from the OpenID provider: ${describe(e)}`,
          'provider-unreachable',
        );
      }
    }
    const user = [userClaim ? claims[userClaim] : (claims.email ?? claims.preferred_username)].find(
      (v): v is string => typeof v === 'string' && v !== '',
    );
    if (!user)
      throw new OidcError(
        403,
        `the ID token names no user (claim ${userClaim ?? '"email" or "preferred_username"'} is missing)`,
        'no-user',
      );
    const rawGroups = claims[groupsClaim];
    const groups = Array.isArray(rawGroups)
      ? rawGroups.filter((g): g is string => typeof g === 'string')
      : [];
    const allowed = this.config.allowedGroups;
    if (allowed && !groups.some((g) => allowed.includes(g)))
      throw new OidcError(
        403,
        `${user} may not use this console: not a member of ${allowed.map((g) => `"${g}"`).join(', ')}`,
        'not-allowed',
      );
    return { identity: { user, groups, method: 'oidc' }, idToken: tokens.id_token! };
  }

  /** Where the provider sends the browser after its logout: the console's root. */
  get postLogoutRedirectUri(): string {
    return new URL('/', this.config.redirectUrl).href;
  }

  /**
   * The provider's RP-initiated logout URL for the session that `idToken` opened (the browser goes
   * there after the console session has ended), or undefined when the provider offers none. Synchronous:
   * an OIDC session exists only after this process discovered the provider.
   */
  endSessionUrl(idToken: string | undefined): URL | undefined {
    const config = this.#config;
    if (!config?.serverMetadata().end_session_endpoint) return undefined;
    return client.buildEndSessionUrl(config, {
      client_id: this.config.clientId,
      post_logout_redirect_uri: this.postLogoutRedirectUri,
      ...(idToken ? { id_token_hint: idToken } : {}),
    });
  }

  private prune(): void {
    const now = this.now();
    for (const [id, p] of this.#pending) if (p.expires < now) this.#pending.delete(id);
  }

  /** Keeps the secret out of logs: console.log / JSON.stringify of this object show no secret. */
  toJSON(): unknown {
    return { issuer: this.config.issuer, clientId: this.config.clientId, providerName: this.providerName };
  }
}

/** Whether an error means the provider could not be reached (or answered like a broken server). */
function unreachable(e: unknown): boolean {
  if (e instanceof client.ClientError) return e.code === 'OAUTH_RESPONSE_IS_NOT_CONFORM';
  // fetch() throws a bare TypeError ("fetch failed") when the connection fails.
  return e instanceof TypeError;
}

function describe(e: unknown): string {
  if (e instanceof client.ResponseBodyError)
    return `${e.error}${e.error_description ? `: ${e.error_description}` : ''}`;
  if (!(e instanceof Error)) return String(e);
  // openid-client wraps the precise reason (which claim, a bad signature) in `cause`.
  return e.cause instanceof Error && e.cause.message !== e.message
    ? `${e.message}: ${e.cause.message}`
    : e.message;
}

/** Makes the OIDC sign-in from its config, reading the client secret it refers to. */
export async function createOidcSignIn(
  input: OidcConfigInput,
  options: OidcSignInOptions & { env?: Readonly<Record<string, string | undefined>> } = {},
): Promise<OidcSignIn> {
  const config = OidcConfig.parse(input);
  return new OidcSignIn(config, await readClientSecret(config, options.env), options);
}

/**
 * The OIDC config `meshdeck serve` was given: each --oidc-NAME flag, else $MESHDECK_OIDC_NAME
 * (upper case, `-` as `_`); undefined when neither names an issuer. Throws a message fit to print.
 */
export function oidcConfigFromFlags(
  flags: Readonly<Record<string, string | true | undefined>>,
  env: Readonly<Record<string, string | undefined>> = process.env,
): OidcConfig | undefined {
  const get = (name: string): string | undefined => {
    const v = flags[name];
    if (typeof v === 'string') return v;
    const e = env[`MESHDECK_OIDC_${name.toUpperCase().replace(/-/g, '_')}`];
    return e === '' ? undefined : e;
  };
  const issuer = get('issuer');
  if (issuer === undefined) {
    const stray = Object.keys(flags).find((k) => flags[k] !== undefined);
    if (stray) throw new Error(`--oidc-${stray} needs --oidc-issuer (or $MESHDECK_OIDC_ISSUER)`);
    return undefined;
  }
  const list = (v: string | undefined, sep: RegExp) =>
    v === undefined ? undefined : v.split(sep).filter((x) => x !== '');
  const only = flags.only === true || env.MESHDECK_OIDC_ONLY === '1' || env.MESHDECK_OIDC_ONLY === 'true';
  const input: Record<string, unknown> = {
    issuer,
    clientId: get('client-id'),
    clientSecretFile: get('client-secret-file'),
    redirectUrl: get('redirect-url'),
    scopes: list(get('scopes'), /[\s,]+/),
    userClaim: get('user-claim'),
    groupsClaim: get('groups-claim'),
    allowedGroups: list(get('allowed-groups'), /,/),
    providerName: get('provider-name'),
    tokenSignIn: !only,
  };
  for (const k of Object.keys(input)) if (input[k] === undefined) delete input[k];
  const parsed = OidcConfig.safeParse(input);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const field = String(issue.path[0] ?? '');
  const flag = field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
  const shown = field === 'clientSecretFile' ? '' : ` (${JSON.stringify(input[field])})`;
  return fail(
    input[field] === undefined
      ? `--oidc-${flag} (or $MESHDECK_OIDC_${flag.toUpperCase().replace(/-/g, '_')}) is needed with --oidc-issuer`
      : `--oidc-${flag}${shown}: ${issue.message}`,
  );
}

function fail(message: string): never {
  throw new Error(message);
}

const slot = processSlot<OidcSignIn>('oidcSignIn');

/** The OIDC sign-in of this process (set by `meshdeck serve`), or undefined when it is not configured. */
export function getOidcSignIn(): OidcSignIn | undefined {
  return slot.get();
}

/** Installs (or removes) the OIDC sign-in of this process. */
export function setOidcSignIn(oidc: OidcSignIn | undefined): void {
  slot.set(oidc);
}

/** The Set-Cookie value that ties this browser to its sign-in in progress (Secure when the console is https). */
export function txCookie(oidc: OidcSignIn, txId: string): string {
  return `${OIDC_TX_COOKIE}=${txId}; HttpOnly; SameSite=Lax; Path=/api/auth/oidc; Max-Age=600${secure(oidc)}`;
}

/** The Set-Cookie value that removes the sign-in cookie. */
export function clearedTxCookie(oidc: OidcSignIn): string {
  return `${OIDC_TX_COOKIE}=; HttpOnly; SameSite=Lax; Path=/api/auth/oidc; Max-Age=0${secure(oidc)}`;
}

function secure(oidc: OidcSignIn): string {
  return new URL(oidc.config.redirectUrl).protocol === 'https:' ? '; Secure' : '';
}
