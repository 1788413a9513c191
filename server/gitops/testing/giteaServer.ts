/**
 * Test harness: a real Gitea (built from its Go module by scripts/gitea-build.sh, cached by version) on
 * 127.0.0.1 with SQLite in a temp dir, an admin user and an access token made with Gitea's own CLI, and
 * repositories made through its API. Nothing leaves loopback: offline mode, no mailer, no SSH, no indexer.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from '@/server/testing/startL7mp';

const execFileP = promisify(execFile);
const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const LOG_LIMIT = 64 * 1024;

/** A running Gitea. */
export interface GiteaServer {
  /** `http://127.0.0.1:<port>` (no trailing slash): the web root, the API is under `/api/v1`. */
  url: string;
  /** The admin user's name and password, and an access token with all scopes. */
  username: string;
  password: string;
  token: string;
  /** The Gitea version the binary reports. */
  version: string;
  /** Creates a repository owned by the admin user (with a README commit on `main` when autoInit). */
  createRepo(name: string, options?: { autoInit?: boolean }): Promise<{ cloneUrl: string; htmlUrl: string }>;
  /** What Gitea printed so far (the last 64 KiB). */
  logs(): string;
  /** Stops Gitea (SIGTERM, then SIGKILL) and removes its temp dir. Idempotent. */
  stop(): Promise<void>;
}

export interface StartGiteaOptions {
  /** The binary; by default scripts/gitea-build.sh builds it (or finds it in the cache) and says where. */
  binary?: string;
  /** How long to wait for the HTTP API to answer. */
  startTimeoutMs?: number;
}

/**
 * The Gitea binary from scripts/gitea-build.sh (MESHDECK_GITEA_BIN overrides). A cold build takes many
 * minutes, so CI runs the script before the tests; here it is then a cache hit.
 */
export async function giteaBinary(): Promise<string> {
  if (process.env.MESHDECK_GITEA_BIN) return process.env.MESHDECK_GITEA_BIN;
  const { stdout } = await execFileP('bash', [path.join(REPO_ROOT, 'scripts/gitea-build.sh')], {
    maxBuffer: 16 * 1024 * 1024,
  });
  const bin = stdout.trim().split('\n').pop();
  if (!bin) throw new Error('scripts/gitea-build.sh printed no binary path');
  return bin;
}

/** Runs git against this Gitea with its admin token as a Basic Authorization header (kept out of URLs and argv). */
export async function giteaGit(gitea: GiteaServer, cwd: string, ...args: string[]): Promise<string> {
  const basic = Buffer.from(`${gitea.username}:${gitea.token}`).toString('base64');
  const { stdout } = await execFileP('git', args, {
    cwd,
    env: {
      ...process.env,
      GIT_TERMINAL_PROMPT: '0',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'http.extraHeader',
      GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}`,
      GIT_AUTHOR_NAME: 'Meshdeck Test',
      GIT_AUTHOR_EMAIL: 'test@example.invalid',
      GIT_COMMITTER_NAME: 'Meshdeck Test',
      GIT_COMMITTER_EMAIL: 'test@example.invalid',
    },
  });
  return stdout;
}

/** Starts Gitea on a free loopback port with a fresh SQLite database, user and token. */
export async function startGitea(options: StartGiteaOptions = {}): Promise<GiteaServer> {
  const binary = options.binary ?? (await giteaBinary());
  const dir = await mkdtemp(path.join(os.tmpdir(), 'meshdeck-gitea-'));
  const port = await freePort('tcp');
  const url = `http://127.0.0.1:${port}`;
  const config = path.join(dir, 'app.ini');
  await mkdir(path.join(dir, 'custom'), { recursive: true });
  await writeFile(config, appIni({ dir, port, staticRoot: path.dirname(binary) }));

  const env: NodeJS.ProcessEnv = {
    ...process.env,
    // CI runs as root; Gitea refuses that unless told (a test-only, loopback-only instance).
    GITEA_I_AM_BEING_UNSAFE_RUNNING_AS_ROOT: 'true',
    GITEA_WORK_DIR: dir,
    GITEA_CUSTOM: path.join(dir, 'custom'),
    HOME: dir,
    GIT_CONFIG_NOSYSTEM: '1',
  };
  const cli = async (...args: string[]) => {
    try {
      return (await execFileP(binary, [...args, '--config', config, '--work-path', dir], { env })).stdout;
    } catch (e) {
      const err = e as { stderr?: string; stdout?: string; message?: string };
      throw new Error(
        `gitea ${args.slice(0, 3).join(' ')} failed: ${err.stderr || err.stdout || err.message}`,
      );
    }
  };

  let child: ChildProcess | undefined;
  let log = '';
  const append = (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-LOG_LIMIT);
  };
  let exited: Promise<void> = Promise.resolve();
  const stop = async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child?.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    await rm(dir, { recursive: true, force: true });
  };

  try {
    const version = (await execFileP(binary, ['--version'], { env })).stdout.trim();
    // The schema first, so the CLI can create the user and token before the server starts.
    await cli('migrate');
    const username = 'meshdeck';
    const password = `pw-${randomBytes(12).toString('hex')}`;
    await cli(
      'admin',
      'user',
      'create',
      '--admin',
      '--username',
      username,
      '--password',
      password,
      '--email',
      'meshdeck@example.invalid',
      '--must-change-password=false',
    );
    // Gitea logs (a warning when run as root) to stdout too: the token is the last line.
    const tokenOut = await cli(
      'admin',
      'user',
      'generate-access-token',
      '--username',
      username,
      '--token-name',
      'tests',
      '--scopes',
      'all',
      '--raw',
    );
    const token = tokenOut.trim().split('\n').pop()?.trim() ?? '';
    // Its output says why (a throwaway test instance: nothing secret in it when there is no token).
    if (!/^[0-9a-f]{20,}$/i.test(token))
      throw new Error(
        `gitea generate-access-token printed no token; its output ends:\n${tokenOut.slice(-800)}`,
      );

    child = spawn(binary, ['web', '--config', config, '--work-path', dir], {
      env,
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const proc = child;
    exited = new Promise((resolve) => proc.once('exit', () => resolve()));
    proc.stdout?.on('data', append);
    proc.stderr?.on('data', append);
    await waitForApi(url, proc, options.startTimeoutMs ?? 120_000, () => log);

    const createRepo = async (name: string, opts: { autoInit?: boolean } = {}) => {
      const res = await fetch(`${url}/api/v1/user/repos`, {
        method: 'POST',
        headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          name,
          auto_init: opts.autoInit ?? true,
          default_branch: 'main',
          readme: 'Default',
        }),
      });
      const body = (await res.json()) as { clone_url?: string; html_url?: string; message?: string };
      if (res.status !== 201 || !body.clone_url || !body.html_url) {
        throw new Error(`creating repository ${name}: HTTP ${res.status} ${body.message ?? ''}`);
      }
      return { cloneUrl: body.clone_url, htmlUrl: body.html_url };
    };

    return { url, username, password, token, version, createRepo, logs: () => log, stop };
  } catch (e) {
    await stop();
    const detail = log ? `\n--- gitea output ---\n${log.slice(-4000)}` : '';
    throw new Error(`${e instanceof Error ? e.message : String(e)}${detail}`);
  }
}

async function waitForApi(
  url: string,
  child: ChildProcess,
  timeoutMs: number,
  logs: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `gitea web exited (${child.exitCode ?? child.signalCode}) before answering:\n${logs().slice(-4000)}`,
      );
    }
    try {
      const res = await fetch(`${url}/api/v1/version`, { signal: AbortSignal.timeout(2000) });
      if (res.ok) return;
      last = `HTTP ${res.status}`;
    } catch (e) {
      last = e instanceof Error ? e.message : String(e);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`gitea at ${url} did not answer within ${timeoutMs} ms (${last})`);
}

/** Gitea's configuration for a throwaway loopback instance. */
function appIni({ dir, port, staticRoot }: { dir: string; port: number; staticRoot: string }): string {
  return `APP_NAME = meshdeck-test
RUN_MODE = prod
RUN_USER = ${os.userInfo().username}
WORK_PATH = ${dir}

[server]
PROTOCOL = http
HTTP_ADDR = 127.0.0.1
HTTP_PORT = ${port}
DOMAIN = 127.0.0.1
ROOT_URL = http://127.0.0.1:${port}/
DISABLE_SSH = true
START_SSH_SERVER = false
OFFLINE_MODE = true
LFS_START_SERVER = false
STATIC_ROOT_PATH = ${staticRoot}
APP_DATA_PATH = ${dir}/data

[database]
DB_TYPE = sqlite3
PATH = ${dir}/data/gitea.db
SQLITE_JOURNAL_MODE = WAL

[repository]
ROOT = ${dir}/repositories
DEFAULT_BRANCH = main

[security]
INSTALL_LOCK = true
SECRET_KEY = ${randomBytes(24).toString('hex')}
INTERNAL_TOKEN = ${randomBytes(40).toString('hex')}

[oauth2]
ENABLED = false

[service]
DISABLE_REGISTRATION = true
ENABLE_NOTIFY_MAIL = false

[mailer]
ENABLED = false

[picture]
DISABLE_GRAVATAR = true
ENABLE_FEDERATED_AVATAR = false

[indexer]
ISSUE_INDEXER_TYPE = db
REPO_INDEXER_ENABLED = false

[session]
PROVIDER = memory

[cache]
ADAPTER = memory

[queue]
TYPE = channel

[actions]
ENABLED = false

[packages]
ENABLED = false

[cron]
ENABLED = false

[cron.update_checker]
ENABLED = false

[migrations]
ALLOW_LOCALNETWORKS = false

[webhook]
; Deliveries to the tests' own servers on loopback (server/gitops/gitWebhook.integration.test.ts).
ALLOWED_HOST_LIST = loopback
DELIVER_TIMEOUT = 5

[log]
MODE = console
LEVEL = warn
ROOT_PATH = ${dir}/log
`;
}
