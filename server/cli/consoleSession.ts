/**
 * A console session for a CLI command that changes something through a running console (probe,
 * rollout), opened as the browser opens one, with the console token, and closed again afterwards:
 * sessions are few (the least recently used is dropped), so a script must not sign the browser out.
 */
import { CONSOLE_TOKEN_ENV, CSRF_HEADER } from '../console/consoleAuth';
import { findConsoleToken } from '../console/serveConsole';
import { localMeshStateDir } from '../controlPlane/localMeshPaths';
import { CliError, ExitCode } from './cliError';

/** The session cookie and CSRF token a mutation sends. */
export interface ConsoleSession {
  cookie: string;
  csrfToken: string;
}

/** Refuses a console URL that is not on this host (the token must not travel). */
export function localConsoleUrl(command: string, consoleUrl: string, pathname: string): URL {
  const url = new URL(pathname, consoleUrl);
  if (!/^(127\.|localhost$|\[::1\]$)/.test(url.hostname))
    throw new CliError(`${command}: ${consoleUrl} is not on this host`);
  return url;
}

/** The CliError for a console that did not answer. */
export function unreachable(command: string, consoleUrl: string, e: unknown): CliError {
  return new CliError(
    `${command}: cannot reach the console at ${consoleUrl} (${(e as Error).message}); is meshdeck serve running?`,
    ExitCode.usage,
  );
}

/**
 * Opens a session with the console token: `token`, else $MESHDECK_CONSOLE_TOKEN, else the runtime file
 * `meshdeck serve` keeps for that port on this machine.
 */
export async function openConsoleSession(command: string, url: URL, token?: string): Promise<ConsoleSession> {
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const t = token ?? (process.env[CONSOLE_TOKEN_ENV] || (await findConsoleToken(localMeshStateDir(), port)));
  if (!t)
    throw new CliError(
      `${command}: no console token for ${url.origin}: pass --token (the token= part of the URL meshdeck serve printed) or set ${CONSOLE_TOKEN_ENV}`,
      ExitCode.usage,
    );
  let res: Response;
  try {
    res = await fetch(new URL('/api/session', url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: url.origin },
      body: JSON.stringify({ token: t }),
      signal: AbortSignal.timeout(15000),
    });
  } catch (e) {
    throw unreachable(command, url.origin, e);
  }
  const body = (await res.json().catch(() => ({}))) as { csrfToken?: string; error?: string };
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith('meshdeck_session='));
  if (!res.ok || !body.csrfToken || !cookie)
    throw new CliError(
      `${command}: signing in to ${url.origin} failed: ${body.error ?? `HTTP ${res.status}`}`,
      ExitCode.usage,
    );
  return { cookie: cookie.split(';')[0]!, csrfToken: body.csrfToken };
}

/** Ends the session (best effort). */
export async function closeConsoleSession(url: URL, session: ConsoleSession): Promise<void> {
  await fetch(new URL('/api/session', url), {
    method: 'DELETE',
    headers: { cookie: session.cookie, origin: url.origin },
    signal: AbortSignal.timeout(5000),
  }).catch(() => undefined);
}

/** The headers of a JSON mutation in `session`. */
export function sessionHeaders(url: URL, session: ConsoleSession): Record<string, string> {
  return {
    'content-type': 'application/json',
    origin: url.origin,
    cookie: session.cookie,
    [CSRF_HEADER]: session.csrfToken,
  };
}
