import { requireSession } from '@/server/console/consoleAuth';
import { getConsoleContext } from '@/server/console/consoleContext';
import { DraftId } from '@/server/console/DraftRegistry';
import { jsonResponse, notServing, readJsonBody } from '@/server/console/routeUtil';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

type Params = { params: Promise<{ id: string }> };

async function idOf(p: Params): Promise<{ ok: true; id: string } | { ok: false; response: Response }> {
  const { id } = await p.params;
  const parsed = DraftId.safeParse(id);
  return parsed.success
    ? { ok: true, id: parsed.data }
    : {
        ok: false,
        response: jsonResponse(
          { error: 'invalid draft id', fields: [{ path: 'id', message: parsed.error.issues[0]!.message }] },
          400,
        ),
      };
}

/** Renames a named draft `{name}`. */
export async function PATCH(req: Request, p: Params): Promise<Response> {
  const guard = requireSession(req);
  if (!guard.ok) return guard.response;
  const ctx = getConsoleContext();
  if (!ctx) return notServing('no console draft in this process');
  const id = await idOf(p);
  if (!id.ok) return id.response;
  const body = await readJsonBody(req, 4096);
  if (!body.ok) return body.response;
  const outcome = await ctx.drafts.rename(id.id, body.value);
  return jsonResponse(outcome.body, outcome.ok ? 200 : outcome.status);
}

/** Deletes a named draft (kept aside in the state directory, not erased); the main draft stays. */
export async function DELETE(req: Request, p: Params): Promise<Response> {
  const guard = requireSession(req);
  if (!guard.ok) return guard.response;
  const ctx = getConsoleContext();
  if (!ctx) return notServing('no console draft in this process');
  const id = await idOf(p);
  if (!id.ok) return id.response;
  const outcome = await ctx.drafts.remove(id.id);
  if (outcome.ok && ctx.gitops) await ctx.gitops.then((g) => g.forget(id.id)).catch(() => undefined);
  return jsonResponse(outcome.body, outcome.ok ? 200 : outcome.status);
}
