import { getConsoleAuth, readCookie, SESSION_COOKIE, sessionCookie } from '@/server/console/consoleAuth';
import { clearedTxCookie, getOidcSignIn, OIDC_TX_COOKIE, OidcError } from '@/server/console/oidc';
import { jsonResponse, refuseForeign } from '@/server/console/routeUtil';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/**
 * Where the provider sends the browser back: checks the sign-in and opens a console session for the
 * user (302 to the console with the session cookie), or refuses with the reason and no session.
 */
export async function GET(req: Request): Promise<Response> {
  const refused = refuseForeign(req);
  if (refused) return refused;
  const oidc = getOidcSignIn();
  const auth = getConsoleAuth();
  if (!oidc || !auth)
    return jsonResponse({ error: 'OIDC sign-in is not configured (see meshdeck serve --oidc-issuer)' }, 404);
  const headers = new Headers({ 'Cache-Control': 'no-store' });
  // The sign-in in progress is used up whatever happens next.
  headers.append('Set-Cookie', clearedTxCookie(oidc));
  try {
    const identity = await oidc.finish(readCookie(req, OIDC_TX_COOKIE), new URL(req.url).searchParams);
    // A browser that signs in again gets a new session; the old one ends.
    auth.logout(readCookie(req, SESSION_COOKIE));
    const session = auth.open(identity);
    // Behind a TLS-terminating proxy the request looks like http: the registered https URL decides.
    const cookie = sessionCookie(req, session.id);
    const https = new URL(oidc.config.redirectUrl).protocol === 'https:';
    headers.append('Set-Cookie', https && !cookie.includes('; Secure') ? `${cookie}; Secure` : cookie);
    headers.set('Location', new URL('/', oidc.config.redirectUrl).href);
    return new Response(null, { status: 302, headers });
  } catch (e) {
    const status = e instanceof OidcError ? e.status : 500;
    headers.set('Content-Type', 'application/json');
    return new Response(JSON.stringify({ error: `sign-in failed: ${(e as Error).message}` }), {
      status,
      headers,
    });
  }
}
