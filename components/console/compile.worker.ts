// The one long-lived draft compiler worker: the engine runs here so typing never waits for it, and the
// parse memo of lib/console/draftModel.ts stays warm between edits (one file of hundreds changes).
import { encodeDelta, type Encoded } from '../../lib/console/compilationDelta';
import { compilationForTransfer, compileDraft, type CompileOptions } from '../../lib/console/compileDraft';
import type { DraftDoc } from '../../lib/console/draftDoc';
import type { MeshGraph } from '../../lib/console/meshGraph';
import { type ParsedFile, readDocumentsAhead, takeParsedFiles } from '../../lib/console/draftModel';
import { snapshotDocumentsAhead } from '../../lib/console/draftSnapshot';
import { seedDraftParsePack } from '../../lib/console/draftParsePack';
import { type PackedPositions, packPositions } from '../../lib/console/elkLayout';
import { firstViewLayout, NEW_VIEW_MIN_NODE_CHANGE } from '../../lib/console/firstViewLayout';
import { JitWarmup } from '../../lib/console/jitWarmup';
import type { OfferedParsePack } from './parsePackHandoff';

export interface CompileRequest {
  id: number;
  draft: DraftDoc;
  opts: CompileOptions;
  /** The server's read of a draft's files, the first time the worker hears of it (parsePackHandoff). */
  pack?: OfferedParsePack;
  /** Compiles of the same draft allowed in idle time after a slow one (lib/console/jitWarmup.ts). */
  warmup?: number;
  /** Graph hashes whose layouts the page keeps (layoutStore.ts): a new view with one is not laid out. */
  knownLayouts?: string[];
  /**
   * The server's compile of this draft as JSON (GET /api/draft/compiled, `result` in it), which the
   * main thread shows and holds: this reply is encoded against it instead of the last one sent.
   */
  base?: string;
}

/** The worker's answer to a CompileRequest. */
export interface CompileReply {
  id: number;
  /** The result (`compilationForTransfer`) encoded against the result this worker sent before (compilationDelta.ts). */
  result?: Encoded;
  /** The files this compile read, for the main thread's parseDraft (seedParsedFiles) to not read again. */
  parsed?: Record<string, ParsedFile>;
  /** The engine's own time, for the main thread's `meshdeck:compile` entry (bench/ui.ts). */
  ms?: number;
  /** When the worker got the request and posted this reply (`timeOrigin + now()`, comparable across threads). */
  at?: { received: number; posted: number };
  /**
   * The first view's layered layout, made with a compile whose graph is a new view (firstViewLayout.ts):
   * its hash, places and the layout's own time.
   */
  layout?: { hash: string; positions: PackedPositions; ms: number };
  error?: string;
}

const scope = self as unknown as {
  onmessage: ((e: MessageEvent<CompileRequest>) => void) | null;
  postMessage(message: unknown): void;
};

/** The last request's draft and options, which the warm-up compiles again (not its parse pack:
 * that is needed once, and holding it would keep it from being collected). */
let last: Pick<CompileRequest, 'draft' | 'opts'> | undefined;
/** The last result posted: the main thread holds it and decodes the next one against it. */
let sent: ReturnType<typeof compilationForTransfer> | undefined;
let warmup: JitWarmup | undefined;
/** The node count of the last graph compiled, to tell a new view from an edit. */
let lastNodes: number | undefined;

/** The first view's layout when `graph` is a new view that the layered layout lays out; never throws. */
function newViewLayout(
  graph: MeshGraph,
  manual: DraftDoc['layout'],
  known: readonly string[] = [],
): CompileReply['layout'] {
  const nodes = graph.nodes.length;
  const fresh = lastNodes === undefined || Math.abs(nodes - lastNodes) > NEW_VIEW_MIN_NODE_CHANGE;
  lastNodes = nodes;
  if (!fresh) return undefined;
  try {
    const start = performance.now();
    const laid = firstViewLayout(graph, manual, new Set(known));
    return (
      laid && { hash: laid.hash, positions: packPositions(laid.positions), ms: performance.now() - start }
    );
  } catch {
    // The canvas lays it out in its layout worker as it would have.
    return undefined;
  }
}

/** The pending step of readAhead. */
let ahead: ReturnType<typeof setTimeout> | undefined;

/**
 * In idle time after a compile, reads the documents of the draft's files of several into the
 * per-document memos (lib/parse/yamlDocuments.ts), 20 ms per task, so that the first edit of a large
 * one-file mesh reads its one document, not all of them. Waits as the JIT warm-up does, so as not to
 * slow down a large draft's first view; a request cancels it.
 */
function readAhead(draft: DraftDoc, delayMs = 5000): void {
  if (ahead !== undefined) clearTimeout(ahead);
  ahead = setTimeout(() => {
    ahead = undefined;
    const until = performance.now() + 20;
    const stop = () => performance.now() > until;
    for (const [path, text] of Object.entries(draft.files)) {
      try {
        if (readDocumentsAhead(path, text, stop) && snapshotDocumentsAhead(path, text, stop)) continue;
      } catch {
        // Only a head start: the compile reads what it needs itself.
        return;
      }
      readAhead(draft, 30);
      return;
    }
  }, delayMs);
}

scope.onmessage = (e) => {
  const received = performance.timeOrigin + performance.now();
  const { id, draft, opts, pack } = e.data;
  warmup?.interrupt();
  if (ahead !== undefined) clearTimeout(ahead);
  ahead = undefined;
  try {
    const start = performance.now();
    if (pack) seedDraftParsePack(pack.files, pack.pack);
    const compiled = compileDraft(draft, opts);
    let full = compilationForTransfer(compiled);
    if (e.data.base !== undefined) {
      sent = (JSON.parse(e.data.base) as { result: typeof full }).result;
      // As JSON has it (no undefined members), so that what did not change compares equal.
      full = JSON.parse(JSON.stringify(full)) as typeof full;
    }
    const ms = Math.round(performance.now() - start);
    const layout = newViewLayout(compiled.graph, draft.layout, e.data.knownLayouts);
    const result = encodeDelta(sent, full);
    const parsed = takeParsedFiles();
    const at = { received, posted: performance.timeOrigin + performance.now() };
    scope.postMessage({ id, result, parsed, ms, at, ...(layout ? { layout } : {}) } satisfies CompileReply);
    sent = full;
    last = { draft, opts };
    readAhead(draft);
    warmup ??= new JitWarmup({
      budget: e.data.warmup ?? 0,
      step: () => {
        if (last) compilationForTransfer(compileDraft(last.draft, last.opts));
      },
    });
    warmup.compiled(ms);
  } catch (err) {
    // compileDraft never throws; a result that cannot be cloned would, and the caller compiles it itself.
    scope.postMessage({ id, error: err instanceof Error ? err.message : String(err) } satisfies CompileReply);
  }
};
