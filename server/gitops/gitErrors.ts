/**
 * What a failed `git` call means to a person: the operation, git's exit code, its stderr with every
 * secret taken out, and a hint for the failures people can act on (credentials, URL, a remote that
 * moved, a conflict, the network). Route handlers are bundled apart from the server that throws, so
 * `isGitError` recognises the error by its shape, not with `instanceof`.
 */

/** The failures Meshdeck explains; `other` is everything else (stderr says why). */
export type GitErrorKind =
  | 'auth-failed'
  | 'host-key'
  | 'repo-not-found'
  | 'non-fast-forward'
  | 'merge-conflict'
  | 'network-unreachable'
  | 'timeout'
  | 'refused'
  | 'nothing-to-commit'
  | 'not-found'
  | 'other';

/** The hint shown for each kind (stderr follows it). */
export const GIT_HINTS: Record<GitErrorKind, string> = {
  'auth-failed':
    'authentication failed: check the username and token (or the SSH key) configured for the repository, and that they may read and push to it',
  'host-key':
    "the SSH server's host key is not the one pinned in the repository's knownHostsFile (unknown or changed): check the key's fingerprint with the server's owner, then add it (ssh-keyscan -p PORT HOST >> FILE); Meshdeck never trusts a host key it has not been given",
  'repo-not-found':
    'repository not found: check the repository URL (or path); a private repository also answers "not found" to credentials without access',
  'non-fast-forward':
    'the remote branch moved since it was fetched (non-fast-forward): fetch, rebase the change onto the new commit and push again',
  'merge-conflict':
    'merge conflict: the same lines were changed on both sides; resolve them and commit again',
  'network-unreachable':
    'network unreachable: the git server cannot be reached (host name, port, proxy or firewall)',
  timeout: 'git did not finish in time and was stopped',
  refused: 'refused by Meshdeck before running git',
  'nothing-to-commit': 'nothing to commit: the files are already as the commit has them',
  'not-found': 'no such commit, branch or path',
  other: 'git failed; its message follows',
};

/** A git failure, safe to log and to send to the browser (the secrets are already redacted). */
export class GitError extends Error {
  override readonly name = 'GitError';
  /** Set on every GitError so it is recognised across bundles (see isGitError). */
  readonly gitError = true as const;
  /** For 'merge-conflict': the conflicting paths (from the repository root), sorted. */
  conflicts: string[] = [];

  constructor(
    /** The git operation (`clone`, `fetch`, `push`, `commit`, ...). */
    readonly op: string,
    readonly kind: GitErrorKind,
    /** git's exit code; null when git was stopped (timeout) or never ran (refused). */
    readonly exitCode: number | null,
    /** git's stderr (and, for push, its porcelain status lines), redacted. */
    readonly stderr: string,
    /** What to do about it, in words. */
    readonly hint: string = GIT_HINTS[kind],
  ) {
    super(`git ${op} failed: ${hint}${stderr.trim() ? `\n${stderr.trim()}` : ''}`);
  }

  /** The JSON form for API answers. */
  toJSON(): GitErrorJson {
    return {
      op: this.op,
      kind: this.kind,
      exitCode: this.exitCode,
      stderr: this.stderr,
      hint: this.hint,
      ...(this.conflicts.length > 0 ? { conflicts: this.conflicts } : {}),
    };
  }
}

/** GitError as JSON (what an API answer carries). */
export interface GitErrorJson {
  op: string;
  kind: GitErrorKind;
  exitCode: number | null;
  stderr: string;
  hint: string;
  conflicts?: string[];
}

/** Whether a value is a GitError, also one thrown by another bundle's copy of this module. */
export function isGitError(e: unknown): e is GitError {
  return typeof e === 'object' && e !== null && (e as { gitError?: unknown }).gitError === true;
}

// Order matters: a rejected push over a bad network says both, and the first match wins.
const PATTERNS: [GitErrorKind, RegExp][] = [
  // Before auth-failed: a refused host key ends with the same "Could not read from remote repository".
  [
    'host-key',
    /Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED|No \S+ host key is known/i,
  ],
  [
    'auth-failed',
    /Authentication failed|could not read (Username|Password)|terminal prompts disabled|HTTP Basic: Access denied|Permission denied \(publickey|returned error: 40[13]\b|Invalid username or password/i,
  ],
  [
    'network-unreachable',
    /Could not resolve host|Could not resolve hostname|Failed to connect|Connection refused|Connection timed out|Network is unreachable|No route to host|Operation timed out|ssh: connect to host|Connection reset by peer|unable to access '[^']*': (SSL|OpenSSL|gnutls)/i,
  ],
  [
    'repo-not-found',
    /repository '[^']*' not found|does not appear to be a git repository|Repository not found|returned error: 404\b|not a git repository/i,
  ],
  [
    'non-fast-forward',
    /\(non-fast-forward\)|\(fetch first\)|Updates were rejected because|\[rejected\]|stale info|cannot lock ref .* but expected/i,
  ],
  ['merge-conflict', /^CONFLICT|Automatic merge failed|Merge conflict in|could not apply|needs merge/im],
];

/** The kind of a git failure, from its stderr (and porcelain output). */
export function classifyGitFailure(output: string): GitErrorKind {
  for (const [kind, re] of PATTERNS) if (re.test(output)) return kind;
  return 'other';
}

/**
 * Takes the secrets out of a text: each secret as is, URL-encoded and inside a base64 `user:secret`
 * pair (what an Authorization header would carry), plus any password in a URL's user info.
 */
export function redact(text: string, secrets: readonly string[], usernames: readonly string[] = []): string {
  let out = text;
  const forms = new Set<string>();
  for (const s of secrets) {
    if (s.length === 0) continue;
    forms.add(s);
    forms.add(encodeURIComponent(s));
    forms.add(Buffer.from(`:${s}`).toString('base64'));
    for (const u of usernames) forms.add(Buffer.from(`${u}:${s}`).toString('base64'));
  }
  // Longest first, so a secret that contains another is replaced whole.
  for (const f of [...forms].sort((a, b) => b.length - a.length)) out = out.split(f).join('***');
  return out.replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^/\s:@'"]*):[^@/\s'"]*@/gi, '$1:***@');
}
