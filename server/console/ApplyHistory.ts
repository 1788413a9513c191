/**
 * The apply history of the local mesh (GET /api/applies): one record per apply that changed the mesh
 * directory, with its files before and after, so any past apply reads as a diff and loads back into a
 * draft. Stored under `dir` (0700, files 0600):
 *
 *   blobs/<sha256 hex>        a file's text; content-addressed, so a file unchanged across applies is kept once
 *   records/<00000042>.json   {format, summary, before, after}: before/after map path -> blob hash, plus the layout
 *   next-id                   the next id, so ids are never reused, also once every record was pruned
 *
 * The newest `keep` records are kept; pruning deletes older records and the blobs no kept record
 * references. Bad stored data never throws: such a record is left out, with one warning.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { type ApplyRecord, ApplySummary } from '@/lib/console/applyRecord';
import { DraftPath, type DraftDoc, NodePosition } from '@/lib/console/draftDoc';
import { writeFileAtomic } from './meshDirFiles';

const BlobHash = z.string().regex(/^[0-9a-f]{64}$/, 'must be a sha256 hex digest');

/** One side (before or after) of a stored record: the files as blob hashes, the layout inline. */
const StoredSide = z.strictObject({
  files: z.record(DraftPath, BlobHash),
  layout: z.record(z.string(), NodePosition),
});
type StoredSide = z.infer<typeof StoredSide>;

/** A record file's content. */
const StoredRecord = z.strictObject({
  format: z.literal(1),
  summary: ApplySummary,
  before: StoredSide,
  after: StoredSide,
});
type StoredRecord = z.infer<typeof StoredRecord>;

const RECORD_NAME = /^(\d+)\.json$/;

export interface ApplyHistoryOptions {
  dir: string;
  /** Records kept (default 50); older ones are pruned. */
  keep?: number;
  /**
   * The most bytes of file contents kept (default 256 MiB): older records go first once the newer
   * ones' blobs reach it, so a large mesh applied often cannot fill the disk. The newest stays always.
   */
  maxBytes?: number;
  logger?: Pick<Console, 'warn'>;
}

/** The apply history; see the file comment. */
export class ApplyHistory {
  readonly dir: string;
  /** How many records are kept (the newest). */
  readonly keep: number;
  readonly maxBytes: number;
  private readonly logger: Pick<Console, 'warn'>;
  private readonly blobsDir: string;
  private readonly recordsDir: string;
  private readonly nextIdFile: string;
  /** Every read and write runs after the previous one: ids are assigned once and pruning never races a read. */
  private queue: Promise<unknown> = Promise.resolve();
  /** Blobs no record references may exist (a crash or failed write before, or since the start). */
  private sweepBlobs = true;
  /** Problems already reported: a broken file is warned about once, not on every list. */
  private readonly warned = new Set<string>();

  constructor(options: ApplyHistoryOptions) {
    this.dir = options.dir;
    this.keep = Math.max(1, Math.floor(options.keep ?? 50));
    this.maxBytes = options.maxBytes ?? 256 * 1024 * 1024;
    this.logger = options.logger ?? console;
    this.blobsDir = path.join(this.dir, 'blobs');
    this.recordsDir = path.join(this.dir, 'records');
    this.nextIdFile = path.join(this.dir, 'next-id');
  }

  /**
   * Stores an apply under the next id and returns its summary; resolves once it is stored (the pruning
   * that follows runs before any later call of this history). Throws only when it cannot be stored.
   */
  record(input: Omit<ApplyRecord, 'id'>): Promise<ApplySummary> {
    const stored = this.exclusive(() => this.store(input));
    this.exclusive(() => this.prune()).catch((e: unknown) =>
      this.logger.warn(`meshdeck console: pruning the apply history failed: ${(e as Error).message}`),
    );
    return stored;
  }

  /** The kept applies' summaries, newest first; records that cannot be read are left out. */
  list(): Promise<ApplySummary[]> {
    return this.exclusive(async () => {
      const ids = (await this.recordIds()).slice(0, this.keep);
      const blobs = new Set(await this.names(this.blobsDir));
      const out: ApplySummary[] = [];
      for (const id of ids) {
        const rec = await this.readRecord(id);
        if (!rec) continue;
        const missing = [...blobHashes(rec)].find((h) => !blobs.has(h));
        if (missing)
          this.warnOnce(this.recordFile(id), `a file's content (blob ${missing}) is missing; left out`);
        else out.push(rec.summary);
      }
      return out;
    });
  }

  /** One apply with its files before and after, or undefined when there is none (or it cannot be read). */
  get(id: number): Promise<ApplyRecord | undefined> {
    if (!Number.isSafeInteger(id) || id < 1) return Promise.resolve(undefined);
    return this.exclusive(async () => {
      const rec = await this.readRecord(id);
      if (!rec) return undefined;
      const before = await this.readSide(id, rec.before);
      const after = before && (await this.readSide(id, rec.after));
      if (!before || !after) return undefined;
      return { ...rec.summary, before, after };
    });
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async store(input: Omit<ApplyRecord, 'id'>): Promise<ApplySummary> {
    const { before, after, ...rest } = input;
    await mkdir(this.blobsDir, { recursive: true, mode: 0o700 });
    await mkdir(this.recordsDir, { recursive: true, mode: 0o700 });
    const id = await this.nextId();
    const summary = ApplySummary.parse({ ...rest, id });
    try {
      const rec: StoredRecord = StoredRecord.parse({
        format: 1,
        summary,
        before: await this.storeSide(before),
        after: await this.storeSide(after),
      });
      await writeFileAtomic(this.recordFile(id), `${JSON.stringify(rec)}\n`, 0o600);
    } catch (e) {
      this.sweepBlobs = true;
      throw e;
    }
    // After the record: a crash in between is caught up by nextId(), which also looks at the records.
    await writeFileAtomic(this.nextIdFile, `${id + 1}\n`, 0o600);
    return summary;
  }

  private async storeSide(doc: DraftDoc): Promise<StoredSide> {
    const files: Record<string, string> = {};
    for (const [p, text] of Object.entries(doc.files)) {
      const bytes = Buffer.from(text, 'utf8');
      const hash = createHash('sha256').update(bytes).digest('hex');
      const file = path.join(this.blobsDir, hash);
      // A blob is written whole (temp file, rename), so one of the right size is the right one.
      const size = await stat(file).then(
        (s) => s.size,
        () => -1,
      );
      if (size !== bytes.length) await writeFileAtomic(file, text, 0o600);
      files[p] = hash;
    }
    return { files, layout: doc.layout };
  }

  /** One more than the highest id ever given: the persisted counter, or the newest record if it is ahead. */
  private async nextId(): Promise<number> {
    const newest = (await this.recordIds())[0] ?? 0;
    let counter = 1;
    const text = await readFile(this.nextIdFile, 'utf8').catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'ENOENT')
        this.warnOnce(this.nextIdFile, `cannot be read (${e.message}); ids continue after the newest record`);
      return undefined;
    });
    if (text !== undefined) {
      const n = Number(text.trim());
      if (Number.isSafeInteger(n) && n >= 1) counter = n;
      else this.warnOnce(this.nextIdFile, 'is not a positive integer; ids continue after the newest record');
    }
    return Math.max(counter, newest + 1);
  }

  private async prune(): Promise<void> {
    const ids = await this.recordIds();
    // Mark, newest first, until `keep` records or `maxBytes` of their blobs; then sweep the rest. A
    // record that cannot be read keeps nothing (it cannot be shown anyway) but takes its place.
    const referenced = new Set<string>();
    let bytes = 0;
    let kept = 0;
    const old: number[] = [];
    for (const id of ids) {
      if (kept >= this.keep) {
        old.push(id);
        continue;
      }
      // Quiet: a broken record is said once when it is listed, not on every apply.
      const rec = await this.readRecord(id, true);
      const fresh = rec ? [...blobHashes(rec)].filter((h) => !referenced.has(h)) : [];
      let more = 0;
      for (const h of fresh) more += await this.blobSize(h);
      if (kept > 0 && bytes + more > this.maxBytes) {
        old.push(id);
        kept = this.keep;
        continue;
      }
      for (const h of fresh) referenced.add(h);
      bytes += more;
      kept++;
    }
    for (const id of old) await rm(this.recordFile(id), { force: true });
    if (old.length === 0 && !this.sweepBlobs) return;
    for (const name of await this.names(this.blobsDir))
      if (!referenced.has(name)) await rm(path.join(this.blobsDir, name), { force: true });
    this.sweepBlobs = false;
  }

  /** A blob's size in bytes (0 when it is missing: the record is shown as broken anyway). */
  private async blobSize(hash: string): Promise<number> {
    return stat(path.join(this.blobsDir, hash)).then(
      (s) => s.size,
      () => 0,
    );
  }

  /** The ids of the record files, newest first. */
  private async recordIds(): Promise<number[]> {
    const ids: number[] = [];
    for (const name of await this.names(this.recordsDir)) {
      const m = RECORD_NAME.exec(name);
      const id = m ? Number(m[1]) : NaN;
      if (Number.isSafeInteger(id) && id >= 1) ids.push(id);
    }
    return ids.sort((a, b) => b - a);
  }

  private async names(dir: string): Promise<string[]> {
    return readdir(dir).catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return [];
      throw e;
    });
  }

  private recordFile(id: number): string {
    return path.join(this.recordsDir, `${String(id).padStart(8, '0')}.json`);
  }

  /** A record file's content, or undefined (warned about) when it is missing, unreadable or invalid. */
  private async readRecord(id: number, quiet = false): Promise<StoredRecord | undefined> {
    const file = this.recordFile(id);
    const warnOnce = (f: string, why: string) => (quiet ? undefined : this.warnOnce(f, why));
    let raw: unknown;
    try {
      raw = JSON.parse(await readFile(file, 'utf8'));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT')
        warnOnce(file, `cannot be read (${(e as Error).message}); left out`);
      return undefined;
    }
    const parsed = StoredRecord.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const where = issue.path.join('.') || '(root)';
      warnOnce(file, `is not a valid apply record (${where}: ${issue.message}); left out`);
      return undefined;
    }
    if (parsed.data.summary.id !== id) {
      warnOnce(file, `holds apply ${parsed.data.summary.id}, not ${id}; left out`);
      return undefined;
    }
    return parsed.data;
  }

  /** A side's files read back from their blobs, or undefined (warned about) when one is missing or altered. */
  private async readSide(id: number, side: StoredSide): Promise<DraftDoc | undefined> {
    const files: Record<string, string> = {};
    for (const [p, hash] of Object.entries(side.files)) {
      let bytes: Buffer;
      try {
        bytes = await readFile(path.join(this.blobsDir, hash));
      } catch (e) {
        const why =
          (e as NodeJS.ErrnoException).code === 'ENOENT'
            ? 'is missing'
            : `cannot be read (${(e as Error).message})`;
        this.warnOnce(this.recordFile(id), `the content of ${p} (blob ${hash}) ${why}; left out`);
        return undefined;
      }
      if (createHash('sha256').update(bytes).digest('hex') !== hash) {
        this.warnOnce(
          this.recordFile(id),
          `the content of ${p} (blob ${hash}) does not match its hash; left out`,
        );
        return undefined;
      }
      files[p] = bytes.toString('utf8');
    }
    return { files, layout: side.layout };
  }

  private warnOnce(file: string, why: string): void {
    const key = `${file}\0${why}`;
    if (this.warned.has(key)) return;
    this.warned.add(key);
    this.logger.warn(`meshdeck console: apply history: ${file} ${why}`);
  }
}

function blobHashes(rec: StoredRecord): Set<string> {
  return new Set([...Object.values(rec.before.files), ...Object.values(rec.after.files)]);
}
