/**
 * Sync from Git on real l7mp 0.5.7 processes and real git: a repository holds seed Example 1 (its
 * host-wide ports and addresses moved, so it never meets another test's local mesh), the local mesh runs
 * a copy of it, and commits to the repository's base branch reach the gateway proxy through the
 * GitSyncWatcher's comparison and GitAutoSync (policy: prune and self-heal). A commit with a dangling
 * reference is held and the proxy keeps its config; Sync now goes through POST /api/gitops/sync.
 */
import { cp as copyDir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POST as postSync } from '@/app/api/gitops/sync/route';
import type { SyncAttempt } from '@/lib/gitops/autoSync';
import type { L7mpConfig } from '@/lib/model/l7mp';
import { ApplyHistory } from '../console/ApplyHistory';
import { ConsoleAuth, setConsoleAuth } from '../console/consoleAuth';
import { setConsoleContext } from '../console/consoleContext';
import { DraftRegistry } from '../console/DraftRegistry';
import { localMeshRollouts, SELF_HEAL_CONFLICT } from '../console/serveConsole';
import { jsonPost } from '../console/testing/jsonPost';
import { ControlPlane } from '../controlPlane/ControlPlane';
import { setControlPlane } from '../controlPlane/registry';
import { until } from '../kube/replicasTestKit';
import { L7mpRestClient } from '../l7mp/L7mpRestClient';
import { DEFAULT_SYNC_USER } from '@/lib/gitops/autoSync';
import { GitAutoSync } from './GitAutoSync';
import { GitOpsService } from './GitOpsService';
import { GitSyncWatcher } from './GitSyncWatcher';
import { localMeshSyncTarget } from './localMeshSyncTarget';
import { type SyncOrigin, syncOrigin } from './testing/syncOrigin';

const REPO = path.resolve(__dirname, '..', '..');
const quiet = { info: () => {}, warn: () => {}, error: (...a: unknown[]) => console.error(...a) };
const GATEWAY = 'default/gateway-0';
const TOKEN = 'sync-test-token';

/** Seed Example 1 with its host-wide ports and addresses moved (see the file comment). */
function relocate(text: string): string {
  const address: Record<string, string> = { '10': '170', '20': '172', '30': '174', '31': '175' };
  return text
    .replace("api-port: '1234'", "api-port: '21234'")
    .replace("api-port: '1235'", "api-port: '21235'")
    .replace('port: 8888', 'port: 28888')
    .replace(/127\.0\.0\.(10|20|30|31)\b/g, (_m, last: string) => `127.0.0.${address[last]}`);
}

const gatewayPort = (config: L7mpConfig) =>
  config.listeners.find((l) => l.name.includes('gateway-vsvc'))?.spec.port;

describe('sync from Git on the local mesh (real git, real l7mp)', () => {
  let tmp: string;
  let origin: SyncOrigin;
  let meshDir: string;
  let cp: ControlPlane;
  let watcher: GitSyncWatcher;
  let autoSync: GitAutoSync;
  let history: ApplyHistory;
  let auth: ConsoleAuth;
  let drafts: DraftRegistry;
  const syncs: string[] = [];

  /** Edits a file of the base branch and commits it (a merged pull request); the new commit's id. */
  const commit = (file: string, edit: (text: string) => string, message: string) =>
    origin.commit(file, edit, message);
  const liveGatewayPort = async () =>
    gatewayPort((await new L7mpRestClient(cp.live.get().proxies[GATEWAY]!.apiUrl!).readLive()).config);
  const last = async (): Promise<SyncAttempt | undefined> => (await autoSync.view()).last;

  beforeAll(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'md-autosync-'));
    const originDir = path.join(tmp, 'origin');
    meshDir = path.join(tmp, 'mesh');
    await copyDir(path.join(REPO, 'examples', 'seed-example-1'), originDir, { recursive: true });
    for (const f of ['cluster.yaml', 'mesh.yaml']) {
      const file = path.join(originDir, f);
      await writeFile(file, relocate(await readFile(file, 'utf8')));
    }
    origin = syncOrigin(originDir);
    await copyDir(originDir, meshDir, { recursive: true, filter: (src) => !src.includes(`${path.sep}.git`) });

    const stateDir = path.join(tmp, 'state');
    await origin.configure(stateDir, { prune: true, selfHeal: true });
    cp = await ControlPlane.startLocal({ meshDir, stateDir, driftIntervalMs: 1000, logger: quiet });
    setControlPlane(cp);
    await until(
      'every proxy in sync',
      () => cp.syncStates().length === 2 && cp.syncStates().every((s) => s.inSync),
      120000,
    );
    drafts = new DraftRegistry({ meshDir, stateDir, logger: { warn: () => {} } });
    const gitops = GitOpsService.start({ stateDir, examplesDir: path.join(REPO, 'examples'), drafts });
    history = new ApplyHistory({ dir: path.join(stateDir, 'console', 'applies'), logger: quiet });
    autoSync = new GitAutoSync({
      gitops,
      dir: path.join(stateDir, 'gitops'),
      target: () => localMeshSyncTarget({ drafts: drafts.main, controlPlane: () => cp, history }),
      logger: quiet,
      onSync: (trigger, result) => syncs.push(`${trigger}:${result}`),
    });
    watcher = new GitSyncWatcher({ gitops, meshDir, everyMs: 3_600_000, autoSync, logger: quiet });
    setConsoleContext({
      drafts,
      examplesDir: path.join(REPO, 'examples'),
      gitops,
      gitSync: watcher,
      gitAutoSync: autoSync,
    });
    auth = new ConsoleAuth(TOKEN);
    setConsoleAuth(auth);
  }, 180000);

  afterAll(async () => {
    await watcher?.stop();
    setControlPlane(undefined);
    setConsoleContext(undefined);
    setConsoleAuth(undefined);
    await cp?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('does nothing while what runs is what Git says', async () => {
    await watcher.compareNow();
    expect(watcher.last).toMatchObject({ ok: true, counts: { modified: 0, missing: 0, extra: 0 } });
    expect(await last()).toBeUndefined();
    expect(syncs).toEqual([]);
  });

  it('a new commit reaches the proxy, recorded in the apply history', async () => {
    expect(await liveGatewayPort()).toBe(9001);
    const c = await commit('mesh.yaml', (t) => t.replace('port: 9001', 'port: 9002'), 'gateway on 9002');
    await watcher.compareNow();
    expect(await last()).toMatchObject({
      commit: c,
      trigger: 'new-commit',
      user: DEFAULT_SYNC_USER,
      result: 'synced',
      applied: ['mesh.yaml'],
      deleted: [],
      left: [],
    });
    expect(await readFile(path.join(meshDir, 'mesh.yaml'), 'utf8')).toBe(
      await readFile(path.join(origin.dir, 'mesh.yaml'), 'utf8'),
    );
    expect(await liveGatewayPort()).toBe(9002);
    // The comparison after the sync: in sync.
    expect(watcher.last).toMatchObject({ commit: c, counts: { modified: 0, missing: 0, extra: 0 } });
    const [record] = await history.list();
    expect(record).toMatchObject({
      id: (await last())!.historyId,
      target: 'local-mesh',
      user: DEFAULT_SYNC_USER,
      git: { commit: c, trigger: 'new-commit' },
      applied: ['mesh.yaml'],
      proxies: { notInSync: [] },
    });
    expect(syncs).toEqual(['new-commit:synced']);
  });

  it('self-heals a change made outside Git and prunes an object Git does not have', async () => {
    const mesh = path.join(meshDir, 'mesh.yaml');
    const gitText = await readFile(mesh, 'utf8');
    await writeFile(mesh, gitText.replace('port: 9002', 'port: 9003'));
    const extra = [
      'apiVersion: msm.l7mp.io/v1',
      'kind: Target',
      'metadata: { name: stray, namespace: default }',
      'spec: { selector: { matchLabels: { app: worker } }, cluster: { spec: { protocol: UDP, port: 9999 } } }',
      '',
    ].join('\n');
    await writeFile(path.join(meshDir, 'stray.yaml'), extra);
    await watcher.compareNow();
    expect(await last()).toMatchObject({
      trigger: 'drift',
      result: 'synced',
      applied: ['mesh.yaml'],
      deleted: ['stray.yaml'],
      prune: true,
    });
    expect(await readFile(mesh, 'utf8')).toBe(gitText);
    await expect(readFile(path.join(meshDir, 'stray.yaml'), 'utf8')).rejects.toThrow(/ENOENT/);
    expect(await liveGatewayPort()).toBe(9002);
  });

  it('holds a commit with a dangling reference: nothing written, the proxy keeps its config, no retry', async () => {
    const before = await readFile(path.join(meshDir, 'mesh.yaml'), 'utf8');
    const c = await commit(
      'mesh.yaml',
      (t) => t.replace('destination: worker-svc', 'destination: no-such-svc'),
      'a typo',
    );
    await watcher.compareNow();
    const held = await last();
    expect(held).toMatchObject({
      commit: c,
      trigger: 'new-commit',
      result: 'held',
      applied: [],
      deleted: [],
    });
    expect(held!.error).toMatch(new RegExp(`^${c.slice(0, 7)} has \\d+ errors?: nothing was synced`));
    expect(
      held!.diagnostics!.some(
        (d) =>
          d.startsWith(
            'VirtualService/default/gateway-vsvc spec.rules[0].action.route.destination (mesh.yaml:',
          ) && d.includes('no-such-svc'),
      ),
    ).toBe(true);
    expect(await readFile(path.join(meshDir, 'mesh.yaml'), 'utf8')).toBe(before);
    expect(await liveGatewayPort()).toBe(9002);
    // Compared again: still held, not tried again.
    await watcher.compareNow();
    expect((await last())!.at).toBe(held!.at);
    expect((await autoSync.view()).waiting).toMatch(/has errors and is held until a new commit fixes them/);
    expect(syncs.at(-1)).toBe('new-commit:held');
    expect(syncs.filter((s) => s.endsWith(':held'))).toHaveLength(1);
  });

  it('refuses to start a progressive rollout while self-heal is on (it would take every step back)', async () => {
    const rollouts = localMeshRollouts({
      drafts: drafts.main,
      history,
      gitAutoSync: autoSync,
      stateDir: path.join(tmp, 'state'),
      logger: quiet,
    });
    try {
      const spec = { target: { name: 'worker-split' }, canary: 'worker-svc', steps: [50] };
      expect(await rollouts.start(spec, { user: 'ann', groups: [] })).toEqual({
        status: 409,
        error: SELF_HEAL_CONFLICT,
      });
      expect(rollouts.list()).toEqual([]);
    } finally {
      await rollouts.stop();
    }
  });

  it('Sync now (POST /api/gitops/sync) needs a session and syncs the fixed tip', async () => {
    const c = await commit(
      'mesh.yaml',
      (t) =>
        t.replace('destination: no-such-svc', 'destination: worker-svc').replace('port: 9002', 'port: 9004'),
      'fix the typo, gateway on 9004',
    );
    const url = 'http://127.0.0.1:3100/api/gitops/sync';
    const anonymous = await postSync(jsonPost(url, '{}'));
    expect(anonymous.status).toBe(401);
    expect(await last()).toMatchObject({ result: 'held' });

    const session = auth.login(TOKEN)!;
    const signedIn = (body: string) => postSync(jsonPost(url, body, session));
    const bad = await signedIn('{"prune": "yes"}');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: 'invalid request', fields: [{ path: 'prune' }] });
    expect(await last()).toMatchObject({ result: 'held' });
    const res = await signedIn('{}');
    const body = (await res.json()) as { attempt: SyncAttempt; status: { counts: Record<string, number> } };
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.attempt).toMatchObject({
      commit: c,
      trigger: 'manual',
      result: 'synced',
      applied: ['mesh.yaml'],
    });
    expect(body.status.counts).toMatchObject({ modified: 0, missing: 0, extra: 0 });
    expect(await liveGatewayPort()).toBe(9004);
    expect(syncs.at(-1)).toBe('manual:synced');
  });
});
