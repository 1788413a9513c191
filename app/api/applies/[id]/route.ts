import { getConsoleContext } from '@/server/console/consoleContext';
import { jsonResponse, notServing, refuseForeign } from '@/server/console/routeUtil';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/**
 * One apply of the history with the mesh directory's files before and after it (ApplyRecord), so the
 * console can show it as a diff and load it back into a draft. Read-only, like the draft.
 */
export async function GET(req: Request, ctx: { params: Promise<{ id: string }> }): Promise<Response> {
  const refused = refuseForeign(req);
  if (refused) return refused;
  const { id: given } = await ctx.params;
  const id = /^[1-9][0-9]{0,14}$/.test(given) ? Number(given) : NaN;
  if (!Number.isSafeInteger(id))
    return jsonResponse(
      { error: `invalid apply id ${JSON.stringify(given)}: must be a positive integer` },
      400,
    );
  const applies = getConsoleContext()?.applies;
  if (!applies) return notServing('no apply history in this process');
  try {
    const found = await applies.get(id);
    if (!found)
      return jsonResponse(
        { error: `no apply with id ${id} (the history keeps the last ${applies.keep})` },
        404,
      );
    return jsonResponse(found);
  } catch (e) {
    return jsonResponse({ error: `cannot read the apply history: ${(e as Error).message}` }, 500);
  }
}
