import { desiredConfigResponse } from '@/server/console/proxyConfig';
import { proxyGet } from '@/server/console/proxyLookup';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/** The config the control plane pushes to the proxy (`id` is `namespace/pod`, URL-encoded): `{config}`. */
export const GET = proxyGet(desiredConfigResponse);
