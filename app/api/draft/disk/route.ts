import { diskSummary } from '@/lib/console/diskDrift';
import { diskState } from '@/server/console/diskDrift';
import { getConsoleContext } from '@/server/console/consoleContext';
import { draftOf, jsonResponse, notServing, refuseForeign } from '@/server/console/routeUtil';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/**
 * Whether the mesh directory moved away from a draft's base (`?draft=<id>`): DiskState, with the
 * directory's files now and, when kept, the files the draft started from. With `?summary=1` only the
 * hashes and the changed paths (DiskSummary), for the console's check on every reload. An open read.
 */
export async function GET(req: Request): Promise<Response> {
  const refused = refuseForeign(req);
  if (refused) return refused;
  const ctx = getConsoleContext();
  if (!ctx) return notServing('no console draft in this process');
  try {
    const d = await draftOf(req, ctx);
    if (!d.ok) return d.response;
    const state = await diskState(d.store);
    const summary = new URL(req.url).searchParams.get('summary') === '1';
    return jsonResponse(summary ? diskSummary(state) : state);
  } catch (e) {
    return jsonResponse({ error: `cannot read the mesh directory: ${(e as Error).message}` }, 500);
  }
}
