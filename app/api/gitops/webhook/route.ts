import { getConsoleContext } from '@/server/console/consoleContext';
import { jsonResponse, notServing, readRawBody } from '@/server/console/routeUtil';
import { pushedBranch, verifyWebhook } from '@/server/gitops/gitWebhook';
import { readSecret } from '@/server/gitops/repositoryConfig';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/** GitHub's push payloads reach 25 MB; a push's ref is all that is read, and 5 MB covers any push of a mesh. */
const MAX_BODY = 5_000_000;

/**
 * The forge's push webhook (server/gitops/gitWebhook.ts): no session (a forge has none), the request
 * signed with the repository config's `webhook.secret`. A push to the base branch starts a comparison now
 * (202), which syncs at once under an automated policy; a ping answers 200; other events and branches
 * are acknowledged and ignored. 401 for a wrong or missing signature, 404 when no webhook is configured.
 */
export async function POST(req: Request): Promise<Response> {
  const ctx = getConsoleContext();
  if (!ctx?.gitops) return notServing('no GitOps service in this process');
  let gitops;
  try {
    gitops = await ctx.gitops;
  } catch (e) {
    return jsonResponse({ error: `GitOps is unavailable: ${(e as Error).message}` }, 503);
  }
  const hook = gitops.config.webhook;
  if (!hook)
    return jsonResponse({ error: 'no webhook is configured (webhook.secret in the repository config)' }, 404);
  const body = await readRawBody(req, MAX_BODY);
  if (!body.ok) return body.response;
  let secret: string;
  try {
    secret = await readSecret(hook.secret, 'the webhook secret');
  } catch (e) {
    console.warn(`meshdeck: a webhook was refused: ${(e as Error).message}`);
    return jsonResponse({ error: 'the webhook secret cannot be read on the server (see its log)' }, 500);
  }
  const verified = verifyWebhook(req.headers, body.bytes, secret);
  if (!verified.ok) return jsonResponse({ error: verified.error }, 401);
  if (verified.event === 'ping') return jsonResponse({ ok: true, event: 'ping' });
  let payload: unknown;
  try {
    payload = JSON.parse(body.bytes.toString('utf8'));
  } catch {
    return jsonResponse({ error: 'the payload is not JSON: set the content type application/json' }, 400);
  }
  const branch = pushedBranch(verified.event, payload);
  const base = gitops.config.baseBranch;
  if (branch !== base)
    return jsonResponse({ ignored: `not a push to ${base} (event ${verified.event || 'unknown'})` });
  const watcher = ctx.gitSync;
  if (!watcher)
    return jsonResponse({ error: 'comparisons with Git are off here (MESHDECK_GIT_SYNC_INTERVAL_S=0)' }, 409);
  // Answered at once: forges time out deliveries after about 10 s, and a sync can take longer.
  void watcher.compareNow();
  return jsonResponse({ comparing: base, forge: verified.forge }, 202);
}
