import { RolloutActionBody } from '@/lib/rollout/rolloutApi';
import { zodFieldErrors } from '@/server/console/DraftStore';
import { jsonResponse, readJsonBody } from '@/server/console/routeUtil';
import { rolloutAnswer, rolloutMutation } from '@/server/rollout/rolloutRoutes';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/**
 * `{action}` on a rollout (pause, resume, abort, promote) as the signed-in user: 200 `{rollout}` as it is
 * once the action is taken (a rollback or promotion goes on in the background, GET /api/rollouts shows
 * it); 400 for a bad body, 404 for an unknown rollout, 409 when the action does not fit its phase, 503
 * where rollouts cannot run now (Kubernetes mode: this replica does not hold the Lease).
 */
export async function POST(req: Request, ctx: { params: Promise<{ id: string }> }): Promise<Response> {
  const guarded = rolloutMutation(req);
  if (!guarded.ok) return guarded.response;
  const { id } = await ctx.params;
  const body = await readJsonBody(req, 4096);
  if (!body.ok) return body.response;
  const parsed = RolloutActionBody.safeParse(body.value);
  if (!parsed.success)
    return jsonResponse({ error: 'invalid request', fields: zodFieldErrors(parsed.error) }, 400);
  if (id.length > 100) return jsonResponse({ error: 'no such rollout (the id is too long)' }, 404);
  return rolloutAnswer(await guarded.runner.act(id, parsed.data.action, guarded.actor), 200);
}
