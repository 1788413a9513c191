// GitOpsService.commit when the push is rejected as non-fast-forward, against real git: a smart-HTTP
// remote (git http-backend) whose hook makes someone else's commit appear on the pushed branch name
// right before git asks which refs the remote has, i.e. after Meshdeck's fetch and before its push.
import { execFile, execFileSync } from 'node:child_process';
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DraftStore } from '../console/DraftStore';
import { GitOpsService } from './GitOpsService';
import { GitRepo } from './GitRepo';
import { saveRepositoryConfig } from './repositoryConfig';
import { startSmartHttpRemote, type SmartHttpRemote } from './testing/smartHttpRemote';

const EXAMPLES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'examples');
const EXAMPLE = path.join(EXAMPLES, 'seed-example-1');
const USER = 'meshdeck-bot';
const TOKEN = `tok_${'9d41a07c2be35f16'.repeat(2)}`;
const TOKEN_ENV = 'MESHDECK_PUSH_RETRY_TEST_TOKEN';
const BOB = { name: 'Bob Elsewhere', email: 'bob@example.com' };

let tmp: string;
let seed: GitRepo;
const remotes: SmartHttpRemote[] = [];

const gitEnv = () => ({ ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: tmp, LC_ALL: 'C' });

/** Plain git on a local repository (never on the remote served by this process: it blocks the event loop). */
function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: gitEnv() }).trim();
}

/** The same, its output byte for byte (file contents). */
function gitRaw(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: gitEnv() });
}

/** Plain git without blocking: what the remote's hook runs while a push waits for its answer. */
async function gitAsync(...args: string[]): Promise<string> {
  return (await promisify(execFile)('git', args, { encoding: 'utf8', env: gitEnv() })).stdout.trim();
}

/** Someone else's commit on top of the bare repository's main (same tree, their own message and author). */
async function foreignCommit(bare: string): Promise<string> {
  const tree = await gitAsync(`--git-dir=${bare}`, 'rev-parse', 'refs/heads/main^{tree}');
  const parent = await gitAsync(`--git-dir=${bare}`, 'rev-parse', 'refs/heads/main');
  const { stdout } = await promisify(execFile)(
    'git',
    [`--git-dir=${bare}`, 'commit-tree', tree, '-p', parent, '-m', 'Bob: my own work on this branch'],
    {
      encoding: 'utf8',
      env: {
        ...gitEnv(),
        GIT_AUTHOR_NAME: BOB.name,
        GIT_AUTHOR_EMAIL: BOB.email,
        GIT_COMMITTER_NAME: BOB.name,
        GIT_COMMITTER_EMAIL: BOB.email,
      },
    },
  );
  return stdout.trim();
}

/** A remote serving a copy of the seed as `mesh.git`, a state dir configured for it, a mesh dir, the service. */
async function setup(
  name: string,
  hook: (n: number, bare: string) => Promise<void>,
): Promise<{ remote: SmartHttpRemote; bare: string; drafts: DraftStore; gitops: GitOpsService }> {
  const root = path.join(tmp, `remote-${name}`);
  const bare = path.join(root, 'mesh.git');
  await GitRepo.clone(seed.dir, bare, {}, { bare: true });
  const remote = await startSmartHttpRemote({
    username: USER,
    token: TOKEN,
    root,
    beforeReceivePackAdvertisement: (n) => hook(n, bare),
  });
  remotes.push(remote);
  const stateDir = path.join(tmp, `state-${name}`);
  const meshDir = path.join(tmp, `mesh-${name}`);
  await cp(EXAMPLE, meshDir, { recursive: true });
  await saveRepositoryConfig(stateDir, {
    format: 1,
    source: { kind: 'url', url: remote.url('mesh') },
    baseBranch: 'main',
    meshDir: 'mesh',
    credentials: { kind: 'token', username: USER, token: { from: 'env', name: TOKEN_ENV } },
  });
  const drafts = new DraftStore({ meshDir, stateDir, logger: { warn: () => undefined } });
  const gitops = await GitOpsService.start({ stateDir, examplesDir: EXAMPLES, drafts });
  const s = await drafts.get();
  const saved = await drafts.save({
    draft: {
      ...s.draft,
      files: {
        ...s.draft.files,
        'mesh.yaml': s.draft.files['mesh.yaml']!.replace('port: 8888', 'port: 8889'),
      },
    },
    baseRevision: s.revision,
  });
  if (!saved.ok) throw new Error(JSON.stringify(saved.body));
  return { remote, bare, drafts, gitops };
}

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'meshdeck-push-retry-'));
  process.env[TOKEN_ENV] = TOKEN;
  const files: Record<string, string> = { 'README.md': '# gitops\n' };
  for (const f of ['mesh.yaml', 'cluster.yaml'])
    files[`mesh/${f}`] = await readFile(path.join(EXAMPLE, f), 'utf8');
  seed = await GitRepo.init(path.join(tmp, 'seed'), { files });
});

afterEach(async () => {
  for (const r of remotes.splice(0)) await r.stop();
});

afterAll(async () => {
  delete process.env[TOKEN_ENV];
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe('GitOpsService.commit when the push is rejected as non-fast-forward', () => {
  it('fetches and pushes again once: a branch that someone else held and then deleted ends with our commit', async () => {
    const branch = 'meshdeck/retry-gone';
    const calls: number[] = [];
    let foreign = '';
    const { remote, bare, drafts, gitops } = await setup('gone', async (n, bareDir) => {
      calls.push(n);
      if (n === 1) {
        foreign = await foreignCommit(bareDir);
        await gitAsync(`--git-dir=${bareDir}`, 'update-ref', `refs/heads/${branch}`, foreign);
      } else if (n === 2) {
        await gitAsync(`--git-dir=${bareDir}`, 'update-ref', '-d', `refs/heads/${branch}`, foreign);
      }
    });
    const base = git(bare, 'rev-parse', 'refs/heads/main');
    const draft = (await drafts.get()).draft.files['mesh.yaml']!;

    const r = await gitops.commit({ branch, message: 'Edit the websocket port\n' });
    if (!r.ok) throw new Error(`expected success, got ${r.status} ${JSON.stringify(r.body)}`);

    expect(calls).toEqual([1, 2]);
    expect(remote.stats.receivePackAdvertisements).toBe(2);
    expect(r.body).toMatchObject({ branch, pushed: true });
    expect(git(bare, 'rev-parse', `refs/heads/${branch}`)).toBe(r.body.commit);
    expect(git(bare, 'rev-parse', `${branch}^`)).toBe(base);
    expect(gitRaw(bare, 'show', `${branch}:mesh/mesh.yaml`)).toBe(draft);
    expect(git(bare, 'log', '-1', '--format=%an <%ae>', branch)).not.toContain(BOB.email);
    expect(git(bare, 'rev-parse', 'refs/heads/main')).toBe(base);
  });

  it('answers 409 with the branch field after a second rejection, never forces, and keeps the draft', async () => {
    const branch = 'meshdeck/retry-taken';
    const calls: number[] = [];
    let foreign = '';
    const { remote, bare, drafts, gitops } = await setup('taken', async (n, bareDir) => {
      calls.push(n);
      if (n === 1) {
        foreign = await foreignCommit(bareDir);
        await gitAsync(`--git-dir=${bareDir}`, 'update-ref', `refs/heads/${branch}`, foreign);
      }
    });
    const base = git(bare, 'rev-parse', 'refs/heads/main');
    const kept = await drafts.get();

    const r = await gitops.commit({ branch });
    expect(r.ok).toBe(false);
    if (r.ok) return;

    expect(r.status).toBe(409);
    expect(r.body.fields?.[0]?.path).toBe('branch');
    expect(r.body.fields?.[0]?.message).toContain(branch);
    expect(r.body.error).toMatch(/rejected the push .* twice/);
    expect(r.body.git).toMatchObject({ op: 'push', kind: 'non-fast-forward' });
    expect(r.body.git?.stderr).toMatch(/\[rejected\]/);
    expect(JSON.stringify(r.body)).not.toContain(TOKEN);
    // One retry, no third attempt and no forced push: the branch still holds Bob's commit.
    expect(calls).toEqual([1, 2]);
    expect(remote.stats.receivePackAdvertisements).toBe(2);
    expect(git(bare, 'rev-parse', `refs/heads/${branch}`)).toBe(foreign);
    expect(git(bare, 'rev-parse', 'refs/heads/main')).toBe(base);
    expect(git(bare, 'for-each-ref', '--format=%(refname)', 'refs/heads/')).toBe(
      ['refs/heads/main', `refs/heads/${branch}`].sort().join('\n'),
    );
    // The draft is as it was, and nothing is on record as committed.
    expect(await drafts.get()).toEqual(kept);
    const status = await gitops.status();
    if (!status.ok) throw new Error(JSON.stringify(status.body));
    expect(status.body.lastCommit).toBeUndefined();
    expect(status.body.changes.objects.map((c) => c.key)).toEqual(['VirtualService/default/transcoder-vsvc']);
  });

  it("commits the draft again to the branch it pushed last (updating its pull request), but never over someone else's commit", async () => {
    const branch = 'meshdeck/update-own';
    let bobPushes = false;
    let foreign = '';
    const { bare, drafts, gitops } = await setup('own', async (_n, bareDir) => {
      if (bobPushes && !foreign) {
        foreign = await foreignCommit(bareDir);
        await gitAsync(`--git-dir=${bareDir}`, 'update-ref', `refs/heads/${branch}`, foreign);
      }
    });
    const first = await gitops.commit({ branch });
    if (!first.ok) throw new Error(JSON.stringify(first.body));
    // The next commit of this draft is proposed on the same branch, so its pull request follows.
    const proposed = await gitops.status();
    if (!proposed.ok) throw new Error(JSON.stringify(proposed.body));
    expect(proposed.body.proposal.branch).toBe(branch);

    // Edit again and commit to the same branch: the branch now holds the new commit.
    const s = await drafts.get();
    const saved = await drafts.save({
      draft: {
        ...s.draft,
        files: {
          ...s.draft.files,
          'mesh.yaml': s.draft.files['mesh.yaml']!.replace('port: 8889', 'port: 8890'),
        },
      },
      baseRevision: s.revision,
    });
    if (!saved.ok) throw new Error(JSON.stringify(saved.body));
    const second = await gitops.commit({ branch });
    if (!second.ok) throw new Error(`expected success, got ${second.status} ${JSON.stringify(second.body)}`);
    expect(second.body.commit).not.toBe(first.body.commit);
    expect(git(bare, 'rev-parse', `refs/heads/${branch}`)).toBe(second.body.commit);
    expect(gitRaw(bare, 'show', `${branch}:mesh/mesh.yaml`)).toContain('port: 8890');

    // Someone else pushes to that branch before the next commit: it is theirs now, and it stays.
    bobPushes = true;
    const third = await gitops.commit({ branch, message: 'again\n' });
    expect(third.ok).toBe(false);
    if (third.ok) return;
    expect(third.status).toBe(409);
    expect(third.body.fields?.[0]?.path).toBe('branch');
    expect(git(bare, 'rev-parse', `refs/heads/${branch}`)).toBe(foreign);
    // The branch is someone else's now: a new one is proposed.
    const after = await gitops.status();
    if (!after.ok) throw new Error(JSON.stringify(after.body));
    expect(after.body.proposal.branch).not.toBe(branch);
  });
});
