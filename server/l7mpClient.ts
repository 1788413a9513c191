/**
 * A small typed client for the l7mp 0.5.7 REST API (see shared/notes/l7mp-rest-api.md §1-§3).
 * For now it only reads a proxy's live configuration; the applier will add the write calls.
 *
 * The real proxy answers GETs and writes without a Content-Type header, reports "not found" as 400,
 * schema errors as 422 with a list of ajv errors, and some failures with a bare status code in
 * `content`. Bodies are therefore always parsed as JSON regardless of headers, and every failure
 * becomes one of two typed errors the caller can print without a stack trace.
 */
import { parseL7mpDump } from '@/lib/l7mp/parseL7mpDump';
import { l7mpPaths } from '@/lib/l7mp/l7mpPaths';
import type { L7mpConfig } from '@/lib/model/l7mp';

/** How long a read may take unless the caller says otherwise; l7mp answers in a few ms once up. */
export const DEFAULT_L7MP_TIMEOUT_MS = 5000;

/** One ajv error as l7mp reports schema violations in strict mode (422). */
export interface L7mpAjvError {
  keyword?: string;
  dataPath?: string;
  schemaPath?: string;
  params?: Record<string, unknown>;
  message?: string;
}

/** The `content` of an l7mp error body: a message, a list of ajv errors, or a bare status code. */
export type L7mpProxyMessage = string | L7mpAjvError[] | number | undefined;

/** The proxy answered, but not with success (or not with JSON). */
export class L7mpApiError extends Error {
  override readonly name = 'L7mpApiError';

  constructor(
    readonly url: string,
    readonly status: number,
    /** The error body's `content` field, as the proxy sent it. */
    readonly proxyMessage: L7mpProxyMessage,
    /** The error body's `message` field (e.g. "Bad Request"), or the HTTP status text. */
    readonly statusMessage: string,
  ) {
    super(`l7mp API ${url}: ${status} ${statusMessage}${describeSuffix(proxyMessage)}`);
  }
}

/** The proxy could not be reached at all: refused, reset, unknown host or no answer in time. */
export class L7mpUnreachableError extends Error {
  override readonly name = 'L7mpUnreachableError';

  constructor(
    readonly url: string,
    /** Why, as short as possible: `connect ECONNREFUSED 127.0.0.1:1234`, `no answer within 5000 ms`. */
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`cannot reach l7mp API at ${url}: ${reason}`, options);
  }
}

/** A proxy's live configuration in Meshdeck's model, plus what of it could not be modelled. */
export interface L7mpLive {
  config: L7mpConfig;
  /** Live objects that were skipped or simplified (see parseL7mpDump). */
  ignored: string[];
}

/** Options for reads. */
export interface L7mpReadOptions {
  /** Deadline for all requests of the read together. */
  timeoutMs?: number;
}

/**
 * Reads a proxy's live configuration: GETs the recursive listener and cluster dumps and the route
 * dump in parallel and parses them with parseL7mpDump (which drops the controller's own objects).
 * Throws L7mpApiError or L7mpUnreachableError; the first failure aborts the other requests.
 */
export async function readL7mpLive(apiUrl: string, options: L7mpReadOptions = {}): Promise<L7mpLive> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_L7MP_TIMEOUT_MS;
  const failed = new AbortController();
  const signal = AbortSignal.any([AbortSignal.timeout(timeoutMs), failed.signal]);
  const get = (path: string): Promise<unknown> =>
    l7mpGet(apiUrl, path, signal, timeoutMs).catch((e: unknown) => {
      failed.abort(e);
      throw e;
    });
  const [listeners, clusters, routes] = await Promise.all([
    get(l7mpPaths.listeners({ recursive: true })),
    get(l7mpPaths.clusters({ recursive: true })),
    get(l7mpPaths.routes()),
  ]);
  return parseL7mpDump({ listeners, clusters, routes });
}

/** `apiUrl` + an API path; apiUrl may or may not end in a slash. */
function l7mpUrl(apiUrl: string, path: string): string {
  return `${apiUrl.replace(/\/+$/, '')}${path}`;
}

async function l7mpGet(
  apiUrl: string,
  path: string,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<unknown> {
  const url = l7mpUrl(apiUrl, path);
  let status: number;
  let statusText: string;
  let text: string;
  try {
    const res = await fetch(url, { method: 'GET', signal, headers: { accept: 'application/json' } });
    status = res.status;
    statusText = res.statusText;
    text = await res.text();
  } catch (e) {
    throw unreachable(url, e, signal, timeoutMs);
  }
  const body = parseJson(text);
  if (status < 200 || status > 299) {
    const content = isRecord(body) ? proxyMessageOf(body.content) : undefined;
    const message = isRecord(body) && typeof body.message === 'string' ? body.message : statusText;
    // A body that is not JSON did not come from l7mp (a gateway, another server on the port): show it.
    throw new L7mpApiError(
      url,
      status,
      content ?? (body === undefined ? abbreviate(text) : undefined),
      message,
    );
  }
  if (body === undefined) {
    throw new L7mpApiError(url, status, `response is not JSON: ${abbreviate(text)}`, 'Invalid Response');
  }
  return body;
}

function unreachable(url: string, e: unknown, signal: AbortSignal, timeoutMs: number): Error {
  // Another request of the same read failed first: rethrow its error, not the abort it caused.
  if (
    signal.aborted &&
    (signal.reason instanceof L7mpApiError || signal.reason instanceof L7mpUnreachableError)
  ) {
    return signal.reason;
  }
  if (e instanceof Error && (e.name === 'TimeoutError' || e.name === 'AbortError')) {
    return new L7mpUnreachableError(url, `no answer within ${timeoutMs} ms`, { cause: e });
  }
  // undici reports network failures as `TypeError: fetch failed` with the system error as the cause.
  const cause = e instanceof Error ? (e.cause as (Error & { code?: string }) | undefined) : undefined;
  const reason = cause?.message ?? (e instanceof Error ? e.message : String(e));
  return new L7mpUnreachableError(url, reason, { cause: e });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function proxyMessageOf(content: unknown): L7mpProxyMessage {
  if (typeof content === 'string' || typeof content === 'number') return content;
  if (Array.isArray(content)) return content.filter(isRecord) as L7mpAjvError[];
  // Invalid JSON bodies get an error object with a stack; its message is what matters.
  if (isRecord(content) && typeof content.message === 'string') return content.message;
  return undefined;
}

/** A one-line rendering of an l7mp error `content`, for messages and logs. */
export function describeL7mpProxyMessage(content: L7mpProxyMessage): string {
  if (content === undefined) return '';
  if (typeof content === 'number') return `code ${content}`;
  if (typeof content === 'string') return content;
  // An unknown protocol lists one ajv error per oneOf branch; the last one is the informative one.
  const last = content[content.length - 1];
  if (last === undefined) return 'schema validation failed';
  const where = last.dataPath ? `${last.dataPath}: ` : '';
  const more = content.length > 1 ? ` (and ${content.length - 1} more)` : '';
  return `${where}${last.message ?? 'schema validation failed'}${more}`;
}

function describeSuffix(content: L7mpProxyMessage): string {
  const text = describeL7mpProxyMessage(content);
  return text === '' ? '' : `: ${text}`;
}

function abbreviate(text: string): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > 80 ? `${oneLine.slice(0, 79)}…` : oneLine || '(empty body)';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
