/** `GET /api/proxies/<id>/live` and `/desired`: one proxy's config as it runs and as it is pushed. */
import { L7mpRestClient } from '../l7mp/L7mpRestClient';
import type { ControlPlaneApi } from '../controlPlane/registry';
import { jsonResponse } from './routeUtil';

/** How long reading a proxy's live config may take before the answer is 502. */
const LIVE_READ_TIMEOUT_MS = 4000;

/**
 * The proxy id a URL segment names: `namespace/pod` (URL-encoded or not), or a bare pod name when
 * exactly one proxy has it. Undefined when nothing (or more than one proxy) matches.
 */
export function findProxyId(ids: readonly string[], segment: string): string | undefined {
  let id = segment;
  if (id.includes('%')) {
    try {
      id = decodeURIComponent(id);
    } catch {
      return undefined;
    }
  }
  if (ids.includes(id)) return id;
  const byPod = ids.filter((k) => k.endsWith(`/${id}`));
  return byPod.length === 1 ? byPod[0] : undefined;
}

/** `{config, ignored}` read from the proxy now; 404 for an unknown proxy, 502 when it cannot be read. */
export async function liveConfigResponse(cp: ControlPlaneApi, segment: string): Promise<Response> {
  const proxies = cp.live.get().proxies;
  const id = findProxyId(Object.keys(proxies), segment);
  const proxy = id === undefined ? undefined : proxies[id];
  if (!proxy) return unknownProxy(segment, Object.keys(proxies));
  if (!proxy.apiUrl)
    return jsonResponse(
      {
        error: `${proxy.id} is a proxyless gRPC client: it runs no l7mp, so there is no REST config to read`,
      },
      404,
    );
  try {
    const live = await new L7mpRestClient(proxy.apiUrl).readLive({ timeoutMs: LIVE_READ_TIMEOUT_MS });
    return jsonResponse({ config: live.config, ignored: live.ignored });
  } catch (e) {
    return jsonResponse({ error: `cannot read ${proxy.id}'s live config: ${(e as Error).message}` }, 502);
  }
}

/** `{config}`: what the control plane pushes to the proxy; 404 for an unknown proxy. */
export function desiredConfigResponse(cp: ControlPlaneApi, segment: string): Response {
  const desired = cp.desiredConfigs();
  const id = findProxyId(Object.keys(desired), segment);
  const p = id === undefined ? undefined : desired[id];
  if (!p) return unknownProxy(segment, Object.keys(desired));
  return jsonResponse({ config: p.config });
}

function unknownProxy(segment: string, ids: string[]): Response {
  const known = ids.length > 0 ? ids.sort().join(', ') : 'none';
  return jsonResponse({ error: `no l7mp proxy "${segment}" in the mesh (proxies: ${known})` }, 404);
}
