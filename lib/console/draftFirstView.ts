/**
 * The graph a console opening `draft` lays out first, and its hash: the draft compiled as the console
 * compiles it (for the local mesh or a cluster), then `firstViewLayoutInput`. The server's layout job
 * (server/console/draftLayoutJob.ts) keys its layouts by this hash, and the benches and tests ask for
 * them by it.
 */
import { compileDraft, consoleCompileOptions } from './compileDraft';
import type { DraftDoc } from './draftDoc';
import { firstViewLayoutInput, type LayoutInput } from './elkLayout';
import { graphHash, type MeshGraph } from './meshGraph';

/** A first view to lay out: the layout's input, its graph hash and the whole graph. */
export interface FirstView {
  input: LayoutInput;
  hash: string;
  graph: MeshGraph;
}

/**
 * The draft's first-view layout input, its graph hash and the whole graph, or undefined when the canvas
 * runs no ELK for it.
 */
export function draftFirstView(
  draft: DraftDoc,
  { localMesh }: { localMesh: boolean },
): FirstView | undefined {
  // The podsDir changes socket paths only, not the graph; xDS does not change it either.
  return firstViewOf(compileDraft(draft, { ...consoleCompileOptions(localMesh), xds: false }).graph, draft);
}

/** The first view of a draft's compiled graph (as draftFirstView), or undefined. */
export function firstViewOf(graph: MeshGraph, draft: DraftDoc): FirstView | undefined {
  const input = firstViewLayoutInput(graph, draft.layout);
  return input ? { input, hash: graphHash(input), graph } : undefined;
}
