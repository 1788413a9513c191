// Against FIXTURES (fixtureForge.ts + fixtures.ts: GitLab's documented examples), not GitLab itself,
// which this machine cannot reach. The base URL is a self-hosted instance root.
import { inspect } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FixtureForge, startFixtureForge } from './fixtureForge';
import { gitlab } from './fixtures';
import {
  createPullRequestProvider,
  isProviderError,
  type ProviderError,
  type PullRequestProvider,
} from './index';

const TOKEN = 'glpat-fixtureToken0123456789';
const input = {
  owner: 'my-group',
  repo: 'my-project',
  head: 'test1',
  base: 'main',
  title: 'test1',
  body: 'fixed login page css paddings',
};

let forge: FixtureForge;
let provider: PullRequestProvider;

beforeAll(async () => {
  forge = await startFixtureForge('/api/v4');
  provider = createPullRequestProvider({ kind: 'gitlab', baseUrl: `${forge.url}/`, token: TOKEN });
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

describe('GitLabProvider (fixtures)', () => {
  it('opens a merge request on the URL-encoded project path with PRIVATE-TOKEN', async () => {
    forge.use([gitlab.created]);
    const mr = await provider.openPullRequest(input);
    expect(mr).toEqual({
      url: 'http://gitlab.example.com/my-group/my-project/merge_requests/1',
      number: 1,
      created: true,
    });
    const [req] = forge.requests;
    expect(req?.method).toBe('POST');
    expect(req?.path).toBe('/projects/my-group%2Fmy-project/merge_requests');
    expect(req?.headers['private-token']).toBe(TOKEN);
    expect(req?.headers.authorization).toBeUndefined();
    expect(req?.body).toEqual({
      source_branch: 'test1',
      target_branch: 'main',
      title: 'test1',
      description: 'fixed login page css paddings',
    });
  });

  it('returns the open merge request when GitLab answers 409 for the source branch', async () => {
    forge.use([gitlab.alreadyExists, gitlab.listedOne]);
    expect(await provider.openPullRequest(input)).toEqual({
      url: 'http://gitlab.example.com/my-group/my-project/merge_requests/1',
      number: 1,
      created: false,
    });
    expect(forge.requests[1]?.query).toEqual({
      state: 'opened',
      source_branch: 'test1',
      target_branch: 'main',
    });
    expect(forge.pending()).toEqual([]);
  });

  it('a nested group is one encoded project path; no open merge request is undefined', async () => {
    forge.use([
      {
        ...gitlab.listedNone,
        request: { ...gitlab.listedNone.request, path: '/projects/a%2Fb%2Fc/merge_requests' },
      },
    ]);
    expect(await provider.findOpenPullRequest('x', { owner: 'a/b', repo: 'c' })).toBeUndefined();
    expect(forge.requests[0]?.path).toBe('/projects/a%2Fb%2Fc/merge_requests');
  });

  it("a bad token is a 401 ProviderError with GitLab's message and no token in it", async () => {
    forge.use([gitlab.unauthorized]);
    const e = await failure(provider.openPullRequest(input));
    expect(e).toMatchObject({
      provider: 'gitlab',
      status: 401,
      message: '401 Unauthorized',
      kind: 'bad-token',
    });
    expect(JSON.stringify(e) + e.stack + inspect(e)).not.toContain(TOKEN);
  });

  it('maps 403, 404 and a validation error (400, message per field) to their kinds', async () => {
    forge.use([gitlab.forbidden]);
    expect(await failure(provider.openPullRequest(input))).toMatchObject({ status: 403, kind: 'forbidden' });
    forge.use([gitlab.projectNotFound]);
    expect(await failure(provider.openPullRequest(input))).toMatchObject({
      status: 404,
      message: '404 Project Not Found',
      kind: 'repo-not-found',
    });
    forge.use([gitlab.validation]);
    expect(await failure(provider.openPullRequest(input))).toMatchObject({
      status: 400,
      message: "title can't be blank",
      kind: 'invalid-request',
    });
  });

  it('a 409 with no open merge request to return stays an error', async () => {
    forge.use([gitlab.alreadyExists, gitlab.listedNone]);
    const e = await failure(provider.openPullRequest(input));
    expect(e).toMatchObject({
      status: 409,
      kind: 'already-exists',
      message: 'Another open merge request already exists for this source branch: !1',
    });
  });
});
