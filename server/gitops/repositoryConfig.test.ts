import { mkdtemp, readFile, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  configWriteProblem,
  loadRepositoryConfig,
  publicView,
  RepositoryConfig,
  repositoryConfigFile,
  resolveCredentials,
  saveRepositoryConfig,
  storeToken,
  writeAutoSyncPolicy,
} from './repositoryConfig';

const remoteConfig: RepositoryConfig = {
  format: 1,
  source: { kind: 'url', url: 'https://github.com/acme/mesh-gitops.git' },
  baseBranch: 'main',
  meshDir: 'clusters/prod/mesh',
  credentials: { kind: 'token', username: 'x-access-token', token: { from: 'env', name: 'MESH_GIT_TOKEN' } },
  provider: { kind: 'github', baseUrl: 'https://api.github.com', repo: 'acme/mesh-gitops' },
};

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'meshdeck-repo-config-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('RepositoryConfig', () => {
  it('accepts remote URLs, scp-style SSH, local paths and nested GitLab slugs', () => {
    expect(RepositoryConfig.safeParse(remoteConfig).success).toBe(true);
    for (const url of [
      'git@github.com:acme/mesh.git',
      'ssh://git@gitea.local:2222/a/b.git',
      'http://127.0.0.1:3000/a/b.git',
    ])
      expect(RepositoryConfig.safeParse({ ...remoteConfig, source: { kind: 'url', url } }).success, url).toBe(
        true,
      );
    expect(
      RepositoryConfig.safeParse({
        ...remoteConfig,
        meshDir: '.',
        source: { kind: 'path', path: '/srv/git/mesh.git' },
        credentials: {
          kind: 'ssh',
          keyFile: '/home/me/.ssh/id_ed25519',
          knownHostsFile: '/home/me/.ssh/known_hosts',
        },
        provider: { kind: 'gitlab', repo: 'group/sub/mesh' },
      }).success,
    ).toBe(true);
  });

  it.each([
    ['a token in the URL', { source: { kind: 'url', url: 'https://bot:ghp_secret@github.com/a/b.git' } }],
    ['an option as URL', { source: { kind: 'url', url: '--upload-pack=touch /tmp/x' } }],
    ['a relative local path', { source: { kind: 'path', path: 'repo' } }],
    ['a mesh dir leaving the repository', { meshDir: '../etc' }],
    ['an absolute mesh dir', { meshDir: '/mesh' }],
    ['a branch starting with a dash', { baseBranch: '-f' }],
    ['a branch with ..', { baseBranch: 'a..b' }],
    ['an inline secret', { credentials: { kind: 'token', username: 'u', token: 'ghp_secret' } }],
    // Meshdeck never trusts an SSH host key on first use: the known_hosts file is part of the config.
    [
      'an SSH key without pinned host keys',
      { credentials: { kind: 'ssh', keyFile: '/home/me/.ssh/id_ed25519' } },
    ],
    ['an unknown provider', { provider: { kind: 'bitbucket', baseUrl: 'https://x', repo: 'a/b' } }],
    ['a Gitea without its URL', { provider: { kind: 'gitea', repo: 'a/b' } }],
    [
      'a provider URL that is not http(s)',
      { provider: { kind: 'gitea', baseUrl: 'file:///etc', repo: 'a/b' } },
    ],
    ['an unknown field', { password: 'x' }],
  ])('refuses %s', (_name, patch) => {
    expect(RepositoryConfig.safeParse({ ...remoteConfig, ...patch }).success).toBe(false);
  });

  it('publicView strips every secret and where it lives', () => {
    const view = publicView({
      ...remoteConfig,
      credentials: { kind: 'token', username: 'bot', token: { from: 'file', path: '/secret/place/token' } },
    });
    expect(view).toEqual({
      source: remoteConfig.source,
      baseBranch: 'main',
      meshDir: 'clusters/prod/mesh',
      credentials: { kind: 'token', username: 'bot', tokenFrom: 'file' },
      provider: remoteConfig.provider,
    });
    expect(JSON.stringify(view)).not.toContain('/secret/place');
    expect(
      publicView({
        ...remoteConfig,
        credentials: { kind: 'ssh', keyFile: '/home/me/.ssh/id_ed25519', knownHostsFile: '/k/known_hosts' },
      }).credentials,
    ).toEqual({ kind: 'ssh' });
  });
});

describe('resolveCredentials', () => {
  it('reads a token from the environment or a file and says where it looked when it is missing', async () => {
    const ref = { kind: 'token', username: 'bot', token: { from: 'env', name: 'T' } } as const;
    expect(await resolveCredentials(ref, { T: 's3cret' })).toEqual({
      kind: 'token',
      username: 'bot',
      token: 's3cret',
    });
    await expect(resolveCredentials(ref, {})).rejects.toThrow('environment variable T is not set');
    const stored = await storeToken(dir, 'from-the-console');
    expect((await stat(stored.from === 'file' ? stored.path : '')).mode & 0o777).toBe(0o600);
    expect(await resolveCredentials({ kind: 'token', username: 'bot', token: stored })).toEqual({
      kind: 'token',
      username: 'bot',
      token: 'from-the-console',
    });
    const missing = path.join(dir, 'missing');
    await expect(
      resolveCredentials({ kind: 'token', username: 'bot', token: { from: 'file', path: missing } }),
    ).rejects.toThrow(`cannot read ${missing} (ENOENT)`);
    await expect(storeToken(dir, 'two\nlines')).rejects.toThrow('one non-empty line');
  });
});

describe('config.json', () => {
  it('is saved with mode 0600 and loaded back; a broken file is an error, not a silent default', async () => {
    expect(await loadRepositoryConfig(dir)).toBeUndefined();
    await saveRepositoryConfig(dir, remoteConfig);
    const file = repositoryConfigFile(dir);
    expect(file).toBe(path.join(dir, 'gitops', 'config.json'));
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(file))).mode & 0o777).toBe(0o700);
    expect(await loadRepositoryConfig(dir)).toEqual(remoteConfig);
    expect(await readFile(file, 'utf8')).not.toMatch(/secret/);
    await writeFile(file, '{"format": 1, "baseBranch": "-x"}');
    await expect(loadRepositoryConfig(dir)).rejects.toThrow(/config\.json: .*source/);
    await expect(
      saveRepositoryConfig(dir, { ...remoteConfig, meshDir: '../x' } as RepositoryConfig),
    ).rejects.toThrow();
  });
});

describe('writeAutoSyncPolicy (the console turns sync from Git on and off)', () => {
  const bot = { user: 'ci-bot', groups: ['mesh-writers'] };
  // As someone wrote it: its own key order, `autoSync` without the defaults, the secrets by reference.
  const written = {
    provider: remoteConfig.provider,
    format: 1,
    source: remoteConfig.source,
    autoSync: { selfHeal: true, as: bot },
    baseBranch: 'main',
    meshDir: 'clusters/prod/mesh',
    credentials: remoteConfig.credentials,
    webhook: { secret: { from: 'file', path: '/run/secrets/webhook' } },
  };
  const file = () => repositoryConfigFile(dir);
  const onDisk = async () => JSON.parse(await readFile(file(), 'utf8')) as Record<string, unknown>;

  beforeEach(async () => {
    await saveRepositoryConfig(dir, remoteConfig);
    await writeFile(file(), JSON.stringify(written));
  });

  it('changes only autoSync: every other key as the file had it, in its place, mode 0600; `as` kept', async () => {
    expect(await writeAutoSyncPolicy(dir, null)).toEqual({
      before: { prune: false, selfHeal: true, as: bot },
      after: { prune: false, selfHeal: true, as: bot, enabled: false },
    });
    const off = await onDisk();
    expect(off).toEqual({ ...written, autoSync: { prune: false, selfHeal: true, as: bot, enabled: false } });
    expect(Object.keys(off)).toEqual(Object.keys(written));
    expect((await stat(file())).mode & 0o777).toBe(0o600);
    expect((await loadRepositoryConfig(dir))?.autoSync?.enabled).toBe(false);

    await writeAutoSyncPolicy(dir, { prune: true, selfHeal: false });
    expect(await onDisk()).toEqual({ ...written, autoSync: { prune: true, selfHeal: false, as: bot } });
    expect((await stat(file())).mode & 0o777).toBe(0o600);
  });

  it('adds a policy where there was none, and does not write a file that says so already', async () => {
    const { autoSync: _none, ...without } = written;
    await writeFile(file(), JSON.stringify(without));
    expect(await writeAutoSyncPolicy(dir, null)).toEqual({ before: undefined, after: undefined });
    expect(await onDisk()).toEqual(without);
    await writeAutoSyncPolicy(dir, { prune: false, selfHeal: false });
    expect(await onDisk()).toEqual({ ...without, autoSync: { prune: false, selfHeal: false } });
    const inode = (await stat(file())).ino;
    await writeAutoSyncPolicy(dir, { prune: false, selfHeal: false });
    expect((await stat(file())).ino).toBe(inode);
  });

  it('refuses a config that is a link (a mounted ConfigMap or Secret) or no longer valid, and says where', async () => {
    // A ConfigMap volume: config.json is a link into ..data.
    await rename(file(), path.join(dir, 'gitops', 'mounted.json'));
    await symlink('mounted.json', file());
    const problem = await configWriteProblem(dir);
    expect(problem).toBe(
      `the sync policy is configured in ${file()}, a link (a mounted ConfigMap or Secret?), not a file this server owns: change autoSync there`,
    );
    await expect(writeAutoSyncPolicy(dir, null)).rejects.toMatchObject({
      name: 'ConfigNotWritable',
      message: problem,
    });
    expect(JSON.parse(await readFile(path.join(dir, 'gitops', 'mounted.json'), 'utf8'))).toEqual(written);

    await rm(file());
    await writeFile(file(), JSON.stringify({ ...written, baseBranch: '-x' }));
    expect(await configWriteProblem(dir)).toBeUndefined();
    await expect(writeAutoSyncPolicy(dir, null)).rejects.toThrow(
      /is not a valid repository config \(baseBranch: .*\); fix it by hand$/,
    );
  });
});
