/**
 * The one HTTP path of the fetch-based providers (GitLab, Gitea/Forgejo): JSON in and out, a time limit,
 * and every failure turned into a ProviderError carrying the forge's own message with the token taken out.
 */
import { ProviderError, type ProviderName, providerError, providerHint, redactToken } from './ProviderError';

/** The default per-request time limit. */
export const DEFAULT_TIMEOUT_MS = 30_000;
const MAX_MESSAGE = 2000;

export interface ForgeRequest {
  provider: ProviderName;
  operation: string;
  method: 'GET' | 'POST';
  url: string;
  /** The auth header(s); their values never reach an error or a log. */
  authHeaders: Record<string, string>;
  /** The token, so it can be redacted from whatever the forge echoes back. */
  token: string;
  body?: unknown;
  timeoutMs?: number;
}

/** The parsed JSON answer of a 2xx response (undefined for an empty body). */
export async function forgeRequest(req: ForgeRequest): Promise<unknown> {
  const timeoutMs = req.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const fail = (status: number | null, message: string) =>
    providerError(req.provider, req.operation, status, redactToken(message, req.token).slice(0, MAX_MESSAGE));

  let res: Response;
  try {
    res = await fetch(req.url, {
      method: req.method,
      headers: {
        accept: 'application/json',
        'user-agent': 'meshdeck',
        ...(req.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...req.authHeaders,
      },
      body: req.body === undefined ? undefined : JSON.stringify(req.body),
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'follow',
    });
  } catch (e) {
    throw fail(null, networkMessage(e, timeoutMs));
  }

  let text: string;
  try {
    text = await res.text();
  } catch (e) {
    throw fail(null, networkMessage(e, timeoutMs));
  }
  let data: unknown = undefined;
  let parsed = true;
  if (text.trim()) {
    try {
      data = JSON.parse(text);
    } catch {
      parsed = false;
    }
  }
  if (!res.ok) throw fail(res.status, forgeMessage(data, parsed ? '' : text, res.status, res.statusText));
  if (!parsed) {
    const message = redactToken(
      `HTTP ${res.status} with a body that is not JSON: ${text.slice(0, 200)}`,
      req.token,
    );
    const hint = providerHint(req.provider, 'bad-response');
    throw new ProviderError(req.provider, res.status, message, hint, 'bad-response', req.operation);
  }
  return data;
}

/** The client-side reason a request got no answer (fetch hides it in `cause`). */
export function networkMessage(e: unknown, timeoutMs: number): string {
  if (e instanceof Error && (e.name === 'TimeoutError' || e.name === 'AbortError')) {
    return `no answer within ${timeoutMs} ms`;
  }
  const cause = e instanceof Error ? (e.cause as { code?: string; message?: string } | undefined) : undefined;
  const base = e instanceof Error ? e.message : String(e);
  if (cause?.code || cause?.message)
    return `${base}: ${[cause.code, cause.message].filter(Boolean).join(' ')}`;
  return base;
}

/**
 * The forge's own words from an error body. GitHub: `{message, errors: [{message} | {field, code}]}`;
 * GitLab: `{message: string | string[] | {field: string[]}}` or `{error, error_description}`;
 * Gitea/Forgejo: `{message, url}` or a list of binding errors `[{fieldNames, message}]`.
 */
export function forgeMessage(data: unknown, rawText: string, status: number, statusText: string): string {
  const parts: string[] = [];
  const add = (v: unknown) => {
    if (typeof v === 'string' && v.trim()) parts.push(v.trim());
  };
  if (Array.isArray(data)) {
    for (const item of data) {
      if (typeof item === 'string') add(item);
      else if (item && typeof item === 'object') {
        const o = item as { fieldNames?: unknown; message?: unknown };
        const fields = Array.isArray(o.fieldNames) ? o.fieldNames.join(', ') : '';
        add(fields ? `${fields}: ${String(o.message ?? '')}` : o.message);
      }
    }
  } else if (data && typeof data === 'object') {
    const o = data as Record<string, unknown>;
    const m = o.message;
    if (typeof m === 'string') add(m);
    else if (Array.isArray(m)) m.forEach(add);
    else if (m && typeof m === 'object') {
      for (const [field, v] of Object.entries(m as Record<string, unknown>)) {
        add(`${field} ${Array.isArray(v) ? v.join(', ') : String(v)}`);
      }
    }
    if (typeof o.error === 'string')
      add(o.error_description ? `${o.error}: ${String(o.error_description)}` : o.error);
    if (Array.isArray(o.errors)) {
      const details = o.errors
        .map((e) => {
          if (typeof e === 'string') return e;
          const x = e as { message?: unknown; field?: unknown; code?: unknown; resource?: unknown };
          if (typeof x.message === 'string') return x.message;
          return [x.resource, x.field, x.code].filter((p) => typeof p === 'string').join(' ');
        })
        .filter((s) => s.trim());
      if (details.length > 0) {
        const head = parts.pop();
        parts.push(head ? `${head}: ${details.join('; ')}` : details.join('; '));
      }
    }
  }
  if (parts.length === 0) add(rawText.slice(0, 500));
  return parts.length > 0 ? parts.join('; ') : `HTTP ${status}${statusText ? ` ${statusText}` : ''}`;
}

/** The base URL without trailing slashes. */
export function trimBase(url: string): string {
  return url.replace(/\/+$/, '');
}

/** `user:branch` (a fork's branch) or `branch`. */
export function splitHead(head: string): { owner?: string; branch: string } {
  const i = head.indexOf(':');
  return i < 0 ? { branch: head } : { owner: head.slice(0, i), branch: head.slice(i + 1) };
}
