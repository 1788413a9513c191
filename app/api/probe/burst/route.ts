import { TrafficTestRequestSchema } from '@/lib/console/trafficTest';
import { getControlPlane } from '@/server/controlPlane/registry';
import { requireSession } from '@/server/console/consoleAuth';
import { probeBody, probeFailure } from '@/server/console/probeRoutes';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/**
 * A traffic test: `count` probes through a listener of the mesh that runs, summed up (answers, latency
 * percentiles, answers by pod and against the split the listener reaches, errors). It sends traffic, so
 * it needs a console session, its CSRF token and a same-origin request, as POST /api/probe does.
 */
export async function POST(req: Request): Promise<Response> {
  const guard = requireSession(req);
  if (!guard.ok) return guard.response;
  const cp = getControlPlane();
  if (!cp) return Response.json({ error: 'no control plane is running in this process' }, { status: 503 });
  const body = await probeBody(req, TrafficTestRequestSchema, 'traffic test request');
  if (!body.ok) return body.response;
  try {
    return Response.json(await cp.trafficTest(body.value), { status: 200 });
  } catch (e) {
    return probeFailure(e, 'traffic test');
  }
}
