// Against a REAL Gitea: built from its Go module by scripts/gitea-build.sh (cached by version; a cold
// build takes many minutes, so CI runs the script before the tests), started on 127.0.0.1 with SQLite by
// server/gitops/testing/giteaServer.ts. A branch is pushed over smart HTTP with the real `git` CLI.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GiteaServer, giteaGit, startGitea } from '@/server/gitops/testing/giteaServer';
import { createPullRequestProvider, isProviderError, type ProviderError } from './index';

let gitea: GiteaServer;
let work: string;

/** Runs git with the token as a Basic Authorization header (kept out of URLs and argv). */
const git = (cwd: string, ...args: string[]) => giteaGit(gitea, cwd, ...args);

async function failure(p: Promise<unknown>): Promise<ProviderError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!isProviderError(e)) throw new Error(`expected a ProviderError, got ${inspect(e)}`);
  return e;
}

beforeAll(async () => {
  // Long enough for a cold build of Gitea when the cache is empty (measured 44 min wall, 22 CPU-min, on a busy 2-core machine).
  gitea = await startGitea();
  work = await mkdtemp(path.join(os.tmpdir(), 'meshdeck-gitea-work-'));
}, 50 * 60_000);

afterAll(async () => {
  await gitea?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('GiteaProvider against a real Gitea', () => {
  it('pushes a branch over HTTP, opens a real pull request, and a second open returns the same one', async () => {
    const { cloneUrl } = await gitea.createRepo('mesh');
    const clone = path.join(work, 'mesh');
    await git(work, 'clone', cloneUrl, clone);
    await git(clone, 'checkout', '-b', 'meshdeck/edit-1');
    await writeFile(
      path.join(clone, 'virtualservice.yaml'),
      'apiVersion: msm.l7mp.io/v1\nkind: VirtualService\n',
    );
    await git(clone, 'add', 'virtualservice.yaml');
    await git(clone, 'commit', '-m', 'Add a VirtualService');
    await git(clone, 'push', 'origin', 'meshdeck/edit-1');

    const provider = createPullRequestProvider({ kind: 'gitea', baseUrl: gitea.url, token: gitea.token });
    const input = {
      owner: gitea.username,
      repo: 'mesh',
      head: 'meshdeck/edit-1',
      base: 'main',
      title: 'Add a VirtualService',
      body: '## Rendered changes\n\n- proxy-a: +1 listener',
    };
    const first = await provider.openPullRequest(input);
    expect(first).toEqual({ url: `${gitea.url}/${gitea.username}/mesh/pulls/1`, number: 1, created: true });

    // The pull request exists in Gitea as sent.
    const res = await fetch(`${gitea.url}/api/v1/repos/${gitea.username}/mesh/pulls/1`, {
      headers: { authorization: `token ${gitea.token}` },
    });
    const pr = (await res.json()) as { title: string; body: string; state: string; head: { ref: string } };
    expect(pr).toMatchObject({
      title: input.title,
      body: input.body,
      state: 'open',
      head: { ref: 'meshdeck/edit-1' },
    });

    const second = await provider.openPullRequest({ ...input, title: 'again' });
    expect(second).toEqual({ url: first.url, number: 1, created: false });
    expect(
      await provider.findOpenPullRequest('meshdeck/edit-1', { owner: gitea.username, repo: 'mesh' }),
    ).toEqual({
      url: first.url,
      number: 1,
    });
    expect(
      await provider.findOpenPullRequest('no-such-branch', { owner: gitea.username, repo: 'mesh' }),
    ).toBeUndefined();
  });

  it("a bad token is a 401 ProviderError with Gitea's own message and no token in it", async () => {
    const badToken = 'deadbeef'.repeat(5);
    const provider = createPullRequestProvider({ kind: 'gitea', baseUrl: gitea.url, token: badToken });
    const e = await failure(
      provider.openPullRequest({
        owner: gitea.username,
        repo: 'mesh',
        head: 'meshdeck/edit-1',
        base: 'main',
        title: 't',
        body: '',
      }),
    );
    expect(e).toMatchObject({ provider: 'gitea', status: 401, kind: 'bad-token' });
    expect(e.message).toMatch(/token|user/i);
    const everything = [e.message, e.hint, JSON.stringify(e), String(e.stack), inspect(e)].join('\n');
    expect(everything).not.toContain(badToken);
    expect(everything).not.toContain(gitea.token);
  });

  it("an unknown repository and an unpushed head are 404; head = base is 422 with Gitea's words", async () => {
    const provider = createPullRequestProvider({ kind: 'gitea', baseUrl: gitea.url, token: gitea.token });
    const base = { owner: gitea.username, base: 'main', title: 't', body: '' };
    const missingRepo = await failure(provider.openPullRequest({ ...base, repo: 'nope', head: 'x' }));
    expect(missingRepo).toMatchObject({ status: 404, kind: 'repo-not-found' });
    // Gitea does not tell a missing branch from a missing repository; the hint names both.
    const missingHead = await failure(
      provider.openPullRequest({ ...base, repo: 'mesh', head: 'never-pushed' }),
    );
    expect(missingHead).toMatchObject({ status: 404, kind: 'repo-not-found' });
    expect(missingHead.hint).toMatch(/branch/);
    const noChanges = await failure(provider.openPullRequest({ ...base, repo: 'mesh', head: 'main' }));
    expect(noChanges).toMatchObject({
      status: 422,
      kind: 'invalid-request',
      message: 'Invalid PullRequest: There are no changes between the head and the base',
    });
  });
});
