/**
 * The GitOps repository Meshdeck works on (issue 6 §1): where it is (a local path or a remote URL),
 * the base branch, the directory holding the mesh, how to authenticate and, for pull requests, the
 * forge. Kept in `<stateDir>/gitops/config.json` (mode 0600). The config holds only a *reference* to
 * a secret (an environment variable or a file); the secret is read when git needs it and never
 * serialised. `publicView` is the only form that may leave the server.
 */
import { constants } from 'node:fs';
import { access, lstat, mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { AutoSyncPolicy, type AutoSyncSetting, changedPolicy, samePolicy } from '@/lib/gitops/autoSync';
import { writeFileAtomic } from '../console/meshDirFiles';
import type { GitCredentials } from './gitCredentials';
import { branchNameProblem, relPathProblem } from './GitRepo';

const AbsPath = z
  .string()
  .min(1)
  .max(4096)
  .refine((p) => path.isAbsolute(p), 'must be an absolute path');

/** A remote URL git understands; one with a password in it is refused (git would echo it). */
export const RemoteUrl = z
  .string()
  .min(1)
  .max(2048)
  .superRefine((u, ctx) => {
    if (/[\s\u0000-\u001f]/.test(u)) ctx.addIssue({ code: 'custom', message: 'must not contain spaces' });
    else if (u.startsWith('-')) ctx.addIssue({ code: 'custom', message: 'must not start with "-"' });
    else if (/^(https?|ssh|git|file):\/\//i.test(u)) {
      let parsed: URL;
      try {
        parsed = new URL(u);
      } catch {
        ctx.addIssue({ code: 'custom', message: 'is not a valid URL' });
        return;
      }
      if (parsed.password)
        ctx.addIssue({
          code: 'custom',
          message: 'must not contain a password or token: configure credentials instead',
        });
    } else if (!/^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[^\s]+$/.test(u))
      ctx.addIssue({
        code: 'custom',
        message: 'must be an http(s)://, ssh://, git://, file:// URL or user@host:path',
      });
  });

export const BranchName = z.string().superRefine((b, ctx) => {
  const problem = branchNameProblem(b);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

/** The mesh directory inside the repository: '.' for the root, else a relative POSIX path. */
export const RepoDir = z
  .string()
  .max(1024)
  .superRefine((d, ctx) => {
    if (d === '.') return;
    const problem = relPathProblem(d);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

/** Where a secret comes from; the secret itself is never in the config. */
export const SecretRef = z.discriminatedUnion('from', [
  z.strictObject({ from: z.literal('env'), name: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/) }),
  z.strictObject({ from: z.literal('file'), path: AbsPath }),
]);
export type SecretRef = z.infer<typeof SecretRef>;

export const CredentialsRef = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('none') }),
  /** HTTP(S) basic auth with a token (GitHub: any username and a PAT; GitLab: `oauth2` or the user). */
  z.strictObject({ kind: z.literal('token'), username: z.string().min(1).max(256), token: SecretRef }),
  /**
   * SSH with a private key file and the server's host key pinned in a known_hosts file (required:
   * Meshdeck never trusts a host key on first use).
   */
  z.strictObject({ kind: z.literal('ssh'), keyFile: AbsPath, knownHostsFile: AbsPath }),
]);
export type CredentialsRef = z.infer<typeof CredentialsRef>;

/**
 * The forge that takes pull requests for this repository. `baseUrl` means what it means in
 * server/gitops/providers (PullRequestProviderConfig): GitHub's API root (default
 * https://api.github.com), GitLab's or Gitea's instance root (GitLab default https://gitlab.com);
 * the provider's token is the repository's token.
 */
export const ProviderConfig = z
  .strictObject({
    kind: z.enum(['github', 'gitlab', 'gitea', 'forgejo']),
    baseUrl: z.url({ protocol: /^https?$/ }).optional(),
    /** `owner/name` (GitLab: `group/subgroup/name`). */
    repo: z.string().regex(/^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)+$/, 'must be owner/name'),
  })
  .refine((p) => p.baseUrl !== undefined || (p.kind !== 'gitea' && p.kind !== 'forgejo'), {
    message: 'Gitea and Forgejo need baseUrl (the instance root)',
    path: ['baseUrl'],
  });
export type ProviderConfig = z.infer<typeof ProviderConfig>;

export const RepositorySource = z.discriminatedUnion('kind', [
  /** A repository on this machine (a bare repository or someone's checkout: Meshdeck only clones it). */
  z.strictObject({ kind: z.literal('path'), path: AbsPath }),
  z.strictObject({ kind: z.literal('url'), url: RemoteUrl }),
]);
export type RepositorySource = z.infer<typeof RepositorySource>;

export const RepositoryConfig = z.strictObject({
  format: z.literal(1),
  source: RepositorySource,
  baseBranch: BranchName,
  meshDir: RepoDir,
  credentials: CredentialsRef,
  provider: ProviderConfig.optional(),
  /**
   * A working clone for people (the local default makes one); Meshdeck never writes to it, only
   * pushes to `source`, which the user pulls from.
   */
  workingCopy: AbsPath.optional(),
  /** Sync from Git: what runs follows the base branch (lib/gitops/autoSync.ts); absent: only Sync now. */
  autoSync: AutoSyncPolicy.optional(),
  /**
   * The forge's push webhook (POST /api/gitops/webhook, server/gitops/gitWebhook.ts): the secret it signs
   * with (GitHub, Gitea, Forgejo) or sends (GitLab), by reference. Absent: the endpoint answers 404.
   */
  webhook: z.strictObject({ secret: SecretRef }).optional(),
});
export type RepositoryConfig = z.infer<typeof RepositoryConfig>;

/** What the browser may see of a RepositoryConfig: no secret, no secret's location. */
export const RepositoryPublicView = z.strictObject({
  source: RepositorySource,
  baseBranch: z.string(),
  meshDir: z.string(),
  credentials: z.discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('none') }),
    z.strictObject({ kind: z.literal('token'), username: z.string(), tokenFrom: z.enum(['env', 'file']) }),
    z.strictObject({ kind: z.literal('ssh') }),
  ]),
  provider: ProviderConfig.optional(),
  workingCopy: z.string().optional(),
});
export type RepositoryPublicView = z.infer<typeof RepositoryPublicView>;

/** The config as the browser may see it (see RepositoryPublicView). */
export function publicView(c: RepositoryConfig): RepositoryPublicView {
  const credentials: RepositoryPublicView['credentials'] =
    c.credentials.kind === 'token'
      ? { kind: 'token', username: c.credentials.username, tokenFrom: c.credentials.token.from }
      : { kind: c.credentials.kind };
  const source: RepositorySource =
    c.source.kind === 'url' ? { kind: 'url', url: stripUserInfoPassword(c.source.url) } : c.source;
  return {
    source,
    baseBranch: c.baseBranch,
    meshDir: c.meshDir,
    credentials,
    ...(c.provider ? { provider: c.provider } : {}),
    ...(c.workingCopy ? { workingCopy: c.workingCopy } : {}),
  };
}

function stripUserInfoPassword(u: string): string {
  return u.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/@:]*):[^/@]*@/i, '$1@');
}

/** The URL or path git clones from. */
export function sourceLocation(c: RepositoryConfig): string {
  return c.source.kind === 'path' ? c.source.path : c.source.url;
}

/** Reads the secret a config refers to; throws an Error naming where it looked (never the secret). */
export async function resolveCredentials(
  ref: CredentialsRef,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<GitCredentials> {
  switch (ref.kind) {
    case 'none':
      return { kind: 'none' };
    case 'ssh':
      return { kind: 'ssh', keyFile: ref.keyFile, knownHostsFile: ref.knownHostsFile };
    case 'token':
      return {
        kind: 'token',
        username: ref.username,
        token: await readSecret(ref.token, 'the repository token', env),
      };
  }
}

/**
 * The secret `ref` names (an environment variable, or a file without its final newline); throws an Error
 * naming `what` and where it looked, never the secret.
 */
export async function readSecret(
  ref: SecretRef,
  what: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<string> {
  if (ref.from === 'env') {
    const value = env[ref.name];
    if (!value) throw new Error(`${what}: environment variable ${ref.name} is not set`);
    return value;
  }
  const file = ref.path;
  const text = await readFile(file, 'utf8').catch((e: NodeJS.ErrnoException) => {
    throw new Error(`${what}: cannot read ${file} (${e.code ?? e.message})`);
  });
  const value = text.replace(/\r?\n$/, '');
  if (!value) throw new Error(`${what}: ${file} is empty`);
  return value;
}

/** `<stateDir>/gitops`. */
export function gitopsDir(stateDir: string): string {
  return path.join(stateDir, 'gitops');
}

/** `<stateDir>/gitops/config.json`. */
export function repositoryConfigFile(stateDir: string): string {
  return path.join(gitopsDir(stateDir), 'config.json');
}

/** The stored config, or undefined when there is none; a broken file throws an Error saying why. */
export async function loadRepositoryConfig(stateDir: string): Promise<RepositoryConfig | undefined> {
  const file = repositoryConfigFile(stateDir);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`${file}: cannot read (${(e as Error).message})`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new Error(`${file}: not JSON (${(e as Error).message})`);
  }
  const parsed = RepositoryConfig.safeParse(raw);
  if (!parsed.success)
    throw new Error(
      `${file}: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`,
    );
  return parsed.data;
}

/** Validates and stores the config (atomically, mode 0600, in a folder only the owner can enter). */
export async function saveRepositoryConfig(stateDir: string, config: RepositoryConfig): Promise<void> {
  const valid = RepositoryConfig.parse(config);
  await ensureGitopsDir(stateDir);
  await writeFileAtomic(repositoryConfigFile(stateDir), `${JSON.stringify(valid, null, 2)}\n`, 0o600);
}

/** config.json is not the console's to change (or cannot be read as a config): the message says where and why. */
export class ConfigNotWritable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigNotWritable';
  }
}

/**
 * Why the console may not rewrite `<stateDir>/gitops/config.json`, or undefined when it may: the file is a
 * link (the files of a ConfigMap or Secret mounted as a volume are links into `..data`) or it or its folder
 * cannot be written (a read-only mount). Whoever provides that file owns the setting.
 */
export async function configWriteProblem(stateDir: string): Promise<string | undefined> {
  const file = repositoryConfigFile(stateDir);
  const there = `the sync policy is configured in ${file}`;
  try {
    if ((await lstat(file)).isSymbolicLink())
      return `${there}, a link (a mounted ConfigMap or Secret?), not a file this server owns: change autoSync there`;
    await access(file, constants.W_OK);
    await access(path.dirname(file), constants.W_OK);
  } catch (e) {
    return `${there}, which this server cannot write (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): change autoSync there`;
  }
  return undefined;
}

/**
 * Sets config.json's `autoSync` as the console asks (changedPolicy: off keeps the settings and `as`) and
 * writes the file again atomically (mode 0600). Only `autoSync` changes: every other key, the secret
 * references among them, stays as the file has it (not as zod reads it: no defaults added); a file that
 * says so already is not written. Answers the policy the file had and the one it has now. Throws
 * ConfigNotWritable when the file is not the console's (configWriteProblem) or no longer a valid config
 * (a hand edit since the start: fixed by hand first).
 */
export async function writeAutoSyncPolicy(
  stateDir: string,
  next: AutoSyncSetting | null,
): Promise<{ before: AutoSyncPolicy | undefined; after: AutoSyncPolicy | undefined }> {
  const problem = await configWriteProblem(stateDir);
  if (problem) throw new ConfigNotWritable(problem);
  const file = repositoryConfigFile(stateDir);
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(file, 'utf8'));
  } catch (e) {
    throw new ConfigNotWritable(`${file}: cannot be read as JSON (${(e as Error).message}); fix it by hand`);
  }
  const parsed = RepositoryConfig.safeParse(raw);
  if (!parsed.success)
    throw new ConfigNotWritable(
      `${file} is not a valid repository config (${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}); fix it by hand`,
    );
  const before = parsed.data.autoSync;
  const after = changedPolicy(before, next);
  if (samePolicy(before, after)) return { before, after: before };
  // The file's own object (a valid config is one): spread, so an existing `autoSync` keeps its place.
  const fileKeys = raw as Record<string, unknown>;
  const { autoSync: _dropped, ...others } = fileKeys;
  const out = after ? { ...fileKeys, autoSync: after } : others;
  // What is written must load at the next start.
  RepositoryConfig.parse(out);
  try {
    await writeFileAtomic(file, `${JSON.stringify(out, null, 2)}\n`, 0o600);
  } catch (e) {
    throw new ConfigNotWritable(
      `the sync policy is configured in ${file}, which could not be written (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
    );
  }
  return { before, after };
}

/**
 * Keeps a token given in the console (never sent back) in `<stateDir>/gitops/token` (mode 0600) and
 * answers the reference to put in the config.
 */
export async function storeToken(stateDir: string, token: string): Promise<SecretRef> {
  if (token.length === 0 || /[\r\n]/.test(token)) throw new Error('the token must be one non-empty line');
  await ensureGitopsDir(stateDir);
  const file = path.join(gitopsDir(stateDir), 'token');
  await writeFileAtomic(file, `${token}\n`, 0o600);
  return { from: 'file', path: path.resolve(file) };
}

async function ensureGitopsDir(stateDir: string): Promise<void> {
  await mkdir(gitopsDir(stateDir), { recursive: true, mode: 0o700 });
}
