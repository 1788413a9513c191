/** Requests the console's route handlers get in tests: a JSON POST (or PUT), anonymous or with a session. */
import { type ConsoleSession, CSRF_HEADER, SESSION_COOKIE } from '../consoleAuth';

/** A same-origin JSON POST to `url` (on 127.0.0.1:3100), with `session`'s cookie and CSRF token when given. */
export function jsonPost(
  url: string,
  body: string,
  session?: Pick<ConsoleSession, 'id' | 'csrfToken'>,
): Request {
  return jsonRequest('POST', url, body, session);
}

/** jsonPost with another method (PUT, PATCH, DELETE). */
export function jsonRequest(
  method: string,
  url: string,
  body: string,
  session?: Pick<ConsoleSession, 'id' | 'csrfToken'>,
): Request {
  return new Request(url, {
    method,
    headers: {
      'content-type': 'application/json',
      ...(session
        ? {
            cookie: `${SESSION_COOKIE}=${session.id}`,
            [CSRF_HEADER]: session.csrfToken,
            origin: new URL(url).origin,
          }
        : {}),
    },
    body,
  });
}
