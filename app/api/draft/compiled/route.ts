import { packPositions } from '@/lib/console/elkLayout';
import { getConsoleContext } from '@/server/console/consoleContext';
import { draftOf, jsonResponse, noContent, notServing, refuseForeign } from '@/server/console/routeUtil';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/**
 * A large draft compiled by the server as the console opening it compiles it (`?draft=<id>`, the main
 * draft without it), for the draft as it is now (its revision in the answer), made beside its
 * first-view layout (server/console/DraftLayouts.ts): `{revision, localMesh, layout: {hash, positions:
 * [ids, xs, ys]} | null, result}`, `result` being what the compile worker sends
 * (`compilationForTransfer`). The console page's inline script asks for it with the draft
 * (components/console/earlyDraft.ts) and the console shows it until its own first compile is in
 * (issue 5, P7: 0.4-0.9 s of a 1,000-node draft's first view). 204 when the server has none for the
 * draft as it is now. Read-only, like the draft.
 */
export async function GET(req: Request): Promise<Response> {
  const refused = refuseForeign(req);
  if (refused) return refused;
  const ctx = getConsoleContext();
  if (!ctx) return notServing('no console draft in this process');
  try {
    const d = await draftOf(req, ctx);
    if (!d.ok) return d.response;
    const state = await d.store.get();
    const first = ctx.layouts?.firstCompile(state.draft);
    if (!first) return noContent();
    const layout = first.layout
      ? { hash: first.layout.hash, positions: packPositions(first.layout.positions) }
      : null;
    // The compile is JSON already (about 1.2 MB for 1,000 objects): put in as it is, not parsed again.
    const head = JSON.stringify({ revision: state.revision, localMesh: first.localMesh, layout });
    return new Response(`${head.slice(0, -1)},"result":${first.json}}`, {
      headers: {
        'Content-Type': 'application/json',
        'Cache-Control': 'no-store',
        'X-Draft-Revision': String(state.revision),
      },
    });
  } catch (e) {
    return jsonResponse({ error: `cannot read the draft: ${(e as Error).message}` }, 500);
  }
}
