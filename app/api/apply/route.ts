import { getControlPlane } from '@/server/controlPlane/registry';
import { applyDraft } from '@/server/console/applyDraft';
import { requireSession } from '@/server/console/consoleAuth';
import { getConsoleContext } from '@/server/console/consoleContext';
import { draftOf, jsonResponse, notServing, readJsonBody } from '@/server/console/routeUtil';
import { getMeshMetrics } from '@/server/metrics/metricsRegistry';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/**
 * Applies a saved draft (`?draft=<id>`) `{revision, force?}` to the mesh directory and the local mesh, and answers
 * once the proxies are configured (or 20 s passed): `{applied, deleted, proxies, historyId?}`; an apply that
 * changed files is recorded in the apply history (GET /api/applies).
 */
export async function POST(req: Request): Promise<Response> {
  const guard = requireSession(req);
  if (!guard.ok) return guard.response;
  const ctx = getConsoleContext();
  const cp = getControlPlane();
  if (!ctx || !cp) return notServing();
  // The drafts of a cluster start from a copy of it; writing into that copy would change nothing.
  if (cp.live.get().mesh.mode === 'kubernetes') {
    return jsonResponse(
      {
        error:
          'this console runs on a Kubernetes cluster: apply with POST /api/cluster/apply (server-side apply)',
      },
      409,
    );
  }
  const d = await draftOf(req, ctx);
  if (!d.ok) return d.response;
  const body = await readJsonBody(req, 4096);
  if (!body.ok) return body.response;
  const outcome = await applyDraft({
    drafts: d.store,
    controlPlane: cp,
    body: body.value,
    history: ctx.applies,
    user: guard.session.identity.user,
    draftId: d.id,
  });
  getMeshMetrics()?.applied(
    'local-mesh',
    outcome.ok ? 'applied' : outcome.status >= 500 ? 'failed' : 'refused',
  );
  return jsonResponse(outcome.body, outcome.ok ? 200 : outcome.status);
}
