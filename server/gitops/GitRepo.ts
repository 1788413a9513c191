/**
 * The git layer of GitOps (issue 6 §1): the real `git` CLI, spawned without a shell and with a time
 * limit, on a repository Meshdeck owns (its own clone of the configured repository), never on the
 * user's checkout. Commits are made in a temporary worktree that is removed afterwards. Every failure
 * is a GitError with git's exit code, its redacted stderr and a hint.
 *
 * The environment of each git process is built here: inherited GIT_* variables are dropped (a server
 * started from a git hook would otherwise act on another repository), the user's global and system git
 * config are ignored unless asked (a `commit.gpgSign`, a credential helper or an `insteadOf` there
 * would change what the server does), prompts are off, and messages are in English so they can be
 * classified.
 */
import { spawn } from 'node:child_process';
import { lstat, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type GitCredentials, secretsOf, usernamesOf, withCredentialEnv } from './gitCredentials';
import { classifyGitFailure, GitError, type GitErrorKind, redact } from './gitErrors';

/** Who a commit is by. */
export interface GitAuthor {
  name: string;
  email: string;
}

/** Meshdeck's own identity, the committer of every commit it makes. */
export const MESHDECK_AUTHOR: GitAuthor = { name: 'Meshdeck', email: 'meshdeck@localhost' };

export interface GitRepoOptions {
  /** How to authenticate to the remote (clone, fetch, push); default none. */
  credentials?: GitCredentials;
  /** Branches that are never force-pushed nor deleted on the remote (the base branch). */
  protectedBranches?: readonly string[];
  /** The remote's name in the clone; default `origin`. */
  remote?: string;
  /** Time limits: local operations (default 30 s) and those that talk to the remote (default 120 s). */
  timeouts?: { localMs?: number; networkMs?: number };
  /** Ignore the user's global and system git config (default true). */
  isolateConfig?: boolean;
}

/** One entry of `git ls-tree`. */
export interface GitTreeEntry {
  /** Path relative to the directory that was listed (POSIX). */
  path: string;
  /** Path from the repository root. */
  repoPath: string;
  mode: string;
  type: 'blob' | 'tree' | 'commit';
  object: string;
}

/** A file map change: the new text of a file, or null to delete it. Paths are relative to `dir`. */
export type FileChanges = Record<string, string | null>;

export interface CommitFilesOptions {
  /** The local branch to commit on (it must exist, see createBranch); it advances to the new commit. */
  branch: string;
  /** The directory (POSIX, relative to the repository root; '' or '.' for the root) the paths are in. */
  dir: string;
  changes: FileChanges;
  message: string;
  author: GitAuthor;
  /** Committer; default Meshdeck. */
  committer?: GitAuthor;
  /** The commit the branch must still be at (else a 'non-fast-forward' GitError); default its tip now. */
  expectedHead?: string;
}

export interface CommitResult {
  commit: string;
  parent: string;
  branch: string;
  /** Paths (relative to `dir`) whose content changed, sorted. */
  changed: string[];
}

export interface PushOptions {
  /** The branch on the remote; default the same name. */
  remoteBranch?: string;
  /**
   * Overwrite the remote branch only if it is still at this commit (`--force-with-lease`). Refused
   * for protected branches: the base branch is never force-pushed.
   */
  forceWithLease?: string;
}

export interface PushResult {
  /** The remote ref that was updated (`refs/heads/...`). */
  remoteRef: string;
  commit: string;
  status: 'created' | 'fast-forward' | 'forced' | 'up-to-date';
}

export interface GitLogEntry {
  commit: string;
  parents: string[];
  author: GitAuthor;
  /** Author date, ISO 8601. */
  date: string;
  subject: string;
}

/** The changes that turn the files `before` into `after` (paths relative to the same directory). */
export function fileChanges(before: Record<string, string>, after: Record<string, string>): FileChanges {
  const changes: FileChanges = {};
  for (const [p, text] of Object.entries(after)) if (before[p] !== text) changes[p] = text;
  for (const p of Object.keys(before)) if (!(p in after)) changes[p] = null;
  return changes;
}

const BRANCH_NAME = /^(?!-)(?!.*\.\.)(?!.*\/\/)(?!.*@\{)(?!.*\/\.)(?!\.)[A-Za-z0-9._/+-]{1,200}$/;

/** Why a name cannot be a branch Meshdeck creates or pushes, or undefined if it can. */
export function branchNameProblem(name: string): string | undefined {
  if (!BRANCH_NAME.test(name) || name.endsWith('/') || name.endsWith('.') || name.endsWith('.lock'))
    return `"${name}" is not a branch name Meshdeck accepts (letters, digits and . _ / + -; no "..", "//", leading "-" or ".", trailing "/", "." or ".lock")`;
  if (name === 'HEAD') return '"HEAD" is not a branch name';
  return undefined;
}

/** A directory argument as git wants it: '' for the root, else a clean POSIX path. */
function normDir(dir: string): string {
  const d = dir.replace(/^\.\/+/, '').replace(/\/+$/, '');
  if (d === '.' || d === '') return '';
  const problem = relPathProblem(d);
  if (problem) throw new GitError('path', 'refused', null, '', `directory "${dir}": ${problem}`);
  return d;
}

/** Why a relative path cannot name a file Meshdeck writes in a repository, or undefined if it can. */
export function relPathProblem(p: string): string | undefined {
  if (p === '' || p.startsWith('/') || p.includes('\\')) return 'must be a relative POSIX path';
  if (/[\u0000-\u001f]/.test(p)) return 'must not contain control characters';
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.' || seg === '..') return 'must not contain empty, "." or ".." segments';
    if (seg.toLowerCase() === '.git') return 'must not write into .git';
  }
  return undefined;
}

interface RunOptions {
  cwd?: string;
  input?: string | Buffer;
  network?: boolean;
  /** Exit codes that are answers, not failures (e.g. 1 for `merge-base --is-ancestor`). */
  okExit?: readonly number[];
  env?: Record<string, string>;
}

interface RunResult {
  stdout: Buffer;
  stderr: string;
  exitCode: number;
}

/** A repository Meshdeck owns (a clone it made, or one it initialised); see the file comment. */
export class GitRepo {
  private readonly credentials: GitCredentials;
  private readonly remote: string;
  /** Operations that change refs run one after another (reads run freely). */
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(
    /** The repository's folder (its working tree, which Meshdeck never checks out into). */
    readonly dir: string,
    private readonly options: GitRepoOptions,
  ) {
    this.credentials = options.credentials ?? { kind: 'none' };
    this.remote = options.remote ?? 'origin';
  }

  /** Opens an existing repository (fails with 'repo-not-found' if `dir` is none). */
  static async open(dir: string, options: GitRepoOptions = {}): Promise<GitRepo> {
    const repo = new GitRepo(path.resolve(dir), options);
    await repo.run('open', ['rev-parse', '--git-dir']);
    return repo;
  }

  /**
   * Creates a repository at `dir` (which must not hold one) whose first commit on `branch` (default
   * main) has these files (paths relative to the root).
   */
  static async init(
    dir: string,
    init: { files: Record<string, string>; branch?: string; author?: GitAuthor; message?: string },
    options: GitRepoOptions = {},
  ): Promise<GitRepo> {
    const branch = init.branch ?? 'main';
    const problem = branchNameProblem(branch);
    if (problem) throw new GitError('init', 'refused', null, '', problem);
    const abs = path.resolve(dir);
    await mkdir(abs, { recursive: true });
    const repo = new GitRepo(abs, options);
    await repo.run('init', ['init', '--quiet', `--initial-branch=${branch}`, '--', abs], { cwd: abs });
    await writeChanges(abs, '', init.files, 'init');
    await repo.run('init', ['add', '--all', '--', '.']);
    await repo.run(
      'init',
      ['commit', '--quiet', '--allow-empty', '--no-verify', '-m', init.message ?? 'Initial commit'],
      { env: identityEnv(init.author ?? MESHDECK_AUTHOR, MESHDECK_AUTHOR) },
    );
    return repo;
  }

  /**
   * Clones `url` (a URL or a local path) into `dir`. By default nothing is checked out: Meshdeck
   * reads commits with ls-tree/cat-file and writes in temporary worktrees, so its clone needs no
   * files. `checkout` makes a clone for people; `bare` a bare repository (a remote to push to).
   */
  static async clone(
    url: string,
    dir: string,
    options: GitRepoOptions = {},
    how: { bare?: boolean; checkout?: boolean } = {},
  ): Promise<GitRepo> {
    const abs = path.resolve(dir);
    await mkdir(path.dirname(abs), { recursive: true });
    const repo = new GitRepo(abs, options);
    const mode = how.bare ? ['--bare'] : how.checkout ? [] : ['--no-checkout'];
    const origin = how.bare ? [] : ['--origin', repo.remote]; // git refuses --origin with --bare
    const existed = await lstat(abs).then(
      () => true,
      () => false,
    );
    try {
      await repo.run('clone', ['clone', '--quiet', ...mode, ...origin, '--', url, abs], {
        cwd: path.dirname(abs),
        network: true,
      });
    } catch (e) {
      // git cleans up after its own failures, not after being stopped on a timeout.
      if (!existed) await rm(abs, { recursive: true, force: true });
      throw e;
    }
    return repo;
  }

  /** Fetches from the remote (pruning deleted branches); answers the remote's branch heads. */
  fetch(): Promise<Record<string, string>> {
    return this.exclusive(() => this.fetchNow());
  }

  private async fetchNow(): Promise<Record<string, string>> {
    await this.run('fetch', ['fetch', '--quiet', '--prune', '--no-tags', this.remote], { network: true });
    const out = await this.text('fetch', [
      'for-each-ref',
      '--format=%(objectname) %(refname)',
      `refs/remotes/${this.remote}/`,
    ]);
    const heads: Record<string, string> = {};
    const prefix = `refs/remotes/${this.remote}/`;
    for (const line of out.split('\n')) {
      const [sha, ref] = line.split(' ');
      if (sha && ref && ref !== `${prefix}HEAD`) heads[ref.slice(prefix.length)] = sha;
    }
    return heads;
  }

  /** The commit HEAD is at. */
  head(): Promise<string> {
    return this.revParse('HEAD');
  }

  /** The commit a ref names (a sha, a branch, `origin/main`, ...); a 'not-found' GitError if none. */
  async revParse(ref: string): Promise<string> {
    const sha = await this.tryRevParse(ref);
    if (sha === undefined) throw new GitError('rev-parse', 'not-found', 128, '', `no commit "${ref}"`);
    return sha;
  }

  /** The commit a ref names, or undefined. */
  async tryRevParse(ref: string): Promise<string | undefined> {
    if (ref.startsWith('-')) return undefined;
    const r = await this.run('rev-parse', ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], {
      okExit: [1, 128],
    });
    return r.exitCode === 0 ? r.stdout.toString('utf8').trim() : undefined;
  }

  /** The commit the remote's branch was at when last fetched (`refs/remotes/origin/<branch>`). */
  remoteHead(branch: string): Promise<string> {
    return this.revParse(`refs/remotes/${this.remote}/${branch}`);
  }

  /** Whether `ancestor` is `descendant` or one of its ancestors (a push from it would fast-forward). */
  async isAncestor(ancestor: string, descendant: string): Promise<boolean> {
    const [a, d] = [await this.revParse(ancestor), await this.revParse(descendant)];
    const r = await this.run('merge-base', ['merge-base', '--is-ancestor', a, d], {
      okExit: [1],
    });
    return r.exitCode === 0;
  }

  /** The files (blobs, recursively) under `dir` at `commit`; paths relative to `dir`, sorted. */
  async listFiles(commit: string, dir: string): Promise<GitTreeEntry[]> {
    const d = normDir(dir);
    const sha = await this.revParse(commit);
    const out = await this.run('ls-tree', [
      'ls-tree',
      '-r',
      '-z',
      '--full-tree',
      sha,
      ...(d ? ['--', d] : []),
    ]);
    const entries: GitTreeEntry[] = [];
    for (const rec of out.stdout.toString('utf8').split('\0')) {
      const m = /^(\d+) (blob|tree|commit) ([0-9a-f]+)\t([\s\S]+)$/.exec(rec);
      if (!m) continue;
      const repoPath = m[4]!;
      if (d && !repoPath.startsWith(`${d}/`)) continue;
      entries.push({
        path: d ? repoPath.slice(d.length + 1) : repoPath,
        repoPath,
        mode: m[1]!,
        type: m[2] as GitTreeEntry['type'],
        object: m[3]!,
      });
    }
    return entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  /**
   * The text of the regular files under `dir` at `commit` (path relative to `dir` -> text), read in
   * one `git cat-file --batch`, byte for byte. `filter` picks the paths (default: all); symlinks and
   * submodules are never read; a picked file that is not UTF-8 is a GitError, not a silently mangled text.
   */
  async readFiles(
    commit: string,
    dir: string,
    filter: (p: string) => boolean = () => true,
  ): Promise<Record<string, string>> {
    const entries = (await this.listFiles(commit, dir)).filter(
      (e) => e.type === 'blob' && (e.mode === '100644' || e.mode === '100755') && filter(e.path),
    );
    const files: Record<string, string> = {};
    if (entries.length === 0) return files;
    const out = (
      await this.run('show', ['cat-file', '--batch'], {
        input: entries.map((e) => `${e.object}\n`).join(''),
      })
    ).stdout;
    const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
    let pos = 0;
    for (const e of entries) {
      const nl = out.indexOf(10, pos);
      const header = out.subarray(pos, nl).toString('utf8');
      const m = /^([0-9a-f]+) blob (\d+)$/.exec(header);
      if (!m || m[1] !== e.object)
        throw new GitError('show', 'other', 0, header, `unexpected cat-file answer for ${e.repoPath}`);
      const size = Number(m[2]);
      const body = out.subarray(nl + 1, nl + 1 + size);
      pos = nl + 1 + size + 1;
      try {
        files[e.path] = decoder.decode(body);
      } catch {
        throw new GitError('show', 'other', 0, '', `${e.repoPath} at ${commit} is not UTF-8 text`);
      }
    }
    return files;
  }

  /** Creates (or with `force`, moves) the local branch `name` at `from` (a commit or ref). */
  createBranch(name: string, from: string, opts: { force?: boolean } = {}): Promise<string> {
    return this.exclusive(() => this.createBranchNow(name, from, opts));
  }

  private async createBranchNow(name: string, from: string, opts: { force?: boolean }): Promise<string> {
    const problem = branchNameProblem(name);
    if (problem) throw new GitError('branch', 'refused', null, '', problem);
    const sha = await this.revParse(from);
    await this.run('branch', ['branch', '--no-track', ...(opts.force ? ['--force'] : []), '--', name, sha]);
    return sha;
  }

  /**
   * Writes `changes` into a temporary worktree at the tip of `branch`, commits them and moves the
   * branch to the new commit (only if it is still where it was: a concurrent move is a
   * 'non-fast-forward' GitError). No change at all is a 'nothing-to-commit' GitError.
   */
  commitFiles(o: CommitFilesOptions): Promise<CommitResult> {
    return this.exclusive(() => this.commitFilesNow(o));
  }

  private async commitFilesNow(o: CommitFilesOptions): Promise<CommitResult> {
    const problem = branchNameProblem(o.branch);
    if (problem) throw new GitError('commit', 'refused', null, '', problem);
    const d = normDir(o.dir);
    const parent = await this.revParse(`refs/heads/${o.branch}`);
    if (o.expectedHead !== undefined && (await this.revParse(o.expectedHead)) !== parent)
      throw new GitError(
        'commit',
        'non-fast-forward',
        null,
        '',
        `branch ${o.branch} moved: it is at ${parent}, not at ${o.expectedHead}`,
      );
    const tmp = await mkdtemp(path.join(os.tmpdir(), 'meshdeck-worktree-'));
    const wt = path.join(tmp, path.basename(tmp)); // the worktree's name in .git/worktrees: unique
    try {
      await this.run('commit', ['worktree', 'add', '--quiet', '--detach', wt, parent]);
      await writeChanges(wt, d, o.changes, 'commit');
      await this.run('commit', ['add', '--all', '--', d || '.'], { cwd: wt });
      const diff = await this.run(
        'commit',
        ['diff', '--cached', '--name-only', '-z', '--no-renames', parent, '--', d || '.'],
        { cwd: wt },
      );
      const changed = diff.stdout
        .toString('utf8')
        .split('\0')
        .filter((p) => p !== '')
        .map((p) => (d ? p.slice(d.length + 1) : p))
        .sort();
      if (changed.length === 0) throw new GitError('commit', 'nothing-to-commit', null, '');
      await this.run('commit', ['commit', '--quiet', '--no-verify', '--cleanup=verbatim', '-m', o.message], {
        cwd: wt,
        env: identityEnv(o.author, o.committer ?? MESHDECK_AUTHOR),
      });
      const commit = (await this.text('commit', ['rev-parse', 'HEAD'], { cwd: wt })).trim();
      // Compare-and-swap: a branch moved by someone else meanwhile is not overwritten.
      await this.run('commit', [
        'update-ref',
        '-m',
        'meshdeck: commit',
        `refs/heads/${o.branch}`,
        commit,
        parent,
      ]);
      return { commit, parent, branch: o.branch, changed };
    } finally {
      await this.run('commit', ['worktree', 'remove', '--force', wt]).catch(() => undefined);
      await rm(tmp, { recursive: true, force: true });
      await this.run('commit', ['worktree', 'prune']).catch(() => undefined);
    }
  }

  /**
   * Pushes the local `branch` to the remote. A remote branch that moved is a 'non-fast-forward'
   * GitError; force (with lease) is refused for protected branches before git runs.
   */
  push(branch: string, opts: PushOptions = {}): Promise<PushResult> {
    return this.exclusive(() => this.pushNow(branch, opts));
  }

  private async pushNow(branch: string, opts: PushOptions): Promise<PushResult> {
    const remoteBranch = opts.remoteBranch ?? branch;
    for (const b of [branch, remoteBranch]) {
      const problem = branchNameProblem(b);
      if (problem) throw new GitError('push', 'refused', null, '', problem);
    }
    if (opts.forceWithLease !== undefined && (this.options.protectedBranches ?? []).includes(remoteBranch))
      throw new GitError(
        'push',
        'refused',
        null,
        '',
        `refusing to force-push the protected branch ${remoteBranch}: fetch, rebase and push again instead`,
      );
    const remoteRef = `refs/heads/${remoteBranch}`;
    const commit = await this.revParse(`refs/heads/${branch}`);
    const args = ['push', '--porcelain', '--no-verify'];
    if (opts.forceWithLease !== undefined) {
      if (!/^[0-9a-f]{40,64}$/.test(opts.forceWithLease))
        throw new GitError('push', 'refused', null, '', 'forceWithLease must be a full commit id');
      args.push(`--force-with-lease=${remoteRef}:${opts.forceWithLease}`);
    }
    args.push(this.remote, `refs/heads/${branch}:${remoteRef}`);
    const r = await this.run('push', args, { network: true, okExit: [1] });
    const out = r.stdout.toString('utf8');
    const line = out.split('\n').find((l) => l.includes(`:${remoteRef}\t`));
    const flag = line?.[0];
    if (r.exitCode !== 0 || flag === '!' || flag === undefined) {
      const text = this.redact(`${r.stderr}${out}`);
      const kind = classifyGitFailure(text);
      throw new GitError(
        'push',
        kind === 'other' && flag === '!' ? 'non-fast-forward' : kind,
        r.exitCode,
        text,
      );
    }
    const status: PushResult['status'] =
      flag === '*' ? 'created' : flag === '+' ? 'forced' : flag === '=' ? 'up-to-date' : 'fast-forward';
    return { remoteRef, commit, status };
  }

  /** The commits that changed `dir` after `since` (exclusive) up to `until` (default HEAD), newest first. */
  async log(o: { dir: string; since?: string; until?: string; max?: number }): Promise<GitLogEntry[]> {
    const d = normDir(o.dir);
    const until = await this.revParse(o.until ?? 'HEAD');
    const range = o.since ? `${await this.revParse(o.since)}..${until}` : until;
    const out = await this.text('log', [
      'log',
      '-z',
      '--format=%H%x1f%P%x1f%an%x1f%ae%x1f%aI%x1f%s',
      `--max-count=${o.max ?? 1000}`,
      range,
      '--',
      d || '.',
    ]);
    return out
      .split('\0')
      .filter((r) => r.trim() !== '')
      .map((r) => {
        const [commit, parents, name, email, date, subject] = r.replace(/^\n/, '').split('\x1f');
        return {
          commit: commit!,
          parents: parents ? parents.split(' ') : [],
          author: { name: name!, email: email! },
          date: date!,
          subject: subject ?? '',
        };
      });
  }

  /**
   * Replays the commits of the local `branch` that `onto` lacks on top of `onto` (a `git rebase` in a
   * temporary worktree; authors kept) and moves the branch there. A conflict leaves the branch as it
   * was and is a 'merge-conflict' GitError listing the conflicting paths. Answers the new tip.
   */
  rebaseBranch(branch: string, onto: string): Promise<string> {
    return this.exclusive(() => this.rebaseBranchNow(branch, onto));
  }

  private async rebaseBranchNow(branch: string, onto: string): Promise<string> {
    const problem = branchNameProblem(branch);
    if (problem) throw new GitError('rebase', 'refused', null, '', problem);
    const tip = await this.revParse(`refs/heads/${branch}`);
    const base = await this.revParse(onto);
    const tmp = await mkdtemp(path.join(os.tmpdir(), 'meshdeck-worktree-'));
    const wt = path.join(tmp, path.basename(tmp)); // the worktree's name in .git/worktrees: unique
    const env = identityEnv(MESHDECK_AUTHOR, MESHDECK_AUTHOR);
    try {
      await this.run('rebase', ['worktree', 'add', '--quiet', '--detach', wt, tip]);
      const r = await this.run('rebase', ['rebase', '--quiet', '--no-autostash', base], {
        cwd: wt,
        env,
        okExit: [1],
      });
      if (r.exitCode !== 0) {
        const unmerged = await this.run('rebase', ['diff', '--name-only', '-z', '--diff-filter=U'], {
          cwd: wt,
        });
        const conflicts = unmerged.stdout.toString('utf8').split('\0').filter(Boolean).sort();
        await this.run('rebase', ['rebase', '--abort'], { cwd: wt, env }).catch(() => undefined);
        // git prints the CONFLICT lines on stdout.
        const output = `${this.redact(r.stdout.toString('utf8'))}${r.stderr}`;
        const err = new GitError('rebase', 'merge-conflict', r.exitCode, output);
        err.conflicts = conflicts;
        throw err;
      }
      const rebased = (await this.text('rebase', ['rev-parse', 'HEAD'], { cwd: wt })).trim();
      await this.run('rebase', [
        'update-ref',
        '-m',
        'meshdeck: rebase',
        `refs/heads/${branch}`,
        rebased,
        tip,
      ]);
      return rebased;
    } finally {
      await this.run('rebase', ['worktree', 'remove', '--force', wt]).catch(() => undefined);
      await rm(tmp, { recursive: true, force: true });
      await this.run('rebase', ['worktree', 'prune']).catch(() => undefined);
    }
  }

  /** Takes this repository's secrets out of a text (for logs and messages made outside this class). */
  redact(text: string): string {
    return redact(text, secretsOf(this.credentials), usernamesOf(this.credentials));
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async text(op: string, args: string[], o: RunOptions = {}): Promise<string> {
    return (await this.run(op, args, o)).stdout.toString('utf8');
  }

  /** Runs git (no shell) with the time limit; exit codes outside `okExit` become a GitError. */
  private run(op: string, args: string[], o: RunOptions = {}): Promise<RunResult> {
    if (!o.network) return this.spawnGit(op, args, o, {});
    return withCredentialEnv(this.credentials, (credEnv) => this.spawnGit(op, args, o, credEnv));
  }

  private spawnGit(
    op: string,
    args: string[],
    o: RunOptions,
    credEnv: Record<string, string>,
  ): Promise<RunResult> {
    const timeoutMs = o.network
      ? (this.options.timeouts?.networkMs ?? 120_000)
      : (this.options.timeouts?.localMs ?? 30_000);
    const env = gitEnv(this.options.isolateConfig ?? true, { ...credEnv, ...o.env });
    const fullArgs = [
      '-c',
      'credential.helper=',
      '-c',
      'core.hooksPath=/dev/null',
      '-c',
      'core.quotePath=false',
      ...args,
    ];
    return new Promise((resolve, reject) => {
      let timedOut = false;
      let settled = false;
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      // A process group of its own, so a timeout also stops git's helpers (remote-https, ssh).
      const child = spawn('git', fullArgs, {
        cwd: o.cwd ?? this.dir,
        env: env as NodeJS.ProcessEnv,
        detached: true,
        stdio: 'pipe',
      });
      const timer = setTimeout(() => {
        timedOut = true;
        try {
          if (child.pid) process.kill(-child.pid, 'SIGKILL');
        } catch {
          child.kill('SIGKILL');
        }
      }, timeoutMs);
      const fail = (e: GitError) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(e);
      };
      child.stdout.on('data', (b: Buffer) => out.push(b));
      child.stderr.on('data', (b: Buffer) => err.push(b));
      child.on('error', (e) =>
        fail(new GitError(op, 'other', null, '', `cannot run git: ${this.redact(e.message)}`)),
      );
      child.on('close', (code) => {
        if (settled) return;
        const stderr = this.redact(Buffer.concat(err).toString('utf8'));
        if (timedOut || code === null) {
          fail(
            new GitError(
              op,
              'timeout',
              null,
              stderr,
              `git ${args[0]} did not finish in ${timeoutMs} ms and was stopped`,
            ),
          );
          return;
        }
        if (code !== 0 && !(o.okExit ?? []).includes(code)) {
          const kind: GitErrorKind = classifyGitFailure(stderr);
          fail(new GitError(op, kind, code, stderr));
          return;
        }
        settled = true;
        clearTimeout(timer);
        resolve({ stdout: Buffer.concat(out), stderr, exitCode: code });
      });
      child.stdin.on('error', () => undefined);
      child.stdin.end(o.input ?? '');
    });
  }
}

/** The environment of a git process; see the file comment. */
function gitEnv(isolate: boolean, extra: Record<string, string>): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith('GIT_') || k === 'SSH_ASKPASS' || k.startsWith('MESHDECK_GIT_')) continue;
    env[k] = v;
  }
  Object.assign(env, {
    LC_ALL: 'C',
    LANG: 'C',
    LANGUAGE: 'C',
    GIT_TERMINAL_PROMPT: '0',
    GCM_INTERACTIVE: 'never',
    GIT_OPTIONAL_LOCKS: '0',
    // A mesh directory named `a*` or `:(glob)x` is a folder name, not a pattern.
    GIT_LITERAL_PATHSPECS: '1',
    ...(isolate ? { GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' } : {}),
    ...extra,
  });
  return env;
}

function identityEnv(author: GitAuthor, committer: GitAuthor): Record<string, string> {
  return {
    GIT_AUTHOR_NAME: author.name,
    GIT_AUTHOR_EMAIL: author.email,
    GIT_COMMITTER_NAME: committer.name,
    GIT_COMMITTER_EMAIL: committer.email,
  };
}

/**
 * Writes a file map into a worktree under `dir`: text as given (byte for byte), null deletes. No
 * write follows a symlink: a repository's symlinked folder could otherwise lead anywhere on the host.
 */
async function writeChanges(root: string, dir: string, changes: FileChanges, op: string): Promise<void> {
  for (const [rel, text] of Object.entries(changes)) {
    const problem = relPathProblem(rel);
    if (problem) throw new GitError(op, 'refused', null, '', `${rel}: ${problem}`);
    const repoPath = dir ? `${dir}/${rel}` : rel;
    const segments = repoPath.split('/');
    let cur = root;
    for (let i = 0; i < segments.length; i++) {
      cur = path.join(cur, segments[i]!);
      const st = await lstat(cur).catch(() => undefined);
      if (st === undefined) break;
      if (st.isSymbolicLink())
        throw new GitError(
          op,
          'refused',
          null,
          '',
          `${repoPath}: "${segments.slice(0, i + 1).join('/')}" is a symlink`,
        );
      if (i < segments.length - 1 && !st.isDirectory())
        throw new GitError(
          op,
          'refused',
          null,
          '',
          `${repoPath}: "${segments.slice(0, i + 1).join('/')}" is not a folder`,
        );
    }
    const file = path.join(root, ...segments);
    if (text === null) await rm(file, { force: true });
    else {
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, text, 'utf8');
    }
  }
}
