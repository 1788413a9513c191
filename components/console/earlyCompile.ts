// The server's compile of the draft the console opens (GET /api/draft/compiled, asked for by the page's
// inline script: earlyDraft.ts) reaches the compile hook (useCompiledDraft.ts) through here: the draft
// query offers it for the draft object it loaded, and the hook's first compile of that object takes it.
import type { DraftCompilation } from '@/lib/console/compileDraft';
import type { DraftDoc } from '@/lib/console/draftDoc';
import type { PackedPositions } from '@/lib/console/elkLayout';

/** A compile the server made of a draft as the console opening it compiles it. */
export interface EarlyCompile {
  /** The answer as it came: the compile worker reads the same result from it, to send deltas against. */
  text: string;
  /** What the compile worker would have sent (`compilationForTransfer`). */
  result: Omit<DraftCompilation, 'model'>;
  /** Compiled for the local mesh (consoleCompileOptions), as the server's mesh runs. */
  localMesh: boolean;
  /** The first view's layout the server made with it, if done. */
  layout: { hash: string; positions: PackedPositions } | null;
}

const offered = new WeakMap<DraftDoc, EarlyCompile>();

/** True when `x` has the shape of GET /api/draft/compiled's answer for `revision`. */
function isAnswer(x: unknown, revision: number): x is Omit<EarlyCompile, 'text'> & { revision: number } {
  if (typeof x !== 'object' || x === null) return false;
  const a = x as Record<string, unknown>;
  const r = a.result as Record<string, unknown> | undefined;
  const g = r?.graph as Record<string, unknown> | undefined;
  return (
    a.revision === revision &&
    typeof a.localMesh === 'boolean' &&
    // An object or null.
    typeof a.layout === 'object' &&
    Array.isArray(g?.nodes) &&
    Array.isArray(g?.edges) &&
    Array.isArray(r?.diagnostics) &&
    typeof r?.l7mp === 'object' &&
    typeof r?.markers === 'object'
  );
}

/**
 * Reads the server's compile of `draft`, loaded at `revision`, from its answer and offers it for the
 * draft's first compile. Waits for the answer `waitMs` at most (the console compiles the draft itself
 * without it); an answer for another revision or of another shape is not offered. Never throws.
 */
export async function offerEarlyCompile(
  draft: DraftDoc,
  revision: number,
  answer: Promise<Response | null>,
  waitMs = 2000,
): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), waitMs)));
    const text = await Promise.race([
      answer.then((res) => (res && res.status === 200 ? res.text() : null)).catch(() => null),
      late,
    ]);
    if (text === null) return;
    const parsed = JSON.parse(text) as unknown;
    if (!isAnswer(parsed, revision)) return;
    offered.set(draft, { text, result: parsed.result, localMesh: parsed.localMesh, layout: parsed.layout });
  } catch {
    // Not JSON: the console compiles the draft itself, as without it.
  } finally {
    clearTimeout(timer);
  }
}

/** The server's compile offered for this draft object, still there (not taken). */
export function earlyCompileOf(draft: DraftDoc): EarlyCompile | undefined {
  return offered.get(draft);
}

/** The server's compile offered for this draft object, once. */
export function takeEarlyCompile(draft: DraftDoc): EarlyCompile | undefined {
  const e = offered.get(draft);
  offered.delete(draft);
  return e;
}
