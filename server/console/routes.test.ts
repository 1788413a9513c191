/**
 * The console's route handlers, called as the plain functions Next.js calls, with real Requests, a
 * real DraftStore on a temp copy of seed Example 1 and real sessions: the refusals (401, 403, 400,
 * 409, 503) and the happy paths that need no running mesh.
 */
import { cp as copyDir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GET as getApply } from '@/app/api/applies/[id]/route';
import { GET as listApplies } from '@/app/api/applies/route';
import { POST as postApply } from '@/app/api/apply/route';
import { GET as getDisk } from '@/app/api/draft/disk/route';
import { POST as postRebase } from '@/app/api/draft/rebase/route';
import { POST as postReset } from '@/app/api/draft/reset/route';
import { GET as getDraft, PUT as putDraft } from '@/app/api/draft/route';
import { DELETE as deleteDraft, PATCH as patchDraft } from '@/app/api/drafts/[id]/route';
import { GET as listDrafts, POST as createDraft } from '@/app/api/drafts/route';
import { GET as getExamples } from '@/app/api/examples/route';
import { POST as postBurst } from '@/app/api/probe/burst/route';
import { POST as postProbe } from '@/app/api/probe/route';
import { GET as getDesired } from '@/app/api/proxies/[id]/desired/route';
import { GET as getLive } from '@/app/api/proxies/[id]/live/route';
import { DELETE as deleteSession, GET as getSession, POST as postSession } from '@/app/api/session/route';
import { ApplyList, ApplyRecord } from '@/lib/console/applyRecord';
import { DiskState, DiskSummary, diskMoved } from '@/lib/console/diskDrift';
import { DraftState } from '@/lib/console/draftDoc';
import { fileObjects } from '@/lib/console/draftModel';
import type { DraftParsePack } from '@/lib/console/draftParsePack';
import { fileSnapshot } from '@/lib/console/draftSnapshot';
import { ApplyHistory } from './ApplyHistory';
import { ConsoleAuth, CSRF_HEADER, SESSION_COOKIE, setConsoleAuth } from './consoleAuth';
import { setConsoleContext } from './consoleContext';
import { DraftRegistry } from './DraftRegistry';

const REPO = path.resolve(__dirname, '..', '..');
const BASE = 'http://127.0.0.1:3100';
const TOKEN = 'route-test-token';

let tmp: string;
let meshDir: string;
let registry: DraftRegistry;

beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'md-routes-'));
  meshDir = path.join(tmp, 'mesh');
  await copyDir(path.join(REPO, 'examples', 'seed-example-1'), meshDir, { recursive: true });
  registry = new DraftRegistry({ meshDir, stateDir: path.join(tmp, 'state'), logger: { warn: () => {} } });
  setConsoleAuth(new ConsoleAuth(TOKEN));
  setConsoleContext({ drafts: registry, examplesDir: path.join(REPO, 'examples') });
});
afterEach(async () => {
  setConsoleAuth(undefined);
  setConsoleContext(undefined);
  await rm(tmp, { recursive: true, force: true });
});

function req(method: string, route: string, init: { body?: unknown; headers?: Record<string, string> } = {}) {
  return new Request(`${BASE}${route}`, {
    method,
    headers: { 'content-type': 'application/json', ...init.headers },
    ...(init.body !== undefined
      ? { body: typeof init.body === 'string' ? init.body : JSON.stringify(init.body) }
      : {}),
  });
}

/** Signs in through POST /api/session as a browser would: the cookie and the CSRF token. */
async function signIn(): Promise<{ cookie: string; csrf: string }> {
  const res = await postSession(req('POST', '/api/session', { body: { token: TOKEN } }));
  expect(res.status).toBe(200);
  const setCookie = res.headers.get('set-cookie')!;
  const { csrfToken } = (await res.json()) as { csrfToken: string };
  return { cookie: setCookie.split(';')[0]!, csrf: csrfToken };
}

describe('/api/session', () => {
  it('a wrong token gets 401 and no cookie; the right one a session cookie and a CSRF token', async () => {
    const wrong = await postSession(req('POST', '/api/session', { body: { token: 'guess-guess' } }));
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('set-cookie')).toBeNull();
    expect((await wrong.json()).error).toMatch(/wrong console token/);

    const res = await postSession(req('POST', '/api/session', { body: { token: TOKEN } }));
    expect(res.status).toBe(200);
    const cookie = res.headers.get('set-cookie')!;
    expect(cookie).toMatch(
      new RegExp(`^${SESSION_COOKIE}=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Strict; Path=/$`),
    );
    const { csrfToken } = (await res.json()) as { csrfToken: string };
    expect(csrfToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // The token itself never comes back.
    expect(cookie).not.toContain(TOKEN);
    expect(JSON.stringify(csrfToken)).not.toContain(TOKEN);
  });

  it('GET tells whether the cookie is a session (with its CSRF token); DELETE ends it', async () => {
    const signInMethods = { token: true };
    expect(await (await getSession(req('GET', '/api/session'))).json()).toEqual({
      authenticated: false,
      signIn: signInMethods,
    });
    const { cookie, csrf } = await signIn();
    const me = await getSession(req('GET', '/api/session', { headers: { cookie } }));
    // The token's session acts as the local admin; the answer carries no token but the CSRF one.
    expect(await me.json()).toEqual({
      authenticated: true,
      csrfToken: csrf,
      user: 'local-admin',
      groups: [],
      signIn: signInMethods,
    });
    const out = deleteSession(req('DELETE', '/api/session', { headers: { cookie } }));
    expect(out.headers.get('set-cookie')).toMatch(/Max-Age=0/);
    expect(await (await getSession(req('GET', '/api/session', { headers: { cookie } }))).json()).toEqual({
      authenticated: false,
      signIn: signInMethods,
    });
  });

  it('refuses a sign-in from another origin (403), bad bodies (400), and says when sign-in is not set up (503)', async () => {
    const cross = await postSession(
      req('POST', '/api/session', { body: { token: TOKEN }, headers: { origin: 'http://evil.example' } }),
    );
    expect(cross.status).toBe(403);
    expect((await postSession(req('POST', '/api/session', { body: 'not json' }))).status).toBe(400);
    expect((await postSession(req('POST', '/api/session', { body: { tokn: TOKEN } }))).status).toBe(400);
    const huge = await postSession(req('POST', '/api/session', { body: { token: 'x'.repeat(5000) } }));
    expect(huge.status).toBe(413);
    expect((await huge.json()).error).toBe('the body is larger than 4096 bytes');
    setConsoleAuth(undefined);
    expect((await postSession(req('POST', '/api/session', { body: { token: TOKEN } }))).status).toBe(503);
  });
});

describe('mutations need a session, its CSRF token and the same origin', () => {
  const mutations: [string, (r: Request) => Promise<Response>, string, unknown][] = [
    ['PUT /api/draft', putDraft, '/api/draft', { draft: { files: {}, layout: {} }, baseRevision: 0 }],
    ['POST /api/draft/reset', postReset, '/api/draft/reset', {}],
    ['POST /api/draft/rebase', postRebase, '/api/draft/rebase', { revision: 0 }],
    ['POST /api/apply', postApply, '/api/apply', { revision: 0 }],
    ['POST /api/probe', postProbe, '/api/probe', { listener: 'gateway-vsvc', payload: 'x' }],
    [
      'POST /api/probe/burst',
      postBurst,
      '/api/probe/burst',
      { listener: 'gateway-vsvc', payload: 'x', count: 5 },
    ],
  ];
  it.each(mutations)(
    '%s: 401 without a session, 403 without CSRF or cross-origin',
    async (_name, handler, route, body) => {
      const method = route === '/api/draft' ? 'PUT' : 'POST';
      const { cookie, csrf } = await signIn();
      const status = async (headers: Record<string, string>) =>
        (await handler(req(method, route, { body, headers }))).status;
      expect(await status({})).toBe(401);
      expect(await status({ [CSRF_HEADER]: csrf })).toBe(401);
      expect(await status({ cookie: `${SESSION_COOKIE}=forged`, [CSRF_HEADER]: csrf })).toBe(401);
      expect(await status({ cookie })).toBe(403);
      expect(await status({ cookie, [CSRF_HEADER]: `${csrf}x` })).toBe(403);
      expect(await status({ cookie, [CSRF_HEADER]: csrf, origin: 'http://evil.example' })).toBe(403);
      expect(await status({ cookie, [CSRF_HEADER]: csrf, host: 'rebound.example:3100' })).toBe(403);
      const res = await handler(req(method, route, { body, headers: { cookie } }));
      expect((await res.json()).error).toMatch(/x-csrf-token/);
    },
  );

  it('with both, apply and probe get as far as the missing control plane (503)', async () => {
    const { cookie, csrf } = await signIn();
    const headers = { cookie, [CSRF_HEADER]: csrf, origin: BASE };
    expect((await postApply(req('POST', '/api/apply', { body: { revision: 0 }, headers }))).status).toBe(503);
    expect(
      (await postProbe(req('POST', '/api/probe', { body: { listener: 'x', payload: 'y' }, headers }))).status,
    ).toBe(503);
    const burst = await postBurst(
      req('POST', '/api/probe/burst', { body: { listener: 'x', payload: 'y', count: 2 }, headers }),
    );
    expect(burst.status).toBe(503);
    expect((await burst.json()).error).toBe('no control plane is running in this process');
  });
});

describe('/api/draft', () => {
  it('GET is open and returns the DraftState of the mesh directory', async () => {
    const res = await getDraft(req('GET', '/api/draft'));
    expect(res.status).toBe(200);
    const state = DraftState.parse(await res.json());
    expect(Object.keys(state.draft.files).sort()).toEqual(['cluster.yaml', 'mesh.yaml']);
    expect(state.revision).toBe(0);
  });

  it('GET ?parsed=1 also sends every file already read, as the console would read it (DraftParsePack)', async () => {
    const res = await getDraft(req('GET', '/api/draft?parsed=1'));
    expect(res.status).toBe(200);
    const { parsed, ...rest } = (await res.json()) as { parsed: DraftParsePack };
    const state = DraftState.parse(rest);
    expect(Object.keys(parsed.files).sort()).toEqual(['cluster.yaml', 'mesh.yaml']);
    for (const [file, part] of Object.entries(parsed.files)) {
      const text = state.draft.files[file]!;
      expect(part.objects).toEqual(fileObjects(file, text).objects);
      expect(part.snapshot).toEqual(fileSnapshot(file, text));
    }
    expect(parsed.files['mesh.yaml']!.snapshot.virtualServices.length).toBeGreaterThan(0);
  });

  it('PUT saves (200), refuses a stale revision (409 with the current state) and bad drafts (400 with fields)', async () => {
    const { cookie, csrf } = await signIn();
    const headers = { cookie, [CSRF_HEADER]: csrf };
    const s0 = DraftState.parse(await (await getDraft(req('GET', '/api/draft'))).json());
    const edited = { ...s0.draft, files: { ...s0.draft.files, 'extra.yaml': '# more\n' } };

    const ok = await putDraft(
      req('PUT', '/api/draft', { body: { draft: edited, baseRevision: 0 }, headers }),
    );
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ revision: 1, updatedAt: expect.any(String) });
    // The revision in a header too, for the page's inline script (components/console/earlyPicture.ts).
    for (const url of ['/api/draft', '/api/draft?parsed=1'])
      expect((await getDraft(req('GET', url))).headers.get('x-draft-revision')).toBe('1');

    const stale = await putDraft(
      req('PUT', '/api/draft', { body: { draft: s0.draft, baseRevision: 0 }, headers }),
    );
    expect(stale.status).toBe(409);
    const conflict = (await stale.json()) as { error: string; current: unknown };
    expect(conflict.error).toMatch(/revision 0/);
    expect(DraftState.parse(conflict.current).draft.files['extra.yaml']).toBe('# more\n');

    const bad = await putDraft(
      req('PUT', '/api/draft', {
        body: { draft: { files: { 'x.txt': '' }, layout: {} }, baseRevision: 1 },
        headers,
      }),
    );
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({
      error: 'invalid draft',
      fields: [{ path: 'draft.files["x.txt"]', message: 'must be a .yaml, .yml or .json file' }],
    });
    expect((await putDraft(req('PUT', '/api/draft', { body: '{"draft":', headers }))).status).toBe(400);

    // Nothing of the refused requests was kept.
    const now = DraftState.parse(await (await getDraft(req('GET', '/api/draft'))).json());
    expect(now.revision).toBe(1);
    expect(now.draft.files['extra.yaml']).toBe('# more\n');
  });

  it('POST /api/draft/reset starts again from the mesh directory', async () => {
    const { cookie, csrf } = await signIn();
    const headers = { cookie, [CSRF_HEADER]: csrf };
    await putDraft(
      req('PUT', '/api/draft', { body: { draft: { files: {}, layout: {} }, baseRevision: 0 }, headers }),
    );
    const res = await postReset(req('POST', '/api/draft/reset', { headers }));
    expect(res.status).toBe(200);
    const state = DraftState.parse(await res.json());
    expect(state.revision).toBe(2);
    expect(Object.keys(state.draft.files).sort()).toEqual(['cluster.yaml', 'mesh.yaml']);
  });

  it('several named drafts: create (fresh or a copy), edit apart, rename, delete; bad ids and names answer 400/404/409', async () => {
    const { cookie, csrf } = await signIn();
    const headers = { cookie, [CSRF_HEADER]: csrf };
    const main0 = DraftState.parse(await (await getDraft(req('GET', '/api/draft'))).json());
    const edited = { ...main0.draft, files: { ...main0.draft.files, 'main-only.yaml': '# main\n' } };
    expect(
      (await putDraft(req('PUT', '/api/draft', { body: { draft: edited, baseRevision: 0 }, headers })))
        .status,
    ).toBe(200);

    // Mutations need the session, like every other write.
    expect((await createDraft(req('POST', '/api/drafts', { body: { name: 'x' } }))).status).toBe(401);

    const fresh = await createDraft(req('POST', '/api/drafts', { body: { name: 'Canary 10%' }, headers }));
    expect(fresh.status).toBe(201);
    expect(await fresh.json()).toMatchObject({
      id: 'canary-10',
      name: 'Canary 10%',
      revision: 0,
      main: false,
    });
    const copy = await createDraft(
      req('POST', '/api/drafts', { body: { name: 'Copy of main', from: 'main' }, headers }),
    );
    expect(copy.status).toBe(201);

    // A fresh draft starts from the mesh directory, a copy from its source's content.
    const freshState = DraftState.parse(
      await (await getDraft(req('GET', '/api/draft?draft=canary-10'))).json(),
    );
    expect(Object.keys(freshState.draft.files).sort()).toEqual(['cluster.yaml', 'mesh.yaml']);
    const copyState = DraftState.parse(
      await (await getDraft(req('GET', '/api/draft?draft=copy-of-main'))).json(),
    );
    expect(copyState.draft.files['main-only.yaml']).toBe('# main\n');
    expect(copyState.revision).toBe(0);

    // Edits to one draft leave the others as they were.
    const canaryEdit = { ...freshState.draft, files: { ...freshState.draft.files, 'canary.yaml': '# c\n' } };
    expect(
      (
        await putDraft(
          req('PUT', '/api/draft?draft=canary-10', { body: { draft: canaryEdit, baseRevision: 0 }, headers }),
        )
      ).status,
    ).toBe(200);
    const mainNow = DraftState.parse(await (await getDraft(req('GET', '/api/draft'))).json());
    expect(mainNow.draft.files['canary.yaml']).toBeUndefined();
    expect(mainNow.revision).toBe(1);

    const list = (await (await listDrafts(req('GET', '/api/drafts'))).json()) as {
      id: string;
      name: string;
      revision: number;
    }[];
    expect(list.map((d) => [d.id, d.name, d.revision])).toEqual([
      ['main', 'Main draft', 1],
      ['canary-10', 'Canary 10%', 1],
      ['copy-of-main', 'Copy of main', 0],
    ]);

    // Refusals say what and where, and change nothing.
    const dup = await createDraft(req('POST', '/api/drafts', { body: { name: 'canary 10%' }, headers }));
    expect(dup.status).toBe(409);
    expect(((await dup.json()) as { fields: { path: string }[] }).fields[0]!.path).toBe('name');
    const empty = await createDraft(req('POST', '/api/drafts', { body: { name: '   ' }, headers }));
    expect(empty.status).toBe(400);
    expect(((await empty.json()) as { fields: { path: string }[] }).fields[0]!.path).toBe('name');
    const noSource = await createDraft(
      req('POST', '/api/drafts', { body: { name: 'other', from: 'nope' }, headers }),
    );
    expect(noSource.status).toBe(404);
    expect((await getDraft(req('GET', '/api/draft?draft=nope'))).status).toBe(404);
    expect((await getDraft(req('GET', '/api/draft?draft=..%2Fetc'))).status).toBe(400);

    const params = (id: string) => ({ params: Promise.resolve({ id }) });
    const renamed = await patchDraft(
      req('PATCH', '/api/drafts/canary-10', { body: { name: 'Canary 20%' }, headers }),
      params('canary-10'),
    );
    expect(renamed.status).toBe(200);
    expect(
      (await patchDraft(req('PATCH', '/api/drafts/main', { body: { name: 'x' }, headers }), params('main')))
        .status,
    ).toBe(400);
    expect((await deleteDraft(req('DELETE', '/api/drafts/main', { headers }), params('main'))).status).toBe(
      400,
    );
    const deleted = await deleteDraft(
      req('DELETE', '/api/drafts/canary-10', { headers }),
      params('canary-10'),
    );
    expect(deleted.status).toBe(200);
    // Kept aside, not erased: the deleted draft's file is still on disk.
    const { keptAt } = (await deleted.json()) as { keptAt: string };
    expect(
      JSON.parse(await readFile(path.join(keptAt, 'draft.json'), 'utf8')).state.draft.files['canary.yaml'],
    ).toBe('# c\n');
    expect((await getDraft(req('GET', '/api/draft?draft=canary-10'))).status).toBe(404);
    const after = (await (await listDrafts(req('GET', '/api/drafts'))).json()) as { id: string }[];
    expect(after.map((d) => d.id)).toEqual(['main', 'copy-of-main']);
  });

  it('GET /api/draft/disk is open and says whether the mesh directory moved; POST /api/draft/rebase follows it', async () => {
    const { cookie, csrf } = await signIn();
    const headers = { cookie, [CSRF_HEADER]: csrf };
    const s0 = DraftState.parse(await (await getDraft(req('GET', '/api/draft'))).json());
    const edited = { ...s0.draft, files: { ...s0.draft.files, 'extra.yaml': '# mine\n' } };
    await putDraft(req('PUT', '/api/draft', { body: { draft: edited, baseRevision: 0 }, headers }));

    const still = await getDisk(req('GET', '/api/draft/disk'));
    expect(still.status).toBe(200);
    expect(diskMoved(DiskState.parse(await still.json()))).toBe(false);

    const pulled = (await readFile(path.join(meshDir, 'cluster.yaml'), 'utf8')).replace(
      'port: 9999',
      'port: 9998',
    );
    await writeFile(path.join(meshDir, 'cluster.yaml'), pulled);
    const moved = DiskState.parse(await (await getDisk(req('GET', '/api/draft/disk'))).json());
    expect(diskMoved(moved)).toBe(true);
    expect(moved.base).toEqual(s0.draft);
    expect(moved.disk.files['cluster.yaml']).toBe(pulled);
    // The console's check on every reload: hashes and the changed paths, no files.
    const summary = DiskSummary.parse(await (await getDisk(req('GET', '/api/draft/disk?summary=1'))).json());
    expect(summary).toEqual({
      baseHash: moved.baseHash,
      diskHash: moved.diskHash,
      changed: ['cluster.yaml'],
      hasBase: true,
    });

    const res = await postRebase(req('POST', '/api/draft/rebase', { body: { revision: 1 }, headers }));
    expect(res.status).toBe(200);
    const { state, rebased } = (await res.json()) as { state: unknown; rebased: boolean };
    expect(rebased).toBe(true);
    const after = DraftState.parse(state);
    expect(after.revision).toBe(2);
    expect(after.draft.files['cluster.yaml']).toBe(pulled);
    expect(after.draft.files['extra.yaml']).toBe('# mine\n');
    expect(diskMoved(DiskState.parse(await (await getDisk(req('GET', '/api/draft/disk'))).json()))).toBe(
      false,
    );

    const stale = await postRebase(req('POST', '/api/draft/rebase', { body: { revision: 1 }, headers }));
    expect(stale.status).toBe(409);
    expect(
      (await postRebase(req('POST', '/api/draft/rebase', { body: { revison: 2 }, headers }))).status,
    ).toBe(400);
    expect((await getDisk(req('GET', '/api/draft/disk?draft=nope'))).status).toBe(404);
    expect((await getDisk(req('GET', '/api/draft/disk', { headers: { host: 'evil.example' } }))).status).toBe(
      403,
    );
  });

  it('answers 503 when no console runs in the process', async () => {
    setConsoleContext(undefined);
    expect((await getDraft(req('GET', '/api/draft'))).status).toBe(503);
    expect((await getDisk(req('GET', '/api/draft/disk'))).status).toBe(503);
  });
});

describe('read-only routes', () => {
  it('GET /api/examples lists the shipped examples with a description and their files', async () => {
    const res = await getExamples(req('GET', '/api/examples'));
    expect(res.status).toBe(200);
    const list = (await res.json()) as { name: string; description: string; files: Record<string, string> }[];
    expect(list.map((e) => e.name)).toEqual(
      expect.arrayContaining(['canary', 'seed-example-1', 'seed-example-2']),
    );
    const seed1 = list.find((e) => e.name === 'seed-example-1')!;
    expect(seed1.description).toMatch(/^Seed Example 1/);
    expect(Object.keys(seed1.files).sort()).toEqual(['cluster.yaml', 'mesh.yaml']);
  });

  it('proxy config routes answer 503 without a control plane, and refuse foreign hosts', async () => {
    const params = { params: Promise.resolve({ id: 'default%2Fgateway-0' }) };
    expect((await getLive(req('GET', '/api/proxies/default%2Fgateway-0/live'), params)).status).toBe(503);
    expect((await getDesired(req('GET', '/api/proxies/default%2Fgateway-0/desired'), params)).status).toBe(
      503,
    );
    const foreign = req('GET', '/api/proxies/x/live', { headers: { host: 'evil.example' } });
    expect((await getLive(foreign, params)).status).toBe(403);
  });
});

describe('/api/applies', () => {
  const params = (id: string) => ({ params: Promise.resolve({ id }) });
  const apply = {
    at: '2026-01-01T00:00:00.000Z',
    user: 'alice',
    draft: 'main',
    revision: 3,
    applied: ['mesh.yaml'],
    deleted: [],
    proxies: { total: 2, inSync: 2, notInSync: [] },
    before: { files: { 'mesh.yaml': '# before\n' }, layout: {} },
    after: { files: { 'mesh.yaml': '# after\n' }, layout: { 'Service/default/a': { x: 1, y: 2 } } },
  };

  it('answer 503 without an apply history in the process', async () => {
    expect((await listApplies(req('GET', '/api/applies'))).status).toBe(503);
    expect((await getApply(req('GET', '/api/applies/1'), params('1'))).status).toBe(503);
    setConsoleContext(undefined);
    expect((await listApplies(req('GET', '/api/applies'))).status).toBe(503);
  });

  it('list the recorded applies and read one with its files; 400 for a bad id, 404 for an unknown one', async () => {
    const applies = new ApplyHistory({ dir: path.join(tmp, 'state', 'console', 'applies') });
    setConsoleContext({ drafts: registry, examplesDir: path.join(REPO, 'examples'), applies });
    expect(ApplyList.parse(await (await listApplies(req('GET', '/api/applies'))).json())).toEqual({
      applies: [],
    });
    await applies.record(apply);
    await applies.record({ ...apply, revision: 4, user: 'bob' });

    const list = await listApplies(req('GET', '/api/applies'));
    expect(list.status).toBe(200);
    const { applies: summaries } = ApplyList.parse(await list.json());
    expect(summaries.map((a) => [a.id, a.user, a.revision])).toEqual([
      [2, 'bob', 4],
      [1, 'alice', 3],
    ]);

    const one = await getApply(req('GET', '/api/applies/1'), params('1'));
    expect(one.status).toBe(200);
    expect(ApplyRecord.parse(await one.json())).toEqual({ ...apply, id: 1 });

    for (const bad of ['abc', '0', '-1', '1.5', '01', ' 1']) {
      const res = await getApply(req('GET', `/api/applies/${encodeURIComponent(bad)}`), params(bad));
      expect(res.status).toBe(400);
      expect((await res.json()).error).toBe(
        `invalid apply id ${JSON.stringify(bad)}: must be a positive integer`,
      );
    }
    const unknown = await getApply(req('GET', '/api/applies/7'), params('7'));
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: 'no apply with id 7 (the history keeps the last 50)' });
  });

  it('are open to reads but refuse a foreign Host', async () => {
    const applies = new ApplyHistory({ dir: path.join(tmp, 'state', 'console', 'applies') });
    setConsoleContext({ drafts: registry, examplesDir: path.join(REPO, 'examples'), applies });
    await applies.record(apply);
    const foreign = { headers: { host: 'evil.example' } };
    expect((await listApplies(req('GET', '/api/applies', foreign))).status).toBe(403);
    expect((await getApply(req('GET', '/api/applies/1', foreign), params('1'))).status).toBe(403);
    const cross = { headers: { origin: 'http://evil.example' } };
    expect((await listApplies(req('GET', '/api/applies', cross))).status).toBe(403);
  });
});
