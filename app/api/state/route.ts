import { getControlPlane } from '@/server/controlPlane/registry';
import { refuseForeign } from '@/server/console/routeUtil';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/** The live state of the mesh: proxies (process, sync, config, sessions), services, diagnostics. */
export function GET(req: Request): Response {
  // Reads too: a DNS-rebound page must not read the mesh's state or logs.
  const refused = refuseForeign(req);
  if (refused) return refused;
  const cp = getControlPlane();
  if (!cp)
    return Response.json(
      { error: 'no control plane is running in this process (start it with meshdeck serve)' },
      { status: 503 },
    );
  return Response.json(cp.live.get(), { headers: { 'Cache-Control': 'no-store' } });
}
