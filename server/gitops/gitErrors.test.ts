import { describe, expect, it } from 'vitest';
import { classifyGitFailure, GitError, isGitError, redact } from './gitErrors';

describe('classifyGitFailure', () => {
  // Messages as git 2.39 and the big forges print them.
  it.each([
    ["fatal: Authentication failed for 'https://github.com/o/r.git/'", 'auth-failed'],
    ["fatal: could not read Username for 'https://gitlab.com': terminal prompts disabled", 'auth-failed'],
    [
      'git@github.com: Permission denied (publickey).\nfatal: Could not read from remote repository.',
      'auth-failed',
    ],
    ["fatal: unable to access 'https://x/r.git/': The requested URL returned error: 403", 'auth-failed'],
    [
      "remote: HTTP Basic: Access denied\nfatal: Authentication failed for 'https://gitlab.com/a/b.git/'",
      'auth-failed',
    ],
    [
      "remote: Repository not found.\nfatal: repository 'https://github.com/o/missing.git/' not found",
      'repo-not-found',
    ],
    ["fatal: '/nope' does not appear to be a git repository", 'repo-not-found'],
    [
      "fatal: unable to access 'https://nohost.invalid/r.git/': Could not resolve host: nohost.invalid",
      'network-unreachable',
    ],
    [
      "fatal: unable to access 'http://127.0.0.1:9/r.git/': Failed to connect to 127.0.0.1 port 9: Connection refused",
      'network-unreachable',
    ],
    ['ssh: connect to host example.com port 22: Network is unreachable', 'network-unreachable'],
    [
      "To http://h/r.git\n ! [rejected]        main -> main (fetch first)\nerror: failed to push some refs to 'http://h/r.git'",
      'non-fast-forward',
    ],
    ['!\trefs/heads/main:refs/heads/main\t[rejected] (non-fast-forward)', 'non-fast-forward'],
    [
      'CONFLICT (content): Merge conflict in mesh.yaml\nerror: could not apply 1a2b3c4... edit',
      'merge-conflict',
    ],
    ['fatal: bad revision', 'other'],
  ] as const)('%s -> %s', (stderr, kind) => {
    expect(classifyGitFailure(stderr)).toBe(kind);
  });
});

describe('redact', () => {
  it('masks the secret, its URL-encoded and basic-auth forms, and URL passwords', () => {
    const token = 'gh+p/t0k=en';
    const basic = Buffer.from(`bot:${token}`).toString('base64');
    const text = `a ${token} b ${encodeURIComponent(token)} c Basic ${basic} d https://u:other@host/x e`;
    const out = redact(text, [token], ['bot']);
    expect(out).toBe('a *** b *** c Basic *** d https://u:***@host/x e');
  });

  it('leaves text without secrets alone, and ignores empty secrets', () => {
    expect(redact('fatal: nothing secret at https://host/x', [''])).toBe(
      'fatal: nothing secret at https://host/x',
    );
  });
});

describe('GitError', () => {
  it('carries op, kind, exit code, stderr and hint, as JSON too, and is recognised by shape', () => {
    const e = new GitError('push', 'non-fast-forward', 1, ' ! [rejected] main (fetch first)\n');
    expect(e.message).toMatch(/^git push failed: the remote branch moved/);
    expect(JSON.parse(JSON.stringify(e))).toEqual({
      op: 'push',
      kind: 'non-fast-forward',
      exitCode: 1,
      stderr: ' ! [rejected] main (fetch first)\n',
      hint: expect.stringContaining('non-fast-forward'),
    });
    expect(isGitError(e)).toBe(true);
    expect(isGitError({ ...e.toJSON(), gitError: true })).toBe(true);
    expect(isGitError(new Error('x'))).toBe(false);
    expect(isGitError(undefined)).toBe(false);
  });
});
