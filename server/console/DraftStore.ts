/**
 * The console's draft, kept on the server (issue 5 §1: it survives a page reload and a server
 * restart). It lives in `<stateDir>/console/draft.json`, written atomically on every accepted save;
 * it starts as a copy of the mesh directory's manifests and layout file. Saves name the revision
 * they were based on, so two tabs cannot overwrite each other silently. Beside it, `base.json` keeps
 * the files the draft started from (its base), so that a draft can be rebased when the directory
 * moves on under it (server/console/diskDrift.ts).
 *
 * Methods answer with outcomes instead of throwing classes: route handlers are bundled apart from
 * the server that creates the store, so `instanceof` would not recognise its errors there.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile, realpath, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { DraftDoc, DraftState } from '@/lib/console/draftDoc';
import { formatFieldPath } from '@/lib/model/fieldPath';
import {
  managedPathProblem,
  MAX_DRAFT_BYTES,
  MAX_DRAFT_FILES,
  meshDirHash,
  parseLayout,
  readMeshDirContent,
  writeFileAtomic,
} from './meshDirFiles';

/** The body of `PUT /api/draft`. */
export const PutDraftBody = z.strictObject({
  draft: DraftDoc,
  baseRevision: z.number().int().nonnegative(),
});
export type PutDraftBody = z.infer<typeof PutDraftBody>;

/** One field a request got wrong: where (a field path) and why. */
export interface FieldError {
  path: string;
  message: string;
}

/** What the draft file holds: the state and the mesh directory it belongs to. */
const DraftFile = z.strictObject({
  format: z.literal(1),
  /** The mesh directory (resolved), so that a draft is never applied to another directory. */
  meshDir: z.string(),
  state: DraftState,
});
type DraftFile = z.infer<typeof DraftFile>;

/** What the base file holds: the files a draft started from, and their hash (the state's baseHash). */
const BaseFile = z.strictObject({
  format: z.literal(1),
  baseHash: z.string(),
  base: DraftDoc,
});
type BaseFile = z.infer<typeof BaseFile>;

/** A draft with the files it started from, when they are kept. */
export interface DraftWithBase {
  state: DraftState;
  base?: DraftDoc;
}

/** The body of `DraftStore.rebaseOnto`: merged files and the directory content they were merged onto. */
export interface RebaseOntoInput {
  /** The revision the merge started from; another one is refused (409). */
  revision: number;
  draft: DraftDoc;
  /** The mesh directory's files the draft now starts from, and their hash. */
  base: DraftDoc;
  baseHash: string;
}

export type RebaseOntoOutcome = { ok: true; state: DraftState } | Exclude<SaveOutcome, { ok: true }>;

export type SaveOutcome =
  | { ok: true; revision: number; updatedAt: string }
  | { ok: false; status: 400; body: { error: string; fields: FieldError[] } }
  | { ok: false; status: 409; body: { error: string; current: DraftState } }
  | { ok: false; status: 500; body: { error: string } };

export interface DraftStoreOptions {
  meshDir: string;
  /** The control plane's state directory; the draft goes to `<stateDir>/console/draft.json`. */
  stateDir: string;
  /** Where this draft's `draft.json` lives instead (a named draft's own directory, see DraftRegistry). */
  dir?: string;
  /** Shared by every draft of a mesh directory: one apply at a time writes to it. */
  applyLock?: { busy: boolean };
  logger?: Pick<Console, 'warn'>;
  now?: () => Date;
}

/** Keeps one draft per mesh directory; see the file comment. */
export class DraftStore {
  readonly file: string;
  /** The files the draft started from (see the file comment). */
  readonly baseFile: string;
  private readonly consoleDir: string;
  private readonly logger: Pick<Console, 'warn'>;
  private readonly now: () => Date;
  private state: DraftState | undefined;
  private realMeshDir: string | undefined;
  /** Every read and write runs after the previous one: saves are ordered and never interleave. */
  private queue: Promise<unknown> = Promise.resolve();
  private readonly applyLock: { busy: boolean };

  constructor(private readonly options: DraftStoreOptions) {
    this.consoleDir = options.dir ?? path.join(options.stateDir, 'console');
    this.applyLock = options.applyLock ?? { busy: false };
    this.file = path.join(this.consoleDir, 'draft.json');
    this.baseFile = path.join(this.consoleDir, 'base.json');
    this.logger = options.logger ?? console;
    this.now = options.now ?? (() => new Date());
  }

  /** The mesh directory this draft belongs to. */
  get meshDir(): string {
    return this.options.meshDir;
  }

  /** The current draft, loading it from disk (or starting it from the mesh directory) on first use. */
  get(): Promise<DraftState> {
    return this.exclusive(() => this.current());
  }

  /**
   * The files the draft started from, or undefined when they are not kept for its baseHash (a draft
   * older than the base file, or a base file that is missing, unreadable or of another base).
   */
  base(): Promise<DraftDoc | undefined> {
    return this.exclusive(async () => this.readBase((await this.current()).baseHash));
  }

  /** The draft and its base, read together (no save can come between them). */
  withBase(): Promise<DraftWithBase> {
    return this.exclusive(async () => {
      const state = await this.current();
      const base = await this.readBase(state.baseHash);
      return base ? { state, base } : { state };
    });
  }

  /**
   * Keeps these files as the draft's base when their hash is its baseHash and no base is kept yet
   * (a draft started before base files were kept, seen while the directory is unchanged). Whether
   * they were kept.
   */
  adoptBase(base: DraftDoc, baseHash: string): Promise<boolean> {
    return this.exclusive(async () => {
      const state = await this.current();
      if (state.baseHash !== baseHash || (await this.readBase(baseHash))) return false;
      await this.writeBase(base, baseHash);
      return true;
    });
  }

  /**
   * Saves a draft (`PUT /api/draft`): 400 with the fields at fault when the body is not a valid
   * draft, 409 with the current state when `baseRevision` is not the current revision.
   */
  save(body: unknown): Promise<SaveOutcome> {
    const fields = draftBodyProblems(body);
    if (fields.length > 0)
      return Promise.resolve({ ok: false, status: 400, body: { error: 'invalid draft', fields } });
    const { draft, baseRevision } = body as PutDraftBody;
    return this.exclusive(async (): Promise<SaveOutcome> => {
      let current: DraftState;
      try {
        current = await this.current();
      } catch (e) {
        return { ok: false, status: 500, body: { error: (e as Error).message } };
      }
      if (baseRevision !== current.revision) return staleRevision(baseRevision, current);
      const next: DraftState = {
        draft,
        revision: current.revision + 1,
        baseHash: current.baseHash,
        updatedAt: this.now().toISOString(),
      };
      try {
        await this.persist(next);
      } catch (e) {
        // The previous revision stays, on disk and in memory: nothing the client sent is half-kept.
        return { ok: false, status: 500, body: { error: `cannot save the draft: ${(e as Error).message}` } };
      }
      return { ok: true, revision: next.revision, updatedAt: next.updatedAt };
    });
  }

  /**
   * Starts this draft from another draft's content (a named draft made as a copy); revision 0, the
   * source's base hash and, when given, its base files. Refused (false) if this draft already exists on disk.
   */
  initFrom(source: DraftState, base?: DraftDoc): Promise<boolean> {
    return this.exclusive(async () => {
      const meshDir = await this.resolvedMeshDir();
      if (this.state || (await this.load(meshDir))) return false;
      if (base) await this.writeBase(base, source.baseHash);
      await this.persist({ ...source, revision: 0, updatedAt: this.now().toISOString() });
      return true;
    });
  }

  /** Starts the draft again from the mesh directory (`POST /api/draft/reset`); the revision still increases. */
  reset(): Promise<DraftState> {
    return this.exclusive(async () => {
      const previous = await this.current().catch(() => undefined);
      return this.startFromMeshDir((previous?.revision ?? -1) + 1);
    });
  }

  /** Records that the mesh directory now holds `base`, of this content hash (after an apply wrote the draft). */
  markApplied(baseHash: string, base: DraftDoc): Promise<DraftState> {
    return this.exclusive(async () => {
      const next = { ...(await this.current()), baseHash };
      await this.writeBase(base, baseHash);
      await this.persist(next);
      return next;
    });
  }

  /**
   * Saves merged files as the next revision with a new base (a rebase onto the mesh directory): the
   * files, the base and its hash change together, or nothing does. 409 with the current state when
   * `revision` is not the current one; 400 when the merged files are not a valid draft.
   */
  rebaseOnto(input: RebaseOntoInput): Promise<RebaseOntoOutcome> {
    const fields = draftBodyProblems({ draft: input.draft, baseRevision: input.revision });
    if (fields.length > 0)
      return Promise.resolve({
        ok: false,
        status: 400,
        body: { error: 'the merged files are not a valid draft', fields },
      });
    return this.exclusive(async (): Promise<RebaseOntoOutcome> => {
      let current: DraftState;
      try {
        current = await this.current();
      } catch (e) {
        return { ok: false, status: 500, body: { error: (e as Error).message } };
      }
      if (input.revision !== current.revision) return staleRevision(input.revision, current);
      const next: DraftState = {
        draft: input.draft,
        revision: current.revision + 1,
        baseHash: input.baseHash,
        updatedAt: this.now().toISOString(),
      };
      try {
        // The base first: if the draft's write then fails, the old state's hash no longer matches the
        // new base file, so base() answers undefined instead of pairing the old draft with the new base.
        await this.writeBase(input.base, input.baseHash);
        await this.persist(next);
      } catch (e) {
        return { ok: false, status: 500, body: { error: `cannot save the draft: ${(e as Error).message}` } };
      }
      return { ok: true, state: next };
    });
  }

  /** Takes the apply lock: a release function, or undefined while another apply runs. */
  tryBeginApply(): (() => void) | undefined {
    const lock = this.applyLock;
    if (lock.busy) return undefined;
    lock.busy = true;
    return () => {
      lock.busy = false;
    };
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async current(): Promise<DraftState> {
    if (this.state) return this.state;
    const meshDir = await this.resolvedMeshDir();
    const loaded = await this.load(meshDir);
    if (loaded) return (this.state = loaded);
    return this.startFromMeshDir(0);
  }

  /** Starts the draft from the mesh directory's files, keeping them as its base. */
  private async startFromMeshDir(revision: number): Promise<DraftState> {
    const { state, base } = await this.fromMeshDir(revision);
    await this.writeBase(base, state.baseHash);
    await this.persist(state);
    return state;
  }

  /** The kept base if it is the one of this hash; never throws (no usable base is undefined). */
  private async readBase(baseHash: string): Promise<DraftDoc | undefined> {
    let text: string;
    try {
      text = await readFile(this.baseFile, 'utf8');
    } catch {
      return undefined;
    }
    const parsed = BaseFile.safeParse(safeJson(text));
    if (!parsed.success || parsed.data.baseHash !== baseHash) return undefined;
    return parsed.data.base;
  }

  private async writeBase(base: DraftDoc, baseHash: string): Promise<void> {
    const file: BaseFile = { format: 1, baseHash, base };
    await writeFileAtomic(this.baseFile, `${JSON.stringify(file)}\n`, 0o600);
  }

  /** The saved draft of this mesh directory, or undefined if there is none (or it cannot be used). */
  private async load(meshDir: string): Promise<DraftState | undefined> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT')
        throw new Error(`${this.file}: cannot read (${(e as Error).message})`);
      return this.unpark(meshDir);
    }
    let saved: DraftFile;
    try {
      saved = DraftFile.parse(JSON.parse(text));
    } catch (e) {
      const why = e instanceof z.ZodError ? describeZodError(e) : (e as Error).message;
      const kept = await this.keepAside('corrupt');
      this.logger.warn(
        `meshdeck console: ${this.file} is not a valid draft (${why}); kept it as ${kept} and started the draft again from ${meshDir}`,
      );
      return undefined;
    }
    if (saved.meshDir === meshDir) return saved.state;
    // Another mesh directory's draft: parked under its own name, restored when that directory is served again.
    const parked = this.parkedFile(saved.meshDir);
    await rename(this.file, parked);
    await renameIfThere(this.baseFile, this.parkedBaseFile(saved.meshDir));
    this.logger.warn(
      `meshdeck console: the draft of ${saved.meshDir} is kept in ${parked} while ${meshDir} is served`,
    );
    return this.unpark(meshDir);
  }

  private async unpark(meshDir: string): Promise<DraftState | undefined> {
    const parked = this.parkedFile(meshDir);
    let text: string;
    try {
      text = await readFile(parked, 'utf8');
    } catch {
      return undefined;
    }
    const saved = DraftFile.safeParse(safeJson(text));
    if (!saved.success || saved.data.meshDir !== meshDir) return undefined;
    await rename(parked, this.file);
    await renameIfThere(this.parkedBaseFile(meshDir), this.baseFile);
    return saved.data.state;
  }

  private parkedFile(meshDir: string): string {
    return path.join(this.consoleDir, `draft-${pathKey(meshDir)}.json`);
  }

  private parkedBaseFile(meshDir: string): string {
    return path.join(this.consoleDir, `base-${pathKey(meshDir)}.json`);
  }

  /** Renames the draft file out of the way (never deleted: it may hold work); returns the new name. */
  private async keepAside(why: string): Promise<string> {
    const stamp = this.now().toISOString().replace(/[:.]/g, '-');
    const kept = path.join(this.consoleDir, `draft.${why}-${stamp}.json`);
    await rename(this.file, kept);
    await this.pruneKeptAside(why);
    return kept;
  }

  /** Keeps the newest 10 set-aside drafts of a kind, so that a recurring fault cannot fill the disk. */
  private async pruneKeptAside(why: string): Promise<void> {
    const names = (await readdir(this.consoleDir)).filter((n) => n.startsWith(`draft.${why}-`)).sort();
    for (const n of names.slice(0, Math.max(0, names.length - 10)))
      await rm(path.join(this.consoleDir, n), { force: true });
  }

  private async fromMeshDir(revision: number): Promise<{ state: DraftState; base: DraftDoc }> {
    const content = await readMeshDirContent(this.options.meshDir);
    const { layout, problem } = parseLayout(content.layoutText);
    if (problem) this.logger.warn(`meshdeck console: ${problem}; the draft starts without positions`);
    const base = { files: content.files, layout };
    return {
      state: { draft: base, revision, baseHash: meshDirHash(content), updatedAt: this.now().toISOString() },
      base,
    };
  }

  private async persist(state: DraftState): Promise<void> {
    const file: DraftFile = { format: 1, meshDir: await this.resolvedMeshDir(), state };
    await writeFileAtomic(this.file, `${JSON.stringify(file)}\n`, 0o600);
    this.state = state;
  }

  private async resolvedMeshDir(): Promise<string> {
    if (this.realMeshDir) return this.realMeshDir;
    try {
      this.realMeshDir = await realpath(this.options.meshDir);
    } catch (e) {
      throw new Error(`the mesh directory ${this.options.meshDir} cannot be read (${(e as Error).message})`);
    }
    return this.realMeshDir;
  }
}

/** Everything wrong with a `PUT /api/draft` body, as field paths and messages (empty when it is fine). */
export function draftBodyProblems(body: unknown): FieldError[] {
  const parsed = PutDraftBody.safeParse(body);
  if (!parsed.success) return zodFieldErrors(parsed.error);
  const fields: FieldError[] = [];
  let bytes = 0;
  const paths = Object.keys(parsed.data.draft.files);
  if (paths.length > MAX_DRAFT_FILES)
    fields.push({ path: 'draft.files', message: `at most ${MAX_DRAFT_FILES} files (got ${paths.length})` });
  for (const p of paths) {
    const problem = managedPathProblem(p);
    if (problem) fields.push({ path: formatFieldPath(['draft', 'files', p]), message: problem });
    bytes += Buffer.byteLength(parsed.data.draft.files[p]!, 'utf8');
  }
  if (bytes > MAX_DRAFT_BYTES)
    fields.push({
      path: 'draft.files',
      message: `at most ${MAX_DRAFT_BYTES} bytes of text in all (got ${bytes})`,
    });
  return fields;
}

/** A zod error as field errors; a bad record key reports why the key is bad, not just "invalid key". */
export function zodFieldErrors(error: z.ZodError): FieldError[] {
  return error.issues.map((i) => {
    const inner = i.code === 'invalid_key' ? i.issues[0]?.message : undefined;
    return { path: formatFieldPath(i.path as PropertyKey[]) || '(body)', message: inner ?? i.message };
  });
}

function staleRevision(
  named: number,
  current: DraftState,
): { ok: false; status: 409; body: { error: string; current: DraftState } } {
  return {
    ok: false,
    status: 409,
    body: {
      error: `the draft was saved elsewhere since revision ${named} (it is at revision ${current.revision}): reload it and edit again`,
      current,
    },
  };
}

function pathKey(meshDir: string): string {
  return createHash('sha256').update(meshDir).digest('hex').slice(0, 16);
}

async function renameIfThere(from: string, to: string): Promise<void> {
  await rename(from, to).catch((e: NodeJS.ErrnoException) => {
    if (e.code !== 'ENOENT') throw e;
  });
}

function describeZodError(e: z.ZodError): string {
  const i = e.issues[0];
  return i ? `${formatFieldPath(i.path as PropertyKey[]) || '(root)'}: ${i.message}` : 'schema mismatch';
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
