import { liveConfigResponse } from '@/server/console/proxyConfig';
import { proxyGet } from '@/server/console/proxyLookup';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/** The config the proxy runs right now (`id` is `namespace/pod`, URL-encoded): `{config, ignored}`. */
export const GET = proxyGet(liveConfigResponse);
