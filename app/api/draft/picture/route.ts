import { getConsoleContext } from '@/server/console/consoleContext';
import { draftOf, jsonResponse, noContent, notServing, refuseForeign } from '@/server/console/routeUtil';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/**
 * The picture of a draft's first view (`?draft=<id>`, the main draft without it), as the server laid
 * it out for the draft exactly as it is now (lib/console/firstViewPicture.ts), for the console page's
 * inline script to draw before the app has loaded (components/console/earlyPicture.ts). 204 when the
 * server has none (a small draft, a layout not made yet, the draft changed since): the app draws as
 * usual. Read-only, like the draft.
 */
export async function GET(req: Request): Promise<Response> {
  const refused = refuseForeign(req);
  if (refused) return refused;
  const ctx = getConsoleContext();
  if (!ctx) return notServing('no console draft in this process');
  try {
    const d = await draftOf(req, ctx);
    if (!d.ok) return d.response;
    const picture = ctx.layouts?.picture((await d.store.get()).draft);
    return picture ? jsonResponse(picture) : noContent();
  } catch (e) {
    return jsonResponse({ error: `cannot read the draft: ${(e as Error).message}` }, 500);
  }
}
