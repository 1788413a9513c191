import { TrafficTestRequestSchema } from '@/lib/console/trafficTest';
import { getControlPlane } from '@/server/controlPlane/registry';
import { requireSession } from '@/server/console/consoleAuth';
import { probeBody, probeFailure } from '@/server/console/probeRoutes';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

// The traffic test's request without its count: one schema for both probe routes.
const ProbeBody = TrafficTestRequestSchema.omit({ count: true, concurrency: true });

/**
 * Sends one message through a listener of the local mesh and returns the echo, the path and the
 * latency. It sends traffic, so it needs a console session, its CSRF token and a same-origin request.
 */
export async function POST(req: Request): Promise<Response> {
  const guard = requireSession(req);
  if (!guard.ok) return guard.response;
  const cp = getControlPlane();
  if (!cp) return Response.json({ error: 'no control plane is running in this process' }, { status: 503 });
  const body = await probeBody(req, ProbeBody, 'probe request');
  if (!body.ok) return body.response;
  try {
    const result = await cp.probe(body.value);
    return Response.json(result, { status: 200 });
  } catch (e) {
    return probeFailure(e, 'probe');
  }
}
