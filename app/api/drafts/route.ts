import { requireSession } from '@/server/console/consoleAuth';
import { getConsoleContext } from '@/server/console/consoleContext';
import { jsonResponse, notServing, readJsonBody, refuseForeign } from '@/server/console/routeUtil';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/** Every draft of the mesh directory (DraftSummary[]), the main draft first. */
export async function GET(req: Request): Promise<Response> {
  const refused = refuseForeign(req);
  if (refused) return refused;
  const ctx = getConsoleContext();
  if (!ctx) return notServing('no console draft in this process');
  try {
    return jsonResponse(await ctx.drafts.list());
  } catch (e) {
    return jsonResponse({ error: `cannot list the drafts: ${(e as Error).message}` }, 500);
  }
}

/**
 * Creates a named draft `{name, from?}`: fresh from the base branch's tip (the mesh directory when
 * there is no GitOps repository), or a copy of draft `from`, which then shares its base commit, so its
 * diff is the same. 201 with the DraftSummary.
 */
export async function POST(req: Request): Promise<Response> {
  const guard = requireSession(req);
  if (!guard.ok) return guard.response;
  const ctx = getConsoleContext();
  if (!ctx) return notServing('no console draft in this process');
  const body = await readJsonBody(req, 4096);
  if (!body.ok) return body.response;
  const outcome = await ctx.drafts.create(body.value);
  if (!outcome.ok) return jsonResponse(outcome.body, outcome.status);
  const from = (body.value as { from?: string }).from;
  const id = outcome.body.id;
  // Without GitOps (not started, or the remote is down) the draft keeps what it was made from and is
  // based on the tip when first used; the answer says so.
  let note: string | undefined;
  if (ctx.gitops) {
    try {
      const g = await ctx.gitops;
      if (from !== undefined) await g.adoptBase(id, from);
      else {
        const r = await g.startAtTip(id);
        if (r.ok) Object.assign(outcome.body, { revision: r.body.draftRevision });
        else note = `started from the mesh directory: the base branch could not be read (${r.body.error})`;
      }
    } catch (e) {
      note = `started without GitOps: ${(e as Error).message}`;
    }
  }
  return jsonResponse({ ...outcome.body, ...(note ? { note } : {}) }, 201);
}
