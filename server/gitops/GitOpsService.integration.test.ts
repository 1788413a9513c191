// GitOpsService against real git: a smart-HTTP remote with basic auth on loopback and the local
// default repository; the draft is the console's DraftStore on a real state directory.
import { execFile, execFileSync } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DraftRegistry } from '../console/DraftRegistry';
import { DraftStore } from '../console/DraftStore';
import { GitOpsService } from './GitOpsService';
import { GitRepo } from './GitRepo';
import { localRepositoryPaths } from './repository';
import { saveRepositoryConfig } from './repositoryConfig';
import { startSmartHttpRemote, type SmartHttpRemote } from './testing/smartHttpRemote';

const EXAMPLES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'examples');
const EXAMPLE = path.join(EXAMPLES, 'seed-example-1');
const USER = 'meshdeck-bot';
const TOKEN = `tok_${'5be0c7d19a2f4e83'.repeat(2)}`;
const TOKEN_ENV = 'MESHDECK_GITOPS_SERVICE_TEST_TOKEN';
const ALICE = { name: 'Alice Example', email: 'alice@example.com' };

let tmp: string;
let remote: SmartHttpRemote;
let exampleFiles: Record<string, string>;

const gitEnv = () => ({ ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: tmp, LC_ALL: 'C' });

/** git in a directory, answering stdout (local operations only: it blocks the remote in this process). */
function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: gitEnv() });
}

/** git that talks to the remote served by this process, so it must not block the event loop. */
async function gitAsync(cwd: string, ...args: string[]): Promise<string> {
  return (await promisify(execFile)('git', args, { cwd, encoding: 'utf8', env: gitEnv() })).stdout;
}

/** A second person's push to the base branch: their clone, their edit of one file, push. */
async function pushFromElsewhere(
  name: string,
  file: string,
  edit: (t: string) => string,
  repo = 'mesh',
): Promise<string> {
  const dir = path.join(tmp, `other-${name}`);
  const url = remote.url(repo).replace('http://', `http://${USER}:${TOKEN}@`);
  await gitAsync(tmp, 'clone', '--quiet', url, dir);
  const p = path.join(dir, 'mesh', file);
  await writeFile(p, edit(await readFile(p, 'utf8')));
  git(dir, '-c', `user.name=${ALICE.name}`, '-c', `user.email=${ALICE.email}`, 'commit', '-qam', name);
  await gitAsync(dir, 'push', '--quiet', 'origin', 'main');
  return git(dir, 'rev-parse', 'HEAD').trim();
}

/** A served mesh directory (a copy of the example), a state dir, and the remote's config in it. */
async function setup(name: string, repo = 'mesh'): Promise<{ stateDir: string; meshDir: string }> {
  const stateDir = path.join(tmp, `state-${name}`);
  const meshDir = path.join(tmp, `mesh-${name}`);
  await cp(EXAMPLE, meshDir, { recursive: true });
  await saveRepositoryConfig(stateDir, {
    format: 1,
    source: { kind: 'url', url: remote.url(repo) },
    baseBranch: 'main',
    meshDir: 'mesh',
    credentials: { kind: 'token', username: USER, token: { from: 'env', name: TOKEN_ENV } },
  });
  return { stateDir, meshDir };
}

async function start(
  stateDir: string,
  meshDir: string,
): Promise<{ drafts: DraftStore; gitops: GitOpsService }> {
  const drafts = new DraftStore({ meshDir, stateDir, logger: { warn: () => undefined } });
  const gitops = await GitOpsService.start({ stateDir, examplesDir: EXAMPLES, drafts });
  return { drafts, gitops };
}

/** Saves the draft with one file's text changed. */
async function edit(drafts: DraftStore, file: string, fn: (t: string) => string): Promise<void> {
  const s = await drafts.get();
  const saved = await drafts.save({
    draft: { ...s.draft, files: { ...s.draft.files, [file]: fn(s.draft.files[file]!) } },
    baseRevision: s.revision,
  });
  if (!saved.ok) throw new Error(JSON.stringify(saved.body));
}

function ok<T>(o: { ok: true; body: T } | { ok: false; status: number; body: unknown }): T {
  if (!o.ok) throw new Error(`expected success, got ${o.status} ${JSON.stringify(o.body)}`);
  return o.body;
}

const ourEdit = (t: string) => t.replace('port: 8888', 'port: 8889');

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'meshdeck-gitops-service-'));
  process.env[TOKEN_ENV] = TOKEN;
  remote = await startSmartHttpRemote({ username: USER, token: TOKEN });
  exampleFiles = {};
  for (const f of ['mesh.yaml', 'cluster.yaml'])
    exampleFiles[`mesh/${f}`] = await readFile(path.join(EXAMPLE, f), 'utf8');
  const seed = await GitRepo.init(path.join(tmp, 'seed'), {
    files: { 'README.md': '# gitops\n', ...exampleFiles },
    author: ALICE,
  });
  await GitRepo.clone(seed.dir, path.join(remote.root, 'mesh.git'), {}, { bare: true });
  await GitRepo.clone(seed.dir, path.join(remote.root, 'several.git'), {}, { bare: true });
});

afterAll(async () => {
  delete process.env[TOKEN_ENV];
  await remote?.stop();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe('GitOpsService over a smart-HTTP remote', () => {
  it('keeps the draft and its base commit across a restart, and commits it on a branch byte for byte', async () => {
    const { stateDir, meshDir } = await setup('restart');
    const first = await start(stateDir, meshDir);
    const before = ok(await first.gitops.status());
    expect(before.baseMoved).toBe(false);
    expect(before.changes.objects).toEqual([]);
    await edit(first.drafts, 'mesh.yaml', ourEdit);

    // A new server on the same state directory.
    const second = await start(stateDir, meshDir);
    const draft = await second.drafts.get();
    expect(draft.draft.files['mesh.yaml']).toBe(ourEdit(exampleFiles['mesh/mesh.yaml']!));
    const status = ok(await second.gitops.status());
    expect(status.baseCommit).toBe(before.baseCommit);
    expect(status.changes.objects.map((c) => [c.key, c.change])).toEqual([
      ['VirtualService/default/transcoder-vsvc', 'modified'],
    ]);
    expect(status.proposal.branch).toMatch(/^meshdeck\/\d{8}-\d{4}-edit-virtualservice-transcoder-vsvc/);
    expect(status.proposal.body).toContain('transcoder-vsvc');
    expect(status.repository.credentials).toEqual({ kind: 'token', username: USER, tokenFrom: 'env' });
    expect(JSON.stringify(status)).not.toContain(TOKEN);

    const committed = ok(
      await second.gitops.commit({ branch: 'meshdeck/edit-port', message: 'Edit the websocket port\n' }),
    );
    expect(committed.pushed).toBe(true);
    expect(committed.pullRequest).toBeUndefined();
    const bare = path.join(remote.root, 'mesh.git');
    expect(git(bare, 'rev-parse', 'refs/heads/meshdeck/edit-port').trim()).toBe(committed.commit);
    // The edited file is the draft's text exactly; the other is untouched, comments and flow maps too.
    expect(git(bare, 'show', 'meshdeck/edit-port:mesh/mesh.yaml')).toBe(
      ourEdit(exampleFiles['mesh/mesh.yaml']!),
    );
    expect(git(bare, 'show', 'meshdeck/edit-port:mesh/cluster.yaml')).toBe(exampleFiles['mesh/cluster.yaml']);
    expect(git(bare, 'log', '-1', '--format=%B', 'meshdeck/edit-port')).toBe('Edit the websocket port\n\n');
    expect(git(bare, 'rev-parse', 'refs/heads/main').trim()).toBe(before.baseCommit);
    // The draft stays (it is what the branch holds) and the commit is on record.
    expect((await second.drafts.get()).draft.files['mesh.yaml']).toBe(
      ourEdit(exampleFiles['mesh/mesh.yaml']!),
    );
    expect(ok(await second.gitops.status()).lastCommit?.branch).toBe('meshdeck/edit-port');
  });

  it('rebases onto a base branch that moved, and surfaces a true conflict with both sides', async () => {
    const { stateDir, meshDir } = await setup('rebase');
    const { drafts, gitops } = await start(stateDir, meshDir);
    const base = ok(await gitops.status()).baseCommit;
    await edit(drafts, 'mesh.yaml', ourEdit);

    // Someone changes another object meanwhile: "changed while you edited", rebased cleanly.
    const tip1 = await pushFromElsewhere('worker-port', 'cluster.yaml', (t) =>
      t.replace('port: 9999 }', 'port: 9998 }'),
    );
    const moved = ok(await gitops.status());
    expect(moved.baseMoved).toBe(true);
    expect(moved.baseTip).toBe(tip1);
    expect(moved.baseCommit).toBe(base);
    const rebased = ok(await gitops.rebase());
    expect(rebased).toMatchObject({ state: 'rebased', onto: tip1, conflicts: [] });
    const afterRebase = await drafts.get();
    expect(afterRebase.draft.files['mesh.yaml']).toBe(ourEdit(exampleFiles['mesh/mesh.yaml']!));
    expect(afterRebase.draft.files['cluster.yaml']).toContain('port: 9998 }');
    expect(ok(await gitops.status())).toMatchObject({ baseCommit: tip1, baseMoved: false });

    // Someone changes the object we edit: a conflict, shown with both sides; the draft is kept until resolved.
    const tip2 = await pushFromElsewhere('ws-port', 'mesh.yaml', (t) =>
      t.replace('port: 8888', 'port: 7777'),
    );
    const conflicted = ok(await gitops.rebase());
    expect(conflicted.state).toBe('conflicts');
    expect(conflicted.conflicts).toHaveLength(1);
    const c = conflicted.conflicts[0]!;
    expect(c.key).toBe('VirtualService/default/transcoder-vsvc');
    expect(c.ours?.text).toContain('port: 8889');
    expect(c.theirs?.text).toContain('port: 7777');
    expect((await drafts.get()).revision).toBe(afterRebase.revision);
    // Committing now is refused with the conflicts (nothing pushed).
    const refused = await gitops.commit({ branch: 'meshdeck/too-early' });
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.status).toBe(409);
    expect(git(path.join(remote.root, 'mesh.git'), 'branch', '--list', 'meshdeck/too-early')).toBe('');
    // A restart does not lose the rebase in progress.
    const again = await start(stateDir, meshDir);
    expect(ok(await again.gitops.status()).rebase?.conflicts.map((x) => x.key)).toEqual([c.key]);
    const bad = await again.gitops.resolve({
      key: c.key,
      choice: { text: 'kind: Nope\nmetadata: {name: x}\n' },
    });
    expect(bad.ok).toBe(false);
    const resolved = ok(await again.gitops.resolve({ key: c.key, choice: 'ours' }));
    expect(resolved).toMatchObject({ state: 'rebased', onto: tip2, conflicts: [] });
    const final = await again.drafts.get();
    expect(final.draft.files['mesh.yaml']).toContain('port: 8889');
    expect(final.draft.files['cluster.yaml']).toContain('port: 9998 }');
    const committed = ok(await again.gitops.commit({ branch: 'meshdeck/after-rebase' }));
    const bare = path.join(remote.root, 'mesh.git');
    expect(git(bare, 'rev-parse', 'meshdeck/after-rebase^').trim()).toBe(tip2);
    expect(git(bare, 'show', 'meshdeck/after-rebase:mesh/mesh.yaml')).toBe(final.draft.files['mesh.yaml']);
    expect(committed.commit).toBe(git(bare, 'rev-parse', 'meshdeck/after-rebase').trim());
  });

  it('answers bad credentials with git’s redacted error and keeps the draft', async () => {
    const { stateDir, meshDir } = await setup('badcreds');
    const { drafts } = await start(stateDir, meshDir);
    await edit(drafts, 'mesh.yaml', ourEdit);
    const kept = await drafts.get();
    const wrong = `${TOKEN}-wrong`;
    process.env[TOKEN_ENV] = wrong;
    try {
      const gitops = await GitOpsService.start({ stateDir, examplesDir: EXAMPLES, drafts });
      const r = await gitops.commit({ branch: 'meshdeck/denied' });
      expect(r.ok).toBe(false);
      if (r.ok) return;
      expect(r.status).toBe(502);
      expect(r.body.git?.kind).toBe('auth-failed');
      expect(r.body.error).toMatch(/auth/i);
      const text = JSON.stringify(r.body);
      expect(text).not.toContain(wrong);
      expect(text).not.toContain(TOKEN);
      const status = ok(await gitops.status());
      expect(status.fetchError).toMatchObject({ kind: 'auth-failed' });
      expect(JSON.stringify(status)).not.toContain(TOKEN);
    } finally {
      process.env[TOKEN_ENV] = TOKEN;
    }
    expect(await drafts.get()).toEqual(kept);
  });
});

describe('GitOpsService with several drafts', () => {
  it('keeps a base commit per draft: each shows its own diff, rebases and commits apart', async () => {
    const { stateDir, meshDir } = await setup('several', 'several');
    const registry = new DraftRegistry({ meshDir, stateDir, logger: { warn: () => undefined } });
    const gitops = await GitOpsService.start({ stateDir, examplesDir: EXAMPLES, drafts: registry });
    const base = ok(await gitops.status()).baseCommit;
    await edit(registry.main, 'mesh.yaml', ourEdit);

    // A copy of the main draft sits on the same base, with the same diff.
    const copy = await registry.create({ name: 'Copy', from: 'main' });
    if (!copy.ok) throw new Error(JSON.stringify(copy.body));
    await gitops.adoptBase('copy', 'main');
    const mainChanges = ok(await gitops.status('main')).changes;
    expect(mainChanges.objects.map((c) => c.key)).toEqual(['VirtualService/default/transcoder-vsvc']);
    expect(ok(await gitops.status('copy')).changes).toEqual(mainChanges);

    // The base branch moves; a draft made now is based on the new tip and has no changes.
    const tip = await pushFromElsewhere(
      'several-worker',
      'cluster.yaml',
      (t) => t.replace('port: 9999 }', 'port: 9997 }'),
      'several',
    );
    const fresh = await registry.create({ name: 'Fresh' });
    if (!fresh.ok) throw new Error(JSON.stringify(fresh.body));
    expect(ok(await gitops.startAtTip('fresh'))).toEqual({ baseCommit: tip, draftRevision: 1 });
    expect((await (await registry.get('fresh'))!.get()).draft.files['cluster.yaml']).toContain(
      'port: 9997 }',
    );
    const freshStatus = ok(await gitops.status('fresh'));
    expect(freshStatus).toMatchObject({ draftId: 'fresh', baseCommit: tip, baseMoved: false });
    expect(freshStatus.changes.objects).toEqual([]);
    // ... while the older drafts see "changed while you edited".
    expect(ok(await gitops.status('main'))).toMatchObject({ baseCommit: base, baseMoved: true });

    // Rebasing the copy moves only the copy.
    expect(ok(await gitops.rebase('copy'))).toMatchObject({ state: 'rebased', onto: tip });
    expect(ok(await gitops.status('copy')).baseCommit).toBe(tip);
    expect(ok(await gitops.status('main')).baseCommit).toBe(base);
    expect((await registry.main.get()).draft.files['cluster.yaml']).not.toContain('port: 9997 }');

    // A restart keeps each draft's base; the copy commits on its own branch from its own base.
    const again = await GitOpsService.start({
      stateDir,
      examplesDir: EXAMPLES,
      drafts: new DraftRegistry({ meshDir, stateDir, logger: { warn: () => undefined } }),
    });
    expect(ok(await again.status('copy')).baseCommit).toBe(tip);
    const committed = ok(await again.commit({ branch: 'meshdeck/from-copy' }, 'copy'));
    const bare = path.join(remote.root, 'several.git');
    expect(git(bare, 'rev-parse', 'meshdeck/from-copy^').trim()).toBe(tip);
    expect(git(bare, 'rev-parse', 'meshdeck/from-copy').trim()).toBe(committed.commit);
    expect(ok(await again.status('copy')).lastCommit?.branch).toBe('meshdeck/from-copy');
    expect(ok(await again.status('main')).lastCommit).toBeUndefined();

    // An unknown draft is a 404, and a deleted one's state goes with it.
    const missing = await again.status('nope');
    expect(missing.ok || missing.status).toBe(404);
    await again.forget('fresh');
    await expect(readFile(path.join(stateDir, 'gitops', 'drafts', 'fresh.json'), 'utf8')).rejects.toThrow(
      /ENOENT/,
    );
  });
});

describe('GitOpsService with the local default repository', () => {
  it('creates the repository on first start and pushes a branch to it, saying there is no forge', async () => {
    const stateDir = path.join(tmp, 'state-local');
    const meshDir = path.join(tmp, 'mesh-local');
    await cp(EXAMPLE, meshDir, { recursive: true });
    const { drafts, gitops } = await start(stateDir, meshDir);
    expect(gitops.config.meshDir).toBe('examples/seed-example-1');
    const status = ok(await gitops.status());
    expect(status.forge).toBe(false);
    expect(status.changes.objects).toEqual([]);
    await edit(drafts, 'mesh.yaml', ourEdit);
    const r = ok(await gitops.commit({}));
    expect(r.branch).toMatch(/^meshdeck\//);
    expect(r.note).toMatch(/No forge/);
    const { remote: bare } = localRepositoryPaths(stateDir);
    expect(git(bare, 'show', `${r.branch}:examples/seed-example-1/mesh.yaml`)).toBe(
      ourEdit(exampleFiles['mesh/mesh.yaml']!),
    );
  });
});
