/**
 * A REAL OpenID Provider for tests (panva's oidc-provider, certified): in this process on
 * 127.0.0.1, with one registered confidential client and test accounts that have groups. Its login
 * is a custom interaction without a UI: it signs in whoever `nextAccount` names and grants the
 * requested scopes at once. It sits behind a relay on the issuer's port that can alter the ID token
 * in token responses (`tamperIdToken`), as an attacker on the way would.
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
export async function startTestProvider(redirectUris: string[]): Promise<TestProvider> {
  const front = createServer();
  const frontPort = await listen(front);
  const issuer = `http://127.0.0.1:${frontPort}`;
  const accounts: Record<string, TestAccount> = {
    alice: { email: 'alice@example.com', preferred_username: 'alice', groups: ['meshdeck-admins', 'dev'] },
    bob: { email: 'bob@example.com', preferred_username: 'bob', groups: ['viewers'] },
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
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    findAccount: (_ctx: unknown, id: string) => {
      const account = accounts[id];
      if (!account) return undefined;
      return {
        accountId: id,
        claims: () => ({ sub: id, email_verified: true, name: id, ...account }),
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
