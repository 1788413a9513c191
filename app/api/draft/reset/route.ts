import { requireSession } from '@/server/console/consoleAuth';
import { getConsoleContext } from '@/server/console/consoleContext';
import { draftOf, jsonResponse, notServing } from '@/server/console/routeUtil';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/** Starts a draft (`?draft=<id>`) again from the mesh directory's files (the revision keeps increasing). */
export async function POST(req: Request): Promise<Response> {
  const guard = requireSession(req);
  if (!guard.ok) return guard.response;
  const ctx = getConsoleContext();
  if (!ctx) return notServing('no console draft in this process');
  try {
    const d = await draftOf(req, ctx);
    if (!d.ok) return d.response;
    return jsonResponse(await d.store.reset());
  } catch (e) {
    return jsonResponse({ error: `cannot reset the draft: ${(e as Error).message}` }, 500);
  }
}
