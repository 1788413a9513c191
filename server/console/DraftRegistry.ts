/**
 * Several drafts per mesh directory (issue 6 §2: "Several drafts can exist; each shows its diff
 * against its base commit"). The main draft is the one the console has always kept, in
 * `<stateDir>/console/draft.json`; a named draft keeps its own DraftStore in
 * `<stateDir>/console/drafts/<id>/draft.json`, and the list (ids, names, creation time) is in
 * `<stateDir>/console/drafts.json`. A deleted draft is moved to `<stateDir>/console/deleted/`, never
 * erased at once: it may hold work (the newest 10 are kept).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { DraftId, MAIN_DRAFT } from '@/lib/console/draftIds';
import { DraftStore, type DraftWithBase, type FieldError } from './DraftStore';
import { writeFileAtomic } from './meshDirFiles';

export { DraftId, MAIN_DRAFT };

/** A draft's name as people see it. */
export const DraftName = z
  .string()
  .trim()
  .min(1, 'a draft needs a name')
  .max(80, 'a draft name has at most 80 characters')
  .refine((s) => !/[\u0000-\u001f\u007f]/.test(s), 'a draft name has no control characters');

/** The body of `POST /api/drafts`: a name, and the draft to copy (by default it starts from the mesh directory). */
export const CreateDraftBody = z.strictObject({ name: DraftName, from: DraftId.optional() });

/** The body of `PATCH /api/drafts/{id}`. */
export const RenameDraftBody = z.strictObject({ name: DraftName });

const Entry = z.strictObject({ id: DraftId, name: DraftName, createdAt: z.string() });
type Entry = z.infer<typeof Entry>;
const IndexFile = z.strictObject({ format: z.literal(1), drafts: z.array(Entry) });

/** One draft in the list the console shows. */
export interface DraftSummary {
  id: string;
  name: string;
  createdAt?: string;
  revision: number;
  updatedAt: string;
  /** The main draft cannot be deleted. */
  main: boolean;
}

export type RegistryOutcome<T> =
  | { ok: true; body: T }
  | { ok: false; status: 400 | 404 | 409 | 500; body: { error: string; fields?: FieldError[] } };

export interface DraftRegistryOptions {
  meshDir: string;
  stateDir: string;
  logger?: Pick<Console, 'warn'>;
  now?: () => Date;
  /** At most this many named drafts (besides the main one). */
  maxDrafts?: number;
}

/** The drafts of one mesh directory; see the file comment. */
export class DraftRegistry {
  /** The main draft (the console's default). */
  readonly main: DraftStore;
  private readonly stores = new Map<string, DraftStore>();
  private readonly applyLock = { busy: false };
  private readonly consoleDir: string;
  private readonly indexFile: string;
  private readonly now: () => Date;
  private entries: Entry[] | undefined;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly o: DraftRegistryOptions) {
    this.consoleDir = path.join(o.stateDir, 'console');
    this.indexFile = path.join(this.consoleDir, 'drafts.json');
    this.now = o.now ?? (() => new Date());
    this.main = this.makeStore(undefined);
    this.stores.set(MAIN_DRAFT, this.main);
  }

  /** The mesh directory the drafts belong to. */
  get meshDir(): string {
    return this.o.meshDir;
  }

  /** The store of a draft, or undefined when no draft has this id. */
  async get(id: string): Promise<DraftStore | undefined> {
    if (id === MAIN_DRAFT) return this.main;
    const entries = await this.exclusive(() => this.load());
    if (!entries.some((e) => e.id === id)) return undefined;
    let store = this.stores.get(id);
    if (!store) this.stores.set(id, (store = this.makeStore(id)));
    return store;
  }

  /** Every draft, the main one first, then by creation. */
  async list(): Promise<DraftSummary[]> {
    const entries = await this.exclusive(() => this.load());
    const out: DraftSummary[] = [];
    for (const e of [{ id: MAIN_DRAFT, name: 'Main draft' }, ...entries]) {
      const store = await this.get(e.id);
      if (!store) continue;
      try {
        const s = await store.get();
        out.push({
          id: e.id,
          name: e.name,
          ...('createdAt' in e ? { createdAt: e.createdAt } : {}),
          revision: s.revision,
          updatedAt: s.updatedAt,
          main: e.id === MAIN_DRAFT,
        });
      } catch (err) {
        (this.o.logger ?? console).warn(`meshdeck console: draft ${e.id}: ${(err as Error).message}`);
      }
    }
    return out;
  }

  /** Creates a named draft, fresh from the mesh directory or as a copy of another draft. */
  async create(body: unknown): Promise<RegistryOutcome<DraftSummary>> {
    const parsed = CreateDraftBody.safeParse(body);
    if (!parsed.success) return invalid(parsed.error);
    const { name, from } = parsed.data;
    let source: DraftWithBase | undefined;
    if (from !== undefined) {
      const store = await this.get(from);
      if (!store) return notFound(from, 'from');
      source = await store.withBase();
    }
    return this.exclusive(async (): Promise<RegistryOutcome<DraftSummary>> => {
      const entries = await this.load();
      const max = this.o.maxDrafts ?? 50;
      if (entries.length >= max)
        return {
          ok: false,
          status: 409,
          body: { error: `at most ${max} named drafts: delete one you no longer need first` },
        };
      if (entries.some((e) => e.name.toLowerCase() === name.toLowerCase()))
        return {
          ok: false,
          status: 409,
          body: {
            error: `a draft named "${name}" exists already`,
            fields: [{ path: 'name', message: 'already used by another draft' }],
          },
        };
      const id = uniqueId(name, new Set([MAIN_DRAFT, ...entries.map((e) => e.id)]));
      const entry: Entry = { id, name, createdAt: this.now().toISOString() };
      const store = this.makeStore(id);
      try {
        await mkdir(this.draftDir(id), { recursive: true });
        if (source) await store.initFrom(source.state, source.base);
        const state = await store.get();
        await this.saveIndex([...entries, entry]);
        this.stores.set(id, store);
        return {
          ok: true,
          body: { ...entry, revision: state.revision, updatedAt: state.updatedAt, main: false },
        };
      } catch (e) {
        await rm(this.draftDir(id), { recursive: true, force: true }).catch(() => undefined);
        return {
          ok: false,
          status: 500,
          body: { error: `cannot create the draft: ${(e as Error).message}` },
        };
      }
    });
  }

  /** Renames a named draft (the main draft keeps its name). */
  rename(id: string, body: unknown): Promise<RegistryOutcome<{ id: string; name: string }>> {
    const parsed = RenameDraftBody.safeParse(body);
    if (!parsed.success) return Promise.resolve(invalid(parsed.error));
    return this.exclusive(async (): Promise<RegistryOutcome<{ id: string; name: string }>> => {
      if (id === MAIN_DRAFT)
        return { ok: false, status: 400, body: { error: 'the main draft keeps its name' } };
      const entries = await this.load();
      const at = entries.findIndex((e) => e.id === id);
      if (at < 0) return notFound(id);
      const name = parsed.data.name;
      if (entries.some((e) => e.id !== id && e.name.toLowerCase() === name.toLowerCase()))
        return {
          ok: false,
          status: 409,
          body: {
            error: `a draft named "${name}" exists already`,
            fields: [{ path: 'name', message: 'already used by another draft' }],
          },
        };
      const next = entries.map((e, i) => (i === at ? { ...e, name } : e));
      await this.saveIndex(next);
      return { ok: true, body: { id, name } };
    });
  }

  /** Deletes a named draft: its directory moves to `console/deleted/` (the newest 10 are kept). */
  remove(id: string): Promise<RegistryOutcome<{ id: string; keptAt: string }>> {
    return this.exclusive(async (): Promise<RegistryOutcome<{ id: string; keptAt: string }>> => {
      if (id === MAIN_DRAFT)
        return { ok: false, status: 400, body: { error: 'the main draft cannot be deleted' } };
      const entries = await this.load();
      if (!entries.some((e) => e.id === id)) return notFound(id);
      const deletedDir = path.join(this.consoleDir, 'deleted');
      const keptAt = path.join(deletedDir, `${this.now().toISOString().replace(/[:.]/g, '-')}-${id}`);
      try {
        await mkdir(deletedDir, { recursive: true });
        await rename(this.draftDir(id), keptAt).catch((e: NodeJS.ErrnoException) => {
          if (e.code !== 'ENOENT') throw e;
        });
        await this.saveIndex(entries.filter((e) => e.id !== id));
      } catch (e) {
        return {
          ok: false,
          status: 500,
          body: { error: `cannot delete the draft: ${(e as Error).message}` },
        };
      }
      this.stores.delete(id);
      await pruneOldest(deletedDir, 10);
      return { ok: true, body: { id, keptAt } };
    });
  }

  private makeStore(id: string | undefined): DraftStore {
    return new DraftStore({
      meshDir: this.o.meshDir,
      stateDir: this.o.stateDir,
      applyLock: this.applyLock,
      ...(id === undefined ? {} : { dir: this.draftDir(id) }),
      ...(this.o.logger ? { logger: this.o.logger } : {}),
      ...(this.o.now ? { now: this.o.now } : {}),
    });
  }

  private draftDir(id: string): string {
    return path.join(this.consoleDir, 'drafts', id);
  }

  private async load(): Promise<Entry[]> {
    if (this.entries) return this.entries;
    let text: string;
    try {
      text = await readFile(this.indexFile, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      return (this.entries = []);
    }
    const parsed = IndexFile.safeParse(safeJson(text));
    if (parsed.success) return (this.entries = parsed.data.drafts);
    // A broken list loses no draft: their directories stay, and the list is rebuilt from them.
    const ids = await readdir(path.join(this.consoleDir, 'drafts')).catch(() => [] as string[]);
    const rebuilt = ids
      .filter((id) => DraftId.safeParse(id).success && id !== MAIN_DRAFT)
      .map((id) => ({ id, name: id, createdAt: this.now().toISOString() }));
    (this.o.logger ?? console).warn(
      `meshdeck console: ${this.indexFile} is not a valid draft list; rebuilt it from ${rebuilt.length} draft directories`,
    );
    await this.saveIndex(rebuilt);
    return rebuilt;
  }

  private async saveIndex(entries: Entry[]): Promise<void> {
    await writeFileAtomic(this.indexFile, `${JSON.stringify({ format: 1, drafts: entries })}\n`, 0o600);
    this.entries = entries;
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }
}

/** An id made from a name: lowercase words joined by dashes, then -2, -3, ... if taken. */
export function uniqueId(name: string, taken: ReadonlySet<string>): string {
  const slug =
    name
      .toLowerCase()
      .normalize('NFKD')
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 40)
      .replace(/-+$/, '') || `draft-${randomBytes(3).toString('hex')}`;
  if (!taken.has(slug)) return slug;
  for (let n = 2; n < 10_000; n++) if (!taken.has(`${slug}-${n}`)) return `${slug}-${n}`;
  return `${slug}-${randomBytes(4).toString('hex')}`;
}

function invalid(e: z.ZodError): { ok: false; status: 400; body: { error: string; fields: FieldError[] } } {
  return {
    ok: false,
    status: 400,
    body: {
      error: 'invalid request',
      fields: e.issues.map((i) => ({ path: i.path.join('.') || '(body)', message: i.message })),
    },
  };
}

function notFound(
  id: string,
  field?: string,
): { ok: false; status: 404; body: { error: string; fields?: FieldError[] } } {
  return {
    ok: false,
    status: 404,
    body: {
      error: `no draft with id ${JSON.stringify(id)}`,
      ...(field ? { fields: [{ path: field, message: 'no such draft' }] } : {}),
    },
  };
}

async function pruneOldest(dir: string, keep: number): Promise<void> {
  // Names start with an ISO time stamp: sorted by name is sorted by age.
  const names = (await readdir(dir).catch(() => [] as string[])).sort();
  for (const n of names.slice(0, Math.max(0, names.length - keep)))
    await rm(path.join(dir, n), { recursive: true, force: true });
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
