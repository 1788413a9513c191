// GitSyncWatcher over a real GitOpsService and real git (the local default repository made from the
// examples, as on a first start): what runs compared with the base branch, again after a change, and a
// service that never started.
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DraftStore } from '../console/DraftStore';
import { GitOpsService } from './GitOpsService';
import { GitSyncWatcher } from './GitSyncWatcher';

const EXAMPLES = path.resolve(__dirname, '..', '..', 'examples');

let tmp: string;
let meshDir: string;
let gitops: Promise<GitOpsService>;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'md-gitsync-'));
  meshDir = path.join(tmp, 'mesh');
  await cp(path.join(EXAMPLES, 'seed-example-1'), meshDir, { recursive: true });
  const stateDir = path.join(tmp, 'state');
  const drafts = new DraftStore({ meshDir, stateDir, logger: { warn: () => undefined } });
  gitops = GitOpsService.start({ stateDir, examplesDir: EXAMPLES, drafts });
  await gitops;
}, 60_000);

afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('GitSyncWatcher', () => {
  it('compares on its schedule, and again when what runs changes', async () => {
    const w = new GitSyncWatcher({ gitops, meshDir, everyMs: 60_000, firstAfterMs: 0 });
    w.start();
    const deadline = Date.now() + 20_000;
    while (!w.last && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(w.last).toMatchObject({ ok: true, fetchFailed: false, unreadable: 0 });
    expect(w.last!.counts).toMatchObject({ modified: 0, missing: 0, extra: 0 });
    expect(w.last!.counts!.synced).toBeGreaterThan(5);
    expect(w.last!.commit).toMatch(/^[0-9a-f]{40}$/);

    const mesh = path.join(meshDir, 'mesh.yaml');
    await writeFile(mesh, (await readFile(mesh, 'utf8')).replace('port: 8888', 'port: 8890'));
    await w.compareNow();
    expect(w.last!.counts).toMatchObject({ modified: 1, missing: 0, extra: 0 });
    await w.stop();
  });

  it('keeps a failure (logged once) and compares nothing when GitOps did not start', async () => {
    const warned: string[] = [];
    const broken = Promise.reject(new Error('the repository cannot be opened'));
    broken.catch(() => undefined);
    const w = new GitSyncWatcher({
      gitops: broken,
      meshDir,
      everyMs: 60_000,
      logger: { warn: (m) => warned.push(m) },
    });
    await w.compareNow();
    await w.compareNow();
    expect(w.last).toMatchObject({ ok: false, error: 'the repository cannot be opened' });
    expect(warned).toEqual(['meshdeck: comparing with Git failed: the repository cannot be opened']);
    await w.stop();
  });
});
