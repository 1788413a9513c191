import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApplyRecord, ApplySummary } from '@/lib/console/applyRecord';
import type { DraftDoc } from '@/lib/console/draftDoc';
import { ApplyHistory } from './ApplyHistory';

let tmp: string;
let dir: string;
let warnings: string[];
const logger = { warn: (m: string) => warnings.push(m) };

beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'md-applies-'));
  dir = path.join(tmp, 'applies');
  warnings = [];
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/** An apply that changed `mesh.yaml` from `v<n-1>` to `v<n>`; `shared.yaml` stays the same throughout. */
function applyOf(n: number, extra: Partial<Omit<ApplyRecord, 'id'>> = {}): Omit<ApplyRecord, 'id'> {
  const doc = (v: number): DraftDoc => ({
    files: { 'mesh.yaml': `# v${v}\n`, 'shared.yaml': 'kind: Shared\n' },
    layout: { 'Service/default/a': { x: v, y: 2 } },
  });
  return {
    at: new Date(Date.UTC(2026, 0, 1, 0, n)).toISOString(),
    user: 'alice',
    draft: 'main',
    revision: n,
    applied: ['mesh.yaml'],
    deleted: [],
    proxies: {
      total: 2,
      inSync: 1,
      notInSync: [{ id: 'default/gateway-0', phase: 'failed', error: 'boom' }],
    },
    before: doc(n - 1),
    after: doc(n),
    ...extra,
  };
}

const blobCount = async () => (await readdir(path.join(dir, 'blobs'))).length;
const recordFile = (id: number) => path.join(dir, 'records', `${String(id).padStart(8, '0')}.json`);

describe('ApplyHistory', () => {
  it('records, lists newest first and reads an apply back with its files before and after', async () => {
    const h = new ApplyHistory({ dir, logger });
    const first = await h.record(applyOf(1));
    const input = applyOf(2, { timedOut: true, deleted: ['old.yaml'] });
    const second = await h.record(input);
    expect(first.id).toBe(1);
    const { before: _b, after: _a, ...summary } = input;
    expect(second).toEqual(ApplySummary.parse({ ...summary, id: 2 }));

    const list = await h.list();
    expect(list.map((s) => s.id)).toEqual([2, 1]);
    expect(list[1]).toEqual(first);
    // Summaries carry no file contents.
    expect(list[0]).not.toHaveProperty('before');

    const rec = await h.get(2);
    expect(ApplyRecord.parse(rec)).toEqual({ ...input, id: 2 });
    expect(await h.get(1)).toEqual({ ...applyOf(1), id: 1 });
    expect(await h.get(3)).toBeUndefined();
    expect(await h.get(0)).toBeUndefined();
    expect(warnings).toEqual([]);

    // Private to the user, like the rest of the state directory.
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect((await stat(path.join(dir, 'blobs'))).mode & 0o777).toBe(0o700);
    expect((await stat(recordFile(2))).mode & 0o777).toBe(0o600);
    const blob = (await readdir(path.join(dir, 'blobs')))[0]!;
    expect((await stat(path.join(dir, 'blobs', blob))).mode & 0o777).toBe(0o600);
  });

  it('keeps a cluster apply: its target, options and objects, without proxies', async () => {
    const h = new ApplyHistory({ dir, logger });
    const { proxies: _p, ...local } = applyOf(1);
    const input: Omit<ApplyRecord, 'id'> = {
      ...local,
      target: 'cluster',
      force: true,
      objects: [
        { key: 'VirtualService/default/a', action: 'update', done: true },
        { key: 'Route/default/r', action: 'update', done: false, error: 'Forbidden: no' },
      ],
    };
    await h.record(input);
    expect(await h.get(1)).toEqual({ ...input, id: 1 });
    expect((await h.list())[0]).toMatchObject({ target: 'cluster', force: true, objects: input.objects });
    expect(warnings).toEqual([]);
  });

  it('stores identical file content once, across sides and records', async () => {
    const h = new ApplyHistory({ dir, logger });
    await h.record(applyOf(1));
    // v0, v1 and shared.yaml.
    expect(await blobCount()).toBe(3);
    await h.record(applyOf(2));
    // Only v2 is new.
    expect(await blobCount()).toBe(4);
    const rec = JSON.parse(await readFile(recordFile(2), 'utf8'));
    expect(rec.before.files['shared.yaml']).toBe(rec.after.files['shared.yaml']);
  });

  it('ids keep increasing in a new instance on the same directory, also after every record was pruned', async () => {
    const a = new ApplyHistory({ dir, keep: 2, logger });
    for (let n = 1; n <= 3; n++) await a.record(applyOf(n));
    expect((await a.list()).map((s) => s.id)).toEqual([3, 2]);

    const b = new ApplyHistory({ dir, keep: 2, logger });
    expect((await b.record(applyOf(4))).id).toBe(4);
    expect((await b.list()).map((s) => s.id)).toEqual([4, 3]);

    // With every record gone, the counter still knows the highest id given.
    await rm(path.join(dir, 'records'), { recursive: true });
    const c = new ApplyHistory({ dir, keep: 2, logger });
    expect((await c.record(applyOf(5))).id).toBe(5);

    // A counter behind the records (a crash between the two writes) does not hand out an id again.
    await writeFile(path.join(dir, 'next-id'), '2\n');
    expect((await new ApplyHistory({ dir, logger }).record(applyOf(6))).id).toBe(6);
    expect(warnings).toEqual([]);
  });

  it('pruning keeps the newest records and removes the blobs only pruned records referenced', async () => {
    const h = new ApplyHistory({ dir, keep: 2, logger });
    for (let n = 1; n <= 4; n++) await h.record(applyOf(n));
    expect((await h.list()).map((s) => s.id)).toEqual([4, 3]);
    expect((await readdir(path.join(dir, 'records'))).sort()).toEqual(['00000003.json', '00000004.json']);
    // v2, v3, v4 and shared.yaml: v0 and v1 went with records 1 and 2.
    expect(await blobCount()).toBe(4);
    expect(await h.get(1)).toBeUndefined();
    expect(await h.get(3)).toEqual({ ...applyOf(3), id: 3 });
    expect(await h.get(4)).toEqual({ ...applyOf(4), id: 4 });
    expect(warnings).toEqual([]);
  });

  it('keeps at most maxBytes of file contents, older records first, but always the newest', async () => {
    const big = (n: number, size: number): Omit<ApplyRecord, 'id'> => {
      const doc = (v: number): DraftDoc => ({ files: { 'mesh.yaml': `${v}`.repeat(size) }, layout: {} });
      return { ...applyOf(n), before: doc(n - 1), after: doc(n) };
    };
    // Each record holds two 100-byte blobs (before and after), the newer one sharing its before.
    const h = new ApplyHistory({ dir, logger, maxBytes: 350 });
    for (let n = 1; n <= 4; n++) await h.record(big(n, 100));
    // Newest first: #4 (200 bytes), #3 (+100: its after is #4's before), #2 (+100 > 350): gone.
    expect((await h.list()).map((a) => a.id)).toEqual([4, 3]);
    expect(await blobCount()).toBe(3);
    // One apply larger than the limit is kept on its own.
    await h.record(big(5, 1000));
    expect((await h.list()).map((a) => a.id)).toEqual([5]);
    expect((await h.get(5))?.after.files['mesh.yaml']).toBe('5'.repeat(1000));
    expect(await blobCount()).toBe(2);
  });

  it('leaves out a corrupt record with one warning and lists the others', async () => {
    const h = new ApplyHistory({ dir, logger });
    for (let n = 1; n <= 3; n++) await h.record(applyOf(n));
    await writeFile(recordFile(2), '{"format": 1, "summary": ');
    const invalid = JSON.parse(await readFile(recordFile(3), 'utf8'));
    invalid.after.files['mesh.yaml'] = 'not-a-hash';
    await writeFile(recordFile(3), JSON.stringify(invalid));

    expect((await h.list()).map((s) => s.id)).toEqual([1]);
    expect(await h.get(2)).toBeUndefined();
    expect(await h.get(3)).toBeUndefined();
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toContain(`${recordFile(3)} is not a valid apply record (after.files.mesh.yaml:`);
    expect(warnings[1]).toContain(`${recordFile(2)} cannot be read`);
    // A later apply still gets a new id.
    expect((await h.record(applyOf(4))).id).toBe(4);
  });

  it('a record whose file content is missing is left out with a warning', async () => {
    const h = new ApplyHistory({ dir, logger });
    await h.record(applyOf(1));
    await h.record(applyOf(2));
    const rec = JSON.parse(await readFile(recordFile(2), 'utf8'));
    const v2 = rec.after.files['mesh.yaml'] as string;
    await rm(path.join(dir, 'blobs', v2));

    expect(await h.get(2)).toBeUndefined();
    expect(warnings).toEqual([
      expect.stringContaining(`${recordFile(2)} the content of mesh.yaml (blob ${v2}) is missing`),
    ]);
    expect((await h.list()).map((s) => s.id)).toEqual([1]);
    expect(warnings).toHaveLength(2);
    expect(warnings[1]).toContain(`blob ${v2}) is missing`);
    expect(await h.get(1)).toEqual({ ...applyOf(1), id: 1 });
  });

  it('concurrent records get distinct ids and are all stored', async () => {
    const h = new ApplyHistory({ dir, logger });
    const summaries = await Promise.all([1, 2, 3, 4, 5, 6].map((n) => h.record(applyOf(n))));
    expect(summaries.map((s) => s.id).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6]);
    const list = await h.list();
    expect(list.map((s) => s.id)).toEqual([6, 5, 4, 3, 2, 1]);
    for (const s of summaries) expect((await h.get(s.id))?.revision).toBe(s.revision);
  });

  it('an empty or missing directory has no applies', async () => {
    const h = new ApplyHistory({ dir, logger });
    expect(await h.list()).toEqual([]);
    expect(await h.get(1)).toBeUndefined();
  });
});
