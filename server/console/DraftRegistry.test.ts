import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DraftRegistry, uniqueId } from './DraftRegistry';

const EXAMPLE = path.resolve(__dirname, '..', '..', 'examples', 'seed-example-1');

let tmp: string;
let meshDir: string;
let stateDir: string;
let warnings: string[];

const registry = () =>
  new DraftRegistry({ meshDir, stateDir, logger: { warn: (m: string) => void warnings.push(m) } });

beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'md-registry-'));
  meshDir = path.join(tmp, 'mesh');
  stateDir = path.join(tmp, 'state');
  warnings = [];
  await cp(EXAMPLE, meshDir, { recursive: true });
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

async function editFile(r: DraftRegistry, id: string, file: string, text: string): Promise<void> {
  const store = (await r.get(id))!;
  const s = await store.get();
  const saved = await store.save({
    draft: { ...s.draft, files: { ...s.draft.files, [file]: text } },
    baseRevision: s.revision,
  });
  if (!saved.ok) throw new Error(JSON.stringify(saved.body));
}

describe('DraftRegistry', () => {
  it('keeps named drafts and their edits across a restart, the main draft in its old place', async () => {
    const first = registry();
    const made = await first.create({ name: 'Canary' });
    expect(made).toMatchObject({
      ok: true,
      body: { id: 'canary', name: 'Canary', revision: 0, main: false },
    });
    await editFile(first, 'canary', 'extra.yaml', '# canary\n');
    await editFile(first, 'main', 'main.yaml', '# main\n');

    const again = registry();
    expect((await again.list()).map((d) => [d.id, d.name, d.revision])).toEqual([
      ['main', 'Main draft', 1],
      ['canary', 'Canary', 1],
    ]);
    expect((await (await again.get('canary'))!.get()).draft.files['extra.yaml']).toBe('# canary\n');
    expect((await again.main.get()).draft.files['extra.yaml']).toBeUndefined();
    // An existing state directory needs no migration: the main draft is where it always was.
    expect(
      JSON.parse(await readFile(path.join(stateDir, 'console', 'draft.json'), 'utf8')).state.revision,
    ).toBe(1);
  });

  it('rebuilds a broken draft list from the draft directories, losing no draft', async () => {
    const first = registry();
    await first.create({ name: 'One' });
    await editFile(first, 'one', 'one.yaml', '# one\n');
    await writeFile(path.join(stateDir, 'console', 'drafts.json'), '{not json');

    const again = registry();
    expect((await again.list()).map((d) => d.id)).toEqual(['main', 'one']);
    expect((await (await again.get('one'))!.get()).draft.files['one.yaml']).toBe('# one\n');
    expect(warnings.join('\n')).toMatch(/not a valid draft list; rebuilt it from 1 draft directories/);
  });

  it('keeps deleted drafts aside, the newest 10', async () => {
    const r = registry();
    const kept: string[] = [];
    for (let i = 0; i < 12; i++) {
      const made = await r.create({ name: `d${i}` });
      if (!made.ok) throw new Error(JSON.stringify(made.body));
      const removed = await r.remove(made.body.id);
      if (!removed.ok) throw new Error(JSON.stringify(removed.body));
      kept.push(path.basename(removed.body.keptAt));
      // Distinct time stamps for the names.
      await new Promise((res) => setTimeout(res, 2));
    }
    expect((await readdir(path.join(stateDir, 'console', 'deleted'))).sort()).toEqual(kept.slice(2).sort());
    expect((await r.list()).map((d) => d.id)).toEqual(['main']);
  });

  it('refuses bad names, unknown sources and too many drafts, with the field at fault', async () => {
    const r = new DraftRegistry({ meshDir, stateDir, maxDrafts: 1, logger: { warn: () => undefined } });
    expect(await r.create({ name: 'x\u0007' })).toMatchObject({ ok: false, status: 400 });
    expect(await r.create({ name: 'a', extra: 1 })).toMatchObject({ ok: false, status: 400 });
    expect(await r.create({ name: 'a', from: 'nope' })).toMatchObject({
      ok: false,
      status: 404,
      body: { fields: [{ path: 'from' }] },
    });
    expect((await r.create({ name: 'a' })).ok).toBe(true);
    expect(await r.create({ name: 'b' })).toMatchObject({ ok: false, status: 409 });
    expect(await r.rename('nope', { name: 'c' })).toMatchObject({ ok: false, status: 404 });
    expect(await r.remove('main')).toMatchObject({ ok: false, status: 400 });
  });
});

describe('uniqueId', () => {
  it('makes a lowercase dashed id from a name, numbered when taken', () => {
    expect(uniqueId('Canary 10% — EU', new Set())).toBe('canary-10-eu');
    expect(uniqueId('main', new Set(['main']))).toBe('main-2');
    expect(uniqueId('a', new Set(['a', 'a-2']))).toBe('a-3');
    expect(uniqueId('日本', new Set())).toMatch(/^draft-[0-9a-f]{6}$/);
  });
});
