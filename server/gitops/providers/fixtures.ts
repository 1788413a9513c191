/**
 * FIXTURES: recorded request/response pairs for the fixture server (fixtureForge.ts), taken from the
 * forges' published API documentation. Response bodies keep the documented example's values and are cut
 * down to the fields the providers read plus a few around them; error bodies keep the documented shape
 * and the forge's own wording. They stand in for services this machine cannot reach (GitHub, GitLab);
 * Gitea is also tested for real against a Gitea built here (gitea.integration.test.ts).
 */
import type { FixtureExchange } from './fixtureForge';

/** Types an exchange (keeps the literal method). */
const fx = (e: FixtureExchange): FixtureExchange => e;

const GH_CREATE = 'https://docs.github.com/en/rest/pulls/pulls#create-a-pull-request';
const GH_LIST = 'https://docs.github.com/en/rest/pulls/pulls#list-pull-requests';
const GH_ERRORS = 'https://docs.github.com/en/rest/using-the-rest-api/troubleshooting-the-rest-api';

/** The documented example pull request (octocat/Hello-World#1347), cut down. */
const ghPull = {
  url: 'https://api.github.com/repos/octocat/Hello-World/pulls/1347',
  id: 1,
  node_id: 'MDExOlB1bGxSZXF1ZXN0MQ==',
  html_url: 'https://github.com/octocat/Hello-World/pull/1347',
  number: 1347,
  state: 'open',
  locked: true,
  title: 'Amazing new feature',
  body: 'Please pull these awesome changes in!',
  head: { label: 'octocat:new-topic', ref: 'new-topic', sha: '6dcb09b5b57875f334f61aebed695e2e4193db5e' },
  base: { label: 'octocat:master', ref: 'master', sha: '6dcb09b5b57875f334f61aebed695e2e4193db5e' },
};

/** GitHub (paths under the API root; GitHub Enterprise puts it under `/api/v3`). */
export const github = {
  pull: ghPull,
  created: fx({
    source: GH_CREATE,
    request: { method: 'POST', path: '/repos/octocat/Hello-World/pulls' },
    response: { status: 201, body: ghPull },
  }),
  listedOne: fx({
    source: GH_LIST,
    request: {
      method: 'GET',
      path: '/repos/octocat/Hello-World/pulls',
      query: { state: 'open', head: 'octocat:new-topic' },
    },
    response: { status: 200, body: [ghPull] },
  }),
  listedNone: fx({
    source: GH_LIST,
    request: { method: 'GET', path: '/repos/octocat/Hello-World/pulls', query: { state: 'open' } },
    response: { status: 200, body: [] },
  }),
  alreadyExists: fx({
    source: GH_CREATE,
    request: { method: 'POST', path: '/repos/octocat/Hello-World/pulls' },
    response: {
      status: 422,
      body: {
        message: 'Validation Failed',
        errors: [
          {
            resource: 'PullRequest',
            code: 'custom',
            message: 'A pull request already exists for octocat:new-topic.',
          },
        ],
        documentation_url: 'https://docs.github.com/rest/pulls/pulls#create-a-pull-request',
        status: '422',
      },
    },
  }),
  headInvalid: fx({
    source: GH_CREATE,
    request: { method: 'POST', path: '/repos/octocat/Hello-World/pulls' },
    response: {
      status: 422,
      body: {
        message: 'Validation Failed',
        errors: [{ resource: 'PullRequest', field: 'head', code: 'invalid' }],
        documentation_url: 'https://docs.github.com/rest/pulls/pulls#create-a-pull-request',
        status: '422',
      },
    },
  }),
  badCredentials: fx({
    source: GH_ERRORS,
    request: { method: 'POST', path: '/repos/octocat/Hello-World/pulls' },
    response: {
      status: 401,
      body: { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest', status: '401' },
    },
  }),
  notFound: fx({
    source: GH_ERRORS,
    request: { method: 'POST', path: '/repos/octocat/Hello-World/pulls' },
    response: {
      status: 404,
      body: {
        message: 'Not Found',
        documentation_url: 'https://docs.github.com/rest/pulls/pulls#create-a-pull-request',
        status: '404',
      },
    },
  }),
  rateLimited: fx({
    source: 'https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api',
    request: { method: 'POST', path: '/repos/octocat/Hello-World/pulls' },
    response: {
      status: 403,
      headers: {
        'x-ratelimit-limit': '5000',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': '1913141700',
      },
      body: {
        message: 'API rate limit exceeded for user ID 1.',
        documentation_url:
          'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-the-rate-limit-for-the-rest-api',
        status: '403',
      },
    },
  }),
};

const GL_CREATE = 'https://docs.gitlab.com/api/merge_requests/#create-mr';
const GL_LIST = 'https://docs.gitlab.com/api/merge_requests/#list-project-merge-requests';
const GL_ERRORS = 'https://docs.gitlab.com/api/rest/troubleshooting/#status-codes';
const GL_PROJECT = '/projects/my-group%2Fmy-project/merge_requests';

/** The documented example merge request (my-group/my-project!1), cut down. */
const glMergeRequest = {
  id: 1,
  iid: 1,
  project_id: 3,
  title: 'test1',
  description: 'fixed login page css paddings',
  state: 'opened',
  target_branch: 'main',
  source_branch: 'test1',
  web_url: 'http://gitlab.example.com/my-group/my-project/merge_requests/1',
};

/** GitLab (paths under `/api/v4`). */
export const gitlab = {
  mergeRequest: glMergeRequest,
  created: fx({
    source: GL_CREATE,
    request: { method: 'POST', path: GL_PROJECT },
    response: { status: 201, body: glMergeRequest },
  }),
  listedOne: fx({
    source: GL_LIST,
    request: { method: 'GET', path: GL_PROJECT, query: { state: 'opened', source_branch: 'test1' } },
    response: { status: 200, body: [glMergeRequest] },
  }),
  listedNone: fx({
    source: GL_LIST,
    request: { method: 'GET', path: GL_PROJECT, query: { state: 'opened' } },
    response: { status: 200, body: [] },
  }),
  alreadyExists: fx({
    source: GL_CREATE,
    request: { method: 'POST', path: GL_PROJECT },
    response: {
      status: 409,
      body: { message: ['Another open merge request already exists for this source branch: !1'] },
    },
  }),
  unauthorized: fx({
    source: GL_ERRORS,
    request: { method: 'POST', path: GL_PROJECT },
    response: { status: 401, body: { message: '401 Unauthorized' } },
  }),
  forbidden: fx({
    source: GL_ERRORS,
    request: { method: 'POST', path: GL_PROJECT },
    response: { status: 403, body: { message: '403 Forbidden' } },
  }),
  projectNotFound: fx({
    source: GL_ERRORS,
    request: { method: 'POST', path: GL_PROJECT },
    response: { status: 404, body: { message: '404 Project Not Found' } },
  }),
  validation: fx({
    source: 'https://docs.gitlab.com/api/rest/troubleshooting/#data-validation-and-error-reporting',
    request: { method: 'POST', path: GL_PROJECT },
    response: { status: 400, body: { message: { title: ["can't be blank"] } } },
  }),
};

const GT_SWAGGER = 'https://gitea.com/api/swagger#/repository/repoCreatePullRequest';
const GT_LIST = 'https://gitea.com/api/swagger#/repository/repoListPullRequests';
const GT_PULLS = '/repos/meshdeck/mesh/pulls';

/** A pull request in the shape of Gitea's swagger `PullRequest` definition, cut down. */
function gtPull(number: number, head: string, base = 'main') {
  return {
    id: number,
    url: `http://127.0.0.1:3000/meshdeck/mesh/pulls/${number}`,
    number,
    html_url: `http://127.0.0.1:3000/meshdeck/mesh/pulls/${number}`,
    state: 'open',
    title: `change ${number}`,
    head: { label: head, ref: head, repo: { owner: { login: 'meshdeck' }, name: 'mesh' } },
    base: { label: base, ref: base, repo: { owner: { login: 'meshdeck' }, name: 'mesh' } },
  };
}

/**
 * Gitea/Forgejo (paths under `/api/v1`). The error wording is Gitea's own (routers/api/v1/repo/pull.go and
 * routers/api/v1/api.go at v1.26.0); the success bodies follow its swagger schema.
 */
export const gitea = {
  pull: gtPull,
  created: fx({
    source: GT_SWAGGER,
    request: { method: 'POST', path: GT_PULLS },
    response: { status: 201, body: gtPull(7, 'meshdeck/change') },
  }),
  alreadyExists: fx({
    source: GT_SWAGGER,
    request: { method: 'POST', path: GT_PULLS },
    response: {
      status: 409,
      body: {
        message:
          'pull request already exists for these targets [id: 7, issue_id: 7, head_repo_id: 1, base_repo_id: 1, head_branch: meshdeck/change, base_branch: main]',
        url: 'http://127.0.0.1:3000/api/swagger',
      },
    },
  }),
  unauthorized: fx({
    source: GT_SWAGGER,
    request: { method: 'POST', path: GT_PULLS },
    response: {
      status: 401,
      body: { message: 'invalid username, password or token', url: 'http://127.0.0.1:3000/api/swagger' },
    },
  }),
  notFound: fx({
    source: GT_SWAGGER,
    request: { method: 'POST', path: GT_PULLS },
    response: { status: 404, body: { message: 'not found', url: 'http://127.0.0.1:3000/api/swagger' } },
  }),
  /** Page `page` of the open pull requests, `count` of them, none from `meshdeck/change` unless `withHead`. */
  listPage(page: number, count: number, withHead = false): FixtureExchange {
    const pulls = Array.from({ length: count }, (_, i) => gtPull(100 + page * 100 + i, `other-${page}-${i}`));
    if (withHead) pulls.push(gtPull(7, 'meshdeck/change'));
    return {
      source: GT_LIST,
      request: { method: 'GET', path: GT_PULLS, query: { state: 'open', page: String(page) } },
      response: { status: 200, body: pulls },
    };
  },
};
