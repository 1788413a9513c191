/**
 * Apply on real l7mp 0.5.7 processes: a temp copy of seed Example 1 runs on the local mesh, the
 * console's draft is edited and applied, and what the gateway proxy runs is read back from it.
 * The copy moves the example's host-wide ports (l7mp API 1234/1235, WebSocket 8888) and addresses so
 * that it never meets a run of localMesh.integration.test.ts or the e2e server.
 */
import { cp as copyDir, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POST as postApply } from '@/app/api/apply/route';
import { GET as getDesired } from '@/app/api/proxies/[id]/desired/route';
import { GET as getLive } from '@/app/api/proxies/[id]/live/route';
import { DraftState, LAYOUT_FILE } from '@/lib/console/draftDoc';
import { diffL7mp } from '@/lib/l7mp/diffL7mp';
import type { L7mpConfig } from '@/lib/model/l7mp';
import { L7mpRestClient } from '../l7mp/L7mpRestClient';
import { ControlPlane } from '../controlPlane/ControlPlane';
import { setControlPlane } from '../controlPlane/registry';
import { ApplyHistory } from './ApplyHistory';
import { applyDraft } from './applyDraft';
import { ConsoleAuth, CSRF_HEADER, setConsoleAuth } from './consoleAuth';
import { setConsoleContext } from './consoleContext';
import { DraftRegistry } from './DraftRegistry';
import type { DraftStore } from './DraftStore';
import { meshDirHash, readMeshDirContent } from './meshDirFiles';

const REPO = path.resolve(__dirname, '..', '..');
const quiet = { info: () => {}, warn: () => {}, error: (...a: unknown[]) => console.error(...a) };
const GATEWAY = 'default/gateway-0';
const WORKER_CLUSTER = 'worker-svc.default.target.cluster.local';

/** Seed Example 1 with its fixed host-wide ports and addresses moved (see the file comment). */
function relocate(text: string): string {
  return text
    .replace("api-port: '1234'", "api-port: '11234'")
    .replace("api-port: '1235'", "api-port: '11235'")
    .replace('port: 8888', 'port: 18888')
    .replace(/127\.0\.0\.(10|20|30|31)\b/g, (_m, last: string) => `127.0.0.2${last}`);
}

const WORKER_2 = `---
apiVersion: v1
kind: Pod
metadata:
  name: worker-2
  namespace: default
  labels: { app: worker }
  annotations: { meshdeck.l7mp.io/app: udp-echo, meshdeck.l7mp.io/app-port: '9999' }
status: { podIP: 127.0.0.232, phase: Running }
`;

async function until<T>(what: string, fn: () => T | Promise<T>, timeoutMs = 60000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function endpointsOf(config: L7mpConfig, cluster: string): string[] {
  const c = config.clusters.find((x) => x.name === cluster);
  return (c?.endpoints ?? []).map((e) => e.spec.address).sort();
}

describe('apply the console draft to the local mesh (real l7mp)', () => {
  let tmp: string;
  let meshDir: string;
  let cp: ControlPlane;
  let drafts: DraftStore;
  let registry: DraftRegistry;

  beforeAll(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'md-apply-'));
    meshDir = path.join(tmp, 'mesh');
    await copyDir(path.join(REPO, 'examples', 'seed-example-1'), meshDir, { recursive: true });
    for (const f of ['cluster.yaml', 'mesh.yaml']) {
      const file = path.join(meshDir, f);
      await writeFile(file, relocate(await readFile(file, 'utf8')));
    }
    const stateDir = path.join(tmp, 'state');
    cp = await ControlPlane.startLocal({ meshDir, stateDir, driftIntervalMs: 1000, logger: quiet });
    await until(
      'every proxy in sync',
      () => cp.syncStates().length === 2 && cp.syncStates().every((s) => s.inSync),
      120000,
    );
    registry = new DraftRegistry({ meshDir, stateDir, logger: { warn: () => {} } });
    drafts = registry.main;
  }, 180000);

  afterAll(async () => {
    setControlPlane(undefined);
    setConsoleContext(undefined);
    setConsoleAuth(undefined);
    await cp?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  /** Saves an edit of the current draft (files, and the layout if given) and returns the new revision. */
  async function saveEdit(
    edit: (files: Record<string, string>) => Record<string, string>,
    layout?: Record<string, { x: number; y: number }>,
  ) {
    const s = await drafts.get();
    const draft = { files: edit({ ...s.draft.files }), layout: layout ?? s.draft.layout };
    const r = await drafts.save({ draft, baseRevision: s.revision });
    if (!r.ok) throw new Error(`save failed: ${JSON.stringify(r.body)}`);
    return r.revision;
  }

  it('an endpoint edit in the draft reaches the gateway proxy', async () => {
    const gatewayApi = cp.live.get().proxies[GATEWAY]!.apiUrl!;
    const before = await new L7mpRestClient(gatewayApi).readLive();
    expect(endpointsOf(before.config, WORKER_CLUSTER)).toEqual(['127.0.0.230', '127.0.0.231']);

    const revision = await saveEdit(
      (files) => ({ ...files, 'cluster.yaml': files['cluster.yaml'] + WORKER_2 }),
      {
        'VirtualService/default/gateway-vsvc': { x: 10, y: 20 },
        'Service/default/worker-svc': { x: 300, y: 20 },
      },
    );
    const outcome = await applyDraft({ drafts, controlPlane: cp, body: { revision } });
    if (!outcome.ok) throw new Error(`apply refused: ${JSON.stringify(outcome.body)}`);
    expect(outcome.body.applied).toEqual(['cluster.yaml', LAYOUT_FILE]);
    expect(outcome.body.deleted).toEqual([]);
    expect(outcome.body.timedOut).toBeUndefined();
    const gateway = outcome.body.proxies.find((p) => p.id === GATEWAY)!;
    expect(gateway).toMatchObject({ inSync: true, phase: 'synced' });
    expect(gateway.operations).toBeGreaterThan(0);

    const after = await new L7mpRestClient(gatewayApi).readLive();
    expect(endpointsOf(after.config, WORKER_CLUSTER)).toEqual(['127.0.0.230', '127.0.0.231', '127.0.0.232']);
    // The files on disk are the draft's, the layout file has sorted keys, and the draft's base moved on.
    const state = await drafts.get();
    expect(await readFile(path.join(meshDir, 'cluster.yaml'), 'utf8')).toBe(
      state.draft.files['cluster.yaml'],
    );
    expect(await readFile(path.join(meshDir, LAYOUT_FILE), 'utf8')).toBe(
      '{\n  "Service/default/worker-svc": {"x":300,"y":20},\n  "VirtualService/default/gateway-vsvc": {"x":10,"y":20}\n}\n',
    );
    expect(state.baseHash).toBe(meshDirHash(await readMeshDirContent(meshDir)));
  });

  it('a draft with a dangling reference is refused, naming the object and the field, and nothing is written', async () => {
    const onDisk = await readFile(path.join(meshDir, 'mesh.yaml'), 'utf8');
    const revision = await saveEdit((files) => ({
      ...files,
      'mesh.yaml': files['mesh.yaml']!.replace('destination: worker-svc', 'destination: no-such-svc'),
    }));
    const outcome = await applyDraft({ drafts, controlPlane: cp, body: { revision } });
    if (outcome.ok || outcome.status !== 422) throw new Error(`expected 422, got ${JSON.stringify(outcome)}`);
    expect(outcome.body.error).toMatch(/the draft has \d+ errors?; nothing was applied/);
    const dangling = outcome.body.diagnostics.find((d) => d.message.includes('no-such-svc'));
    expect(dangling).toMatchObject({
      severity: 'error',
      object: { kind: 'VirtualService', namespace: 'default', name: 'gateway-vsvc' },
      path: 'spec.rules[0].action.route.destination',
      source: { file: 'mesh.yaml' },
    });
    expect(outcome.body.diagnostics.every((d) => d.severity === 'error')).toBe(true);
    expect(await readFile(path.join(meshDir, 'mesh.yaml'), 'utf8')).toBe(onDisk);
    // The gateway still runs the previous config.
    const live = await new L7mpRestClient(cp.live.get().proxies[GATEWAY]!.apiUrl!).readLive();
    expect(endpointsOf(live.config, WORKER_CLUSTER)).toHaveLength(3);
    await saveEdit((files) => ({ ...files, 'mesh.yaml': onDisk }));
  });

  it('refuses a stale revision, and a mesh directory changed underneath unless forced', async () => {
    const s = await drafts.get();
    const stale = await applyDraft({ drafts, controlPlane: cp, body: { revision: s.revision - 1 } });
    expect(stale.ok || stale.status).toBe(409);

    await writeFile(path.join(meshDir, 'outside.yaml'), '# written by someone else\n');
    const changed = await applyDraft({ drafts, controlPlane: cp, body: { revision: s.revision } });
    if (changed.ok || changed.status !== 409) throw new Error(`expected 409, got ${JSON.stringify(changed)}`);
    expect(changed.body.error).toBe('the mesh directory changed since this draft was started');
    expect(await readFile(path.join(meshDir, 'outside.yaml'), 'utf8')).toBe('# written by someone else\n');

    const forced = await applyDraft({
      drafts,
      controlPlane: cp,
      body: { revision: s.revision, force: true },
    });
    if (!forced.ok) throw new Error(`forced apply refused: ${JSON.stringify(forced.body)}`);
    expect(forced.body.applied).toEqual([]);
    expect(forced.body.deleted).toEqual(['outside.yaml']);
    await expect(readFile(path.join(meshDir, 'outside.yaml'), 'utf8')).rejects.toThrow(/ENOENT/);
    expect(forced.body.proxies.every((p) => p.inSync)).toBe(true);

    const bad = await applyDraft({ drafts, controlPlane: cp, body: { revision: 'latest' } });
    expect(bad.ok || bad.status).toBe(400);
  });

  it('records each apply that changes files in the apply history, with the files before and after', async () => {
    const warnings: string[] = [];
    const history = new ApplyHistory({
      dir: path.join(tmp, 'applies'),
      logger: { warn: (m) => warnings.push(m) },
    });
    const options = { drafts, controlPlane: cp, history, user: 'alice', draftId: 'main' };
    const onDisk = await readFile(path.join(meshDir, 'mesh.yaml'), 'utf8');

    const r1 = await saveEdit((files) => ({ ...files, 'mesh.yaml': `${files['mesh.yaml']}# first\n` }));
    const first = await applyDraft({ ...options, body: { revision: r1 } });
    if (!first.ok) throw new Error(`apply refused: ${JSON.stringify(first.body)}`);
    const r2 = await saveEdit((files) => ({ ...files, 'mesh.yaml': `${files['mesh.yaml']}# second\n` }));
    const second = await applyDraft({ ...options, body: { revision: r2 } });
    if (!second.ok) throw new Error(`apply refused: ${JSON.stringify(second.body)}`);
    expect([first.body.historyId, second.body.historyId]).toEqual([1, 2]);

    const list = await history.list();
    expect(list.map((a) => a.id)).toEqual([2, 1]);
    expect(list[0]).toEqual({
      id: 2,
      at: expect.any(String),
      user: 'alice',
      draft: 'main',
      revision: r2,
      applied: ['mesh.yaml'],
      deleted: [],
      proxies: { total: 2, inSync: 2, notInSync: [] },
    });
    expect(Date.parse(list[0]!.at)).toBeGreaterThanOrEqual(Date.parse(list[1]!.at));
    const [rec1, rec2] = [(await history.get(1))!, (await history.get(2))!];
    expect(rec1.before.files['mesh.yaml']).toBe(onDisk);
    expect(rec1.after.files['mesh.yaml']).toBe(`${onDisk}# first\n`);
    expect(rec2.before).toEqual(rec1.after);
    expect(rec2.after).toEqual((await drafts.get()).draft);
    expect(rec2.after.files['mesh.yaml']).toBe(await readFile(path.join(meshDir, 'mesh.yaml'), 'utf8'));

    // An apply that changes nothing leaves no record.
    const same = await applyDraft({ ...options, body: { revision: r2 } });
    if (!same.ok) throw new Error(`apply refused: ${JSON.stringify(same.body)}`);
    expect(same.body.applied).toEqual([]);
    expect(same.body.historyId).toBeUndefined();
    expect((await history.list()).map((a) => a.id)).toEqual([2, 1]);

    // A reload that fails is recorded with its error and no proxies; the 500 names the record.
    const r3 = await saveEdit((files) => ({ ...files, 'mesh.yaml': `${files['mesh.yaml']}# third\n` }));
    const failing = {
      reload: () => Promise.reject(new Error('control plane is down')),
      whenIdle: () => cp.whenIdle(),
      syncStates: () => cp.syncStates(),
    };
    const broken = await applyDraft({ ...options, controlPlane: failing, body: { revision: r3 } });
    if (broken.ok || broken.status !== 500) throw new Error(`expected 500, got ${JSON.stringify(broken)}`);
    expect(broken.body.historyId).toBe(3);
    const rec3 = (await history.get(3))!;
    expect(rec3.error).toMatch(/could not reload them: control plane is down/);
    expect(rec3.proxies).toBeUndefined();
    expect(rec3.applied).toEqual(['mesh.yaml']);
    expect(warnings).toEqual([]);
  });

  it('a write that fails partway is a 500 naming what was written, and the history keeps what the directory holds', async () => {
    const history = new ApplyHistory({ dir: path.join(tmp, 'partial-applies'), logger: quiet });
    const options = { drafts, controlPlane: cp, history, user: 'alice', draftId: 'main' };
    const before = await readMeshDirContent(meshDir);
    // zz.yaml cannot be written: a directory (with no manifest in it) stands at its path. Files are
    // written in path order, so a-first.yaml is written before it.
    await mkdir(path.join(meshDir, 'zz.yaml', 'keep'), { recursive: true });
    const r = await saveEdit((files) => ({ ...files, 'a-first.yaml': '# first\n', 'zz.yaml': '# last\n' }));
    try {
      const out = await applyDraft({ ...options, body: { revision: r } });
      if (out.ok || out.status !== 500) throw new Error(`expected 500, got ${JSON.stringify(out)}`);
      expect(out.body.error).toMatch(/^writing the mesh directory failed: .*the draft is kept/);
      expect(out.body.applied).toEqual(['a-first.yaml']);
      expect(out.body.historyId).toBe(1);
      const rec = (await history.get(1))!;
      expect(rec).toMatchObject({ writeFailed: true, applied: ['a-first.yaml'], deleted: [], revision: r });
      expect(rec.error).toBe(out.body.error);
      expect(rec.proxies).toBeUndefined();
      expect(rec.before.files).toEqual(before.files);
      // "after" is the directory as the failure left it: a-first.yaml written, zz.yaml not.
      expect(rec.after.files).toEqual({ ...before.files, 'a-first.yaml': '# first\n' });
      // The draft is kept, both new files in it.
      expect(Object.keys((await drafts.get()).draft.files)).toEqual(
        expect.arrayContaining(['a-first.yaml', 'zz.yaml']),
      );
    } finally {
      await rm(path.join(meshDir, 'zz.yaml'), { recursive: true, force: true });
      await rm(path.join(meshDir, 'a-first.yaml'), { force: true });
      await saveEdit((files) => {
        const { 'a-first.yaml': _a, 'zz.yaml': _z, ...rest } = files;
        return rest;
      });
    }
  });

  it('over HTTP: POST /api/apply with a session, GET /api/proxies/<id>/live and /desired', async () => {
    setControlPlane(cp);
    const applies = new ApplyHistory({ dir: path.join(tmp, 'http-applies'), logger: quiet });
    setConsoleContext({ drafts: registry, examplesDir: path.join(REPO, 'examples'), applies });
    const auth = new ConsoleAuth('integration-token');
    setConsoleAuth(auth);
    const session = auth.login('integration-token')!;
    const apply = (revision: number) =>
      postApply(
        new Request('http://127.0.0.1:3100/api/apply', {
          method: 'POST',
          headers: {
            cookie: `meshdeck_session=${session.id}`,
            [CSRF_HEADER]: session.csrfToken,
            origin: 'http://127.0.0.1:3100',
          },
          body: JSON.stringify({ revision }),
        }),
      );
    const state = DraftState.parse(await drafts.get());
    const res = await apply(state.revision);
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      applied: string[];
      proxies: { id: string; inSync: boolean }[];
      historyId?: number;
    };
    expect(body.applied).toEqual([]);
    expect(body.historyId).toBeUndefined();
    expect(body.proxies.map((p) => [p.id, p.inSync])).toEqual([
      ['default/gateway-0', true],
      ['default/transcoder-0', true],
    ]);
    // An apply that changes a file is recorded for the session's user and the draft applied.
    const edited = await saveEdit((files) => ({
      ...files,
      'mesh.yaml': `${files['mesh.yaml']}# over HTTP\n`,
    }));
    const recorded = await apply(edited);
    expect(recorded.status).toBe(200);
    const { historyId } = (await recorded.json()) as { historyId?: number };
    expect(historyId).toBe(1);
    expect(await applies.get(1)).toMatchObject({
      user: 'local-admin',
      draft: 'main',
      applied: ['mesh.yaml'],
    });

    const get = (route: typeof getLive, id: string, which: string) =>
      route(new Request(`http://127.0.0.1:3100/api/proxies/${id}/${which}`), {
        params: Promise.resolve({ id }),
      });
    const live = await get(getLive, encodeURIComponent(GATEWAY), 'live');
    expect(live.status).toBe(200);
    const liveBody = (await live.json()) as { config: L7mpConfig; ignored: string[] };
    const desired = await get(getDesired, encodeURIComponent(GATEWAY), 'desired');
    expect(desired.status).toBe(200);
    const desiredBody = (await desired.json()) as { config: L7mpConfig };
    expect(endpointsOf(desiredBody.config, WORKER_CLUSTER)).toHaveLength(3);
    // In sync: what runs is what is pushed.
    expect(diffL7mp(liveBody.config, desiredBody.config)).toEqual([]);
    expect((await get(getLive, 'gateway-0', 'live')).status).toBe(200);
    const unknown = await get(getLive, 'default%2Fnope', 'live');
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error).toMatch(/no l7mp proxy "default%2Fnope".*default\/gateway-0/);
    expect((await get(getDesired, 'nope', 'desired')).status).toBe(404);

    // Stopped proxies cannot be read: 502 with the reason.
    await cp.stop();
    const gone = await get(getLive, encodeURIComponent(GATEWAY), 'live');
    expect(gone.status).toBe(502);
    expect((await gone.json()).error).toMatch(
      /cannot read default\/gateway-0's live config: cannot reach l7mp API/,
    );
  });
});
