/**
 * Sync from Git on real l7mp 0.5.7 processes and real git: a repository holds seed Example 1 (its
 * host-wide ports and addresses moved, so it never meets another test's local mesh), the local mesh runs
 * a copy of it, and commits to the repository's base branch reach the gateway proxy through the
 * GitSyncWatcher's comparison and GitAutoSync (policy: prune and self-heal). A commit with a dangling
 * reference is held and the proxy keeps its config; Sync now goes through POST /api/gitops/sync. The
 * console turns the policy off and on again through PUT /api/gitops/sync/policy: config.json rewritten
 * (only its `autoSync`), a commit made while it is off waits, and turning it on syncs it without a restart.
 */
import { cp as copyDir, mkdtemp, readFile, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PUT as putSyncPolicy } from '@/app/api/gitops/sync/policy/route';
import { POST as postSync } from '@/app/api/gitops/sync/route';
import type { SyncAttempt } from '@/lib/gitops/autoSync';
import type { L7mpConfig } from '@/lib/model/l7mp';
import { ApplyHistory } from '../console/ApplyHistory';
import { ConsoleAuth, setConsoleAuth } from '../console/consoleAuth';
import { setConsoleContext } from '../console/consoleContext';
import { DraftRegistry } from '../console/DraftRegistry';
import { localMeshRollouts, SELF_HEAL_CONFLICT } from '../console/serveConsole';
import { jsonPost, jsonRequest } from '../console/testing/jsonPost';
import { ControlPlane } from '../controlPlane/ControlPlane';
import { setControlPlane } from '../controlPlane/registry';
import { until } from '../kube/replicasTestKit';
import { L7mpRestClient } from '../l7mp/L7mpRestClient';
import { DEFAULT_SYNC_USER } from '@/lib/gitops/autoSync';
import { GitAutoSync } from './GitAutoSync';
import { GitOpsService } from './GitOpsService';
import { GitSyncWatcher } from './GitSyncWatcher';
import { localMeshSyncTarget } from './localMeshSyncTarget';
import { loadRepositoryConfig, repositoryConfigFile } from './repositoryConfig';
import { type SyncOrigin, syncOrigin } from './testing/syncOrigin';

const REPO = path.resolve(__dirname, '..', '..');
const quiet = { info: () => {}, warn: () => {}, error: (...a: unknown[]) => console.error(...a) };
const GATEWAY = 'default/gateway-0';
const TOKEN = 'sync-test-token';
/** The webhook secret's reference in config.json: kept as it is when the console changes the policy. */
const WEBHOOK_ENV = 'MESHDECK_AUTOSYNC_TEST_WEBHOOK_SECRET';

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
  let stateDir: string;
  const syncs: string[] = [];
  /** GitAutoSync's info lines (the policy changes). */
  const logged: string[] = [];

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

    stateDir = path.join(tmp, 'state');
    await origin.configure(
      stateDir,
      { prune: true, selfHeal: true },
      { webhook: { secret: { from: 'env', name: WEBHOOK_ENV } } },
    );
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
      logger: { info: (m) => logged.push(m), warn: () => {} },
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

  describe('the policy changed from the console (PUT /api/gitops/sync/policy)', () => {
    const url = 'http://127.0.0.1:3100/api/gitops/sync/policy';
    const ann = () => auth.open({ user: 'ann', groups: [], method: 'token' });
    const put = (body: unknown, session?: { id: string; csrfToken: string }) =>
      putSyncPolicy(jsonRequest('PUT', url, JSON.stringify(body), session));
    const configFile = () => repositoryConfigFile(stateDir);
    const configOnDisk = async () =>
      JSON.parse(await readFile(configFile(), 'utf8')) as Record<string, unknown>;
    const mesh = () => readFile(path.join(meshDir, 'mesh.yaml'), 'utf8');

    it('needs a session and its CSRF token, checks the body, and refuses a config it does not own', async () => {
      const before = await readFile(configFile(), 'utf8');
      expect((await put({ autoSync: null })).status).toBe(401);
      expect((await put({ autoSync: null }, { id: ann().id, csrfToken: 'not-the-token' })).status).toBe(403);
      const foreign = jsonRequest('PUT', url, '{"autoSync": null}', ann());
      foreign.headers.set('origin', 'http://evil.example');
      expect((await putSyncPolicy(foreign)).status).toBe(403);
      const bad = await put({ autoSync: { prune: 'yes', selfHeal: true } }, ann());
      expect(bad.status).toBe(400);
      expect(await bad.json()).toMatchObject({
        error: 'invalid request',
        fields: [{ path: 'autoSync.prune' }],
      });
      // The identity a sync acts as is the config's, never the console's.
      const identity = await put(
        { autoSync: { prune: false, selfHeal: false, as: { user: 'root' } } },
        ann(),
      );
      expect(identity.status).toBe(400);

      // A ConfigMap mounted over config.json (its files are links): the console says where the policy is set.
      const mounted = path.join(tmp, 'configmap-config.json');
      await rename(configFile(), mounted);
      await symlink(mounted, configFile());
      try {
        const where = `the sync policy is configured in ${configFile()}, a link (a mounted ConfigMap or Secret?)`;
        const refused = await put({ autoSync: null }, ann());
        expect(refused.status).toBe(409);
        expect(((await refused.json()) as { error: string }).error).toContain(where);
        expect((await autoSync.view()).policyReadOnly).toContain(where);
      } finally {
        await rm(configFile());
        await rename(mounted, configFile());
      }
      expect(await readFile(configFile(), 'utf8')).toBe(before);
      expect(await autoSync.view()).not.toHaveProperty('policyReadOnly');
      expect(logged.filter((m) => m.includes('policy changed'))).toEqual([]);
    });

    it('turned off: only autoSync changes in config.json (mode 0600), and a further commit is not synced', async () => {
      const before = await configOnDisk();
      const res = await put({ autoSync: null }, ann());
      const text = await res.text();
      expect(res.status, text).toBe(200);
      expect(JSON.parse(text)).toMatchObject({
        changed: true,
        sync: { policy: { enabled: false, prune: true, selfHeal: true }, policyChangedBy: 'ann' },
      });
      expect(text).not.toContain(WEBHOOK_ENV);
      expect(await configOnDisk()).toEqual({
        ...before,
        autoSync: { ...(before.autoSync as object), enabled: false },
      });
      expect((await stat(configFile())).mode & 0o777).toBe(0o600);
      expect(logged).toContain('meshdeck: sync from Git policy changed by ann: on (prune, self-heal) -> off');

      // A merged pull request while it is off: compared and out of sync, but nothing is written.
      const synced = await last();
      const running = await mesh();
      const c = await commit('mesh.yaml', (t) => t.replace('port: 9004', 'port: 9005'), 'gateway on 9005');
      await watcher.compareNow();
      expect(watcher.last).toMatchObject({ ok: true, commit: c });
      expect(watcher.last!.counts!.modified).toBeGreaterThan(0);
      expect(await last()).toEqual(synced);
      expect((await autoSync.view()).waiting).toBeUndefined();
      expect(await mesh()).toBe(running);
      expect(await liveGatewayPort()).toBe(9004);
    });

    it('turned on again: the comparison it starts syncs the waiting commit, without a restart', async () => {
      const before = await configOnDisk();
      const syncsBefore = syncs.length;
      const waiting = watcher.last!.commit!;
      const res = await put({ autoSync: { prune: false, selfHeal: true } }, ann());
      const body = (await res.json()) as { changed: boolean; sync: { policy: unknown } };
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(body).toMatchObject({ changed: true, sync: { policy: { prune: false, selfHeal: true } } });
      expect(await configOnDisk()).toEqual({ ...before, autoSync: { prune: false, selfHeal: true } });
      expect((await stat(configFile())).mode & 0o777).toBe(0o600);
      expect(logged).toContain('meshdeck: sync from Git policy changed by ann: off -> on (self-heal)');

      // No compareNow here: the route started the comparison.
      await until('the waiting commit synced', async () => (await last())?.commit === waiting, 60_000);
      expect(await last()).toMatchObject({
        commit: waiting,
        trigger: 'new-commit',
        result: 'synced',
        applied: ['mesh.yaml'],
        prune: false,
      });
      expect(await mesh()).toBe(await readFile(path.join(origin.dir, 'mesh.yaml'), 'utf8'));
      expect(await liveGatewayPort()).toBe(9005);
      expect(syncs.slice(syncsBefore)).toEqual(['new-commit:synced']);
      // The next start reads the same policy, and the webhook secret's reference is still there.
      expect(await loadRepositoryConfig(stateDir)).toMatchObject({
        autoSync: { prune: false, selfHeal: true },
        webhook: { secret: { from: 'env', name: WEBHOOK_ENV } },
      });
      expect(await autoSync.view()).toMatchObject({
        policy: { prune: false, selfHeal: true },
        policyChangedBy: 'ann',
      });
    });
  });
});
