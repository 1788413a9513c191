/**
 * What `meshdeck serve` sets up for the console besides the control plane: the console token and
 * its sessions, the server-side draft, the apply history, and a runtime file (mode 0600, as Jupyter keeps one) through
 * which `meshdeck probe` on the same machine finds the token of the console it talks to.
 */
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import {
  CONSOLE_TOKEN_ENV,
  ConsoleAuth,
  consoleTokenProblem,
  generateConsoleToken,
  setConsoleAuth,
} from './consoleAuth';
import { ApplyHistory } from './ApplyHistory';
import { GitOpsService } from '../gitops/GitOpsService';
import { GitAutoSync, type SyncTarget } from '../gitops/GitAutoSync';
import { GitSyncWatcher } from '../gitops/GitSyncWatcher';
import { localMeshSyncTarget } from '../gitops/localMeshSyncTarget';
import { gitopsDir, sourceLocation } from '../gitops/repositoryConfig';
import { getControlPlane } from '../controlPlane/registry';
import { localMeshRolloutTarget } from '../rollout/localMeshRolloutTarget';
import { RolloutRunner } from '../rollout/RolloutRunner';
import type { RolloutTarget } from '../rollout/RolloutTarget';
import { getMeshMetrics } from '../metrics/metricsRegistry';
import { getClusterContext } from '../kube/clusterContext';
import { setConsoleContext } from './consoleContext';
import { DraftLayouts } from './DraftLayouts';
import { DraftRegistry } from './DraftRegistry';
import type { DraftStore } from './DraftStore';
import { writeFileAtomic } from './meshDirFiles';
import { setOidcSignIn, type OidcSignIn } from './oidc';
import { isAutoSyncOn } from '@/lib/gitops/autoSync';
import { urlHost } from '@/lib/util/urlHost';

/** Set to `0` to have no server layouts (server/console/DraftLayouts.ts). */
export const SERVER_LAYOUTS_ENV = 'MESHDECK_SERVER_LAYOUTS';

/** How long a draft must stay the same before the server lays it out (ms; tests shorten it). */
export const SERVER_LAYOUT_LATER_ENV = 'MESHDECK_SERVER_LAYOUT_LATER_MS';

/**
 * Server layouts as the environment asks for them: undefined when turned off (`MESHDECK_SERVER_LAYOUTS=0`),
 * else DraftLayouts options (a delay that is not a number of ms >= 0 is ignored: the default stays).
 */
export function serverLayoutOptions(
  env: Readonly<Record<string, string | undefined>>,
): { laterMs?: number } | undefined {
  if (env[SERVER_LAYOUTS_ENV] === '0') return undefined;
  const v = env[SERVER_LAYOUT_LATER_ENV];
  const n = Number(v);
  return v !== undefined && v.trim() !== '' && Number.isFinite(n) && n >= 0 ? { laterMs: n } : {};
}

/** The console token: `--token`, else $MESHDECK_CONSOLE_TOKEN, else a new random one; throws if a given one is unusable. */
export function resolveConsoleToken(
  flag: string | undefined,
  env: Readonly<Record<string, string | undefined>> = process.env,
): string {
  const given = flag ?? env[CONSOLE_TOKEN_ENV];
  if (given === undefined || given === '') return generateConsoleToken();
  const problem = consoleTokenProblem(given);
  if (problem) throw new Error(`${flag !== undefined ? '--token' : CONSOLE_TOKEN_ENV}: ${problem}`);
  return given;
}

/** The URL to open: the console with its token, as printed once at start. */
export function consoleUrl(host: string, port: number, token: string): string {
  return `http://${urlHost(host)}:${port}/?token=${token}`;
}

/** $MESHDECK_GIT_SYNC_INTERVAL_S in ms (0 turns the comparison off); 180 s when unset or not a number. */
export function gitSyncEveryMs(env: Readonly<Record<string, string | undefined>>): number {
  const v = env.MESHDECK_GIT_SYNC_INTERVAL_S;
  const n = v === undefined || v.trim() === '' ? NaN : Number(v);
  return Number.isFinite(n) && n >= 0 ? Math.round(n * 1000) : 180_000;
}

/** Why no rollout starts while sync from Git self-heals: each step would be taken back as drift. */
export const SELF_HEAL_CONFLICT =
  'sync from Git runs with selfHeal: it would take every step of a rollout back as drift. Turn Self-heal off ("What runs vs. Git", or the repository config\'s autoSync), or change the split in Git';

/** Where `meshdeck serve` on `port` keeps its runtime file. */
export function runtimeFile(stateDir: string, port: number): string {
  return path.join(stateDir, 'console', `serve-${port}.json`);
}

export interface ServeConsoleOptions {
  meshDir: string;
  host: string;
  port: number;
  token: string;
  /** The control plane's state directory (the draft and the runtime file go under `console/`). */
  stateDir: string;
  examplesDir: string;
  /** The console compiles for the local mesh (`meshdeck serve`), not a cluster: its graph can differ. */
  localMesh: boolean;
  /** Sign-in with an OpenID Provider besides (or, when its config says so, instead of) the token. */
  oidc?: OidcSignIn;
  logger?: Pick<Console, 'warn'>;
  /**
   * How often what runs is compared with the GitOps base branch for the metrics (ms; 0: never). Default
   * $MESHDECK_GIT_SYNC_INTERVAL_S seconds, else 180 (Argo CD's default poll).
   */
  gitSyncEveryMs?: number;
  /**
   * Where a sync from Git writes when it is not the local mesh (Kubernetes mode: the cluster), given the
   * apply history; and whether this replica runs the automated sync now (the Lease holder).
   */
  sync?: { target(history: ApplyHistory): SyncTarget; automated(): boolean };
  /**
   * Where progressive rollouts write when it is not the local mesh (Kubernetes mode: the cluster, whose
   * target says when this replica may not run them), given the apply history.
   */
  rollouts?: { target(history: ApplyHistory): RolloutTarget };
}

export interface ServedConsole {
  /** The console URL with the token (print it once, never log it). */
  url: string;
  /** The periodic comparison with Git (for the metrics); absent when turned off. */
  gitSync?: GitSyncWatcher;
  /** Removes the runtime file and the process-wide console state. */
  dispose(): Promise<void>;
}

/** Installs the console's auth and draft for the route handlers of this process and writes the runtime file. */
export async function serveConsole(o: ServeConsoleOptions): Promise<ServedConsole> {
  const wildcard = o.host === '0.0.0.0' || o.host === '::';
  // Behind a reverse proxy the console is reached under its redirect URL's host name.
  const oidcHost = o.oidc ? [new URL(o.oidc.config.redirectUrl).hostname.toLowerCase()] : [];
  setConsoleAuth(
    new ConsoleAuth(o.token, {
      allowedHosts: wildcard ? ['*'] : [urlHost(o.host).toLowerCase(), ...oidcHost],
      tokenSignIn: o.oidc?.config.tokenSignIn ?? true,
    }),
  );
  setOidcSignIn(o.oidc);
  const drafts = new DraftRegistry({
    meshDir: path.resolve(o.meshDir),
    stateDir: o.stateDir,
    ...(o.logger ? { logger: o.logger } : {}),
  });
  // In the background: the first start creates the local default repository, and a remote may be slow.
  const gitops = GitOpsService.start({
    stateDir: o.stateDir,
    examplesDir: o.examplesDir,
    meshDir: drafts.meshDir,
    drafts,
  });
  gitops.then(
    (g) => {
      // Said once at start: with a policy, what runs will be made Git's at the first comparison.
      const p = g.config.autoSync;
      if (isAutoSyncOn(p))
        console.log(
          `meshdeck: sync from Git is on: ${g.config.baseBranch} of ${sourceLocation(g.config)} -> ${o.localMesh ? 'the local mesh' : 'the cluster'}${p.prune ? ', prune' : ''}${p.selfHeal ? ', self-heal' : ''}`,
        );
    },
    (e: unknown) =>
      (o.logger ?? console).warn(`meshdeck console: GitOps is unavailable: ${(e as Error).message}`),
  );
  // MESHDECK_SERVER_LAYOUTS=0 leaves large layouts to the browsers (no worker thread, about 120 MB).
  const layoutOptions = serverLayoutOptions(process.env);
  const layouts = layoutOptions
    ? new DraftLayouts({ localMesh: o.localMesh, logger: o.logger ?? console, ...layoutOptions })
    : undefined;
  // The main draft's first view is ready before the first browser opens it.
  if (layouts)
    drafts.main.get().then(
      (s) => layouts.prepare(s.draft),
      () => undefined,
    );
  const applies = new ApplyHistory({
    dir: path.join(o.stateDir, 'console', 'applies'),
    ...(o.logger ? { logger: o.logger } : {}),
  });
  const everyMs = o.gitSyncEveryMs ?? gitSyncEveryMs(process.env);
  const target = o.sync
    ? o.sync.target(applies)
    : localMeshSyncTarget({
        drafts: drafts.main,
        controlPlane: () => getControlPlane(),
        history: applies,
        ...(o.logger ? { logger: o.logger } : {}),
      });
  const gitAutoSync = new GitAutoSync({
    gitops,
    dir: gitopsDir(o.stateDir),
    target: () => (o.sync || (o.localMesh && getControlPlane()) ? target : undefined),
    ...(o.sync ? { automated: o.sync.automated } : {}),
    unavailable: () =>
      o.localMesh ? 'the local mesh is not running in this process' : 'no cluster to sync to in this process',
    logger: { info: (m) => console.log(m), warn: (m) => (o.logger ?? console).warn(m) },
    onSync: (trigger, result) => getMeshMetrics()?.gitSynced(trigger, result),
  });
  const gitSync =
    everyMs > 0
      ? new GitSyncWatcher({
          gitops,
          meshDir: drafts.meshDir,
          // Kubernetes mode: the mesh kinds only (the cluster's Pods are not in Git).
          kinds: () => getClusterContext()?.applyKinds,
          everyMs,
          logger: o.logger ?? console,
          autoSync: gitAutoSync,
        })
      : undefined;
  gitSync?.start();
  // Kept in this state directory like the drafts (Kubernetes mode: the replica's own, docs/architecture.md).
  const rolloutRunnerOptions = {
    gitAutoSync,
    stateDir: o.stateDir,
    ...(o.logger ? { logger: o.logger } : {}),
  };
  const rollouts = o.rollouts
    ? consoleRollouts({ ...rolloutRunnerOptions, target: o.rollouts.target(applies) })
    : o.localMesh && !o.sync
      ? localMeshRollouts({ ...rolloutRunnerOptions, drafts: drafts.main, history: applies })
      : undefined;
  await rollouts?.load();
  setConsoleContext({
    drafts,
    examplesDir: o.examplesDir,
    gitops,
    applies,
    ...(layouts ? { layouts } : {}),
    ...(gitSync ? { gitSync } : {}),
    gitAutoSync,
    ...(rollouts ? { rollouts } : {}),
  });
  const url = consoleUrl(wildcard ? '127.0.0.1' : o.host, o.port, o.token);
  const file = runtimeFile(o.stateDir, o.port);
  await writeFileAtomic(file, `${JSON.stringify({ url, token: o.token, pid: process.pid })}\n`, 0o600);
  return {
    url,
    ...(gitSync ? { gitSync } : {}),
    dispose: async () => {
      await gitSync?.stop();
      await rollouts?.stop();
      setConsoleAuth(undefined);
      setOidcSignIn(undefined);
      setConsoleContext(undefined);
      await layouts?.close();
      await rm(file, { force: true });
      // The GitOps start (which may be creating the local repository) finishes before dispose returns:
      // nothing keeps writing into the state directory after it.
      await gitops.catch(() => undefined);
    },
  };
}

/** What the console's rollouts need besides their target. */
interface ConsoleRolloutOptions {
  gitAutoSync: Pick<GitAutoSync, 'view'>;
  stateDir: string;
  logger?: Pick<Console, 'warn'>;
}

/**
 * The progressive rollouts of the local mesh this process runs: steps written like Apply (the main draft's
 * lock, the apply history), refused while sync from Git self-heals, counted in the metrics.
 */
export function localMeshRollouts(
  o: ConsoleRolloutOptions & { drafts: DraftStore; history: ApplyHistory },
): RolloutRunner {
  return consoleRollouts({
    ...o,
    target: localMeshRolloutTarget({
      drafts: o.drafts,
      controlPlane: () => getControlPlane(),
      history: o.history,
      logger: { warn: (m) => (o.logger ?? console).warn(m) },
    }),
  });
}

/**
 * The console's progressive rollouts on `target` (the local mesh's, or the cluster's in Kubernetes mode):
 * refused while sync from Git self-heals (it would take each step back as drift, on either target),
 * counted in the metrics.
 */
export function consoleRollouts(o: ConsoleRolloutOptions & { target: RolloutTarget }): RolloutRunner {
  const warn = (m: string) => (o.logger ?? console).warn(m);
  return new RolloutRunner({
    target: o.target,
    stateDir: o.stateDir,
    conflict: async () => {
      const { policy } = await o.gitAutoSync.view();
      return isAutoSyncOn(policy) && policy.selfHeal ? SELF_HEAL_CONFLICT : undefined;
    },
    metrics: {
      ended: (result) => getMeshMetrics()?.rolloutEnded(result),
      analysed: (result) => getMeshMetrics()?.rolloutAnalysed(result),
    },
    logger: { info: (m) => console.log(m), warn },
  });
}

/**
 * The token of the console `meshdeck serve` runs on this port, from its runtime file, if that
 * server is still running (its pid is alive) and the file is this user's to read.
 */
export async function findConsoleToken(stateDir: string, port: number): Promise<string | undefined> {
  let saved: { token?: unknown; pid?: unknown };
  try {
    saved = JSON.parse(await readFile(runtimeFile(stateDir, port), 'utf8')) as typeof saved;
  } catch {
    return undefined;
  }
  if (typeof saved.token !== 'string' || typeof saved.pid !== 'number') return undefined;
  try {
    process.kill(saved.pid, 0);
  } catch (e) {
    // EPERM: alive, but another user's process (its file would not be readable either).
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return undefined;
  }
  return saved.token;
}
