// The git layer against real git: a smart-HTTP remote (git http-backend behind basic auth) on
// loopback, the local default repository, and byte-exact reads. Every folder is a temp dir removed after.
import { execFileSync } from 'node:child_process';
import { appendFile, cp, mkdtemp, readFile, rm, stat, symlink } from 'node:fs/promises';
import { type AddressInfo, createServer, type Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readMeshDirContent } from '../console/meshDirFiles';
import type { GitCredentials } from './gitCredentials';
import { GitError, isGitError } from './gitErrors';
import { fileChanges, GitRepo } from './GitRepo';
import {
  ensureLocalRepository,
  exampleCopiedAt,
  isMeshFile,
  loadOrInitRepositoryConfig,
  localRepositoryPaths,
  openRepository,
} from './repository';
import { loadRepositoryConfig, repositoryConfigFile } from './repositoryConfig';
import { startSmartHttpRemote, type SmartHttpRemote } from './testing/smartHttpRemote';

const EXAMPLES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'examples');
const USER = 'meshdeck-bot';
const TOKEN = `tok_${'8f3a91c2d7e4b605'.repeat(2)}`;
const GOOD: GitCredentials = { kind: 'token', username: USER, token: TOKEN };
const ALICE = { name: 'Alice Example', email: 'alice@example.com' };

const SEED: Record<string, string> = {
  'README.md': '# gitops\n',
  'mesh/mesh.yaml': '# the mesh\napiVersion: msm.l7mp.io/v1\nkind: VirtualService\nmetadata:\n  name: a\n',
  'mesh/targets/t.yaml': 'kind: Target # inline comment\n',
};

let tmp: string;
let remote: SmartHttpRemote;

/** Throws unless `p` rejects with a GitError; answers it. */
async function gitError(p: Promise<unknown>): Promise<GitError> {
  try {
    await p;
  } catch (e) {
    if (isGitError(e)) return e;
    throw e;
  }
  throw new Error('expected a GitError, the call succeeded');
}

function everything(e: GitError): string {
  return `${e.message}\n${e.stderr}\n${e.hint}\n${JSON.stringify(e)}\n${String(e.stack)}`;
}

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'meshdeck-gitops-test-'));
  remote = await startSmartHttpRemote({ username: USER, token: TOKEN });
  const seed = await GitRepo.init(path.join(tmp, 'seed'), { files: SEED, author: ALICE });
  await GitRepo.clone(seed.dir, path.join(remote.root, 'mesh.git'), {}, { bare: true });
});

afterAll(async () => {
  await remote?.stop();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe('the local default repository', () => {
  it('is created on first start with the examples, works with no network, and is reused later', async () => {
    const stateDir = path.join(tmp, 'state-local');
    const config = await loadOrInitRepositoryConfig(stateDir, EXAMPLES);
    const paths = localRepositoryPaths(stateDir);
    expect(config).toEqual({
      format: 1,
      source: { kind: 'path', path: paths.remote },
      baseBranch: 'main',
      meshDir: 'examples/seed-example-1',
      credentials: { kind: 'none' },
      workingCopy: paths.work,
    });
    expect((await stat(repositoryConfigFile(stateDir))).mode & 0o777).toBe(0o600);
    expect(await loadRepositoryConfig(stateDir)).toEqual(config);
    // A bare "remote" and a working clone whose files are the examples, byte for byte.
    expect(
      execFileSync('git', ['-C', paths.remote, 'rev-parse', '--is-bare-repository'], { encoding: 'utf8' }),
    ).toBe('true\n');
    const exampleMesh = await readMeshDirContent(path.join(EXAMPLES, 'seed-example-1'));
    expect(Object.keys(exampleMesh.files).length).toBeGreaterThan(0);
    for (const [p, text] of Object.entries(exampleMesh.files))
      expect(await readFile(path.join(paths.work, config.meshDir, p), 'utf8')).toBe(text);

    const repo = await openRepository(stateDir, config);
    const base = await repo.remoteHead('main');
    expect(await repo.readFiles(base, config.meshDir)).toEqual(exampleMesh.files);

    // Branch, commit and push with no network.
    await repo.createBranch('meshdeck/local-edit', base);
    const c = await repo.commitFiles({
      branch: 'meshdeck/local-edit',
      dir: config.meshDir,
      changes: { 'extra.yaml': 'kind: Target\n' },
      message: 'Add a target',
      author: ALICE,
    });
    expect(await repo.push('meshdeck/local-edit')).toEqual({
      remoteRef: 'refs/heads/meshdeck/local-edit',
      commit: c.commit,
      status: 'created',
    });
    const bare = await GitRepo.open(paths.remote);
    expect(await bare.revParse('refs/heads/meshdeck/local-edit')).toBe(c.commit);

    // Later starts: same repository, same first commit, the stored config; a lost working clone comes back.
    await rm(paths.work, { recursive: true, force: true });
    expect(await ensureLocalRepository(stateDir, EXAMPLES)).toEqual(config);
    expect(await loadOrInitRepositoryConfig(stateDir, EXAMPLES)).toEqual(config);
    expect(await bare.revParse('refs/heads/main')).toBe(base);
    expect(await bare.revParse('refs/heads/meshdeck/local-edit')).toBe(c.commit);
    expect((await stat(path.join(paths.work, config.meshDir, 'mesh.yaml'))).isFile()).toBe(true);
  });

  it('on a first start serving a copy of an example, points at that example; an edited copy gets the default', async () => {
    const copy = path.join(tmp, 'served-grpc-canary');
    await cp(path.join(EXAMPLES, 'grpc-canary'), copy, { recursive: true });
    expect(await exampleCopiedAt(copy, EXAMPLES)).toBe('grpc-canary');
    const stateDir = path.join(tmp, 'state-copy');
    const config = await loadOrInitRepositoryConfig(stateDir, EXAMPLES, copy);
    expect(config.meshDir).toBe('examples/grpc-canary');
    // Stored: a later start serving anything keeps it.
    expect(await loadOrInitRepositoryConfig(stateDir, EXAMPLES, path.join(EXAMPLES, 'canary'))).toEqual(
      config,
    );

    await appendFile(path.join(copy, 'mesh.yaml'), '# edited\n');
    expect(await exampleCopiedAt(copy, EXAMPLES)).toBeUndefined();
    const other = await loadOrInitRepositoryConfig(path.join(tmp, 'state-edited'), EXAMPLES, copy);
    expect(other.meshDir).toBe('examples/seed-example-1');
    expect(await exampleCopiedAt(path.join(tmp, 'no-such-dir'), EXAMPLES)).toBeUndefined();
  });
});

describe('a smart-HTTP remote behind basic auth', () => {
  it('clones with good credentials (answering the 401 challenge through askpass)', async () => {
    const before = remote.stats.unauthorized;
    const repo = await GitRepo.clone(remote.url('mesh'), path.join(tmp, 'clone-good'), { credentials: GOOD });
    expect(remote.stats.unauthorized).toBeGreaterThan(before);
    const main = await repo.remoteHead('main');
    expect(await repo.readFiles(main, 'mesh')).toEqual({
      'mesh.yaml': SEED['mesh/mesh.yaml'],
      'targets/t.yaml': SEED['mesh/targets/t.yaml'],
    });
    expect(await repo.readFiles(main, '.')).toEqual(SEED);
    // Nothing checked out: the clone is Meshdeck's, read through git only.
    await expect(stat(path.join(repo.dir, 'README.md'))).rejects.toThrow();
    expect(await repo.log({ dir: 'mesh', until: main })).toEqual([
      {
        commit: main,
        parents: [],
        author: ALICE,
        date: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        subject: 'Initial commit',
      },
    ]);
  });

  it('commits on a new branch and pushes it; the remote has exactly the new files', async () => {
    const repo = await GitRepo.clone(remote.url('mesh'), path.join(tmp, 'clone-branch'), {
      credentials: GOOD,
      protectedBranches: ['main'],
    });
    const base = await repo.remoteHead('main');
    await repo.createBranch('meshdeck/add-worker', 'origin/main');
    const result = await repo.commitFiles({
      branch: 'meshdeck/add-worker',
      dir: 'mesh',
      changes: {
        'mesh.yaml': `${SEED['mesh/mesh.yaml']}---\nkind: Route\n`,
        'workers/worker.yaml': 'kind: Target\nmetadata:\n  name: worker\n',
        'targets/t.yaml': null,
      },
      message: 'Add the worker\n\nBody line.',
      author: ALICE,
    });
    expect(result).toEqual({
      commit: expect.stringMatching(/^[0-9a-f]{40}$/),
      parent: base,
      branch: 'meshdeck/add-worker',
      changed: ['mesh.yaml', 'targets/t.yaml', 'workers/worker.yaml'],
    });
    await expect(gitError(repo.commitFiles({ ...sameCommit(result), author: ALICE }))).resolves.toMatchObject(
      {
        kind: 'nothing-to-commit',
      },
    );
    expect(await repo.push('meshdeck/add-worker')).toMatchObject({
      status: 'created',
      commit: result.commit,
    });
    expect(await repo.push('meshdeck/add-worker')).toMatchObject({ status: 'up-to-date' });

    const bare = await GitRepo.open(path.join(remote.root, 'mesh.git'));
    expect(await bare.revParse('refs/heads/meshdeck/add-worker')).toBe(result.commit);
    expect(await bare.revParse('refs/heads/main')).toBe(base);
    expect(await bare.readFiles('refs/heads/meshdeck/add-worker', 'mesh')).toEqual({
      'mesh.yaml': `${SEED['mesh/mesh.yaml']}---\nkind: Route\n`,
      'workers/worker.yaml': 'kind: Target\nmetadata:\n  name: worker\n',
    });
    const log = await bare.log({ dir: 'mesh', since: base, until: 'refs/heads/meshdeck/add-worker' });
    expect(log.map((l) => [l.subject, l.author, l.parents])).toEqual([['Add the worker', ALICE, [base]]]);
    expect(
      execFileSync('git', ['-C', bare.dir, 'log', '-1', '--format=%cn <%ce>', result.commit], {
        encoding: 'utf8',
      }),
    ).toBe('Meshdeck <meshdeck@localhost>\n');
    // The clone's working tree was never written: commits happen in a temporary worktree.
    await expect(stat(path.join(repo.dir, 'mesh'))).rejects.toThrow();
    expect(
      execFileSync('git', ['-C', repo.dir, 'worktree', 'list'], { encoding: 'utf8' }).trim().split('\n'),
    ).toHaveLength(1);
  });

  it('rejects a push of the base branch after the remote moved (non-fast-forward) and never forces it', async () => {
    const a = await GitRepo.clone(remote.url('mesh'), path.join(tmp, 'clone-a'), {
      credentials: GOOD,
      protectedBranches: ['main'],
    });
    const b = await GitRepo.clone(remote.url('mesh'), path.join(tmp, 'clone-b'), { credentials: GOOD });
    const moved = await b.commitFiles({
      branch: 'main',
      dir: 'mesh',
      changes: { 'other.yaml': 'kind: Target\n' },
      message: 'Someone else',
      author: ALICE,
    });
    expect(await b.push('main')).toMatchObject({ status: 'fast-forward' });

    const mine = await a.commitFiles({
      branch: 'main',
      dir: 'mesh',
      changes: { 'mine.yaml': 'kind: Route\n' },
      message: 'Mine',
      author: ALICE,
    });
    const rejected = await gitError(a.push('main'));
    expect(rejected).toMatchObject({ op: 'push', kind: 'non-fast-forward', exitCode: 1 });
    expect(rejected.hint).toMatch(/non-fast-forward/);
    expect(rejected.stderr).toMatch(/rejected/);

    const forced = await gitError(a.push('main', { forceWithLease: moved.commit }));
    expect(forced).toMatchObject({ op: 'push', kind: 'refused', exitCode: null });
    expect(forced.hint).toMatch(/refusing to force-push the protected branch main/);

    const bare = await GitRepo.open(path.join(remote.root, 'mesh.git'));
    expect(await bare.revParse('refs/heads/main')).toBe(moved.commit);
    // What the caller does next: fetch, see the remote moved, and find the old base is behind it.
    expect((await a.fetch()).main).toBe(moved.commit);
    expect(await a.isAncestor(moved.commit, mine.commit)).toBe(false);
    expect(await a.isAncestor(mine.parent, moved.commit)).toBe(true);
    // Rebased onto the moved remote (no conflict: other files), the push goes through.
    const rebased = await a.rebaseBranch('main', 'origin/main');
    expect(await a.isAncestor(moved.commit, rebased)).toBe(true);
    expect(await a.push('main')).toEqual({
      remoteRef: 'refs/heads/main',
      commit: rebased,
      status: 'fast-forward',
    });
    expect(await bare.readFiles('refs/heads/main', 'mesh')).toMatchObject({
      'mine.yaml': 'kind: Route\n',
      'other.yaml': 'kind: Target\n',
    });
    expect((await a.log({ dir: 'mesh', since: moved.commit, until: 'main' })).map((l) => l.author)).toEqual([
      ALICE,
    ]);
    // A commit on a branch that moved meanwhile is refused as well.
    const stale = await gitError(
      a.commitFiles({
        branch: 'main',
        dir: 'mesh',
        changes: { 'x.yaml': 'x\n' },
        message: 'x',
        author: ALICE,
        expectedHead: mine.parent,
      }),
    );
    expect(stale.kind).toBe('non-fast-forward');
  });

  it('a rebase onto a change of the same lines is a merge conflict that names the file and keeps the branch', async () => {
    const a = await GitRepo.clone(remote.url('mesh'), path.join(tmp, 'clone-conflict-a'), {
      credentials: GOOD,
    });
    const b = await GitRepo.clone(remote.url('mesh'), path.join(tmp, 'clone-conflict-b'), {
      credentials: GOOD,
    });
    const edit = (repo: GitRepo, branch: string, name: string) =>
      repo.commitFiles({
        branch,
        dir: 'mesh',
        changes: { 'mesh.yaml': SEED['mesh/mesh.yaml']!.replace('name: a', `name: ${name}`) },
        message: `rename to ${name}`,
        author: ALICE,
      });
    await b.createBranch('meshdeck/conflict', 'origin/main');
    await edit(b, 'meshdeck/conflict', 'theirs');
    await b.push('meshdeck/conflict');
    await a.createBranch('meshdeck/conflict', 'origin/main');
    const mine = await edit(a, 'meshdeck/conflict', 'mine');
    expect((await gitError(a.push('meshdeck/conflict'))).kind).toBe('non-fast-forward');
    await a.fetch();
    const conflict = await gitError(a.rebaseBranch('meshdeck/conflict', 'origin/meshdeck/conflict'));
    expect(conflict).toMatchObject({ op: 'rebase', kind: 'merge-conflict', conflicts: ['mesh/mesh.yaml'] });
    expect(conflict.hint).toMatch(/^merge conflict/);
    expect(conflict.stderr).toMatch(/CONFLICT \(content\): Merge conflict in mesh\/mesh.yaml/);
    expect(JSON.parse(JSON.stringify(conflict))).toMatchObject({ conflicts: ['mesh/mesh.yaml'] });
    expect(await a.revParse('meshdeck/conflict')).toBe(mine.commit);
    expect(
      execFileSync('git', ['-C', a.dir, 'worktree', 'list'], { encoding: 'utf8' }).trim().split('\n'),
    ).toHaveLength(1);
  });

  it('bad credentials fail with the authentication hint and the token appears nowhere', async () => {
    const badToken = `tok_${'c0ffee5ecret0042'.repeat(2)}`;
    const bad: GitCredentials = { kind: 'token', username: USER, token: badToken };
    const cloneErr = await gitError(
      GitRepo.clone(remote.url('mesh'), path.join(tmp, 'clone-bad'), { credentials: bad }),
    );
    expect(cloneErr).toMatchObject({ op: 'clone', kind: 'auth-failed', exitCode: 128 });
    expect(cloneErr.hint).toMatch(/^authentication failed/);
    expect(cloneErr.stderr).toMatch(/Authentication failed/);

    // A failing push with a token in play: the good clone, opened with a wrong token.
    const good = await GitRepo.clone(remote.url('mesh'), path.join(tmp, 'clone-for-bad-push'), {
      credentials: GOOD,
    });
    await good.createBranch('meshdeck/bad-push', 'origin/main');
    await good.commitFiles({
      branch: 'meshdeck/bad-push',
      dir: 'mesh',
      changes: { 'p.yaml': 'p\n' },
      message: 'p',
      author: ALICE,
    });
    const badRepo = await GitRepo.open(good.dir, { credentials: bad });
    const pushErr = await gitError(badRepo.push('meshdeck/bad-push'));
    expect(pushErr).toMatchObject({ op: 'push', kind: 'auth-failed' });
    const base64 = Buffer.from(`${USER}:${badToken}`).toString('base64');
    for (const e of [cloneErr, pushErr]) {
      expect(everything(e)).not.toContain(badToken);
      expect(everything(e)).not.toContain(base64);
    }
    // A server that echoes refused credentials makes git print them: the GitError carries them masked.
    const echoing = await startSmartHttpRemote({
      username: USER,
      token: TOKEN,
      root: remote.root,
      echoRefusedCredentials: true,
    });
    try {
      const echoRepo = await GitRepo.open(good.dir, { credentials: bad });
      execFileSync('git', ['-C', good.dir, 'remote', 'set-url', 'origin', echoing.url('mesh')]);
      const echoed = await gitError(echoRepo.push('meshdeck/bad-push'));
      expect(echoed).toMatchObject({ op: 'push', kind: 'auth-failed' });
      expect(echoed.stderr).toContain(`refused credentials: ${USER}:*** (Basic ***)`);
      expect(everything(echoed)).not.toContain(badToken);
      expect(everything(echoed)).not.toContain(base64);
    } finally {
      await echoing.stop();
    }
    // No credentials at all: the same hint (git may not prompt).
    const none = await gitError(GitRepo.clone(remote.url('mesh'), path.join(tmp, 'clone-none')));
    expect(none.kind).toBe('auth-failed');
    // Redaction itself: a secret that git did print would be masked.
    expect(badRepo.redact(`fatal: ${badToken} ${base64} http://u:${badToken}@h/x`)).toBe(
      'fatal: *** *** http://u:***@h/x',
    );
  });

  it('names a missing repository and an unreachable server', async () => {
    const missing = await gitError(
      GitRepo.clone(remote.url('no-such-repo'), path.join(tmp, 'clone-missing'), { credentials: GOOD }),
    );
    expect(missing.kind).toBe('repo-not-found');
    const closedPort = await freePort();
    const down = await gitError(
      GitRepo.clone(`http://127.0.0.1:${closedPort}/mesh.git`, path.join(tmp, 'clone-down'), {
        credentials: GOOD,
      }),
    );
    expect(down.kind).toBe('network-unreachable');
    expect(everything(down)).not.toContain(TOKEN);
  });
});

describe('one repository, several callers', () => {
  it('commits on two branches at once, and a diff of file maps commits exactly the changes', async () => {
    const repo = await GitRepo.clone(remote.url('mesh'), path.join(tmp, 'clone-parallel'), {
      credentials: GOOD,
    });
    const base = await repo.readFiles('origin/main', 'mesh', isMeshFile);
    const drafts = ['one', 'two', 'three'].map((n) => ({
      branch: `meshdeck/parallel-${n}`,
      files: {
        ...base,
        [`${n}.yaml`]: `name: ${n}\n`,
        '.meshdeck-layout.json': `{"${n}": {"x": 1, "y": 2}}\n`,
      },
    }));
    for (const d of drafts) await repo.createBranch(d.branch, 'origin/main');
    const results = await Promise.all(
      drafts.map((d) =>
        repo.commitFiles({
          branch: d.branch,
          dir: 'mesh',
          changes: fileChanges(base, d.files),
          message: d.branch,
          author: ALICE,
        }),
      ),
    );
    for (const [i, d] of drafts.entries()) {
      expect(results[i]!.changed.sort()).toEqual(
        ['.meshdeck-layout.json', `${d.branch.split('-').pop()}.yaml`].sort(),
      );
      expect(await repo.readFiles(d.branch, 'mesh', isMeshFile)).toEqual(d.files);
    }
    expect(fileChanges({ a: '1', b: '2', c: '3' }, { a: '1', b: '20', d: '4' })).toEqual({
      b: '20',
      c: null,
      d: '4',
    });
    expect(['a.yaml', 'b/c.yml', 'd.json', '.meshdeck-layout.json'].every(isMeshFile)).toBe(true);
    expect(['README.md', '.hidden/x.yaml', 'node_modules/x.yaml', 'x.yaml.bak'].some(isMeshFile)).toBe(false);
  });
});

describe("git's environment and limits", () => {
  it('ignores GIT_* variables of the server process (GIT_DIR, GIT_TRACE_CURL would print the Authorization header)', async () => {
    const saved = { GIT_DIR: process.env.GIT_DIR, GIT_TRACE_CURL: process.env.GIT_TRACE_CURL };
    process.env.GIT_DIR = path.join(tmp, 'not-a-repository');
    process.env.GIT_TRACE_CURL = path.join(tmp, 'curl-trace.log');
    try {
      const repo = await GitRepo.clone(remote.url('mesh'), path.join(tmp, 'clone-env'), {
        credentials: GOOD,
      });
      expect(await repo.readFiles('origin/main', 'mesh')).toHaveProperty('mesh.yaml');
      await expect(stat(path.join(tmp, 'curl-trace.log'))).rejects.toThrow();
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });

  it('stops a git call that does not finish in time with a timeout GitError', async () => {
    const held: Socket[] = [];
    const silent = createServer((sock) => held.push(sock)); // accepts, never answers
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const port = (silent.address() as AddressInfo).port;
      const e = await gitError(
        GitRepo.clone(`http://127.0.0.1:${port}/mesh.git`, path.join(tmp, 'clone-hang'), {
          credentials: GOOD,
          timeouts: { networkMs: 1500 },
        }),
      );
      expect(e).toMatchObject({ op: 'clone', kind: 'timeout', exitCode: null });
      expect(e.hint).toMatch(/did not finish in 1500 ms/);
      await expect(stat(path.join(tmp, 'clone-hang'))).rejects.toThrow();
    } finally {
      for (const sock of held) sock.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('uses the SSH key through GIT_SSH_COMMAND without prompting', async () => {
    const key = path.join(tmp, 'id_ed25519');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]);
    const closedPort = await freePort();
    const e = await gitError(
      GitRepo.clone(`ssh://git@127.0.0.1:${closedPort}/mesh.git`, path.join(tmp, 'clone-ssh'), {
        credentials: { kind: 'ssh', keyFile: key, knownHostsFile: path.join(tmp, 'known_hosts') },
      }),
    );
    expect(e.kind).toBe('network-unreachable');
    expect(e.stderr).toContain(`ssh: connect to host 127.0.0.1 port ${closedPort}: Connection refused`);
  });
});

describe('reading and writing files', () => {
  it('round-trips file bytes exactly through commit, push, clone, ls-tree and cat-file', async () => {
    const tricky: Record<string, string> = {
      'crlf.yaml': 'kind: Target\r\nmetadata:\r\n  name: crlf\r\n',
      'no-newline.yaml': 'kind: Route',
      'utf8.yaml': '# ünïcödé — 日本語 🚀\nname: "ß"\n',
      'bom.yaml': '\uFEFFkind: Target\n',
      'spaces.yaml': 'a:   1   \n\tb: 2\n\n\n',
      'empty.yaml': '',
      'deep/er/file with spaces.yaml': '# comment only\n',
      'layout.json': '{\n  "a": {"x": 1, "y": 2}\n}\n',
    };
    const repo = await GitRepo.clone(remote.url('mesh'), path.join(tmp, 'clone-bytes'), {
      credentials: GOOD,
    });
    await repo.createBranch('meshdeck/bytes', 'origin/main');
    const c = await repo.commitFiles({
      branch: 'meshdeck/bytes',
      dir: 'mesh/',
      changes: tricky,
      message: 'bytes',
      author: ALICE,
    });
    await repo.push('meshdeck/bytes');
    const fresh = await GitRepo.clone(remote.url('mesh'), path.join(tmp, 'clone-bytes-2'), {
      credentials: GOOD,
    });
    const read = await fresh.readFiles('origin/meshdeck/bytes', 'mesh');
    for (const [p, text] of Object.entries(tricky)) {
      expect(read[p], p).toBe(text);
      const blob = execFileSync('git', ['-C', fresh.dir, 'cat-file', 'blob', `${c.commit}:mesh/${p}`]);
      expect(blob.equals(Buffer.from(text, 'utf8')), p).toBe(true);
    }
    // A filter picks paths; entries report modes and objects.
    expect(Object.keys(await fresh.readFiles(c.commit, 'mesh', (p) => p.startsWith('deep/')))).toEqual([
      'deep/er/file with spaces.yaml',
    ]);
    const entries = await fresh.listFiles(c.commit, 'mesh');
    expect(entries.find((e) => e.path === 'crlf.yaml')).toMatchObject({
      repoPath: 'mesh/crlf.yaml',
      mode: '100644',
      type: 'blob',
    });
  });

  it('refuses paths outside the directory, into .git, or through a symlink', async () => {
    const repo = await GitRepo.clone(remote.url('mesh'), path.join(tmp, 'clone-paths'), {
      credentials: GOOD,
    });
    await repo.createBranch('meshdeck/paths', 'origin/main');
    const attempt = (changes: Record<string, string | null>, dir = 'mesh') =>
      gitError(repo.commitFiles({ branch: 'meshdeck/paths', dir, changes, message: 'x', author: ALICE }));
    expect((await attempt({ '../escape.yaml': 'x' })).kind).toBe('refused');
    expect((await attempt({ '/abs.yaml': 'x' })).kind).toBe('refused');
    expect((await attempt({ 'a/.git/config': 'x' })).kind).toBe('refused');
    expect((await attempt({ 'x.yaml': 'x' }, '../out')).kind).toBe('refused');
    expect((await gitError(repo.createBranch('-evil', 'origin/main'))).kind).toBe('refused');
    expect((await gitError(repo.createBranch('a..b', 'origin/main'))).kind).toBe('refused');

    // A symlinked folder committed in the repository must not be followed by a write.
    const outside = path.join(tmp, 'outside');
    const linker = await GitRepo.init(path.join(tmp, 'linker'), { files: { 'mesh/a.yaml': 'a\n' } });
    await symlink(outside, path.join(linker.dir, 'mesh', 'link'));
    execFileSync('git', ['-C', linker.dir, 'add', '-A']);
    execFileSync('git', [
      '-C',
      linker.dir,
      '-c',
      'user.name=t',
      '-c',
      'user.email=t@t',
      'commit',
      '-qm',
      'link',
    ]);
    await linker.createBranch('edit', 'HEAD');
    const viaLink = await gitError(
      linker.commitFiles({
        branch: 'edit',
        dir: 'mesh',
        changes: { 'link/x.yaml': 'x\n' },
        message: 'x',
        author: ALICE,
      }),
    );
    expect(viaLink.kind).toBe('refused');
    expect(viaLink.hint).toMatch(/symlink/);
    await expect(stat(path.join(outside, 'x.yaml'))).rejects.toThrow();
    // Symlinks are not read as files either.
    expect(await linker.readFiles('HEAD', 'mesh')).toEqual({ 'a.yaml': 'a\n' });
  });
});

function sameCommit(r: { branch: string }) {
  return {
    branch: r.branch,
    dir: 'mesh',
    changes: { 'workers/worker.yaml': 'kind: Target\nmetadata:\n  name: worker\n' },
    message: 'again',
  };
}

/** A loopback port nothing listens on (bound, then released). */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}
