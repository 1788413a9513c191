import { getControlPlane } from '@/server/controlPlane/registry';
import { liveConfigResponse } from '@/server/console/proxyConfig';
import { notServing, refuseForeign } from '@/server/console/routeUtil';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/** The config the proxy runs right now (`id` is `namespace/pod`, URL-encoded): `{config, ignored}`. */
export async function GET(req: Request, ctx: { params: Promise<{ id: string }> }): Promise<Response> {
  const refused = refuseForeign(req);
  if (refused) return refused;
  const cp = getControlPlane();
  if (!cp) return notServing();
  return liveConfigResponse(cp, (await ctx.params).id);
}
