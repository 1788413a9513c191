/**
 * How the server hands credentials to git without ever putting a secret on a command line (visible in
 * `ps`) or in a URL (which git echoes in its messages): a token reaches git through GIT_ASKPASS, a tiny
 * script that prints it from the child's environment; an SSH key through GIT_SSH_COMMAND, which names
 * only the key file. Whatever git prints is redacted with `secretsOf` before anyone sees it.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** Credentials as git needs them at run time (resolved from a RepositoryConfig; never serialised). */
export type GitCredentials =
  | { kind: 'none' }
  /** HTTP(S) basic auth: a username and a token (a GitHub/GitLab/Gitea access token, or a password). */
  | { kind: 'token'; username: string; token: string }
  /** SSH with this private key file; the server's host key must be pinned in `knownHostsFile`. */
  | { kind: 'ssh'; keyFile: string; knownHostsFile: string };

const USER_ENV = 'MESHDECK_GIT_USERNAME';
const TOKEN_ENV = 'MESHDECK_GIT_TOKEN';

// git calls it with a prompt ("Username for 'https://…': " or "Password for …"); the secret only ever
// lives in this script's environment, inherited from the git process Meshdeck started.
const ASKPASS_SCRIPT = `#!/bin/sh
case "$1" in
  [Uu]sername*) printf '%s\\n' "$${USER_ENV}" ;;
  *) printf '%s\\n' "$${TOKEN_ENV}" ;;
esac
`;

/**
 * Runs `fn` with the environment variables that give git these credentials (and nothing on its
 * command line). A token's askpass script lives in a private temp folder (0700) for the duration of
 * the call only, so no process, crashed or not, leaves one behind for long.
 */
export async function withCredentialEnv<T>(
  c: GitCredentials,
  fn: (env: Record<string, string>) => Promise<T>,
): Promise<T> {
  switch (c.kind) {
    case 'none':
      return fn({});
    case 'token': {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'meshdeck-askpass-'));
      try {
        const file = path.join(dir, 'askpass.sh');
        await writeFile(file, ASKPASS_SCRIPT, { mode: 0o700 });
        return await fn({ GIT_ASKPASS: file, [USER_ENV]: c.username, [TOKEN_ENV]: c.token });
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    }
    case 'ssh': {
      // Only the pinned host keys count: an unknown or changed key is refused, never trusted on first
      // use (a machine in the middle of the first connection would be), and no ssh_config (the
      // server user's or the system's) can loosen that or add identities.
      const opts = [
        'ssh',
        '-F /dev/null',
        '-i',
        shellQuote(c.keyFile),
        '-o IdentitiesOnly=yes',
        '-o StrictHostKeyChecking=yes',
        '-o BatchMode=yes',
        `-o UserKnownHostsFile=${shellQuote(c.knownHostsFile)}`,
        '-o GlobalKnownHostsFile=/dev/null',
        '-o UpdateHostKeys=no',
      ];
      return fn({ GIT_SSH_COMMAND: opts.join(' '), GIT_SSH_VARIANT: 'ssh' });
    }
  }
}

/** The strings that must never appear in a message or a log line. */
export function secretsOf(c: GitCredentials): string[] {
  return c.kind === 'token' && c.token.length > 0 ? [c.token] : [];
}

/** The usernames paired with the secrets (their base64 `user:token` form is redacted too). */
export function usernamesOf(c: GitCredentials): string[] {
  return c.kind === 'token' ? [c.username] : [];
}

// GIT_SSH_COMMAND is run by a shell: the key path must be one word whatever it contains.
function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
