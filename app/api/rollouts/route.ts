import { getConsoleContext } from '@/server/console/consoleContext';
import { jsonResponse, notServing, readJsonBody, refuseForeign } from '@/server/console/routeUtil';
import { NO_ROLLOUTS, rolloutAnswer, rolloutMutation } from '@/server/rollout/rolloutRoutes';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/** The largest rollout spec taken (a few hundred bytes in practice). */
const MAX_BODY = 64_000;

/**
 * The progressive rollouts this server keeps, newest first: `{available, reason?, rollouts}` (available
 * false, with why, where it cannot run one). Read-only, like the draft: same-origin requests only.
 */
export async function GET(req: Request): Promise<Response> {
  const refused = refuseForeign(req);
  if (refused) return refused;
  const ctx = getConsoleContext();
  if (!ctx) return notServing('no console in this process');
  const runner = ctx.rollouts;
  if (!runner) return jsonResponse({ available: false, reason: NO_ROLLOUTS, rollouts: [] });
  await runner.load();
  const reason = runner.unavailable();
  return jsonResponse({
    available: reason === undefined,
    ...(reason ? { reason } : {}),
    rollouts: runner.list(),
  });
}

/**
 * Starts a rollout (RolloutSpecInput) as the signed-in user: 201 `{rollout}`; 400 for a bad spec (its
 * fields), 409 while another runs or sync from Git would undo it, 422 when the split does not allow it,
 * 503 where rollouts cannot run (now: Kubernetes mode on a replica that does not hold the Lease). A spec
 * with probes is refused (422, `analysis.probe`) where none can be sent (Kubernetes mode).
 */
export async function POST(req: Request): Promise<Response> {
  const guarded = rolloutMutation(req);
  if (!guarded.ok) return guarded.response;
  const body = await readJsonBody(req, MAX_BODY);
  if (!body.ok) return body.response;
  return rolloutAnswer(await guarded.runner.start(body.value, guarded.actor), 201);
}
