'use client';

import { useCallback, useEffect, useRef, useState } from 'react';
import { flushSync } from 'react-dom';
import { decodeDelta } from '@/lib/console/compilationDelta';
import {
  type CompileOptions,
  compileDraft,
  consoleCompileOptions,
  type DraftCompilation,
} from '@/lib/console/compileDraft';
import type { DraftDoc } from '@/lib/console/draftDoc';
import { parseDraft, seedParsedFiles } from '@/lib/console/draftModel';
import { LatestWins } from '@/lib/console/latestWins';
import { JIT_WARMUP_BUDGET } from '@/lib/console/jitWarmup';
import type { CompileReply, CompileRequest } from './compile.worker';
import { keepLayout } from './layoutGraph';
import { storedLayoutHashes } from './layoutStore';
import { type EarlyCompile, takeEarlyCompile } from './earlyCompile';
import { takeOfferedParsePack } from './parsePackHandoff';

type Request = Omit<CompileRequest, 'id'> & {
  /** The server's compile of this draft, shown already: the worker's reply is encoded against it. */
  early?: EarlyCompile;
};
/** A result as the worker sends it (no model) or as the inline fallback makes it. */
type Wire = Omit<DraftCompilation, 'model'> & { model?: DraftCompilation['model'] };

/** When a compile was asked for and the worker's own time for it. */
interface Timing {
  start: number;
  workerMs?: number;
  /** The worker's receipt and reply, and the reply's arrival here (ms on this thread's clock). */
  received?: number;
  posted?: number;
  arrived?: number;
}

/**
 * Idle-time compiles the worker may run to warm V8 up after a slow compile (lib/console/jitWarmup.ts).
 * `localStorage['meshdeck:jit-warmup'] = 'off'` turns them off, for an A/B (bench/ui.ts --no-warmup).
 */
function warmupBudget(): number {
  try {
    return localStorage.getItem('meshdeck:jit-warmup') === 'off' ? 0 : JIT_WARMUP_BUDGET;
  } catch {
    return JIT_WARMUP_BUDGET;
  }
}

/** True while an effect submits a compile (see onResult). */
let inEffect = false;

/** A compile worker started before any hook asked for one (prestartCompileWorker). */
let prestarted: Worker | undefined;

function newCompileWorker(): Worker {
  return new Worker(new URL('./compile.worker.ts', import.meta.url), { type: 'module' });
}

/**
 * Starts the console's compile worker now, for its first eager hook to take: called when the console's
 * module is evaluated, so the worker's script (the engine, zod, yaml) loads and compiles while React
 * hydrates, not after. A first visit's browser has no code cache, and the first compile waited about
 * 0.3-0.5 s for that script after the draft had arrived (issue 5, P7). Never throws.
 */
export function prestartCompileWorker(): void {
  if (prestarted || typeof Worker === 'undefined') return;
  try {
    prestarted = newCompileWorker();
  } catch {
    // The hook starts one itself (or compiles inline).
  }
}

/** Starts the compile worker answering `s` (or takes the prestarted one); throws where there are no Web Workers (`s` then compiles inline). */
function startWorker(
  s: LatestWins<Request, Wire>,
  timing: Map<number, Timing>,
  holder: { held?: Wire },
  early?: Worker,
): Worker {
  const worker = early ?? newCompileWorker();
  // holder.held: the worker's last result (or the server's compile it was given): each reply is
  // encoded against it (lib/console/compilationDelta.ts), and every reply is decoded, even one a newer
  // edit makes the console drop.
  worker.onmessage = (e: MessageEvent<CompileReply>) => {
    const t = timing.get(e.data.id);
    if (t) {
      const arrived = performance.now();
      const here = (at: number) => Math.round((at - performance.timeOrigin) * 10) / 10;
      Object.assign(t, {
        workerMs: e.data.ms,
        arrived,
        ...(e.data.at ? { received: here(e.data.at.received), posted: here(e.data.at.posted) } : {}),
      });
    }
    // Before the result is delivered, so onResult's parseDraft reads no file the worker just read; kept
    // even when a newer result supersedes this one (an entry serves only its own text).
    if (e.data.parsed) seedParsedFiles(e.data.parsed);
    // Before the result renders, so the canvas finds the new view's places (firstViewLayout.ts).
    if (e.data.layout) keepLayout(e.data.layout.hash, e.data.layout.positions, e.data.layout.ms);
    if (e.data.result) {
      holder.held = decodeDelta(holder.held, e.data.result) as Wire;
      s.receive(e.data.id, holder.held);
    } else s.receiveError(e.data.id);
  };
  worker.onerror = (e) => {
    e.preventDefault();
    s.fail();
  };
  return worker;
}

/**
 * The draft compiled off the main thread, on every change of `draft` or `opts` (null: not needed, the
 * result is undefined). Latest wins: a change made while a compile runs supersedes every change before
 * it, and a result never replaces a newer one. Until the first result: the draft as first given,
 * compiled inline when `initialSync` (the console starts from an empty draft, which costs nothing),
 * else undefined.
 */
const compiledFrom = new WeakMap<DraftCompilation, DraftDoc>();

/** The draft a compilation of useCompiledDraft was made from. */
export function compiledDraftOf(c: DraftCompilation): DraftDoc | undefined {
  return compiledFrom.get(c);
}

export function useCompiledDraft(
  draft: DraftDoc,
  opts: CompileOptions | null,
  {
    initialSync = false,
    hold = false,
  }: {
    initialSync?: boolean;
    /** `opts` may still change (what they depend on is loading): a non-empty draft waits. */
    hold?: boolean;
  } = {},
): DraftCompilation | undefined {
  return useCompiledDraftAsking(draft, opts, { initialSync, hold })[0];
}

/**
 * useCompiledDraft, and a function that asks for a draft's compile at once, before it is rendered: a
 * command's handler calls it with the draft it made, so the worker compiles while the main thread
 * renders the edit (goal P8). The render's own ask for the same draft object then asks nothing.
 */
export function useCompiledDraftAsking(
  draft: DraftDoc,
  opts: CompileOptions | null,
  { initialSync = false, hold = false }: { initialSync?: boolean; hold?: boolean } = {},
): [DraftCompilation | undefined, (d: DraftDoc) => void] {
  const optsKey = opts === null ? null : JSON.stringify(opts);
  const [result, setResult] = useState<DraftCompilation | undefined>(() => {
    if (!initialSync || opts === null) return undefined;
    const first = compileDraft(draft, opts);
    compiledFrom.set(first, draft);
    return first;
  });
  // What was last asked for, so a re-render with the same draft asks nothing.
  const asked = useRef<{ draft: DraftDoc; key: string | null } | undefined>(
    result ? { draft, key: optsKey } : undefined,
  );
  const scheduler = useRef<LatestWins<Request, Wire> | undefined>(undefined);
  // Shows the server's compile of a draft as its result and has the worker compile it too (set with the scheduler).
  const showEarly = useRef<(draft: DraftDoc, key: string, early: EarlyCompile) => void>(() => {});
  // Fixed at mount, like the worker it decides about.
  const [eager] = useState(initialSync);

  useEffect(() => {
    // Started with the first compile asked for, so a hook that is never enabled costs no worker.
    let worker: Worker | undefined;
    const timing = new Map<number, Timing>();
    const holder: { held?: Wire } = {};
    const s: LatestWins<Request, Wire> = new LatestWins<Request, Wire>({
      send: (id, { early, ...req }) => {
        worker ??= startWorker(s, timing, holder);
        timing.set(id, { start: performance.now() });
        // Both sides hold the server's compile, read from the same text: the reply is a delta against it.
        if (early) holder.held = early.result;
        worker.postMessage({
          id,
          ...req,
          ...(early ? { base: early.text } : {}),
          pack: takeOfferedParsePack(),
          warmup: warmupBudget(),
          knownLayouts: storedLayoutHashes(),
        } satisfies CompileRequest);
      },
      run: (req) => compileDraft(req.draft, req.opts),
      // The console starts from an empty draft: a worker round trip for it could only delay the real
      // draft's compile behind it (one job in flight).
      cheap: (req) => Object.keys(req.draft.files).length === 0,
      // A result renders at once, effects included: React Flow takes new nodes in an effect, so at
      // the default priority the canvas painted twice per edit (the console, then the nodes' markers)
      // and the markers waited a frame; synchronously both are one render and one paint.
      onResult: (value, id, req) => {
        // From the worker, the files are in parseDraft's memo already (seeded in startWorker).
        const next = { ...value, model: value.model ?? parseDraft(req.draft) };
        compiledFrom.set(next, req.draft);
        // The inline fallback answers inside submit(), i.e. inside an effect, where flushSync must not run.
        if (inEffect) setResult(next);
        else flushSync(() => setResult(next));
        // User Timing for bench/ui.ts and DevTools: asked -> rendered, the engine's part inside the worker.
        const t = timing.get(id);
        for (const k of timing.keys()) if (k <= id) timing.delete(k);
        if (t)
          performance.measure('meshdeck:compile', {
            start: t.start,
            end: performance.now(),
            // Which compile this was: on opening, the first one is for the mesh's own mode (hold).
            detail: {
              workerMs: t.workerMs,
              // Asked -> the worker has it, the worker's reply -> here, here -> rendered.
              toWorkerMs: t.received === undefined ? undefined : t.received - t.start,
              fromWorkerMs:
                t.posted === undefined || t.arrived === undefined ? undefined : t.arrived - t.posted,
              renderMs: t.arrived === undefined ? undefined : performance.now() - t.arrived,
              localMesh: req.opts.localMesh !== undefined,
            },
          });
      },
    });
    scheduler.current = s;
    showEarly.current = (draft, key, early) => {
      if (early.layout) keepLayout(early.layout.hash, early.layout.positions, 0);
      const next: DraftCompilation = { ...early.result, model: parseDraft(draft) };
      compiledFrom.set(next, draft);
      setResult(next);
      performance.mark('meshdeck:early-compile', { detail: { nodes: early.result.graph.nodes.length } });
      // The worker still compiles it: its engine warms up for the first edit, and what the server's
      // compile got wrong, if anything, is put right by its reply.
      s.submit({ draft, opts: JSON.parse(key) as CompileOptions, early });
    };
    // The console's own compiler starts at once: loading the worker's script (the engine, zod, yaml)
    // took about 400 ms, which the first real compile waited for after the draft arrived.
    if (eager && typeof Worker !== 'undefined') {
      try {
        worker = startWorker(s, timing, holder, prestarted);
        prestarted = undefined;
      } catch {
        // The first send tries again, and compiles inline if it fails too.
      }
    }
    return () => {
      // A job in flight dies with the worker: a remount (React's dev double mount) asks again.
      scheduler.current = undefined;
      asked.current = undefined;
      worker?.terminate();
    };
  }, [eager]);

  useEffect(() => {
    if (optsKey === null || !scheduler.current) return;
    if (hold && Object.keys(draft.files).length > 0) return;
    const last = asked.current;
    if (last && last.draft === draft && last.key === optsKey) return;
    asked.current = { draft, key: optsKey };
    inEffect = true;
    try {
      const early = takeEarlyCompile(draft);
      if (early && optsKey === JSON.stringify(consoleCompileOptions(early.localMesh)))
        showEarly.current(draft, optsKey, early);
      else scheduler.current.submit({ draft, opts: JSON.parse(optsKey) as CompileOptions });
    } finally {
      inEffect = false;
    }
  }, [draft, optsKey, hold]);

  const askNow = useCallback(
    (d: DraftDoc) => {
      if (optsKey === null || !scheduler.current || hold) return;
      const last = asked.current;
      if (last && last.draft === d && last.key === optsKey) return;
      asked.current = { draft: d, key: optsKey };
      scheduler.current.submit({ draft: d, opts: JSON.parse(optsKey) as CompileOptions });
    },
    [optsKey, hold],
  );

  return [optsKey === null ? undefined : result, askNow];
}
