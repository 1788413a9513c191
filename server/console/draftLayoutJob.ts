/**
 * One first-view layout, in DraftLayouts' worker thread (draftLayoutWorker.mjs): the draft compiled as
 * the console compiles it (seeded with the files the server already read), the graph the canvas lays
 * out first (lib/console/elkLayout.ts), and the layout the browser would run over it (ELK for a small
 * graph, layeredLayout.ts for a large one). Answers twice: the graph hash as soon as it is
 * known, so a browser asking for that hash waits for this layout, then the positions.
 */
import ELK from 'elkjs/lib/elk.bundled.js';
import type { DraftDoc } from '../../lib/console/draftDoc';
import { compilationForTransfer, compileDraft, consoleCompileOptions } from '../../lib/console/compileDraft';
import { firstViewOf } from '../../lib/console/draftFirstView';
import { type DraftParsePack, seedDraftParsePack } from '../../lib/console/draftParsePack';
import {
  ELK_WARM_UP,
  elkGraphOf,
  layoutAlgorithmOf,
  positionsOf,
  type Positions,
} from '../../lib/console/elkLayout';
import { layeredLayout } from '../../lib/console/layeredLayout';
import { type FirstViewPicture, firstViewPicture } from '../../lib/console/firstViewPicture';

export interface DraftLayoutRequest {
  id: number;
  draft: DraftDoc;
  pack?: DraftParsePack;
  localMesh: boolean;
  minNodes: number;
  /** Hashes laid out already: not again. */
  known: string[];
}

export type DraftLayoutReply =
  /**
   * `compileMs`: seeding and compiling the draft, from the request's arrival in the thread;
   * `compiled`: the compile as JSON (see the module comment).
   */
  | { id: number; kind: 'hash'; hash: string; compileMs: number; compiled?: string }
  /** `hash` when the graph was laid out before (the draft changed, its first view did not). */
  | { id: number; kind: 'none'; why: string; hash?: string; compiled?: string }
  /** `ms`: the layout's own time; `picture`: the laid out first view for the page to draw early. */
  | {
      id: number;
      kind: 'positions';
      hash: string;
      positions: Positions;
      ms: number;
      picture: FirstViewPicture;
    }
  | { id: number; kind: 'error'; hash?: string; message: string };

const elk = new ELK();
let warmed: Promise<unknown> | undefined;

/**
 * Runs ELK once on a small graph (ELK_WARM_UP), once per thread: ELK's code is compiled on its first
 * graphs, and a large layout right after a small one takes about half its cold time.
 */
export function warmElk(): Promise<unknown> {
  warmed ??= elk.layout(elkGraphOf(ELK_WARM_UP)).catch(() => undefined);
  return warmed;
}

/** Compiles the draft and lays out its first view, answering through `reply`. Never throws. */
export async function runDraftLayoutJob(
  req: DraftLayoutRequest,
  reply: (r: DraftLayoutReply) => void,
): Promise<void> {
  let hash: string | undefined;
  const start = performance.now();
  try {
    if (req.pack) seedDraftParsePack(req.draft.files, req.pack);
    const compilation = compileDraft(req.draft, consoleCompileOptions(req.localMesh));
    const compiled = JSON.stringify(compilationForTransfer(compilation));
    const view = firstViewOf(compilation.graph, req.draft);
    if (!view)
      return reply({ id: req.id, kind: 'none', why: 'the canvas places this graph without ELK', compiled });
    const { input } = view;
    if (input.nodes.length < req.minNodes)
      return reply({
        id: req.id,
        kind: 'none',
        why: `${input.nodes.length} nodes: the browser lays it out`,
        compiled,
      });
    hash = view.hash;
    if (req.known.includes(hash))
      return reply({ id: req.id, kind: 'none', why: 'laid out already', hash, compiled });
    reply({ id: req.id, kind: 'hash', hash, compileMs: performance.now() - start, compiled });
    // The browser's choice for the same graph (components/console/layoutGraph.ts): the same places.
    const algorithm = layoutAlgorithmOf(input);
    if (algorithm === 'elk') await warmElk();
    const layoutStart = performance.now();
    const positions =
      algorithm === 'layered' ? layeredLayout(input) : positionsOf(await elk.layout(elkGraphOf(input)));
    const ms = performance.now() - layoutStart;
    reply({
      id: req.id,
      kind: 'positions',
      hash,
      positions,
      ms,
      picture: firstViewPicture(view.graph, input, positions, hash),
    });
  } catch (e) {
    reply({ id: req.id, kind: 'error', ...(hash ? { hash } : {}), message: (e as Error).message });
  }
}
