import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  loadRepositoryConfig,
  publicView,
  RepositoryConfig,
  repositoryConfigFile,
  resolveCredentials,
  saveRepositoryConfig,
  storeToken,
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
