/**
 * A large graph's first view laid out where the graph is made: the console's compile worker lays it out
 * with the compile that opened a draft (components/console/compile.worker.ts), so the canvas has its
 * places in the same render as the graph, instead of asking a layout worker after that render (the
 * answer then waited about 220 ms for the main thread at 1,000 nodes: bench/ui.ts, fromWorkerMs).
 */
import type { DraftDoc } from './draftDoc';
import { firstViewLayoutInput, layoutAlgorithmOf, type Positions } from './elkLayout';
import { layeredLayout } from './layeredLayout';
import { graphHash, type MeshGraph } from './meshGraph';

/**
 * A change of more than this many nodes from one compile to the next is a new view (a draft opened, an
 * import): the canvas renders it at once (useCanvasGraph) and the compile worker lays it out.
 */
export const NEW_VIEW_MIN_NODE_CHANGE = 50;

/**
 * The first view's places under the hash the canvas asks for, when the layered layout makes them (a
 * graph of LAYERED_LAYOUT_MIN_NODES or more that the draft's own positions do not place, and whose
 * hash is not in `known`); else undefined: the canvas places it, finds it kept, or ELK lays it out.
 */
export function firstViewLayout(
  graph: Pick<MeshGraph, 'nodes' | 'edges'>,
  manual: DraftDoc['layout'],
  known: ReadonlySet<string> = new Set(),
): { hash: string; positions: Positions } | undefined {
  const input = firstViewLayoutInput(graph, manual);
  if (!input || layoutAlgorithmOf(input) !== 'layered') return undefined;
  const hash = graphHash(input);
  // Kept already (the browser's storage, after a reload): no layout to make.
  if (known.has(hash)) return undefined;
  return { hash, positions: layeredLayout(input) };
}
