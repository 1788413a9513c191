/**
 * The answer to a failed OIDC sign-in (issue 7 §4): a small HTML page that says what went wrong and
 * what to do (a browser lands on it after the provider's redirect, where raw JSON helps no one), or
 * JSON when the request asks for it. Everything that comes from the request or the provider is
 * escaped, and a Content-Security-Policy without scripts backs that up.
 */
import { OIDC_LOGIN_PATH, OidcError, type OidcFailure } from './oidc';

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );
}

/** The provider's own words are shown, but not without bound. */
const MAX_PROVIDER_TEXT = 500;

const HEADINGS: Record<OidcFailure | 'unexpected', { title: string; why: string }> = {
  expired: {
    title: 'This sign-in attempt is no longer valid',
    why: 'The console has no sign-in in progress for this browser: it took longer than 10 minutes, this page was reloaded or opened again, or the browser does not keep cookies for the console.',
  },
  state: {
    title: 'The sign-in could not be verified',
    why: 'The answer from the OpenID provider does not belong to the sign-in this browser started (it may be forged, or two sign-ins crossed).',
  },
  'provider-refused': {
    title: 'The OpenID provider refused the sign-in',
    why: 'The provider sent you back without signing you in: you may have cancelled or declined, or the provider does not let you use this console.',
  },
  'answer-refused': {
    title: 'The OpenID provider’s answer was not accepted',
    why: 'The console could not validate what the provider returned, so it opened no session.',
  },
  'no-user': {
    title: 'The OpenID provider did not say who you are',
    why: 'The ID token carries no claim the console can use as your user name.',
  },
  'not-allowed': {
    title: 'You may not use this console',
    why: 'You signed in at the provider, but you are not a member of a group this console admits.',
  },
  'provider-unreachable': {
    title: 'The OpenID provider cannot be reached',
    why: 'The console could not talk to the OpenID provider (it may be down or unreachable from the console’s server).',
  },
  unexpected: {
    title: 'The sign-in failed',
    why: 'Something unexpected went wrong on the console’s server; its log has the details.',
  },
};

export interface SignInErrorOptions {
  /** Whether the console token still opens sessions (then the page says that the token URL works too). */
  tokenSignIn: boolean;
  /** The name of the provider, shown on the "Try again" line. */
  providerName?: string;
  /** Extra headers (e.g. the Set-Cookie that drops the sign-in in progress). */
  headers?: Headers;
}

/** Whether the request prefers JSON to HTML (an API client, not a browser's navigation). */
function wantsJson(req: Request): boolean {
  const accept = req.headers.get('accept') ?? '';
  return /\bapplication\/json\b/i.test(accept) && !/\btext\/html\b/i.test(accept);
}

/**
 * The response to a failed sign-in: status kept from the OidcError (500 for anything else, whose
 * message is not shown), HTML unless the request asks for JSON.
 */
export function signInErrorResponse(req: Request, e: unknown, o: SignInErrorOptions): Response {
  const known = e instanceof OidcError;
  const status = known ? e.status : 500;
  const message = known ? e.message : 'an unexpected error; see the console server log';
  const headers = new Headers(o.headers);
  headers.set('Cache-Control', 'no-store');
  if (wantsJson(req)) {
    headers.set('Content-Type', 'application/json');
    return new Response(JSON.stringify({ error: `sign-in failed: ${message}` }), { status, headers });
  }
  const { title, why } = HEADINGS[known ? e.failure : 'unexpected'];
  const said = known ? e.providerSaid : undefined;
  const shown =
    said === undefined
      ? undefined
      : said.length > MAX_PROVIDER_TEXT
        ? `${said.slice(0, MAX_PROVIDER_TEXT)}…`
        : said;
  const provider = o.providerName ? ` with ${escapeHtml(o.providerName)}` : '';
  const html = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Sign-in failed · Meshdeck</title>
<style>
body{font-family:system-ui,sans-serif;background:#f4f5f7;color:#1d2330;margin:0;padding:48px 16px}
main{max-width:560px;margin:0 auto;background:#fff;border:1px solid #d8dce3;border-radius:8px;padding:24px 28px}
h1{font-size:1.25rem;margin:0 0 12px}
p{line-height:1.5;margin:0 0 12px}
blockquote{margin:0 0 12px;padding:8px 12px;border-left:3px solid #c0392b;background:#fbf1f0;overflow-wrap:anywhere}
.status{color:#5b6475;font-size:.85rem}
a.button{display:inline-block;background:#2d6cdf;color:#fff;text-decoration:none;padding:8px 16px;border-radius:6px;margin:4px 12px 12px 0}
@media (prefers-color-scheme:dark){body{background:#14171c;color:#e6e9ef}main{background:#1d2128;border-color:#323845}blockquote{background:#2b1f1f}.status{color:#9aa3b5}}
</style>
</head>
<body>
<main data-testid="sign-in-error">
<h1>${escapeHtml(title)}</h1>
<p>${escapeHtml(why)}</p>
${shown === undefined ? '' : `<p>The provider said:</p>\n<blockquote data-testid="provider-said">${escapeHtml(shown)}</blockquote>\n`}<p class="status" data-testid="sign-in-error-detail">${escapeHtml(said === undefined ? `${status}: ${message}` : `HTTP ${status}`)}</p>
<p><a class="button" href="${OIDC_LOGIN_PATH}" data-testid="try-again">Try again</a> <a href="/">Open the console (read-only)</a></p>
<p class="status">“Try again” starts a new sign-in${provider}.</p>
${o.tokenSignIn ? '<p class="status" data-testid="token-note">The console URL that <code>meshdeck serve</code> printed (it carries <code>?token=…</code>) signs you in too.</p>\n' : ''}
</main>
</body>
</html>
`;
  headers.set('Content-Type', 'text/html; charset=utf-8');
  // Defence in depth: even if some text escaped its escaping, no script or foreign resource could run.
  headers.set(
    'Content-Security-Policy',
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
  );
  headers.set('X-Content-Type-Options', 'nosniff');
  headers.set('Referrer-Policy', 'no-referrer');
  return new Response(html, { status, headers });
}
