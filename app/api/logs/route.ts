import { getControlPlane } from '@/server/controlPlane/registry';
import { refuseForeign } from '@/server/console/routeUtil';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/** The last lines an l7mp process of the local mesh printed: `/api/logs?proxy=<pod or ns/pod>&tail=200`. */
export function GET(req: Request): Response {
  // Reads too: a DNS-rebound page must not read the mesh's state or logs.
  const refused = refuseForeign(req);
  if (refused) return refused;
  const cp = getControlPlane();
  if (!cp) return Response.json({ error: 'no control plane is running in this process' }, { status: 503 });
  const url = new URL(req.url);
  const proxy = url.searchParams.get('proxy');
  if (!proxy) return Response.json({ error: 'name a proxy: ?proxy=<pod or namespace/pod>' }, { status: 400 });
  const tail = Math.min(5000, Math.max(1, Number(url.searchParams.get('tail') ?? '200') || 200));
  return Response.json({ proxy, lines: cp.logs(proxy, tail) }, { headers: { 'Cache-Control': 'no-store' } });
}
