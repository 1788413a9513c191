import { getConsoleAuth, readCookie, SESSION_COOKIE, sessionCookie } from '@/server/console/consoleAuth';
import { clearedTxCookie, getOidcSignIn, OIDC_TX_COOKIE, OidcError } from '@/server/console/oidc';
import { jsonResponse, refuseForeign } from '@/server/console/routeUtil';
import { signInErrorResponse } from '@/server/console/signInErrorPage';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/**
 * Where the provider sends the browser back: checks the sign-in and opens a console session for the
 * user (302 to the console with the session cookie), or refuses with the reason and no session (a
 * readable page for a browser, JSON for a client that asks for it).
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
    const { identity, idToken } = await oidc.finish(
      readCookie(req, OIDC_TX_COOKIE),
      new URL(req.url).searchParams,
    );
    // A browser that signs in again gets a new session; the old one ends.
    auth.logout(readCookie(req, SESSION_COOKIE));
    // The ID token stays in the server-side session: the provider's logout needs it as a hint.
    const session = auth.open(identity, idToken);
    // Behind a TLS-terminating proxy the request looks like http: the registered https URL decides.
    const cookie = sessionCookie(req, session.id);
    const https = new URL(oidc.config.redirectUrl).protocol === 'https:';
    headers.append('Set-Cookie', https && !cookie.includes('; Secure') ? `${cookie}; Secure` : cookie);
    headers.set('Location', new URL('/', oidc.config.redirectUrl).href);
    return new Response(null, { status: 302, headers });
  } catch (e) {
    if (!(e instanceof OidcError)) console.error('meshdeck console: OIDC callback failed:', e);
    return signInErrorResponse(req, e, {
      tokenSignIn: auth.tokenSignIn,
      providerName: oidc.providerName,
      headers,
    });
  }
}
