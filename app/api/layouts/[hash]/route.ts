import { packPositions } from '@/lib/console/elkLayout';
import { getConsoleContext } from '@/server/console/consoleContext';
import { jsonResponse, notServing, refuseForeign } from '@/server/console/routeUtil';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/** graphHash's form: two 32-bit hashes in hex. */
const HASH = /^[0-9a-f]{16}$/;

/**
 * A large draft's first-view layout made on the server (server/console/DraftLayouts.ts), by graph
 * hash: `{positions: [ids, xs, ys]}`; waits while it is being made; 404 when the server has none (the
 * browser then lays the graph out itself). Read-only, like the draft it is a view of.
 */
export async function GET(req: Request, ctx: { params: Promise<{ hash: string }> }): Promise<Response> {
  const refused = refuseForeign(req);
  if (refused) return refused;
  const { hash } = await ctx.params;
  if (!HASH.test(hash)) return jsonResponse({ error: `not a graph hash: ${JSON.stringify(hash)}` }, 400);
  const layouts = getConsoleContext()?.layouts;
  if (!layouts) return notServing('no server layouts in this process');
  try {
    const start = performance.now();
    const found = await layouts.getTimed(hash);
    if (!found) return jsonResponse({ error: `no layout for graph ${hash} on the server` }, 404);
    // Where the layout's time went, for DevTools and bench/ui.ts (PerformanceResourceTiming.serverTiming).
    const { compileMs, layoutMs, totalMs } = found.timing;
    const timing = [
      `wait;dur=${Math.round(performance.now() - start)}`,
      ...(compileMs === undefined ? [] : [`compile;dur=${compileMs}`]),
      ...(layoutMs === undefined ? [] : [`layout;dur=${layoutMs}`]),
      ...(totalMs === undefined ? [] : [`total;dur=${totalMs}`]),
    ].join(', ');
    return jsonResponse({ positions: packPositions(found.positions) }, 200, { 'server-timing': timing });
  } catch (e) {
    return jsonResponse({ error: `cannot read the layout: ${(e as Error).message}` }, 500);
  }
}
