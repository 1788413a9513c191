/**
 * The push webhook with a REAL Gitea (server/gitops/testing/giteaServer.ts, deliveries to loopback
 * allowed): Gitea signs and delivers its own push events to POST /api/gitops/webhook, served here on
 * 127.0.0.1 by the route handler itself; a push to main starts a comparison at once (the periodic one is
 * not running), a push to another branch is acknowledged and compares nothing, a request signed with
 * another secret is refused.
 */
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POST as postWebhook } from '@/app/api/gitops/webhook/route';
import { setConsoleContext } from '../console/consoleContext';
import { DraftRegistry } from '../console/DraftRegistry';
import { until } from '../kube/replicasTestKit';
import { GitOpsService } from './GitOpsService';
import { GitSyncWatcher } from './GitSyncWatcher';
import { saveRepositoryConfig } from './repositoryConfig';
import { type GiteaServer, giteaGit, startGitea } from './testing/giteaServer';

const ROOT = path.resolve(__dirname, '../..');
const EXAMPLE = path.join(ROOT, 'examples/seed-example-1');
const SECRET = 'webhook-test-secret-0123';
const quiet = { info: () => {}, warn: () => {} };

let gitea: GiteaServer;
let tmp: string;
let work: string;
let server: http.Server;
let hookUrl: string;
let watcher: GitSyncWatcher;
/** Each delivery the handler answered: the event Gitea named and the status. */
const deliveries: { event: string; status: number; body: string }[] = [];

const git = (...args: string[]) => giteaGit(gitea, work, ...args);
async function pushEdit(branch: string, edit: (t: string) => string, message: string): Promise<string> {
  const f = path.join(work, 'mesh.yaml');
  await writeFile(f, edit(readFileSync(f, 'utf8')));
  await git('commit', '-qam', message);
  await git('push', '-q', 'origin', `HEAD:${branch}`);
  return (await git('rev-parse', 'HEAD')).trim();
}

/** Serves the route handler on loopback, as Next would, recording what it answered. */
function serve(): Promise<http.Server> {
  const s = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
      void postWebhook(
        new Request(`http://127.0.0.1${req.url}`, { method: 'POST', headers, body: Buffer.concat(chunks) }),
      ).then(async (r) => {
        const body = await r.text();
        deliveries.push({ event: headers.get('x-gitea-event') ?? '', status: r.status, body });
        res.writeHead(r.status, { 'content-type': 'application/json' }).end(body);
      });
    });
  });
  return new Promise((resolve) => s.listen(0, '127.0.0.1', () => resolve(s)));
}

beforeAll(async () => {
  gitea = await startGitea();
  const repo = await gitea.createRepo('mesh-hook', { autoInit: true });
  tmp = await mkdtemp(path.join(os.tmpdir(), 'md-webhook-'));
  work = path.join(tmp, 'work');
  await giteaGit(gitea, tmp, 'clone', '-q', repo.cloneUrl, work);
  for (const f of ['mesh.yaml', 'cluster.yaml']) await cp(path.join(EXAMPLE, f), path.join(work, f));
  await git('add', 'mesh.yaml', 'cluster.yaml');
  await git('commit', '-qm', 'Example 1');
  await git('push', '-q', 'origin', 'HEAD:main');
  // Gitea handles a push in a queue, after it has taken it: a hook made before the queue got to this
  // push was delivered it too, late (a third delivery, "comparing main", in the middle of the tests
  // below). Its branch record moves to the commit when the queue handles the push.
  const initial = (await git('rev-parse', 'HEAD')).trim();
  await until(
    'Gitea has handled the first push',
    async () => {
      const r = await fetch(`${gitea.url}/api/v1/repos/${gitea.username}/mesh-hook/branches/main`, {
        headers: { authorization: `token ${gitea.token}` },
      });
      return r.ok && ((await r.json()) as { commit?: { id?: string } }).commit?.id === initial;
    },
    30_000,
  );

  const meshDir = path.join(tmp, 'mesh');
  await cp(EXAMPLE, meshDir, { recursive: true });
  const stateDir = path.join(tmp, 'state');
  process.env.MD_WEBHOOK_TEST_TOKEN = gitea.token;
  process.env.MD_WEBHOOK_TEST_SECRET = SECRET;
  await saveRepositoryConfig(stateDir, {
    format: 1,
    source: { kind: 'url', url: repo.cloneUrl },
    baseBranch: 'main',
    meshDir: '.',
    credentials: {
      kind: 'token',
      username: gitea.username,
      token: { from: 'env', name: 'MD_WEBHOOK_TEST_TOKEN' },
    },
    webhook: { secret: { from: 'env', name: 'MD_WEBHOOK_TEST_SECRET' } },
  });
  const drafts = new DraftRegistry({ meshDir, stateDir, logger: quiet });
  const gitops = GitOpsService.start({ stateDir, examplesDir: path.join(ROOT, 'examples'), drafts });
  await gitops;
  // Never started: only the webhook makes it compare.
  watcher = new GitSyncWatcher({ gitops, meshDir, everyMs: 3_600_000, logger: quiet });
  setConsoleContext({ drafts, examplesDir: path.join(ROOT, 'examples'), gitops, gitSync: watcher });

  server = await serve();
  hookUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/gitops/webhook`;
  const made = await fetch(`${gitea.url}/api/v1/repos/${gitea.username}/mesh-hook/hooks`, {
    method: 'POST',
    headers: { authorization: `token ${gitea.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      type: 'gitea',
      config: { url: hookUrl, content_type: 'json', secret: SECRET },
      events: ['push'],
      active: true,
    }),
  });
  expect(made.status, await made.clone().text()).toBe(201);
}, 50 * 60_000);

afterAll(async () => {
  setConsoleContext(undefined);
  await watcher?.stop();
  await new Promise((r) => server?.close(r));
  await gitea?.stop();
  if (tmp) await rm(tmp, { recursive: true, force: true });
  delete process.env.MD_WEBHOOK_TEST_TOKEN;
  delete process.env.MD_WEBHOOK_TEST_SECRET;
});

describe('the push webhook, delivered by a real Gitea', () => {
  it('a push to main is compared at once: the comparison sees the new commit and the field it changed', async () => {
    expect(watcher.last).toBeUndefined();
    const sha = await pushEdit('main', (t) => t.replace('port: 8888', 'port: 8890'), 'transcoder on 8890');
    await until('a comparison of the pushed commit', () => watcher.last?.commit === sha, 30_000);
    expect(watcher.last).toMatchObject({ ok: true, counts: { modified: 1, missing: 0, extra: 0 } });
    expect(deliveries.at(-1)).toMatchObject({ event: 'push', status: 202 });
    expect(JSON.parse(deliveries.at(-1)!.body)).toEqual({ comparing: 'main', forge: 'gitea' });
  });

  it('a push to another branch is acknowledged and compares nothing', async () => {
    const before = { at: watcher.last!.at, n: deliveries.length };
    await pushEdit('feature', (t) => t.replace('port: 8890', 'port: 8891'), 'on a branch');
    await until('the branch push delivered', () => deliveries.length > before.n, 30_000);
    expect(deliveries.at(-1)).toMatchObject({ event: 'push', status: 200 });
    expect(JSON.parse(deliveries.at(-1)!.body)).toEqual({ ignored: 'not a push to main (event push)' });
    expect(watcher.last!.at).toBe(before.at);
  });

  it('a request signed with another secret, or not signed, is refused and compares nothing', async () => {
    const at = watcher.last!.at;
    const body = JSON.stringify({ ref: 'refs/heads/main' });
    const post = (headers: Record<string, string>) =>
      fetch(hookUrl, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    const forged = await post({
      'x-gitea-event': 'push',
      'x-gitea-signature': createHmac('sha256', 'not-the-secret').update(body).digest('hex'),
    });
    expect(forged.status).toBe(401);
    expect(await forged.json()).toEqual({
      error: 'the signature does not match the configured webhook secret',
    });
    expect((await post({ 'x-gitea-event': 'push' })).status).toBe(401);
    expect(watcher.last!.at).toBe(at);
  });
});
