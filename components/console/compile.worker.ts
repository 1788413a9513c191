// The one long-lived draft compiler worker: the engine runs here so typing never waits for it, and the
// parse memo of lib/console/draftModel.ts stays warm between edits (one file of hundreds changes).
import { compilationForTransfer, compileDraft, type CompileOptions } from '../../lib/console/compileDraft';
import type { DraftDoc } from '../../lib/console/draftDoc';

export interface CompileRequest {
  id: number;
  draft: DraftDoc;
  opts: CompileOptions;
}

const scope = self as unknown as {
  onmessage: ((e: MessageEvent<CompileRequest>) => void) | null;
  postMessage(message: unknown): void;
};

scope.onmessage = (e) => {
  const { id, draft, opts } = e.data;
  try {
    const start = performance.now();
    const result = compilationForTransfer(compileDraft(draft, opts));
    // The engine's own time, for the main thread's `meshdeck:compile` entry (bench/ui.ts).
    scope.postMessage({ id, result, ms: Math.round(performance.now() - start) });
  } catch (err) {
    // compileDraft never throws; a result that cannot be cloned would, and the caller compiles it itself.
    scope.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
  }
};
