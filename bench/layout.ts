/**
 * The layered layouts side by side on the console's large first views (bench/syntheticMesh.ts drafts
 * as the console compiles them): ELK (elkjs, at LAYOUT_OPTIONS, after a warm-up) and layeredLayout.ts,
 * in Node. Per size: each one's time (median of the runs), the drawing's width and height, and the edge
 * crossings of the drawing (straight lines between node centres, counted pairwise). Prints JSON; no
 * assertions. Run: `node --import tsx bench/layout.ts [nodes...] [--runs 5] [--elk-runs 2]`.
 */
import ELK from 'elkjs/lib/elk.bundled.js';
import { draftFirstView } from '../lib/console/draftFirstView';
import { ELK_WARM_UP, elkGraphOf, type Positions, positionsOf } from '../lib/console/elkLayout';
import { layeredLayout } from '../lib/console/layeredLayout';
import { countsArg, numberArg } from './argv';
import { layoutDrawing } from './layoutDrawing';
import { pct } from './pct';
import { syntheticDraft } from './syntheticMesh';

const RUNS = numberArg('runs', 5);
const ELK_RUNS = numberArg('elk-runs', 2);
const SIZES = countsArg(['runs', 'elk-runs'], [500, 1000]);

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
    layered: { ms: +pct(ours, 50).toFixed(1), first: +ours[0]!.toFixed(1), ...layoutDrawing(input, oursAt) },
    elk: { ms: +pct(elkMs, 50).toFixed(0), ...layoutDrawing(input, elkAt) },
  });
}
console.log(JSON.stringify({ runs: RUNS, elkRuns: ELK_RUNS, results }, null, 1));
