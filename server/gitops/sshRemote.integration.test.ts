// SSH credentials against a real OpenSSH server (testing/sshServer.ts): clone, fetch, commit and push
// through GitOpsService and GitRepo with the key the repository config names; what happens to host
// keys (known_hosts); a key the server does not accept. The private key's text must never show up in
// anything Meshdeck answers or logs.
import { execFile, execFileSync } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, type MockInstance, vi } from 'vitest';
import { DraftStore } from '../console/DraftStore';
import { isGitError, type GitError } from './gitErrors';
import { GitOpsService } from './GitOpsService';
import { GitRepo } from './GitRepo';
import { type CredentialsRef, saveRepositoryConfig } from './repositoryConfig';
import { generateSshKey, type SshServer, startSshServer } from './testing/sshServer';

const EXAMPLES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'examples');
const EXAMPLE = path.join(EXAMPLES, 'seed-example-1');
const ALICE = { name: 'Alice Example', email: 'alice@example.com' };

let tmp: string;
let sshd: SshServer;
let bare: string;
let url: string;
let goodKey: string;
let wrongKey: string;
let exampleMesh: string;
/** Everything Meshdeck answered or logged in these tests, searched for the private keys' text at the end. */
const captured: string[] = [];
const consoleSpies: MockInstance[] = [];

const gitEnv = () => ({ ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: tmp, LC_ALL: 'C' });

/** Plain git on a local repository, its output byte for byte. */
function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: gitEnv() });
}

const rev = (ref: string) => git(bare, 'rev-parse', ref).trim();

async function gitError(p: Promise<unknown>): Promise<GitError> {
  try {
    await p;
  } catch (e) {
    if (isGitError(e)) {
      captured.push(e.message, JSON.stringify(e.toJSON()));
      return e;
    }
    throw e;
  }
  throw new Error('expected a GitError');
}

/** A state dir whose repository is the bare repository over SSH with these credentials, a mesh dir, the service. */
async function setup(
  name: string,
  credentials: CredentialsRef,
): Promise<{ stateDir: string; meshDir: string; drafts: DraftStore; gitops: GitOpsService }> {
  const stateDir = path.join(tmp, `state-${name}`);
  const meshDir = path.join(tmp, `mesh-${name}`);
  await cp(EXAMPLE, meshDir, { recursive: true });
  await configure(stateDir, credentials);
  const { drafts, gitops } = await start(stateDir, meshDir);
  return { stateDir, meshDir, drafts, gitops };
}

function configure(stateDir: string, credentials: CredentialsRef): Promise<void> {
  return saveRepositoryConfig(stateDir, {
    format: 1,
    source: { kind: 'url', url },
    baseBranch: 'main',
    meshDir: 'mesh',
    credentials,
  });
}

async function start(
  stateDir: string,
  meshDir: string,
): Promise<{ drafts: DraftStore; gitops: GitOpsService }> {
  const drafts = new DraftStore({
    meshDir,
    stateDir,
    logger: { warn: (...args: unknown[]) => void captured.push(args.map(String).join(' ')) },
  });
  const gitops = await GitOpsService.start({ stateDir, examplesDir: EXAMPLES, drafts });
  return { drafts, gitops };
}

async function editPort(drafts: DraftStore, port: string): Promise<void> {
  const s = await drafts.get();
  const saved = await drafts.save({
    draft: {
      ...s.draft,
      files: {
        ...s.draft.files,
        'mesh.yaml': s.draft.files['mesh.yaml']!.replace('port: 8888', `port: ${port}`),
      },
    },
    baseRevision: s.revision,
  });
  if (!saved.ok) throw new Error(JSON.stringify(saved.body));
}

function record<T extends { ok: boolean; body: unknown }>(o: T): T {
  captured.push(JSON.stringify(o));
  return o;
}

function ok<T>(o: { ok: true; body: T } | { ok: false; status: number; body: unknown }): T {
  record(o);
  if (!o.ok) throw new Error(`expected success, got ${o.status} ${JSON.stringify(o.body)}`);
  return o.body;
}

/** The host keys (`type base64`) a known_hosts file holds for the server (`[127.0.0.1]:<port>`), hashed or not. */
async function hostKeysIn(file: string): Promise<string[]> {
  const out = await promisify(execFile)('ssh-keygen', ['-F', `[127.0.0.1]:${sshd.port}`, '-f', file], {
    encoding: 'utf8',
  }).then(
    (r) => r.stdout,
    () => '', // ssh-keygen -F exits 1 when it finds nothing
  );
  return out
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => l.split(' ').slice(1, 3).join(' '));
}

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'meshdeck-ssh-remote-'));
  for (const m of ['log', 'info', 'warn', 'error', 'debug'] as const) consoleSpies.push(vi.spyOn(console, m));
  const good = await generateSshKey(path.join(tmp, 'keys', 'id_good'), 'meshdeck-good');
  const wrong = await generateSshKey(path.join(tmp, 'keys', 'id_wrong'), 'meshdeck-wrong');
  goodKey = good.file;
  wrongKey = wrong.file;
  sshd = await startSshServer({ authorizedKeys: [good.publicKey] });
  exampleMesh = await readFile(path.join(EXAMPLE, 'mesh.yaml'), 'utf8');
  const files: Record<string, string> = { 'README.md': '# gitops\n' };
  for (const f of ['mesh.yaml', 'cluster.yaml'])
    files[`mesh/${f}`] = await readFile(path.join(EXAMPLE, f), 'utf8');
  const seed = await GitRepo.init(path.join(tmp, 'seed'), { files, author: ALICE });
  bare = path.join(tmp, 'srv', 'mesh.git');
  await GitRepo.clone(seed.dir, bare, {}, { bare: true });
  url = sshd.url(bare);
});

afterAll(async () => {
  for (const s of consoleSpies) s.mockRestore();
  await sshd?.stop();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe('a repository over SSH (real sshd on loopback)', () => {
  it('clones, fetches, commits and pushes a branch with the configured key', async () => {
    const knownHosts = path.join(tmp, 'known_hosts-commit');
    await writeFile(knownHosts, `${sshd.knownHostsLine}\n`);
    const { drafts, gitops } = await setup('commit', {
      kind: 'ssh',
      keyFile: goodKey,
      knownHostsFile: knownHosts,
    });
    const base = rev('refs/heads/main');
    const status = ok(await gitops.status());
    expect(status.fetchError).toBeUndefined();
    expect(status).toMatchObject({ baseTip: base, baseCommit: base, baseMoved: false });
    expect(status.repository.credentials).toEqual({ kind: 'ssh' });

    await editPort(drafts, '8890');
    const committed = ok(
      await gitops.commit({ branch: 'meshdeck/over-ssh', message: 'Edit the port over SSH\n' }),
    );
    expect(committed).toMatchObject({ branch: 'meshdeck/over-ssh', pushed: true });
    // Plain git on the server's repository: the branch and the commit arrived, main did not move.
    expect(rev('refs/heads/meshdeck/over-ssh')).toBe(committed.commit);
    expect(rev('meshdeck/over-ssh^')).toBe(base);
    expect(git(bare, 'show', 'meshdeck/over-ssh:mesh/mesh.yaml')).toBe(
      exampleMesh.replace('port: 8888', 'port: 8890'),
    );
    expect(git(bare, 'log', '-1', '--format=%B', 'meshdeck/over-ssh')).toBe('Edit the port over SSH\n\n');
    expect(rev('refs/heads/main')).toBe(base);

    // Someone else moves main on the server: the next fetch over SSH sees it.
    const tree = rev('refs/heads/main^{tree}');
    const moved = execFileSync('git', ['commit-tree', tree, '-p', base, '-m', 'elsewhere'], {
      cwd: bare,
      encoding: 'utf8',
      env: {
        ...gitEnv(),
        GIT_AUTHOR_NAME: 'B',
        GIT_AUTHOR_EMAIL: 'b@x',
        GIT_COMMITTER_NAME: 'B',
        GIT_COMMITTER_EMAIL: 'b@x',
      },
    }).trim();
    git(bare, 'update-ref', 'refs/heads/main', moved, base);
    expect(ok(await gitops.status())).toMatchObject({ baseTip: moved, baseMoved: true });

    // It went through sshd, authenticated with that key, and the pinned host key file was left alone.
    const fingerprint = execFileSync('ssh-keygen', ['-l', '-f', `${goodKey}.pub`], {
      encoding: 'utf8',
    }).split(' ')[1]!;
    expect(sshd.logs()).toContain(`Accepted publickey for ${sshd.user} from 127.0.0.1`);
    expect(sshd.logs()).toContain(fingerprint);
    expect(await readFile(knownHosts, 'utf8')).toBe(`${sshd.knownHostsLine}\n`);
  });

  it('refuses a host key it was not given (unknown or changed), with the host-key hint; a pinned one works', async () => {
    // An empty known_hosts: ssh must not trust the key the server shows on first use (a machine in
    // the middle of that first connection would be trusted), and must not record it either.
    const fresh = path.join(tmp, 'known_hosts-fresh');
    await writeFile(fresh, '');
    const unknown = await gitError(
      GitRepo.clone(url, path.join(tmp, 'clone-tofu'), {
        credentials: { kind: 'ssh', keyFile: goodKey, knownHostsFile: fresh },
      }),
    );
    expect(unknown).toMatchObject({ op: 'clone', kind: 'host-key' });
    expect(unknown.stderr).toContain('Host key verification failed');
    expect(unknown.message).toMatch(/host key .*knownHostsFile/);
    await expect(stat(path.join(tmp, 'clone-tofu'))).rejects.toThrow();
    expect(await readFile(fresh, 'utf8')).toBe('');

    // Pinned (what ssh-keyscan printed, checked out of band): cloned, and the file is left alone.
    await writeFile(fresh, `${sshd.knownHostsLine}\n`);
    const pinned = await GitRepo.clone(url, path.join(tmp, 'clone-pinned'), {
      credentials: { kind: 'ssh', keyFile: goodKey, knownHostsFile: fresh },
    });
    expect(await pinned.revParse('refs/remotes/origin/main')).toBe(rev('refs/heads/main'));
    expect(await hostKeysIn(fresh)).toEqual([sshd.hostPublicKey]);

    // A server showing another key under the same name and port (the real one replaced, or someone
    // in the middle): refused before any authentication, nothing cloned.
    const other = await generateSshKey(path.join(tmp, 'keys', 'other_host'), 'other-host');
    const pinnedElsewhere = path.join(tmp, 'known_hosts-changed');
    await writeFile(
      pinnedElsewhere,
      `[127.0.0.1]:${sshd.port} ${other.publicKey.split(' ').slice(0, 2).join(' ')}\n`,
    );
    const e = await gitError(
      GitRepo.clone(url, path.join(tmp, 'clone-mitm'), {
        credentials: { kind: 'ssh', keyFile: goodKey, knownHostsFile: pinnedElsewhere },
      }),
    );
    expect(e).toMatchObject({ op: 'clone', kind: 'host-key' });
    expect(e.stderr).toContain('REMOTE HOST IDENTIFICATION HAS CHANGED');
    await expect(stat(path.join(tmp, 'clone-mitm'))).rejects.toThrow();
    expect(await hostKeysIn(pinnedElsewhere)).toEqual([other.publicKey.split(' ').slice(0, 2).join(' ')]);
  });

  it('answers a key the server refuses with a clear auth error and keeps the draft', async () => {
    // Straight through GitRepo: the clone is refused by sshd.
    const knownHosts = path.join(tmp, 'known_hosts-wrong');
    await writeFile(knownHosts, `${sshd.knownHostsLine}\n`);
    const refused = await gitError(
      GitRepo.clone(url, path.join(tmp, 'clone-wrong'), {
        credentials: { kind: 'ssh', keyFile: wrongKey, knownHostsFile: knownHosts },
      }),
    );
    expect(refused).toMatchObject({ op: 'clone', kind: 'auth-failed' });
    expect(refused.stderr).toContain('Permission denied (publickey)');
    expect(refused.message).toMatch(/authentication failed: .*SSH key/);
    await expect(stat(path.join(tmp, 'clone-wrong'))).rejects.toThrow();

    // Through the service: cloned with the right key, the draft edited, then the key in the config is
    // replaced by one the server does not know. The commit fails before anything is pushed.
    const { stateDir, meshDir, drafts } = await setup('wrong', {
      kind: 'ssh',
      keyFile: goodKey,
      knownHostsFile: knownHosts,
    });
    await editPort(drafts, '8891');
    const kept = await drafts.get();
    await configure(stateDir, { kind: 'ssh', keyFile: wrongKey, knownHostsFile: knownHosts });
    const { gitops } = await start(stateDir, meshDir);
    const r = record(await gitops.commit({ branch: 'meshdeck/wrong-key' }));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.status).toBe(502);
    expect(r.body.git).toMatchObject({ op: 'fetch', kind: 'auth-failed' });
    expect(r.body.git?.stderr).toContain('Permission denied (publickey)');
    expect(r.body.error).toMatch(/authentication failed/);
    expect(git(bare, 'branch', '--list', 'meshdeck/wrong-key')).toBe('');
    expect(await drafts.get()).toEqual(kept);
    const status = ok(await gitops.status());
    expect(status.fetchError).toMatchObject({ kind: 'auth-failed' });
    expect(status.changes.objects.map((c) => c.key)).toEqual(['VirtualService/default/transcoder-vsvc']);
  });

  it('never shows the private keys’ text in an answer, an error or a log line', async () => {
    const texts = [
      ...captured,
      sshd.logs(),
      ...consoleSpies.flatMap((s) => s.mock.calls.map((c) => c.map(String).join(' '))),
    ];
    // The failures above were captured (their messages hold ssh's own words).
    expect(captured.filter((t) => t.includes('Permission denied (publickey)')).length).toBeGreaterThan(1);
    for (const key of [goodKey, wrongKey]) {
      const pem = await readFile(key, 'utf8');
      const body = pem.split('\n').filter((l) => l !== '' && !l.startsWith('-----'));
      expect(body.length).toBeGreaterThan(2);
      for (const t of texts) {
        expect(t).not.toContain(body.join(''));
        for (const line of body) expect(t).not.toContain(line);
      }
    }
  });
});
