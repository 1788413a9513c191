/**
 * The graph a console opening `draft` lays out first, and its hash: the draft compiled as the console
 * compiles it (for the local mesh or a cluster), then `firstViewLayoutInput`. The server's layout job
 * (server/console/draftLayoutJob.ts) keys its layouts by this hash, and the benches and tests ask for
 * them by it.
 */
import { compileDraft, type CompileOptions } from './compileDraft';
import type { DraftDoc } from './draftDoc';
import { firstViewLayoutInput, type LayoutInput } from './elkLayout';
import { graphHash } from './meshGraph';

/** The draft's first-view layout input and its graph hash, or undefined when the canvas runs no ELK for it. */
export function draftFirstView(
  draft: DraftDoc,
  { localMesh }: { localMesh: boolean },
): { input: LayoutInput; hash: string } | undefined {
  // The podsDir changes socket paths only, not the graph.
  const opts: CompileOptions = localMesh ? { xds: false, localMesh: { podsDir: '' } } : { xds: false };
  const input = firstViewLayoutInput(compileDraft(draft, opts).graph, draft.layout);
  return input ? { input, hash: graphHash(input) } : undefined;
}
