import { getControlPlane } from '@/server/controlPlane/registry';
import { applyDraft } from '@/server/console/applyDraft';
import { requireSession } from '@/server/console/consoleAuth';
import { getConsoleContext } from '@/server/console/consoleContext';
import { jsonResponse, notServing, readJsonBody } from '@/server/console/routeUtil';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/**
 * Applies the saved draft `{revision, force?}` to the mesh directory and the local mesh, and answers
 * once the proxies are configured (or 20 s passed): `{applied, deleted, proxies}`.
 */
export async function POST(req: Request): Promise<Response> {
  const guard = requireSession(req);
  if (!guard.ok) return guard.response;
  const ctx = getConsoleContext();
  const cp = getControlPlane();
  if (!ctx || !cp) return notServing();
  const body = await readJsonBody(req, 4096);
  if (!body.ok) return body.response;
  const outcome = await applyDraft({ drafts: ctx.drafts, controlPlane: cp, body: body.value });
  return jsonResponse(outcome.body, outcome.ok ? 200 : outcome.status);
}
