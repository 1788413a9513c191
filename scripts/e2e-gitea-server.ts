/**
 * The second server of the browser tests (playwright.config.ts, e2e/console-pullrequest.spec.ts): a real
 * Gitea on loopback (server/gitops/testing/giteaServer.ts, the binary from scripts/gitea-build.sh) with a
 * repository whose `main` holds a copy of seed Example 1 in `mesh/`, pushed with the git CLI, and
 * `meshdeck serve` on that same copy with a repository config (remote URL, token credentials from a
 * file, the gitea provider) in a fresh state directory, so the console's Commit / PR opens a real pull
 * request.
 *
 * The main e2e server (scripts/e2e-server.sh) runs seed Example 1 at the same time, so this copy moves
 * everything a local mesh binds machine-wide: pod addresses (UDP listeners and the demo apps bind them),
 * l7mp API ports and the WebSocket listener port (both bind all interfaces); see MESH_REWRITES.
 *
 *   node --import tsx scripts/e2e-gitea-server.ts    (E2E_GITEA_PORT, default 3101)
 *
 * Runs until SIGTERM/SIGINT, then stops meshdeck and Gitea and removes its temp dirs. The Gitea
 * repository is public: the tests read pull requests through Gitea's API without a token.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type GiteaServer, startGitea } from '../server/gitops/testing/giteaServer';
import { saveRepositoryConfig, storeToken } from '../server/gitops/repositoryConfig';

const execFileP = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PORT = Number(process.env.E2E_GITEA_PORT ?? 3101);
/** The Gitea repository and the folder in it that holds the mesh. */
const E2E_GITEA_REPO = 'mesh-gitops';
const E2E_GITEA_MESH_DIR = 'mesh';

/**
 * Exact text replacements that move seed Example 1 off the main e2e server's addresses and ports
 * (pod addresses 127.0.0.10/20/30/31 -> .210/.220/.230/.231, API ports 1234/1235 -> 1334/1335,
 * WebSocket 8888 -> 8988). Each must match exactly once: a changed example fails loudly here instead of
 * clashing at run time.
 */
const MESH_REWRITES: Record<string, [string, string][]> = {
  'cluster.yaml': [
    ["annotations: { msm.l7mp.io/api-port: '1234' }", "annotations: { msm.l7mp.io/api-port: '1334' }"],
    ["msm.l7mp.io/api-port: '1235'", "msm.l7mp.io/api-port: '1335'"],
    ['podIP: 127.0.0.10,', 'podIP: 127.0.0.210,'],
    ['podIP: 127.0.0.20,', 'podIP: 127.0.0.220,'],
    ['podIP: 127.0.0.30,', 'podIP: 127.0.0.230,'],
    ['podIP: 127.0.0.31,', 'podIP: 127.0.0.231,'],
  ],
  'mesh.yaml': [['port: 8888\n', 'port: 8988\n']],
};

async function prepareMesh(dir: string): Promise<void> {
  await cp(path.join(ROOT, 'examples/seed-example-1'), dir, { recursive: true });
  for (const [file, rewrites] of Object.entries(MESH_REWRITES)) {
    let text = await readFile(path.join(dir, file), 'utf8');
    for (const [from, to] of rewrites) {
      const n = text.split(from).length - 1;
      if (n !== 1)
        throw new Error(`examples/seed-example-1/${file}: "${from.trim()}" occurs ${n} times, not once`);
      text = text.replace(from, to);
    }
    await writeFile(path.join(dir, file), text);
  }
}

/** Pushes the mesh directory's files to `main` of the Gitea repository, in `mesh/`, with the git CLI. */
async function seedRepository(
  gitea: GiteaServer,
  cloneUrl: string,
  meshDir: string,
  tmp: string,
): Promise<void> {
  const work = path.join(tmp, 'seed');
  const basic = Buffer.from(`${gitea.username}:${gitea.token}`).toString('base64');
  // The token travels in an environment-provided header, not in argv or a URL git might print.
  const env = {
    ...process.env,
    HOME: tmp,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    LC_ALL: 'C',
    GIT_CONFIG_COUNT: '1',
    GIT_CONFIG_KEY_0: 'http.extraHeader',
    GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}`,
  };
  const git = (...args: string[]) => execFileP('git', args, { cwd: tmp, env });
  await git('clone', '--quiet', cloneUrl, work);
  await cp(meshDir, path.join(work, E2E_GITEA_MESH_DIR), { recursive: true });
  const w = (...args: string[]) => git('-C', work, ...args);
  await w('add', E2E_GITEA_MESH_DIR);
  await w(
    '-c',
    'user.name=E2E Seed',
    '-c',
    'user.email=seed@example.invalid',
    'commit',
    '--quiet',
    '-m',
    'Seed Example 1 (ports moved for the e2e run)',
  );
  await w('push', '--quiet', 'origin', 'main');
}

async function main(): Promise<void> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'md-e2e-gitea-'));
  let gitea: GiteaServer | undefined;
  let serve: ChildProcess | undefined;
  let stopping: Promise<void> | undefined;
  const stop = (code: number) => {
    stopping ??= (async () => {
      if (serve && serve.exitCode === null && serve.signalCode === null) {
        const exited = new Promise((r) => serve!.once('exit', r));
        serve.kill('SIGTERM');
        await exited;
      }
      await gitea?.stop().catch(() => undefined);
      await rm(tmp, { recursive: true, force: true });
      process.exit(code);
    })();
    return stopping;
  };
  // Playwright signals the whole process group: meshdeck and Gitea get SIGTERM too, and are waited for.
  process.on('SIGTERM', () => void stop(0));
  process.on('SIGINT', () => void stop(0));

  try {
    const meshDir = path.join(tmp, 'mesh');
    await prepareMesh(meshDir);
    gitea = await startGitea();
    const { cloneUrl } = await gitea.createRepo(E2E_GITEA_REPO, { autoInit: true });
    await seedRepository(gitea, cloneUrl, meshDir, tmp);

    const stateDir = path.join(tmp, 'state');
    const token = await storeToken(stateDir, gitea.token);
    await saveRepositoryConfig(stateDir, {
      format: 1,
      source: { kind: 'url', url: cloneUrl },
      baseBranch: 'main',
      meshDir: E2E_GITEA_MESH_DIR,
      credentials: { kind: 'token', username: gitea.username, token },
      provider: { kind: 'gitea', baseUrl: gitea.url, repo: `${gitea.username}/${E2E_GITEA_REPO}` },
    });
    process.stderr.write(`e2e-gitea-server: ${gitea.version} at ${gitea.url}, repository ${cloneUrl}\n`);

    serve = spawn(
      process.execPath,
      ['bin/meshdeck.mjs', 'serve', meshDir, '--port', String(PORT), '--token', 'e2e-token', '--no-xds'],
      {
        cwd: ROOT,
        env: { ...process.env, MESHDECK_STATE_DIR: stateDir, NEXT_TELEMETRY_DISABLED: '1' },
        stdio: 'inherit',
      },
    );
    serve.once('exit', (code, signal) => {
      if (!stopping) {
        process.stderr.write(`e2e-gitea-server: meshdeck serve exited (${code ?? signal})\n`);
        void stop(1);
      }
    });
  } catch (e) {
    process.stderr.write(`e2e-gitea-server: ${e instanceof Error ? e.message : String(e)}\n`);
    await stop(1);
  }
}

void main();
