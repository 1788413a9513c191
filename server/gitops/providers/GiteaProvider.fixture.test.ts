// Against FIXTURES (fixtureForge.ts + fixtures.ts: Gitea's swagger shapes and its own error wording).
// The same provider runs against a real Gitea in gitea.integration.test.ts; these cover what a fresh
// instance does not easily produce (pagination, token echo, a non-JSON answer).
import { type AddressInfo, createServer, type Socket } from 'node:net';
import { inspect } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FixtureForge, startFixtureForge } from './fixtureForge';
import { gitea } from './fixtures';
import {
  createPullRequestProvider,
  isProviderError,
  type ProviderError,
  type PullRequestProvider,
} from './index';

const TOKEN = '0123456789abcdef0123456789abcdef01234567';
const input = {
  owner: 'meshdeck',
  repo: 'mesh',
  head: 'meshdeck/change',
  base: 'main',
  title: 'change',
  body: 'body',
};

let forge: FixtureForge;
let provider: PullRequestProvider;

beforeAll(async () => {
  forge = await startFixtureForge('/api/v1');
  provider = createPullRequestProvider({ kind: 'forgejo', baseUrl: forge.url, token: TOKEN });
});
afterAll(() => forge.close());
beforeEach(() => forge.use([]));

async function failure(p: Promise<unknown>): Promise<ProviderError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!isProviderError(e)) throw new Error(`expected a ProviderError, got ${inspect(e)}`);
  return e;
}

describe('GiteaProvider (fixtures)', () => {
  it('opens a pull request with `Authorization: token`', async () => {
    forge.use([gitea.created]);
    expect(await provider.openPullRequest(input)).toEqual({
      url: 'http://127.0.0.1:3000/meshdeck/mesh/pulls/7',
      number: 7,
      created: true,
    });
    const [req] = forge.requests;
    expect(req?.path).toBe('/repos/meshdeck/mesh/pulls');
    expect(req?.headers.authorization).toBe(`token ${TOKEN}`);
    expect(req?.body).toEqual({ head: 'meshdeck/change', base: 'main', title: 'change', body: 'body' });
  });

  it('on 409 pages through the open pull requests to find the existing one', async () => {
    forge.use([gitea.alreadyExists, gitea.listPage(1, 50), gitea.listPage(2, 3, true)]);
    expect(await provider.openPullRequest(input)).toEqual({
      url: 'http://127.0.0.1:3000/meshdeck/mesh/pulls/7',
      number: 7,
      created: false,
    });
    expect(forge.requests.slice(1).map((r) => r.query)).toEqual([
      { state: 'open', page: '1', limit: '50' },
      { state: 'open', page: '2', limit: '50' },
    ]);
    expect(forge.pending()).toEqual([]);
  });

  it('stops at a short page when no open pull request has the head branch', async () => {
    forge.use([gitea.listPage(1, 4)]);
    expect(await provider.findOpenPullRequest('meshdeck/change', input)).toBeUndefined();
    expect(forge.requests).toHaveLength(1);
  });

  it('a head of another base does not match when a base is given', async () => {
    forge.use([gitea.listPage(1, 0, true)]);
    expect(
      await provider.findOpenPullRequest('meshdeck/change', { ...input, base: 'release' }),
    ).toBeUndefined();
  });

  it("401 and 404 carry Gitea's message; a token echoed by the forge is redacted", async () => {
    forge.use([gitea.unauthorized]);
    const e = await failure(provider.openPullRequest(input));
    expect(e).toMatchObject({
      provider: 'forgejo',
      status: 401,
      message: 'invalid username, password or token',
      kind: 'bad-token',
    });
    expect(e.hint).toMatch(/^Forgejo rejected the token/);

    forge.use([gitea.notFound]);
    expect(await failure(provider.openPullRequest(input))).toMatchObject({
      status: 404,
      kind: 'repo-not-found',
    });

    forge.use([
      { ...gitea.unauthorized, response: { status: 401, body: { message: `token ${TOKEN} is not valid` } } },
    ]);
    const echoed = await failure(provider.openPullRequest(input));
    expect(echoed.message).toBe('token *** is not valid');
    expect(JSON.stringify(echoed) + echoed.stack).not.toContain(TOKEN);
  });

  it("a proxy's HTML error page keeps the status and shows the text", async () => {
    forge.use([{ ...gitea.created, response: { status: 502, body: '<html>Bad Gateway</html>' } }]);
    expect(await failure(provider.openPullRequest(input))).toMatchObject({
      status: 502,
      message: '<html>Bad Gateway</html>',
      kind: 'server-error',
    });
  });

  it('a request that gets no answer in time is a network error', async () => {
    // A server that accepts connections and never answers.
    const sockets = new Set<Socket>();
    const silent = createServer((s) => void sockets.add(s));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    const { port } = silent.address() as AddressInfo;
    const mute = createPullRequestProvider({
      kind: 'gitea',
      baseUrl: `http://127.0.0.1:${port}`,
      token: TOKEN,
      timeoutMs: 200,
    });
    try {
      expect(await failure(mute.findOpenPullRequest('x', input))).toMatchObject({
        status: null,
        kind: 'network',
        message: 'no answer within 200 ms',
      });
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => silent.close(() => r()));
    }
  });
});
