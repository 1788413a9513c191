import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DiskState, diskMoved } from '@/lib/console/diskDrift';
import { type DraftDoc, DraftState, LAYOUT_FILE } from '@/lib/console/draftDoc';
import { applyDraft } from './applyDraft';
import { diskState, rebaseOnDisk, type RebaseOnDiskOutcome } from './diskDrift';
import { DraftStore } from './DraftStore';
import { meshDirDoc, meshDirHash, readMeshDirContent } from './meshDirFiles';

// Two objects in one file, so that a change on each side lands in the same file and is merged object by object.
const A = `# Hand written: keep this comment.
apiVersion: v1
kind: Service
metadata: { name: a, namespace: default }
spec: { ports: [{ protocol: UDP, port: 9001 }] }
`;
const B = `apiVersion: v1
kind: Service
metadata: { name: b, namespace: default }
spec: { ports: [{ protocol: UDP, port: 9002 }] }
`;
const MESH = `${A}---\n${B}`;

let tmp: string;
let meshDir: string;
let stateDir: string;
let store: DraftStore;

beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'md-drift-'));
  meshDir = path.join(tmp, 'mesh');
  stateDir = path.join(tmp, 'state');
  await mkdir(meshDir);
  await writeFile(path.join(meshDir, 'mesh.yaml'), MESH);
  await writeFile(path.join(meshDir, LAYOUT_FILE), '{"Service/default/a": {"x": 1, "y": 1}}');
  store = new DraftStore({ meshDir, stateDir, logger: { warn: () => {} } });
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/** Saves the draft with `mesh.yaml` edited (and the layout, when given); the new state. */
async function editDraft(from: string, to: string, layout?: DraftDoc['layout']): Promise<DraftState> {
  const s = await store.get();
  const text = s.draft.files['mesh.yaml']!;
  expect(text).toContain(from);
  const draft = {
    files: { ...s.draft.files, 'mesh.yaml': text.replace(from, to) },
    layout: layout ?? s.draft.layout,
  };
  const saved = await store.save({ draft, baseRevision: s.revision });
  if (!saved.ok) throw new Error(JSON.stringify(saved));
  return store.get();
}

/** Changes `mesh.yaml` in the directory, as a `git pull` would. */
async function editDisk(from: string, to: string): Promise<void> {
  const file = path.join(meshDir, 'mesh.yaml');
  const text = await readFile(file, 'utf8');
  expect(text).toContain(from);
  await writeFile(file, text.replace(from, to));
}

function expectStatus<S extends number>(o: RebaseOnDiskOutcome, status: S) {
  if (o.ok || o.status !== status) throw new Error(`expected ${status}, got ${JSON.stringify(o)}`);
  return o.body as Extract<RebaseOnDiskOutcome, { status: S }>['body'];
}

const diskHashNow = async () => meshDirHash(await readMeshDirContent(meshDir));

describe('diskState', () => {
  it('says the disk has not moved while nobody touched it', async () => {
    await editDraft('port: 9001', 'port: 9101');
    const d = DiskState.parse(await diskState(store));
    expect(diskMoved(d)).toBe(false);
    expect(d.base).toEqual(d.disk);
    expect(d.disk.files['mesh.yaml']).toBe(MESH);
  });

  it('says the disk moved and gives both sides', async () => {
    const s0 = await store.get();
    await editDraft('port: 9001', 'port: 9101');
    await editDisk('port: 9002', 'port: 9202');
    const d = DiskState.parse(await diskState(store));
    expect(diskMoved(d)).toBe(true);
    expect(d.baseHash).toBe(s0.baseHash);
    expect(d.diskHash).toBe(await diskHashNow());
    expect(d.base).toEqual(s0.draft);
    expect(d.disk.files['mesh.yaml']).toBe(MESH.replace('port: 9002', 'port: 9202'));
    expect(d.disk.layout).toEqual({ 'Service/default/a': { x: 1, y: 1 } });
  });

  it('learns the base of an older draft while the disk still holds it, and leaves it out once it moved', async () => {
    await store.get();
    await rm(store.baseFile);
    await editDisk('port: 9002', 'port: 9202');
    expect((await diskState(store)).base).toBeUndefined();
    await editDisk('port: 9202', 'port: 9002');
    const d = await diskState(store);
    expect(d.base).toEqual(d.disk);
    expect(await store.base()).toEqual(d.disk);
  });
  it('after an apply, the base is what the apply left in the directory', async () => {
    const s1 = await editDraft('port: 9001', 'port: 9101', { 'Service/default/b': { x: 3, y: 4 } });
    // Only the files are at stake here: a control plane with nothing to configure.
    const controlPlane = { reload: async () => {}, whenIdle: async () => {}, syncStates: () => [] };
    const applied = await applyDraft({ drafts: store, controlPlane, body: { revision: s1.revision } });
    if (!applied.ok) throw new Error(JSON.stringify(applied));
    // Read before diskState, which would adopt the disk as the base of a draft that lost it.
    const base = await store.base();
    const d = await diskState(store);
    expect(diskMoved(d)).toBe(false);
    expect(base).toEqual(d.disk);
    expect(base!.files['mesh.yaml']).toContain('port: 9101');
    expect(base!.layout).toEqual({ 'Service/default/b': { x: 3, y: 4 } });
  });
});

describe('rebaseOnDisk', () => {
  it('merges a draft change of object A with a disk change of object B', async () => {
    const s1 = await editDraft('port: 9001', 'port: 9101');
    await editDisk('port: 9002', 'port: 9202');
    const diskHash = await diskHashNow();
    const o = await rebaseOnDisk({ store, body: { revision: s1.revision } });
    if (!o.ok) throw new Error(JSON.stringify(o));
    expect(o.body.rebased).toBe(true);
    expect(o.body.merged).toEqual([{ key: 'Service/default/a', from: 'ours' }]);
    const text = o.body.state.draft.files['mesh.yaml']!;
    expect(text).toContain('port: 9101');
    expect(text).toContain('port: 9202');
    expect(text).toContain('# Hand written: keep this comment.');
    expect(o.body.state).toMatchObject({ revision: s1.revision + 1, baseHash: diskHash });
    expect(await store.get()).toEqual(o.body.state);
    expect(await store.base()).toEqual(meshDirDoc(await readMeshDirContent(meshDir)));
    // Rebased, the draft now differs from the disk by its own change only, and the disk did not move.
    expect(diskMoved(await diskState(store))).toBe(false);
    expect(await readFile(path.join(meshDir, 'mesh.yaml'), 'utf8')).not.toContain('port: 9101');
  });

  it('answers 409 with the conflict when both sides changed the same object, and saves nothing', async () => {
    const s1 = await editDraft('port: 9001', 'port: 9101');
    await editDisk('port: 9001', 'port: 9301');
    const body = expectStatus(await rebaseOnDisk({ store, body: { revision: s1.revision } }), 409);
    expect(body.error).toBe('1 conflict: choose a version for each');
    expect(body.conflicts).toHaveLength(1);
    expect(body.conflicts![0]).toMatchObject({ key: 'Service/default/a', type: 'object' });
    expect(body.conflicts![0]!.ours!.text).toContain('port: 9101');
    expect(body.conflicts![0]!.theirs!.text).toContain('port: 9301');
    expect(await store.get()).toEqual(s1);
    expect(diskMoved(await diskState(store))).toBe(true);
  });

  it("settles a conflict with the disk's version ('theirs')", async () => {
    const s1 = await editDraft('port: 9001', 'port: 9101');
    await editDisk('port: 9001', 'port: 9301');
    const o = await rebaseOnDisk({
      store,
      body: { revision: s1.revision, choices: { 'Service/default/a': 'theirs' } },
    });
    if (!o.ok) throw new Error(JSON.stringify(o));
    expect(o.body.merged).toEqual([{ key: 'Service/default/a', from: 'theirs' }]);
    expect(o.body.state.draft.files['mesh.yaml']).toBe(MESH.replace('port: 9001', 'port: 9301'));
    expect(o.body.state.baseHash).toBe(await diskHashNow());
  });

  it('settles a conflict with a text the user wrote', async () => {
    const s1 = await editDraft('port: 9001', 'port: 9101');
    await editDisk('port: 9001', 'port: 9301');
    const text = A.replace('# Hand written: keep this comment.\n', '').replace('port: 9001', 'port: 9401');
    const o = await rebaseOnDisk({
      store,
      body: { revision: s1.revision, choices: { 'Service/default/a': { text } } },
    });
    if (!o.ok) throw new Error(JSON.stringify(o));
    expect(o.body.merged).toEqual([{ key: 'Service/default/a', from: 'edited' }]);
    const merged = o.body.state.draft.files['mesh.yaml']!;
    expect(merged).toContain('port: 9401');
    expect(merged).not.toMatch(/port: 9[13]01/);
    expect(merged).toContain('port: 9002');
  });

  it('refuses a stale revision (409 with the current state), an unknown choice key and a bad body (400)', async () => {
    const s1 = await editDraft('port: 9001', 'port: 9101');
    await editDisk('port: 9002', 'port: 9202');
    const stale = expectStatus(await rebaseOnDisk({ store, body: { revision: s1.revision - 1 } }), 409);
    expect(stale.error).toMatch(/revision 1, not 0/);
    expect(stale.current).toEqual(s1);

    const unknown = expectStatus(
      await rebaseOnDisk({
        store,
        body: { revision: s1.revision, choices: { 'Service/default/zz': 'ours' } },
      }),
      400,
    );
    expect(unknown.error).toBe('Service/default/zz is not in conflict');
    expect(unknown.fields).toEqual([{ path: 'choices["Service/default/zz"]', message: unknown.error }]);

    const bad = expectStatus(
      await rebaseOnDisk({ store, body: { revision: -1, choices: { x: 'mine' } } }),
      400,
    );
    expect(bad.fields.map((f) => f.path).sort()).toEqual(['choices.x', 'revision']);
    expect(await store.get()).toEqual(s1);
  });

  it('answers 409 when the draft does not know its base', async () => {
    const s1 = await editDraft('port: 9001', 'port: 9101');
    await rm(store.baseFile);
    await editDisk('port: 9002', 'port: 9202');
    const body = expectStatus(await rebaseOnDisk({ store, body: { revision: s1.revision } }), 409);
    expect(body.error).toMatch(/^this draft does not know the files it started from/);
    expect(await store.get()).toEqual(s1);
  });

  it('has nothing to do when the disk did not move', async () => {
    const s1 = await editDraft('port: 9001', 'port: 9101');
    const o = await rebaseOnDisk({ store, body: { revision: s1.revision } });
    expect(o).toEqual({ ok: true, body: { state: s1, rebased: false, merged: [], notes: [] } });
    expect((await store.get()).revision).toBe(s1.revision);
  });

  it('merges a layout change on the disk with the draft’s own moves', async () => {
    const s1 = await editDraft('port: 9001', 'port: 9101', {
      'Service/default/a': { x: 1, y: 1 },
      'Service/default/b': { x: 5, y: 5 },
    });
    await writeFile(path.join(meshDir, LAYOUT_FILE), '{"Service/default/a": {"x": 2, "y": 2}}');
    const o = await rebaseOnDisk({ store, body: { revision: s1.revision } });
    if (!o.ok) throw new Error(JSON.stringify(o));
    expect(o.body.state.draft.layout).toEqual({
      'Service/default/a': { x: 2, y: 2 },
      'Service/default/b': { x: 5, y: 5 },
    });
    expect(o.body.state.draft.files['mesh.yaml']).toContain('port: 9101');
    expect(o.body.state.baseHash).toBe(await diskHashNow());
  });

  it('waits for no apply: 409 while one runs', async () => {
    const s1 = await editDraft('port: 9001', 'port: 9101');
    await editDisk('port: 9002', 'port: 9202');
    const release = store.tryBeginApply()!;
    const body = expectStatus(await rebaseOnDisk({ store, body: { revision: s1.revision } }), 409);
    expect(body.error).toMatch(/an apply is running/);
    release();
    expect((await rebaseOnDisk({ store, body: { revision: s1.revision } })).ok).toBe(true);
  });
});
