import { requireSession } from '@/server/console/consoleAuth';
import { getConsoleContext } from '@/server/console/consoleContext';
import { MAX_DRAFT_BYTES } from '@/server/console/meshDirFiles';
import { draftOf, jsonResponse, notServing, readJsonBody, refuseForeign } from '@/server/console/routeUtil';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/** A draft (DraftState; `?draft=<id>`, the main draft without it): the mesh directory's files as the user is editing them. */
export async function GET(req: Request): Promise<Response> {
  const refused = refuseForeign(req);
  if (refused) return refused;
  const ctx = getConsoleContext();
  if (!ctx) return notServing('no console draft in this process');
  try {
    const d = await draftOf(req, ctx);
    if (!d.ok) return d.response;
    return jsonResponse(await d.store.get());
  } catch (e) {
    return jsonResponse({ error: `cannot read the draft: ${(e as Error).message}` }, 500);
  }
}

/** Saves a draft: `{draft, baseRevision}` -> `{revision, updatedAt}`; 409 if someone saved in between. */
export async function PUT(req: Request): Promise<Response> {
  const guard = requireSession(req);
  if (!guard.ok) return guard.response;
  const ctx = getConsoleContext();
  if (!ctx) return notServing('no console draft in this process');
  const d = await draftOf(req, ctx);
  if (!d.ok) return d.response;
  // JSON escapes can double the text's size; anything beyond that cannot be a valid draft.
  const body = await readJsonBody(req, 2 * MAX_DRAFT_BYTES + 1_000_000);
  if (!body.ok) return body.response;
  const outcome = await d.store.save(body.value);
  if (!outcome.ok) return jsonResponse(outcome.body, outcome.status);
  return jsonResponse({ revision: outcome.revision, updatedAt: outcome.updatedAt });
}
