/**
 * A REAL OpenID Provider for tests (panva's oidc-provider, certified): in this process on
 * 127.0.0.1, with one registered confidential client and test accounts that have groups. Its login
 * is a custom interaction: without a UI it signs in whoever `nextAccount` names; with `loginForm`
 * it shows a user name and password form (a browser test fills it in). Every requested scope is
 * granted at once (no consent screen). RP-initiated logout asks for a confirmation, as providers do.
 * Its pages load nothing from elsewhere. It sits behind a relay on the issuer's port that can alter
 * the ID token in token responses (`tamperIdToken`), as an attacker on the way would.
 */
import { generateKeyPairSync } from 'node:crypto';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
// @ts-expect-error -- oidc-provider ships no type declarations
import Provider from 'oidc-provider';

export interface TestAccount {
  email: string;
  preferred_username: string;
  groups: string[];
  /** What the login form wants (never a claim). */
  password: string;
}

export interface TestProviderOptions {
  /** Where the client may ask to be sent after RP-initiated logout (e.g. the console's root). */
  postLogoutRedirectUris?: string[];
  /** Sign in through an HTML form (user name and password) instead of `nextAccount`. */
  loginForm?: boolean;
}

export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  accounts: Record<string, TestAccount>;
  /** The account the next interaction signs in. */
  nextAccount: string;
  /** When set, rewrites the payload of the ID token in token responses (the signature is kept). */
  tamperIdToken?: (payload: Record<string, unknown>) => Record<string, unknown>;
  close(): Promise<void>;
}

interface ProviderLike {
  callback(): (req: IncomingMessage, res: ServerResponse) => void;
  interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<{ prompt: { name: string } }>;
  interactionFinished(
    req: IncomingMessage,
    res: ServerResponse,
    result: unknown,
    options?: { mergeWithLastSubmission?: boolean },
  ): Promise<void>;
  on(event: string, fn: (...args: unknown[]) => void): void;
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return (server.address() as AddressInfo).port;
}

/** Starts the provider; `redirectUris` are the client's registered callback URLs. */
export async function startTestProvider(
  redirectUris: string[],
  options: TestProviderOptions = {},
): Promise<TestProvider> {
  const front = createServer();
  const frontPort = await listen(front);
  const issuer = `http://127.0.0.1:${frontPort}`;
  const accounts: Record<string, TestAccount> = {
    alice: {
      email: 'alice@example.com',
      preferred_username: 'alice',
      groups: ['meshdeck-admins', 'dev'],
      password: 'alice-password',
    },
    bob: {
      email: 'bob@example.com',
      preferred_username: 'bob',
      groups: ['viewers'],
      password: 'bob-password',
    },
  };
  const jwk = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
  const clientSecret = `test-client-secret-${Math.random().toString(36).slice(2)}-do-not-leak`;
  const tp: TestProvider = {
    issuer,
    clientId: 'meshdeck-console',
    clientSecret,
    accounts,
    nextAccount: 'alice',
    close: async () => {
      front.closeAllConnections();
      back.closeAllConnections();
      await Promise.all([new Promise((r) => front.close(r)), new Promise((r) => back.close(r))]);
    },
  };
  const provider = new (Provider as new (issuer: string, config: unknown) => ProviderLike)(issuer, {
    clients: [
      {
        client_id: tp.clientId,
        client_secret: clientSecret,
        redirect_uris: redirectUris,
        post_logout_redirect_uris: options.postLogoutRedirectUris ?? [],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    jwks: { keys: [{ ...jwk, alg: 'RS256', use: 'sig', kid: 'test-key' }] },
    cookies: { keys: ['oidc-test-cookie-key'] },
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['preferred_username', 'name'],
      groups: ['groups'],
    },
    features: {
      devInteractions: { enabled: false },
      rpInitiatedLogout: { enabled: true, logoutSource, postLogoutSuccessSource },
    },
    renderError,
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    findAccount: (_ctx: unknown, id: string) => {
      const account = accounts[id];
      if (!account) return undefined;
      const { password: _password, ...claims } = account;
      return {
        accountId: id,
        claims: () => ({ sub: id, email_verified: true, name: id, ...claims }),
      };
    },
    // First-party client: every requested scope is granted without a consent screen.
    loadExistingGrant: async (ctx: {
      oidc: {
        provider: { Grant: new (o: object) => GrantLike };
        client: { clientId: string };
        session: { accountId: string };
        params: { scope?: string };
      };
    }) => {
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client.clientId,
        accountId: ctx.oidc.session.accountId,
      });
      grant.addOIDCScope(ctx.oidc.params.scope ?? 'openid');
      await grant.save();
      return grant;
    },
  });
  const handle = provider.callback();
  const back = createServer((req, res) => {
    if (req.url?.startsWith('/interaction/') && options.loginForm) {
      loginFormInteraction(provider, accounts, req, res).catch((e: Error) => {
        res.statusCode = 500;
        res.end(e.message);
      });
      return;
    }
    if (req.url?.startsWith('/interaction/')) {
      provider
        .interactionDetails(req, res)
        .then(() =>
          provider.interactionFinished(
            req,
            res,
            { login: { accountId: tp.nextAccount } },
            { mergeWithLastSubmission: false },
          ),
        )
        .catch((e: Error) => {
          res.statusCode = 500;
          res.end(e.message);
        });
      return;
    }
    handle(req, res);
  });
  const backPort = await listen(back);
  front.on('request', (req: IncomingMessage, res: ServerResponse) => relay(req, res, backPort, tp));
  return tp;
}

function htmlSafe(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const STYLE =
  'body{font-family:system-ui,sans-serif;margin:48px auto;max-width:360px}label{display:block;margin:8px 0}input{display:block;width:100%}button{margin-top:12px}';

function page(title: string, body: string): string {
  return `<!DOCTYPE html><html><head><meta charset="utf-8"><title>${htmlSafe(title)}</title><style>${STYLE}</style></head><body><h1>${htmlSafe(title)}</h1>${body}</body></html>`;
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > 10_000) throw new Error('form too large');
    chunks.push(c);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/** The login form: GET shows it, POST checks the user name and password and finishes the login. */
async function loginFormInteraction(
  provider: ProviderLike,
  accounts: Record<string, TestAccount>,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const details = (await provider.interactionDetails(req, res)) as { uid: string; prompt: { name: string } };
  const show = (error?: string) => {
    res.writeHead(error ? 401 : 200, {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
    });
    res.end(
      page(
        'Sign in to the test provider',
        `${error ? `<p role="alert">${htmlSafe(error)}</p>` : ''}<form method="post" action="/interaction/${htmlSafe(details.uid)}">` +
          '<label>User name <input name="username" autocomplete="username" autofocus></label>' +
          '<label>Password <input name="password" type="password" autocomplete="current-password"></label>' +
          '<button type="submit">Sign in</button></form>',
      ),
    );
  };
  if (req.method !== 'POST') return show();
  const form = await readForm(req);
  const name = form.get('username') ?? '';
  const account = Object.hasOwn(accounts, name) ? accounts[name] : undefined;
  if (!account || form.get('password') !== account.password) return show('Wrong user name or password.');
  await provider.interactionFinished(
    req,
    res,
    { login: { accountId: name } },
    { mergeWithLastSubmission: false },
  );
}

async function logoutSource(ctx: { host: string; body: string }, form: string): Promise<void> {
  ctx.body = page(
    `Sign out of ${ctx.host}?`,
    `${form}<button autofocus type="submit" form="op.logoutForm" value="yes" name="logout">Yes, sign me out</button>` +
      '<button type="submit" form="op.logoutForm">No, stay signed in</button>',
  );
}

async function postLogoutSuccessSource(ctx: { body: string }): Promise<void> {
  ctx.body = page('Signed out', '<p>You are signed out of the test provider.</p>');
}

async function renderError(
  ctx: { type: string; body: string },
  out: Record<string, string | undefined>,
): Promise<void> {
  ctx.type = 'html';
  ctx.body = page(
    'Provider error',
    Object.entries(out)
      .map(([k, v]) => `<p><b>${htmlSafe(k)}</b>: ${htmlSafe(String(v))}</p>`)
      .join(''),
  );
}

interface GrantLike {
  addOIDCScope(scope: string): void;
  save(): Promise<string>;
}

/** Forwards one request to the provider; alters the ID token of token responses when asked to. */
function relay(req: IncomingMessage, res: ServerResponse, port: number, tp: TestProvider): void {
  const up = request(
    { host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers },
    (upRes) => {
      const tamper = tp.tamperIdToken;
      if (!tamper || !req.url?.startsWith('/token')) {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        upRes.pipe(res);
        return;
      }
      const chunks: Buffer[] = [];
      upRes.on('data', (c: Buffer) => chunks.push(c));
      upRes.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id_token?: string };
        if (body.id_token) {
          const [h, p, s] = body.id_token.split('.') as [string, string, string];
          const payload = tamper(JSON.parse(Buffer.from(p, 'base64url').toString('utf8')));
          body.id_token = `${h}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${s}`;
        }
        const text = JSON.stringify(body);
        const headers = { ...upRes.headers, 'content-length': String(Buffer.byteLength(text)) };
        res.writeHead(upRes.statusCode ?? 502, headers);
        res.end(text);
      });
    },
  );
  up.on('error', () => {
    res.statusCode = 502;
    res.end();
  });
  req.pipe(up);
}
