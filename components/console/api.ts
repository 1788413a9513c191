/**
 * The console's one way to call the server: JSON in and out, the CSRF header on mutations, and one
 * error type that says what failed, where and why (status, message, field errors).
 */

/** A failed call: the HTTP status (0 when the server was not reached) and the server's words. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly url: string,
    readonly body?: unknown,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** Field errors of a 400 (`{fields: [{path, message}]}`), if any. */
  get fields(): { path: string; message: string }[] {
    const f = (this.body as { fields?: unknown } | undefined)?.fields;
    return Array.isArray(f) ? (f as { path: string; message: string }[]) : [];
  }

  /** True when the route or the process behind it is not there (no `meshdeck serve`). */
  get unavailable(): boolean {
    return this.status === 0 || this.status === 404 || this.status === 503;
  }
}

let csrfToken: string | undefined;

/** Remembers the session's CSRF token for mutations. */
export function setCsrfToken(token: string | undefined): void {
  csrfToken = token;
}

/** GET/POST/PUT/PATCH/DELETE a JSON API route; throws ApiError with the server's message on failure. */
export async function apiFetch<T>(
  url: string,
  init: {
    method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
    body?: unknown;
    signal?: AbortSignal;
    /** The same request already sent (components/console/earlyDraft.ts): its answer is read instead. */
    early?: Promise<Response>;
  } = {},
): Promise<T> {
  const method = init.method ?? 'GET';
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (init.body !== undefined) headers['Content-Type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  let res: Response;
  try {
    res = await (init.early ??
      fetch(url, {
        method,
        headers,
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
        credentials: 'same-origin',
        cache: 'no-store',
        signal: init.signal,
      }));
  } catch (e) {
    if ((e as Error).name === 'AbortError') throw e;
    throw new ApiError(0, `${method} ${url}: the server did not answer (${(e as Error).message})`, url);
  }
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (!res.ok) {
    const said = (body as { error?: unknown } | undefined)?.error;
    const why =
      typeof said === 'string' ? said : res.status === 404 ? 'no such route on this server' : res.statusText;
    throw new ApiError(res.status, `${method} ${url} answered ${res.status}: ${why}`, url, body);
  }
  return body as T;
}

/** The message to show for any thrown value. */
export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
