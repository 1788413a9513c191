/**
 * The graph a console opening `draft` lays out first, and its hash: the draft compiled as the console
 * compiles it (for the local mesh or a cluster), then `firstViewLayoutInput`. The server's layout job
 * (server/console/draftLayoutJob.ts) keys its layouts by this hash, and the benches and tests ask for
 * them by it.
 */
import { compileDraft, type CompileOptions } from './compileDraft';
import type { DraftDoc } from './draftDoc';
import { firstViewLayoutInput, type LayoutInput } from './elkLayout';
import { graphHash, type MeshGraph } from './meshGraph';

/**
 * The draft's first-view layout input, its graph hash and the whole graph, or undefined when the canvas
 * runs no ELK for it.
 */
export function draftFirstView(
  draft: DraftDoc,
  { localMesh }: { localMesh: boolean },
): { input: LayoutInput; hash: string; graph: MeshGraph } | undefined {
  // The podsDir changes socket paths only, not the graph.
  const opts: CompileOptions = localMesh ? { xds: false, localMesh: { podsDir: '' } } : { xds: false };
  const { graph } = compileDraft(draft, opts);
  const input = firstViewLayoutInput(graph, draft.layout);
  return input ? { input, hash: graphHash(input), graph } : undefined;
}
