import { z } from 'zod';
import {
  clearedSessionCookie,
  getConsoleAuth,
  readCookie,
  SESSION_COOKIE,
  sessionCookie,
} from '@/server/console/consoleAuth';
import { getOidcSignIn, OIDC_LOGIN_PATH } from '@/server/console/oidc';
import { jsonResponse, readJsonBody, refuseForeign } from '@/server/console/routeUtil';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

const LoginBody = z.strictObject({ token: z.string().max(1000) });

/**
 * Whether this browser has a session, and then its CSRF token and who it acts for (user and groups,
 * never a token); and how one signs in (the console token, an OIDC provider).
 */
export function GET(req: Request): Response {
  const refused = refuseForeign(req);
  if (refused) return refused;
  const auth = getConsoleAuth();
  const session = auth?.session(readCookie(req, SESSION_COOKIE));
  const oidc = getOidcSignIn();
  const signIn = {
    token: auth?.tokenSignIn ?? false,
    ...(oidc ? { oidc: { provider: oidc.providerName, loginUrl: OIDC_LOGIN_PATH } } : {}),
  };
  return jsonResponse(
    session
      ? {
          authenticated: true,
          csrfToken: session.csrfToken,
          user: session.identity.user,
          groups: session.identity.groups,
          signIn,
        }
      : { authenticated: false, signIn },
  );
}

/** Signs in with the console token `meshdeck serve` printed: sets the session cookie, returns the CSRF token. */
export async function POST(req: Request): Promise<Response> {
  const refused = refuseForeign(req);
  if (refused) return refused;
  const auth = getConsoleAuth();
  if (!auth)
    return jsonResponse(
      { error: 'console sign-in is not set up in this process: start the console with `meshdeck serve`' },
      503,
    );
  const body = await readJsonBody(req, 4096);
  if (!body.ok) return body.response;
  const parsed = LoginBody.safeParse(body.value);
  if (!parsed.success) return jsonResponse({ error: 'send {"token": "<the console token>"}' }, 400);
  const session = auth.login(parsed.data.token);
  if (!session)
    return jsonResponse(
      {
        error: auth.tokenSignIn
          ? 'wrong console token: use the URL `meshdeck serve` printed when it started'
          : 'sign-in with the console token is off: sign in with the OpenID provider',
      },
      401,
    );
  // A browser that signs in again gets a new session; the old one ends.
  auth.logout(readCookie(req, SESSION_COOKIE));
  return jsonResponse({ csrfToken: session.csrfToken }, 200, {
    'Set-Cookie': sessionCookie(req, session.id),
  });
}

/**
 * Signs out: ends the session and removes the cookie. A session an OpenID Provider opened ends there
 * too when the provider offers RP-initiated logout: the answer's `endSessionUrl` (which carries the ID
 * token as its hint, the only place it ever leaves the server) is where the browser goes next.
 */
export function DELETE(req: Request): Response {
  const refused = refuseForeign(req);
  if (refused) return refused;
  const ended = getConsoleAuth()?.logout(readCookie(req, SESSION_COOKIE));
  const endSessionUrl =
    ended?.identity.method === 'oidc' ? getOidcSignIn()?.endSessionUrl(ended.idToken)?.href : undefined;
  return jsonResponse(
    { authenticated: false, signedOut: true, ...(endSessionUrl ? { endSessionUrl } : {}) },
    200,
    { 'Set-Cookie': clearedSessionCookie(req) },
  );
}
