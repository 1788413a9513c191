/** The shared front of the `/api/proxies/<id>/...` route handlers. */
import { type ControlPlaneApi, getControlPlane } from '../controlPlane/registry';
import { notServing, refuseForeign } from './routeUtil';

/** The context Next passes a handler under `app/api/proxies/[id]/`. */
export interface ProxyRouteContext {
  params: Promise<{ id: string }>;
}

/**
 * A GET handler for one proxy (`id` is `namespace/pod`, URL-encoded, or a unique pod name): refuses
 * foreign origins (403), answers 503 without a control plane, else `answer(cp, id segment)`.
 */
export function proxyGet(
  answer: (cp: ControlPlaneApi, segment: string) => Response | Promise<Response>,
): (req: Request, ctx: ProxyRouteContext) => Promise<Response> {
  return async (req, ctx) => {
    const refused = refuseForeign(req);
    if (refused) return refused;
    const cp = getControlPlane();
    if (!cp) return notServing();
    return answer(cp, (await ctx.params).id);
  };
}
