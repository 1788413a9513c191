import { cp as copyDir, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DraftState, LAYOUT_FILE } from '@/lib/console/draftDoc';
import { DraftRegistry } from './DraftRegistry';
import { DraftStore } from './DraftStore';
import { meshDirDoc, meshDirHash, readMeshDirContent } from './meshDirFiles';

const REPO = path.resolve(__dirname, '..', '..');
const warnings: string[] = [];
const logger = { warn: (m: string) => warnings.push(m) };

let tmp: string;
let meshDir: string;
let stateDir: string;

beforeEach(async () => {
  warnings.length = 0;
  tmp = await mkdtemp(path.join(os.tmpdir(), 'md-draft-'));
  meshDir = path.join(tmp, 'mesh');
  stateDir = path.join(tmp, 'state');
  await copyDir(path.join(REPO, 'examples', 'seed-example-1'), meshDir, { recursive: true });
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

const store = () => new DraftStore({ meshDir, stateDir, logger });

describe('DraftStore', () => {
  it('starts from the mesh directory: manifests (recursive, relative), the layout file, and their hash', async () => {
    await mkdir(path.join(meshDir, 'extra', 'deeper'), { recursive: true });
    await writeFile(path.join(meshDir, 'extra', 'deeper', 'more.yml'), '# nothing\n');
    await writeFile(path.join(meshDir, 'README.md'), 'not a manifest');
    await mkdir(path.join(meshDir, '.git'));
    await writeFile(path.join(meshDir, '.git', 'x.yaml'), 'hidden');
    await writeFile(
      path.join(meshDir, LAYOUT_FILE),
      JSON.stringify({ 'vs:default/gateway-vsvc': { x: 1, y: 2 } }),
    );

    const s = await store().get();
    expect(DraftState.parse(s)).toEqual(s);
    expect(Object.keys(s.draft.files).sort()).toEqual(['cluster.yaml', 'extra/deeper/more.yml', 'mesh.yaml']);
    expect(s.draft.files['mesh.yaml']).toBe(await readFile(path.join(meshDir, 'mesh.yaml'), 'utf8'));
    expect(s.draft.layout).toEqual({ 'vs:default/gateway-vsvc': { x: 1, y: 2 } });
    expect(s.revision).toBe(0);
    expect(s.baseHash).toMatch(/^[0-9a-f]{64}$/);
    expect(s.baseHash).toBe(meshDirHash(await readMeshDirContent(meshDir)));
    // The hash covers the layout file too.
    await writeFile(path.join(meshDir, LAYOUT_FILE), '{}');
    expect(meshDirHash(await readMeshDirContent(meshDir))).not.toBe(s.baseHash);
    const saved = JSON.parse(await readFile(path.join(stateDir, 'console', 'draft.json'), 'utf8'));
    expect(saved.state).toEqual(s);
    expect((await stat(path.join(stateDir, 'console', 'draft.json'))).mode & 0o777).toBe(0o600);
  });

  it('saves a new revision, and a new instance (a restart) reads the same draft', async () => {
    const a = store();
    const s0 = await a.get();
    const draft = { ...s0.draft, files: { ...s0.draft.files, 'new.yaml': 'kind: Nothing\n' } };
    const r = await a.save({ draft, baseRevision: 0 });
    expect(r).toMatchObject({ ok: true, revision: 1 });
    const b = store();
    const s1 = await b.get();
    expect(s1.revision).toBe(1);
    expect(s1.draft.files['new.yaml']).toBe('kind: Nothing\n');
    expect(s1.baseHash).toBe(s0.baseHash);
    // The mesh directory itself is not touched by a save.
    await expect(stat(path.join(meshDir, 'new.yaml'))).rejects.toThrow(/ENOENT/);
    // No temp files are left behind by the atomic writes.
    expect((await readdir(path.join(stateDir, 'console'))).sort()).toEqual(['base.json', 'draft.json']);
  });

  it('refuses a stale baseRevision with 409 and the current state, and keeps the newer draft', async () => {
    const s = store();
    const s0 = await s.get();
    const mine = { ...s0.draft, files: { ...s0.draft.files, 'a.yaml': 'a: 1\n' } };
    const theirs = { ...s0.draft, files: { ...s0.draft.files, 'b.yaml': 'b: 1\n' } };
    expect((await s.save({ draft: theirs, baseRevision: 0 })).ok).toBe(true);
    const stale = await s.save({ draft: mine, baseRevision: 0 });
    expect(stale.ok).toBe(false);
    if (stale.ok || stale.status !== 409) throw new Error(`expected 409, got ${JSON.stringify(stale)}`);
    expect(stale.body.error).toMatch(/revision 0 .* revision 1/);
    expect(stale.body.current.revision).toBe(1);
    expect(stale.body.current.draft.files['b.yaml']).toBe('b: 1\n');
    expect((await store().get()).draft.files['a.yaml']).toBeUndefined();
  });

  it('refuses invalid drafts with 400 and the fields at fault, keeping the saved one', async () => {
    const s = store();
    const s0 = await s.get();
    const bad = async (body: unknown) => {
      const r = await s.save(body);
      if (r.ok || r.status !== 400) throw new Error(`expected 400, got ${JSON.stringify(r)}`);
      return r.body.fields;
    };
    expect(await bad({ draft: s0.draft })).toEqual([{ path: 'baseRevision', message: expect.any(String) }]);
    expect(await bad({ draft: { files: { '../escape.yaml': 'x' }, layout: {} }, baseRevision: 0 })).toEqual([
      { path: 'draft.files["../escape.yaml"]', message: 'must be a relative path inside the mesh directory' },
    ]);
    expect(await bad({ draft: { files: { '/etc/x.yaml': 'x' }, layout: {} }, baseRevision: 0 })).toHaveLength(
      1,
    );
    expect(await bad({ draft: { files: { 'notes.txt': 'x' }, layout: {} }, baseRevision: 0 })).toEqual([
      { path: 'draft.files["notes.txt"]', message: 'must be a .yaml, .yml or .json file' },
    ]);
    expect(await bad({ draft: { files: { '.hidden/x.yaml': 'x' }, layout: {} }, baseRevision: 0 })).toEqual([
      { path: 'draft.files[".hidden/x.yaml"]', message: expect.stringMatching(/starting with a dot/) },
    ]);
    expect(await bad({ draft: { files: {}, layout: { n: { x: 'a', y: 0 } } }, baseRevision: 0 })).toEqual([
      { path: 'draft.layout.n.x', message: expect.any(String) },
    ]);
    expect((await store().get()).revision).toBe(0);
  });

  it('a corrupt draft.json is kept aside with a clear warning and the draft starts again, without throwing', async () => {
    await store().get();
    const file = path.join(stateDir, 'console', 'draft.json');
    await writeFile(file, '{"format":1, "meshDir": trunc');
    const s = await store().get();
    expect(s.revision).toBe(0);
    expect(Object.keys(s.draft.files).sort()).toEqual(['cluster.yaml', 'mesh.yaml']);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /draft\.json is not a valid draft \(.*JSON.*\); kept it as .*draft\.corrupt-.*\.json/,
    );
    const kept = (await readdir(path.join(stateDir, 'console'))).filter((n) =>
      n.startsWith('draft.corrupt-'),
    );
    expect(kept).toHaveLength(1);
    expect(await readFile(path.join(stateDir, 'console', kept[0]!), 'utf8')).toBe(
      '{"format":1, "meshDir": trunc',
    );

    // Valid JSON that is not a draft is treated the same way, and names the field.
    await writeFile(file, JSON.stringify({ format: 1, meshDir, state: { revision: -1 } }));
    await store().get();
    expect(warnings[1]).toMatch(/not a valid draft \(state\.draft: /);
  });

  it('reset starts again from the mesh directory with a higher revision', async () => {
    const s = store();
    const s0 = await s.get();
    await s.save({ draft: { ...s0.draft, files: {} }, baseRevision: 0 });
    await writeFile(path.join(meshDir, 'added.yaml'), '# added outside\n');
    const r = await s.reset();
    expect(r.revision).toBe(2);
    expect(Object.keys(r.draft.files).sort()).toEqual(['added.yaml', 'cluster.yaml', 'mesh.yaml']);
    expect(r.baseHash).not.toBe(s0.baseHash);
    expect((await store().get()).revision).toBe(2);
  });

  it("another mesh directory's draft is parked, never applied here, and comes back for its directory", async () => {
    const first = store();
    const s0 = await first.get();
    await first.save({ draft: { ...s0.draft, files: { 'mine.yaml': 'x: 1\n' } }, baseRevision: 0 });

    const otherDir = path.join(tmp, 'other');
    await copyDir(path.join(REPO, 'examples', 'canary'), otherDir, { recursive: true });
    const other = await new DraftStore({ meshDir: otherDir, stateDir, logger }).get();
    expect(other.revision).toBe(0);
    expect(other.draft.files['mine.yaml']).toBeUndefined();
    expect(warnings.join('\n')).toMatch(/the draft of .*mesh is kept in .*draft-[0-9a-f]{16}\.json/);

    const back = await store().get();
    expect(back.revision).toBe(1);
    expect(back.draft.files).toEqual({ 'mine.yaml': 'x: 1\n' });
  });

  it('concurrent saves are ordered: exactly one of two saves on the same revision wins', async () => {
    const s = store();
    const s0 = await s.get();
    const results = await Promise.all(
      ['a', 'b'].map((n) => s.save({ draft: { ...s0.draft, files: { [`${n}.yaml`]: n } }, baseRevision: 0 })),
    );
    expect(results.map((r) => (r.ok ? 200 : r.status)).sort()).toEqual([200, 409]);
    expect((await store().get()).revision).toBe(1);
  });
});

describe('DraftStore: the base (the files a draft started from)', () => {
  const diskDoc = async () => meshDirDoc(await readMeshDirContent(meshDir));
  const baseFile = () => path.join(stateDir, 'console', 'base.json');

  it('is kept when the draft starts from the mesh directory, in base.json (0600), and survives a restart', async () => {
    await writeFile(path.join(meshDir, LAYOUT_FILE), JSON.stringify({ n: { x: 1, y: 2 } }));
    const s = store();
    const s0 = await s.get();
    const disk = await diskDoc();
    expect(disk.layout).toEqual({ n: { x: 1, y: 2 } });
    expect(await s.base()).toEqual(disk);
    // Edits change the draft, never its base.
    await s.save({ draft: { files: { 'mine.yaml': '# mine\n' }, layout: {} }, baseRevision: 0 });
    expect(await store().base()).toEqual(disk);
    expect(await s.withBase()).toEqual({ state: await s.get(), base: disk });
    const saved = JSON.parse(await readFile(baseFile(), 'utf8'));
    expect(saved).toEqual({ format: 1, baseHash: s0.baseHash, base: disk });
    expect((await stat(baseFile())).mode & 0o777).toBe(0o600);
  });

  it('follows a reset to the files the directory holds then', async () => {
    const s = store();
    await s.get();
    await writeFile(path.join(meshDir, 'added.yaml'), '# added outside\n');
    await s.reset();
    expect((await s.base())!.files['added.yaml']).toBe('# added outside\n');
    expect(await s.base()).toEqual(await diskDoc());
  });

  it('after an apply is what the apply left in the directory (markApplied)', async () => {
    const s = store();
    const s0 = await s.get();
    await writeFile(path.join(meshDir, 'applied.yaml'), '# applied\n');
    const now = await readMeshDirContent(meshDir);
    const marked = await s.markApplied(meshDirHash(now), meshDirDoc(now));
    expect(marked.baseHash).not.toBe(s0.baseHash);
    expect(marked.revision).toBe(s0.revision);
    expect((await store().base())!.files['applied.yaml']).toBe('# applied\n');
  });

  it('is inherited by a named draft made as a copy, and not by a fresh one', async () => {
    const registry = new DraftRegistry({ meshDir, stateDir, logger });
    const main0 = await registry.main.get();
    const mainBase = await registry.main.base();
    // The directory moves on before the copy is made: the copy takes main's base, not the directory's files.
    await writeFile(path.join(meshDir, 'later.yaml'), '# later\n');
    const copy = await registry.create({ name: 'Copy', from: 'main' });
    if (!copy.ok) throw new Error(JSON.stringify(copy));
    const copied = (await registry.get(copy.body.id))!;
    expect((await copied.get()).baseHash).toBe(main0.baseHash);
    expect(await copied.base()).toEqual(mainBase);
    expect(await readdir(path.join(stateDir, 'console', 'drafts', copy.body.id))).toContain('base.json');

    const fresh = await registry.create({ name: 'Fresh' });
    if (!fresh.ok) throw new Error(JSON.stringify(fresh));
    expect((await (await registry.get(fresh.body.id))!.base())!.files['later.yaml']).toBe('# later\n');
  });

  it('is undefined, without throwing, when base.json is missing, corrupt, or of another base', async () => {
    const s0 = await store().get();
    await rm(baseFile());
    expect(await store().base()).toBeUndefined();
    expect(await store().withBase()).toEqual({ state: s0 });

    await writeFile(baseFile(), '{"format":1, "baseHash": trunc');
    expect(await store().base()).toBeUndefined();
    await writeFile(baseFile(), JSON.stringify({ format: 1, baseHash: s0.baseHash, base: { files: 3 } }));
    expect(await store().base()).toBeUndefined();

    const other = { format: 1, baseHash: 'f'.repeat(64), base: s0.draft };
    await writeFile(baseFile(), JSON.stringify(other));
    expect(await store().base()).toBeUndefined();
    // The same file with the right hash is read: only the hash made the difference above.
    await writeFile(baseFile(), JSON.stringify({ ...other, baseHash: s0.baseHash }));
    expect(await store().base()).toEqual(s0.draft);
    expect(warnings).toEqual([]);
  });

  it('adoptBase keeps the base of an older draft only for its own hash and only once', async () => {
    const s = store();
    const s0 = await s.get();
    await rm(baseFile());
    const disk = await diskDoc();
    expect(await s.adoptBase(disk, 'f'.repeat(64))).toBe(false);
    expect(await s.base()).toBeUndefined();
    expect(await s.adoptBase(disk, s0.baseHash)).toBe(true);
    expect(await s.base()).toEqual(disk);
    expect(await s.adoptBase({ files: {}, layout: {} }, s0.baseHash)).toBe(false);
    expect(await s.base()).toEqual(disk);
  });

  it('rebaseOnto saves the files, the new base and its hash together, bumping the revision once', async () => {
    const s = store();
    const s0 = await s.get();
    const newBase = { files: { 'b.yaml': '# b\n' }, layout: {} };
    const draft = { files: { 'b.yaml': '# b\n', 'mine.yaml': '# mine\n' }, layout: {} };
    const stale = await s.rebaseOnto({ revision: 5, draft, base: newBase, baseHash: 'h'.repeat(64) });
    if (stale.ok || stale.status !== 409) throw new Error(`expected 409, got ${JSON.stringify(stale)}`);
    expect(stale.body.current).toEqual(s0);
    expect(await store().base()).toEqual(s0.draft);

    const r = await s.rebaseOnto({ revision: 0, draft, base: newBase, baseHash: 'h'.repeat(64) });
    if (!r.ok) throw new Error(JSON.stringify(r));
    expect(r.state).toMatchObject({ revision: 1, baseHash: 'h'.repeat(64), draft });
    const again = store();
    expect(await again.get()).toEqual(r.state);
    expect(await again.base()).toEqual(newBase);

    const bad = await s.rebaseOnto({
      revision: 1,
      draft: { files: { 'x.txt': '' }, layout: {} },
      base: newBase,
      baseHash: 'i'.repeat(64),
    });
    expect(bad).toMatchObject({ ok: false, status: 400 });
    expect(await store().get()).toEqual(r.state);
  });

  it("another mesh directory's draft is parked with its base, which comes back with it", async () => {
    const first = store();
    const s0 = await first.get();
    const otherDir = path.join(tmp, 'other');
    await copyDir(path.join(REPO, 'examples', 'canary'), otherDir, { recursive: true });
    const other = new DraftStore({ meshDir: otherDir, stateDir, logger });
    expect(Object.keys((await other.base())!.files)).toEqual(Object.keys((await other.get()).draft.files));
    const back = store();
    expect((await back.get()).baseHash).toBe(s0.baseHash);
    expect(await back.base()).toEqual(s0.draft);
  });
});
