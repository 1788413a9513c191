/**
 * A large draft's first view laid out on the server (issue 5, P7), so a page opening it can draw its
 * picture (GET /api/draft/picture, firstViewPicture.ts) before the app has loaded, and anyone can read
 * its places (GET /api/layouts/<hash>). The server compiles the draft as the console will, takes the
 * graph the canvas lays out first (lib/console/elkLayout.ts: the same nodes, order and algorithm, so the
 * same positions under the same graph hash) and lays it out, all in a worker thread
 * (draftLayoutJob.ts), off the control plane's event loop. Layouts are kept in memory by graph hash, a
 * few at a time.
 */
import { createHash } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import type { DraftDoc } from '../../lib/console/draftDoc';
import { buildDraftParsePack } from '../../lib/console/draftParsePack';
import { type Positions, SERVER_LAYOUT_MIN_NODES } from '../../lib/console/elkLayout';
import type { FirstViewPicture } from '../../lib/console/firstViewPicture';
import type { DraftLayoutReply, DraftLayoutRequest } from './draftLayoutJob';

export interface DraftLayoutsOptions {
  /** Compile as the console does: on the local mesh with its adaptations (the graph can differ). */
  localMesh: boolean;
  /** Smallest graph laid out here (default SERVER_LAYOUT_MIN_NODES). */
  minNodes?: number;
  /** Layouts kept, least recently used dropped first (default 8). */
  maxKept?: number;
  /** prepareLater's wait (default LAYOUT_LATER_MS). */
  laterMs?: number;
  logger?: Pick<Console, 'warn'>;
}

/**
 * How long a draft must stay the same before prepareLater lays it out: a person editing a large draft
 * saves on every edit, and each job compiles the whole draft (50-800 ms in the worker at 1,000 nodes).
 * It was 10 s while the layout was ELK's (a second or more, which competed with a browser running its
 * own); since large graphs get layeredLayout.ts (tens of milliseconds), the browser no longer waits for
 * the server's layout, and the server's picture is ready a second after a save.
 */
export const LAYOUT_LATER_MS = 1_000;

/** Draft compiles kept (firstCompile): the drafts opened last. */
const COMPILES_KEPT = 2;

const keys = new WeakMap<DraftDoc, string>();

/** What identifies a draft's content (by object: a draft store hands out the same object until a save). */
function draftKey(draft: DraftDoc): string {
  let key = keys.get(draft);
  if (key === undefined) {
    key = createHash('sha256').update(JSON.stringify(draft)).digest('hex');
    keys.set(draft, key);
  }
  return key;
}

/** A job sent to the worker whose graph hash is not known yet. */
interface Compiling {
  /** Settles once the hash is known (or there is none). */
  known: Promise<void>;
  settle(): void;
}

interface Layout {
  positions: Promise<Positions | undefined>;
  resolve(p: Positions | undefined): void;
  /** The positions once they are in. */
  done?: Positions;
  timing: LayoutTiming;
  /** The laid out first view as the page's inline script draws it, once the positions are in. */
  picture?: FirstViewPicture;
}

/** Where a layout's time went, for the Server-Timing header of GET /api/layouts/<hash>. */
export interface LayoutTiming {
  /** Sent to the worker -> graph hash known (the draft compiled). */
  compileMs?: number;
  /** The layout's own time in the worker. */
  layoutMs?: number;
  /** Sent to the worker -> positions back. */
  totalMs?: number;
}

/**
 * A draft's compile as the console opening it compiles it (draftLayoutJob.ts), for the page to show at
 * once (GET /api/draft/compiled).
 */
export interface FirstCompile {
  /** `compilationForTransfer` of the compile, as JSON. */
  json: string;
  /** Compiled for the local mesh (consoleCompileOptions). */
  localMesh: boolean;
  /** The first view's layout, when this server made it and it is done. */
  layout?: { hash: string; positions: Positions };
}

/** First-view layouts of the drafts this server serves, by graph hash. */
export class DraftLayouts {
  private readonly kept = new Map<string, Layout>();
  private readonly compiling = new Map<number, Compiling>();
  private readonly hashOf = new Map<number, string>();
  /** Draft content key of each job sent, and the graph hash of each draft content seen (the last few). */
  private readonly keyOf = new Map<number, string>();
  private readonly hashByKey = new Map<string, string>();
  /** The compile of the last few draft contents (FirstCompile.json), by draft content key. */
  private readonly compiledByKey = new Map<string, string>();
  private readonly sentAt = new Map<number, number>();
  private lastKey: string | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The job prepare() reserved for the timer to send. */
  private scheduled: number | undefined;
  private worker: Worker | undefined;
  private nextId = 1;
  private closed = false;
  private readonly minNodes: number;
  private readonly maxKept: number;
  private readonly laterMs: number;

  constructor(private readonly opts: DraftLayoutsOptions) {
    this.minNodes = opts.minNodes ?? SERVER_LAYOUT_MIN_NODES;
    this.maxKept = opts.maxKept ?? 8;
    this.laterMs = opts.laterMs ?? LAYOUT_LATER_MS;
  }

  /**
   * Lays out the first view of `draft` once it has stayed the same for `laterMs` (a person editing a
   * large draft saves on every edit, and the browser that edits places new nodes itself); a layout
   * request meanwhile is answered at once (404), not kept waiting. Never throws.
   */
  prepareLater(draft: DraftDoc): void {
    this.prepare(draft, this.laterMs);
  }

  /**
   * Lays out the first view of `draft` in the background, once per draft content, after `delayMs`; a
   * layout request while a job asked for now waits for it. Never throws.
   */
  prepare(draft: DraftDoc, delayMs = 0): void {
    if (this.closed) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    // A superseded job that was never sent has nothing to wait for.
    if (this.scheduled !== undefined) this.settle(this.scheduled);
    this.scheduled = undefined;
    // Asked for now (a console opening): a layout request that comes before it is sent waits for it.
    let id: number | undefined;
    if (delayMs === 0) this.reserve((id = this.scheduled = this.nextId++));
    // Never inside the request that asks: its answer goes out first.
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.scheduled = undefined;
      this.send(draft, id);
    }, delayMs);
  }

  /**
   * The layout with this graph hash: kept, or awaited while it is being made (at most `waitMs`);
   * undefined when this server has none.
   */
  async get(hash: string, waitMs = 10_000): Promise<Positions | undefined> {
    return (await this.getTimed(hash, waitMs))?.positions;
  }

  /** As get(), with where the layout's time went. */
  async getTimed(
    hash: string,
    waitMs = 10_000,
  ): Promise<{ positions: Positions; timing: LayoutTiming } | undefined> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), waitMs);
    });
    const found = async () => {
      // A draft being compiled may turn out to have this hash.
      if (!this.kept.has(hash)) await Promise.all([...this.compiling.values()].map((c) => c.known));
      const layout = this.kept.get(hash);
      if (!layout) return undefined;
      // Most recently used last.
      this.kept.delete(hash);
      this.kept.set(hash, layout);
      const positions = await layout.positions;
      return positions ? { positions, timing: layout.timing } : undefined;
    };
    try {
      return await Promise.race([found(), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * The picture of `draft`'s first view as this server laid it out, if it has (for the draft exactly as
   * it is: the page draws it before its app has compiled anything); undefined otherwise, at once.
   */
  picture(draft: DraftDoc): FirstViewPicture | undefined {
    const hash = this.hashByKey.get(draftKey(draft));
    return hash === undefined ? undefined : this.kept.get(hash)?.picture;
  }

  /**
   * The compile of `draft` as a console opening it compiles it, made with its first-view layout, if this
   * server has one for the draft exactly as it is; undefined otherwise, at once.
   */
  firstCompile(draft: DraftDoc): FirstCompile | undefined {
    const key = draftKey(draft);
    const json = this.compiledByKey.get(key);
    if (json === undefined) return undefined;
    const hash = this.hashByKey.get(key);
    const done = hash === undefined ? undefined : this.kept.get(hash)?.done;
    return {
      json,
      localMesh: this.opts.localMesh,
      ...(done ? { layout: { hash: hash!, positions: done } } : {}),
    };
  }

  /** True while the worker thread runs (it starts with the first draft that may be large). */
  get workerRunning(): boolean {
    return this.worker !== undefined;
  }

  /** Stops the worker; nothing is laid out after this, and whoever waits gets undefined. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.scheduled = undefined;
    const worker = this.worker;
    this.worker = undefined;
    this.failAll();
    await worker?.terminate();
  }

  /** Sends a job to the worker; `id` names a job reserved by prepare() (settled if nothing is sent). */
  private send(draft: DraftDoc, reserved?: number): void {
    const id = reserved ?? this.nextId++;
    let sent = false;
    try {
      if (this.closed) return;
      const key = draftKey(draft);
      if (key === this.lastKey) return;
      this.lastKey = key;
      // The files as the server read them for GET ?parsed=1 (memoised): the worker reads no YAML.
      const pack = buildDraftParsePack(draft.files);
      // The worker (tsx, the engine and ELK: about 120 MB) only for a draft that may be large: a graph
      // node comes from one object, or a few (generated and inline ones), never more than three.
      let objects = 0;
      for (const path of Object.keys(draft.files)) {
        const part = pack.files[path];
        objects += part ? part.objects.length : Infinity;
      }
      if (objects * 3 < this.minNodes) return;
      if (!this.compiling.has(id)) this.reserve(id);
      this.sentAt.set(id, performance.now());
      this.keyOf.set(id, key);
      const request: DraftLayoutRequest = {
        id,
        draft,
        pack,
        localMesh: this.opts.localMesh,
        minNodes: this.minNodes,
        known: [...this.kept.keys()],
      };
      this.startWorker().postMessage(request);
      sent = true;
    } catch (e) {
      // Whatever failed, the browser lays the graph out itself.
      this.opts.logger?.warn(`meshdeck console: server layout skipped: ${(e as Error).message}`);
    } finally {
      if (!sent) this.settle(id);
    }
  }

  /** Job `id` is coming: a layout request waits until its graph hash is known. */
  private reserve(id: number): void {
    let settle = () => {};
    const known = new Promise<void>((r) => (settle = r));
    this.compiling.set(id, { known, settle });
  }

  /** Whoever waits for job `id`'s graph hash stops waiting. */
  private settle(id: number): void {
    this.compiling.get(id)?.settle();
    this.compiling.delete(id);
    this.sentAt.delete(id);
  }

  private onReply(r: DraftLayoutReply): void {
    const compiling = this.compiling.get(r.id);
    const key = this.keyOf.get(r.id);
    if (key !== undefined && (r.kind === 'hash' || (r.kind === 'none' && r.hash))) {
      this.hashByKey.delete(key);
      this.hashByKey.set(key, r.hash!);
      while (this.hashByKey.size > this.maxKept) this.hashByKey.delete(this.hashByKey.keys().next().value!);
    }
    if (key !== undefined && (r.kind === 'hash' || r.kind === 'none') && r.compiled !== undefined) {
      this.compiledByKey.delete(key);
      this.compiledByKey.set(key, r.compiled);
      // A compile of 1,000 objects is about 1.2 MB of JSON.
      while (this.compiledByKey.size > COMPILES_KEPT)
        this.compiledByKey.delete(this.compiledByKey.keys().next().value!);
    }
    if (r.kind === 'hash') {
      this.hashOf.set(r.id, r.hash);
      if (!this.kept.has(r.hash)) {
        let resolve: Layout['resolve'] = () => {};
        const positions = new Promise<Positions | undefined>((res) => (resolve = res));
        const sent = this.sentAt.get(r.id);
        const compileMs = sent === undefined ? undefined : Math.round(performance.now() - sent);
        this.kept.set(r.hash, { positions, resolve, timing: { compileMs } });
        while (this.kept.size > this.maxKept) this.drop(this.kept.keys().next().value!);
      }
    } else if (r.kind === 'positions') {
      const layout = this.kept.get(r.hash);
      const sent = this.sentAt.get(r.id);
      if (layout) {
        layout.timing.layoutMs = Math.round(r.ms);
        layout.picture = r.picture;
        layout.done = r.positions;
        if (sent !== undefined) layout.timing.totalMs = Math.round(performance.now() - sent);
        layout.resolve(r.positions);
      }
    } else if (r.kind === 'error') {
      if (!this.closed) this.opts.logger?.warn(`meshdeck console: server layout failed: ${r.message}`);
      const hash = r.hash ?? this.hashOf.get(r.id);
      if (hash) this.drop(hash);
      // The same draft again may be tried again.
      this.lastKey = undefined;
    }
    if (r.kind !== 'hash') {
      this.hashOf.delete(r.id);
      this.sentAt.delete(r.id);
      this.keyOf.delete(r.id);
    }
    if (compiling) {
      this.compiling.delete(r.id);
      compiling.settle();
    }
  }

  private drop(hash: string): void {
    this.kept.get(hash)?.resolve(undefined);
    this.kept.delete(hash);
  }

  private failAll(): void {
    for (const c of this.compiling.values()) c.settle();
    this.compiling.clear();
    this.hashOf.clear();
    this.sentAt.clear();
    this.keyOf.clear();
    this.hashByKey.clear();
    this.compiledByKey.clear();
    for (const hash of [...this.kept.keys()]) this.drop(hash);
    this.lastKey = undefined;
  }

  private startWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(new URL('./draftLayoutWorker.mjs', import.meta.url));
    // An idle worker does not keep the server (or a test) running.
    worker.unref();
    worker.on('message', (r: DraftLayoutReply) => this.onReply(r));
    const gone = (why: string) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      if (!this.closed) this.opts.logger?.warn(`meshdeck console: the layout worker stopped: ${why}`);
      this.failAll();
    };
    worker.on('error', (e) => gone(e.message));
    worker.on('exit', (code) => gone(`exit code ${code}`));
    this.worker = worker;
    return worker;
  }
}
