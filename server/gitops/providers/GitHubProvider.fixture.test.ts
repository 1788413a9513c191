// Against FIXTURES (fixtureForge.ts + fixtures.ts: GitHub's documented examples), not GitHub itself,
// which this machine cannot reach. The base URL is GitHub Enterprise style (`/api/v3`).
import { inspect } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FixtureForge, startFixtureForge } from './fixtureForge';
import { github } from './fixtures';
import {
  createPullRequestProvider,
  isProviderError,
  type ProviderError,
  type PullRequestProvider,
} from './index';

const TOKEN = 'ghp_fixtureToken0123456789abcdefghijklmn';
const input = {
  owner: 'octocat',
  repo: 'Hello-World',
  head: 'new-topic',
  base: 'master',
  title: 'Amazing new feature',
  body: 'Please pull these awesome changes in!',
};

let forge: FixtureForge;
let provider: PullRequestProvider;

beforeAll(async () => {
  forge = await startFixtureForge('/api/v3');
  provider = createPullRequestProvider({ kind: 'github', baseUrl: `${forge.url}/api/v3`, token: TOKEN });
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

function expectNoToken(e: ProviderError) {
  const everything = [e.message, e.hint, JSON.stringify(e), String(e.stack), inspect(e)].join('\n');
  expect(everything).not.toContain(TOKEN);
}

describe('GitHubProvider (fixtures)', () => {
  it('opens a pull request with the token in the Authorization header and returns its URL and number', async () => {
    forge.use([github.created]);
    const pr = await provider.openPullRequest(input);
    expect(pr).toEqual({
      url: 'https://github.com/octocat/Hello-World/pull/1347',
      number: 1347,
      created: true,
    });
    const [req] = forge.requests;
    expect(req?.method).toBe('POST');
    expect(req?.path).toBe('/repos/octocat/Hello-World/pulls');
    expect(req?.headers.authorization).toBe(`token ${TOKEN}`);
    expect(req?.body).toEqual({
      head: 'new-topic',
      base: 'master',
      title: 'Amazing new feature',
      body: 'Please pull these awesome changes in!',
    });
  });

  it('returns the existing pull request when GitHub says one already exists (422)', async () => {
    forge.use([github.alreadyExists, github.listedOne]);
    const pr = await provider.openPullRequest(input);
    expect(pr).toEqual({
      url: 'https://github.com/octocat/Hello-World/pull/1347',
      number: 1347,
      created: false,
    });
    expect(forge.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      'POST /repos/octocat/Hello-World/pulls',
      'GET /repos/octocat/Hello-World/pulls',
    ]);
    expect(forge.requests[1]?.query).toMatchObject({
      state: 'open',
      head: 'octocat:new-topic',
      base: 'master',
    });
    expect(forge.pending()).toEqual([]);
  });

  it('findOpenPullRequest filters by owner:branch and returns undefined when none is open', async () => {
    forge.use([github.listedOne]);
    expect(
      await provider.findOpenPullRequest('new-topic', { owner: 'octocat', repo: 'Hello-World' }),
    ).toEqual({
      url: 'https://github.com/octocat/Hello-World/pull/1347',
      number: 1347,
    });
    forge.use([github.listedNone]);
    expect(
      await provider.findOpenPullRequest('someone:gone', { owner: 'octocat', repo: 'Hello-World' }),
    ).toBeUndefined();
    expect(forge.requests[0]?.query.head).toBe('someone:gone');
  });

  it("a bad token is a 401 ProviderError with GitHub's message and no token anywhere", async () => {
    forge.use([github.badCredentials]);
    const e = await failure(provider.openPullRequest(input));
    expect(e).toMatchObject({
      provider: 'github',
      status: 401,
      message: 'Bad credentials',
      kind: 'bad-token',
    });
    expect(e.hint).toMatch(/token/);
    expectNoToken(e);
  });

  it('maps 404, the rate limit (403) and a missing head (422) to their hints', async () => {
    forge.use([github.notFound]);
    expect(await failure(provider.openPullRequest(input))).toMatchObject({
      status: 404,
      message: 'Not Found',
      kind: 'repo-not-found',
    });
    forge.use([github.rateLimited]);
    expect(await failure(provider.openPullRequest(input))).toMatchObject({
      status: 403,
      message: 'API rate limit exceeded for user ID 1.',
      kind: 'rate-limited',
    });
    forge.use([github.headInvalid]);
    const e = await failure(provider.openPullRequest(input));
    expect(e).toMatchObject({
      status: 422,
      message: 'Validation Failed: PullRequest head invalid',
      kind: 'invalid-request',
    });
    expect(e.hint).toMatch(/head branch/);
  });

  it('an unreachable API is a network ProviderError with status null', async () => {
    const closed = await startFixtureForge();
    const url = closed.url;
    await closed.close();
    const p = createPullRequestProvider({ kind: 'github', baseUrl: url, token: TOKEN });
    const e = await failure(p.openPullRequest(input));
    expect(e).toMatchObject({ provider: 'github', status: null, kind: 'network' });
    expect(e.message).toMatch(/ECONNREFUSED|fetch failed/);
    expectNoToken(e);
  });

  it('keeps the token out of inspect() and JSON of the provider', () => {
    expect(inspect(provider, { depth: 5 })).not.toContain(TOKEN);
    expect(JSON.stringify(provider)).not.toContain(TOKEN);
  });
});
