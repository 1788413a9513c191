import { clearedTxCookie, getOidcSignIn, OidcError, txCookie } from '@/server/console/oidc';
import { jsonResponse, refuseForeign } from '@/server/console/routeUtil';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/** Starts an OIDC sign-in: 302 to the provider, with the cookie that ties this browser to it. */
export async function GET(req: Request): Promise<Response> {
  const refused = refuseForeign(req);
  if (refused) return refused;
  const oidc = getOidcSignIn();
  if (!oidc)
    return jsonResponse({ error: 'OIDC sign-in is not configured (see meshdeck serve --oidc-issuer)' }, 404);
  try {
    const { url, txId } = await oidc.start();
    return new Response(null, {
      status: 302,
      headers: { Location: url.href, 'Set-Cookie': txCookie(oidc, txId), 'Cache-Control': 'no-store' },
    });
  } catch (e) {
    const status = e instanceof OidcError ? e.status : 500;
    return jsonResponse({ error: (e as Error).message }, status, { 'Set-Cookie': clearedTxCookie(oidc) });
  }
}
