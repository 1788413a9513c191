/**
 * The /api/gitops route handlers, called as Next.js calls them, with real Requests and sessions, a
 * real DraftStore and GitOpsService over a smart-HTTP remote with a token: the session and CSRF
 * refusals, the happy path, and no token string in any response body.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POST as postCommit } from '@/app/api/gitops/commit/route';
import { POST as postRebase } from '@/app/api/gitops/rebase/route';
import { POST as postResolve } from '@/app/api/gitops/resolve/route';
import { GET as getStatus } from '@/app/api/gitops/status/route';
import { GET as getSync } from '@/app/api/gitops/sync/route';
import { POST as postSession } from '@/app/api/session/route';
import { ConsoleAuth, CSRF_HEADER, setConsoleAuth } from '../console/consoleAuth';
import { type ConsoleContext, setConsoleContext } from '../console/consoleContext';
import { GitSyncWatcher } from './GitSyncWatcher';
import { DraftRegistry } from '../console/DraftRegistry';
import type { DraftStore } from '../console/DraftStore';
import { GitOpsService } from './GitOpsService';
import { GitRepo } from './GitRepo';
import { saveRepositoryConfig } from './repositoryConfig';
import { startSmartHttpRemote, type SmartHttpRemote } from './testing/smartHttpRemote';

const REPO = path.resolve(__dirname, '..', '..');
const EXAMPLE = path.join(REPO, 'examples', 'seed-example-1');
const BASE = 'http://127.0.0.1:3100';
const CONSOLE_TOKEN = 'gitops-route-test-token';
const USER = 'meshdeck-bot';
const GIT_TOKEN = `tok_${'a1b2c3d4e5f60718'.repeat(2)}`;
const TOKEN_ENV = 'MESHDECK_GITOPS_ROUTES_TEST_TOKEN';

let tmp: string;
let meshDirOfTest: string;
let baseContext: ConsoleContext;
let remote: SmartHttpRemote;
let drafts: DraftStore;
/** Every response body the tests read, to look for the token in. */
const bodies: string[] = [];

function req(method: string, route: string, init: { body?: unknown; headers?: Record<string, string> } = {}) {
  return new Request(`${BASE}${route}`, {
    method,
    headers: { 'content-type': 'application/json', ...init.headers },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
}

async function read(res: Response): Promise<{ status: number; json: Record<string, unknown> }> {
  const text = await res.text();
  bodies.push(text);
  return { status: res.status, json: JSON.parse(text) as Record<string, unknown> };
}

async function signIn(): Promise<Record<string, string>> {
  const res = await postSession(req('POST', '/api/session', { body: { token: CONSOLE_TOKEN } }));
  const { csrfToken } = (await res.json()) as { csrfToken: string };
  return { cookie: res.headers.get('set-cookie')!.split(';')[0]!, [CSRF_HEADER]: csrfToken };
}

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'md-gitops-routes-'));
  process.env[TOKEN_ENV] = GIT_TOKEN;
  remote = await startSmartHttpRemote({ username: USER, token: GIT_TOKEN });
  const files: Record<string, string> = {};
  for (const f of ['mesh.yaml', 'cluster.yaml'])
    files[`mesh/${f}`] = await readFile(path.join(EXAMPLE, f), 'utf8');
  const seed = await GitRepo.init(path.join(tmp, 'seed'), { files });
  await GitRepo.clone(seed.dir, path.join(remote.root, 'mesh.git'), {}, { bare: true });
  const stateDir = path.join(tmp, 'state');
  const meshDir = path.join(tmp, 'mesh');
  meshDirOfTest = meshDir;
  await cp(EXAMPLE, meshDir, { recursive: true });
  await saveRepositoryConfig(stateDir, {
    format: 1,
    source: { kind: 'url', url: remote.url('mesh') },
    baseBranch: 'main',
    meshDir: 'mesh',
    credentials: { kind: 'token', username: USER, token: { from: 'env', name: TOKEN_ENV } },
    // A forge that is not there: the PR call fails after the push, with the client's message.
    provider: { kind: 'gitea', baseUrl: 'http://127.0.0.1:9/', repo: 'team/mesh' },
  });
  const registry = new DraftRegistry({ meshDir, stateDir, logger: { warn: () => {} } });
  drafts = registry.main;
  setConsoleAuth(new ConsoleAuth(CONSOLE_TOKEN));
  baseContext = {
    drafts: registry,
    examplesDir: path.join(REPO, 'examples'),
    gitops: GitOpsService.start({ stateDir, examplesDir: path.join(REPO, 'examples'), drafts: registry }),
  };
  setConsoleContext(baseContext);
});

afterAll(async () => {
  setConsoleAuth(undefined);
  setConsoleContext(undefined);
  delete process.env[TOKEN_ENV];
  await remote?.stop();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe('/api/gitops', () => {
  it('refuses mutations without a session or without the CSRF token, and foreign origins', async () => {
    expect((await read(await postCommit(req('POST', '/api/gitops/commit', { body: {} })))).status).toBe(401);
    const cookie = (await signIn()).cookie!;
    const noCsrf = await read(await postRebase(req('POST', '/api/gitops/rebase', { headers: { cookie } })));
    expect(noCsrf.status).toBe(403);
    const foreign = await read(
      await getStatus(req('GET', '/api/gitops/status', { headers: { origin: 'http://evil.example' } })),
    );
    expect(foreign.status).toBe(403);
  });

  it('answers status, commit (push, then the forge error) and rebase without any secret', async () => {
    const headers = await signIn();
    const s = await read(await getStatus(req('GET', '/api/gitops/status')));
    expect(s.status).toBe(200);
    expect(s.json).toMatchObject({ baseMoved: false, forge: true, baseBranch: 'main' });

    const state = await drafts.get();
    const edited = state.draft.files['mesh.yaml']!.replace('port: 8888', 'port: 8889');
    expect(
      (
        await drafts.save({
          draft: { ...state.draft, files: { ...state.draft.files, 'mesh.yaml': edited } },
          baseRevision: state.revision,
        })
      ).ok,
    ).toBe(true);
    const after = await read(await getStatus(req('GET', '/api/gitops/status')));
    expect((after.json.changes as { objects: unknown[] }).objects).toHaveLength(1);

    const bad = await read(
      await postCommit(req('POST', '/api/gitops/commit', { headers, body: { branch: 'main' } })),
    );
    expect(bad.status).toBe(400);
    const c = await read(
      await postCommit(
        req('POST', '/api/gitops/commit', { headers, body: { branch: 'meshdeck/route-test' } }),
      ),
    );
    expect(c.status).toBe(502);
    expect(c.json.provider).toMatchObject({ provider: 'gitea', operation: 'openPullRequest' });
    expect((await drafts.get()).draft.files['mesh.yaml']).toBe(edited);
    const s2 = await read(await getStatus(req('GET', '/api/gitops/status')));
    expect(s2.json.lastCommit).toMatchObject({ branch: 'meshdeck/route-test', pushed: true });

    const r = await read(await postRebase(req('POST', '/api/gitops/rebase', { headers })));
    expect(r.json).toMatchObject({ state: 'up-to-date' });
    const nothing = await read(
      await postResolve(req('POST', '/api/gitops/resolve', { headers, body: { key: 'x', choice: 'ours' } })),
    );
    expect(nothing.status).toBe(409);

    for (const b of bodies) {
      expect(b).not.toContain(GIT_TOKEN);
      expect(b).not.toContain(TOKEN_ENV);
      expect(b).not.toContain(Buffer.from(`${USER}:${GIT_TOKEN}`).toString('base64'));
    }
  });

  it('sync: what runs against the base branch, object by object, with the fields that differ', async () => {
    const same = await read(await getSync(req('GET', '/api/gitops/sync')));
    expect(same.status).toBe(200);
    expect(same.json).toMatchObject({ baseBranch: 'main', counts: { modified: 0, missing: 0, extra: 0 } });
    expect((same.json.counts as { synced: number }).synced).toBeGreaterThan(5);
    expect(same.json.commit).toMatch(/^[0-9a-f]{40}$/);
    // Someone changes what runs (an editor, an apply): the object and its field are named.
    const meshYaml = path.join(meshDirOfTest, 'mesh.yaml');
    await writeFile(meshYaml, (await readFile(meshYaml, 'utf8')).replace('port: 8888', 'port: 8890'));
    const drift = await read(await getSync(req('GET', '/api/gitops/sync')));
    expect(drift.json.counts).toMatchObject({ modified: 1, missing: 0, extra: 0 });
    expect((drift.json.entries as unknown[])[0]).toMatchObject({
      key: 'VirtualService/default/transcoder-vsvc',
      state: 'modified',
      fields: [{ path: 'spec.websocket.port', before: 8888, after: 8890 }],
    });
    const foreign = await getSync(
      new Request(`${BASE}/api/gitops/sync`, { headers: { origin: 'https://evil.example' } }),
    );
    expect(foreign.status).toBe(403);

    // With the server's periodic comparison: a fresh one answers (one fetch for every tab and the
    // metrics), so a change shows on "Compare again" (?refresh=1), which the metrics then show too.
    const watcher = new GitSyncWatcher({
      gitops: baseContext.gitops!,
      meshDir: meshDirOfTest,
      everyMs: 3_600_000,
      firstAfterMs: 3_600_000,
    });
    setConsoleContext({ ...baseContext, gitSync: watcher });
    try {
      const first = await read(await getSync(req('GET', '/api/gitops/sync')));
      expect(first.json.counts).toMatchObject({ modified: 1 });
      expect(watcher.last).toMatchObject({ ok: true, counts: { modified: 1 } });
      await writeFile(meshYaml, (await readFile(meshYaml, 'utf8')).replace('port: 8890', 'port: 8888'));
      const cached = await read(await getSync(req('GET', '/api/gitops/sync')));
      expect(cached.json.at).toBe(first.json.at);
      expect(cached.json.counts).toMatchObject({ modified: 1 });
      const now = await read(await getSync(req('GET', '/api/gitops/sync?refresh=1')));
      expect(now.json.counts).toMatchObject({ modified: 0, missing: 0, extra: 0 });
      expect(watcher.last).toMatchObject({ ok: true, counts: { modified: 0 } });
      await writeFile(meshYaml, (await readFile(meshYaml, 'utf8')).replace('port: 8888', 'port: 8890'));
    } finally {
      await watcher.stop();
      setConsoleContext(baseContext);
    }

    // The remote is down: still an answer, against the last tip this server fetched, saying so.
    await remote.stop();
    const offline = await read(await getSync(req('GET', '/api/gitops/sync')));
    expect(offline.status).toBe(200);
    expect(offline.json.commit).toBe(drift.json.commit);
    expect(offline.json.counts).toMatchObject({ modified: 1 });
    expect(offline.json.fetchError).toMatchObject({ op: 'fetch' });
    for (const b of bodies) expect(b).not.toContain(GIT_TOKEN);
  });
});
