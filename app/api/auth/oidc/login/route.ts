import { getConsoleAuth } from '@/server/console/consoleAuth';
import { clearedTxCookie, getOidcSignIn, OidcError, txCookie } from '@/server/console/oidc';
import { jsonResponse, refuseForeign } from '@/server/console/routeUtil';
import { signInErrorResponse } from '@/server/console/signInErrorPage';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/**
 * Starts an OIDC sign-in: 302 to the provider, with the cookie that ties this browser to it; or the
 * readable page (JSON when asked for) that says why it cannot start, e.g. the provider is down.
 */
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
    if (!(e instanceof OidcError)) console.error('meshdeck console: OIDC sign-in could not start:', e);
    return signInErrorResponse(req, e, {
      tokenSignIn: getConsoleAuth()?.tokenSignIn ?? false,
      providerName: oidc.providerName,
      headers: new Headers({ 'Set-Cookie': clearedTxCookie(oidc) }),
    });
  }
}
