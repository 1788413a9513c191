/**
 * The layered layouts side by side on the console's large first views (bench/syntheticMesh.ts drafts
 * as the console compiles them): ELK (elkjs, at LAYOUT_OPTIONS, after a warm-up) and layeredLayout.ts,
 * in Node. Per size: each one's time (median of the runs), the drawing's width and height, and the edge
 * crossings of the drawing (straight lines between node centres, counted pairwise). Prints JSON; no
 * assertions. Run: `node --import tsx bench/layout.ts [nodes...] [--runs 5] [--elk-runs 2]`.
 */
import ELK from 'elkjs/lib/elk.bundled.js';
import { draftFirstView } from '../lib/console/draftFirstView';
import {
  ELK_WARM_UP,
  elkGraphOf,
  type LayoutInput,
  NODE_HEIGHT,
  NODE_WIDTH,
  type Positions,
  positionsOf,
} from '../lib/console/elkLayout';
import { layeredLayout } from '../lib/console/layeredLayout';
import { countsArg, numberArg } from './argv';
import { pct } from './pct';
import { syntheticDraft } from './syntheticMesh';

const RUNS = numberArg('runs', 5);
const ELK_RUNS = numberArg('elk-runs', 2);
const SIZES = countsArg(['runs', 'elk-runs'], [500, 1000]);

/** Width, height and pairwise crossings of straight edges between node centres. */
function drawing(input: LayoutInput, at: Positions) {
  const size = new Map(input.nodes.map((n) => [n.id, [n.width ?? NODE_WIDTH, n.height ?? NODE_HEIGHT]]));
  const centre = (id: string) => {
    const p = at[id]!;
    const [w, h] = size.get(id)!;
    return [p.x + w! / 2, p.y + h! / 2] as const;
  };
  let width = 0;
  let height = 0;
  for (const n of input.nodes) {
    const p = at[n.id]!;
    const [w, h] = size.get(n.id)!;
    width = Math.max(width, p.x + w!);
    height = Math.max(height, p.y + h!);
  }
  const segs = input.edges.map(
    (e) => [...centre(e.source), ...centre(e.target), e.source, e.target] as const,
  );
  const side = (ax: number, ay: number, bx: number, by: number, cx: number, cy: number) =>
    Math.sign((bx - ax) * (cy - ay) - (by - ay) * (cx - ax));
  let crossings = 0;
  for (let i = 0; i < segs.length; i++)
    for (let j = i + 1; j < segs.length; j++) {
      const [ax, ay, bx, by, as, at2] = segs[i]!;
      const [cx, cy, dx, dy, cs, ct] = segs[j]!;
      if (as === cs || as === ct || at2 === cs || at2 === ct) continue;
      if (
        side(ax, ay, bx, by, cx, cy) * side(ax, ay, bx, by, dx, dy) < 0 &&
        side(cx, cy, dx, dy, ax, ay) * side(cx, cy, dx, dy, bx, by) < 0
      )
        crossings++;
    }
  return { width: Math.round(width), height: Math.round(height), crossings };
}

const elk = new ELK();
await elk.layout(elkGraphOf(ELK_WARM_UP));
const results = [];
for (const nodes of SIZES) {
  const view = draftFirstView(syntheticDraft(Math.round(nodes / 5)), { localMesh: true });
  if (!view) throw new Error(`no first view for ${nodes} nodes`);
  const { input } = view;
  const ours: number[] = [];
  let oursAt: Positions = {};
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    oursAt = layeredLayout(input);
    ours.push(performance.now() - t);
  }
  const elkMs: number[] = [];
  let elkAt: Positions = {};
  for (let i = 0; i < ELK_RUNS; i++) {
    const t = performance.now();
    elkAt = positionsOf(await elk.layout(elkGraphOf(input)));
    elkMs.push(performance.now() - t);
  }
  results.push({
    nodes: input.nodes.length,
    edges: input.edges.length,
    layered: { ms: +pct(ours, 50).toFixed(1), first: +ours[0]!.toFixed(1), ...drawing(input, oursAt) },
    elk: { ms: +pct(elkMs, 50).toFixed(0), ...drawing(input, elkAt) },
  });
}
console.log(JSON.stringify({ runs: RUNS, elkRuns: ELK_RUNS, results }, null, 1));
