/**
 * A typed client for one l7mp 0.5.7 proxy's REST API (see shared/notes/l7mp-rest-api.md §1-§3, §12).
 *
 * The real proxy answers successes without a Content-Type header, reports "not found" as 400, schema
 * errors as 422 with a list of ajv errors, and some failures with a bare status code in `content`.
 * Bodies are therefore always parsed as JSON regardless of headers, and every failure becomes one of two
 * typed errors the caller can print without a stack trace.
 *
 * Requests go through node:http with one keep-alive agent, not fetch: a push to 20 proxies is dozens of
 * tiny requests, and undici's per-request machinery plus separate header and body writes cost about 2 ms
 * of CPU each on a 2-core machine (bench/l7mpFanout), as much as the proxy's own work. Idle sockets are
 * closed after 4 s, before the proxy's `Keep-Alive: timeout=5` closes them under a request.
 */
import http from 'node:http';
import { parseL7mpDump } from '@/lib/l7mp/parseL7mpDump';
import { l7mpPaths } from '@/lib/l7mp/l7mpPaths';
import type { L7mpConfig, L7mpOperation } from '@/lib/model/l7mp';

/** How long one request may take unless the caller says otherwise; l7mp answers in a few ms once up. */
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
    /** The write that failed; undefined for reads. */
    readonly op?: L7mpOperation,
  ) {
    super(`l7mp API ${methodPrefix(op)}${url}: ${status} ${statusMessage}${describeSuffix(proxyMessage)}`);
  }
}

/** The proxy could not be reached at all: refused, reset, unknown host or no answer in time. */
export class L7mpUnreachableError extends Error {
  override readonly name = 'L7mpUnreachableError';
  /** The write that was attempted; undefined for reads. It may or may not have taken effect. */
  readonly op?: L7mpOperation;

  constructor(
    readonly url: string,
    /** Why, as short as possible: `connect ECONNREFUSED 127.0.0.1:1234`, `no answer within 5000 ms`. */
    readonly reason: string,
    options?: { cause?: unknown; op?: L7mpOperation },
  ) {
    super(`cannot reach l7mp API at ${url}: ${reason}`, options);
    this.op = options?.op;
  }
}

/** A proxy's live configuration in Meshdeck's model, plus what of it could not be modelled. */
export interface L7mpLive {
  config: L7mpConfig;
  /** Live objects that were skipped or simplified (see parseL7mpDump). */
  ignored: string[];
  /** True if the recursive listener dump was refused (422, a stale rule) and assembled per rulelist. */
  fallback?: boolean;
}

/** Per-call options. */
export interface L7mpRequestOptions {
  /** Overrides the client's per-request timeout. */
  timeoutMs?: number;
  /** Aborts the request; an L7mpApiError/L7mpUnreachableError as the reason is rethrown as is. */
  signal?: AbortSignal;
}

/** Client-wide options. */
export interface L7mpRestClientOptions {
  /** Per-request timeout (AbortSignal.timeout); default DEFAULT_L7MP_TIMEOUT_MS. */
  timeoutMs?: number;
}

/** What a successful apply did: `already-gone` is a DELETE of an object that did not exist. */
export type L7mpApplyOutcome = 'applied' | 'already-gone';

/** DELETE collections and the kind word l7mp uses in its "Unknown <kind> \"name\"" messages. */
const DELETE_KINDS: Record<string, string> = {
  listeners: 'listener',
  clusters: 'cluster',
  routes: 'route',
  rules: 'rule',
  rulelists: 'rulelist',
};

/** Shared by every client: sockets are kept per host:port, so proxies do not share connections. */
const agent = new http.Agent({ keepAlive: true, timeout: 4000, maxSockets: 16 });

/** A typed client for one l7mp proxy: GETs, the writes of L7mpOperations, and the live-config read. */
export class L7mpRestClient {
  readonly apiUrl: string;
  readonly timeoutMs: number;
  /** The parsed apiUrl, or why it cannot be parsed (reported by every request, as a network error). */
  private readonly target: RequestTarget | Error;

  constructor(apiUrl: string, options: L7mpRestClientOptions = {}) {
    this.apiUrl = apiUrl.replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs ?? DEFAULT_L7MP_TIMEOUT_MS;
    this.target = requestTarget(this.apiUrl);
  }

  /** GETs an API path (e.g. l7mpPaths.clusters()) and returns its parsed JSON body. */
  get(path: string, options?: L7mpRequestOptions): Promise<unknown> {
    return this.request('GET', path, undefined, options);
  }

  /**
   * Sends one operation. A DELETE the proxy answers with "this object does not exist" counts as done
   * (`already-gone`), but only when the message names the object of the path: a recursive delete that
   * trips over a missing *child* ("Cannot delete rule: Unknown rule" on a rulelist) is a real failure.
   */
  async apply(op: L7mpOperation, options?: L7mpRequestOptions): Promise<L7mpApplyOutcome> {
    try {
      await this.request(op.method, op.path, op.method === 'POST' ? (op.body ?? {}) : undefined, options, op);
      return 'applied';
    } catch (e) {
      if (op.method === 'DELETE' && e instanceof L7mpApiError && isAlreadyGone(op.path, e)) {
        return 'already-gone';
      }
      throw e;
    }
  }

  /**
   * Reads the live configuration: the recursive listener and cluster dumps and the route dump, in
   * parallel, parsed by parseL7mpDump (which drops the controller's own objects). In strict mode a
   * rulelist naming a deleted rule makes `GET /listeners?recursive=true` answer 422 for the whole
   * proxy (lib/l7mp/testdata/README.md, stale-rule); the listeners are then assembled as l7mp's
   * dumpListener does: `GET /listeners` plus `GET /rulelists/<rl>?recursive=true` per listener.
   * With `timeoutMs` that is also the deadline of the whole read. The first failure aborts the rest.
   */
  async readLive(options: L7mpRequestOptions = {}): Promise<L7mpLive> {
    const failed = new AbortController();
    const signals = [failed.signal];
    if (options.signal) signals.push(options.signal);
    if (options.timeoutMs !== undefined) signals.push(AbortSignal.timeout(options.timeoutMs));
    const request: L7mpRequestOptions = { signal: AbortSignal.any(signals) };
    if (options.timeoutMs !== undefined) request.timeoutMs = options.timeoutMs;
    const get = (path: string): Promise<unknown> =>
      this.get(path, request).catch((e: unknown) => {
        failed.abort(e);
        throw e;
      });

    let fallback = false;
    const listenersPromise = this.get(l7mpPaths.listeners({ recursive: true }), request).catch(
      (e: unknown) => {
        if (e instanceof L7mpApiError && e.status === 422) {
          fallback = true;
          return this.listenersPerRulelist(get);
        }
        failed.abort(e);
        throw e;
      },
    );
    const [listeners, clusters, routes] = await Promise.all([
      listenersPromise,
      get(l7mpPaths.clusters({ recursive: true })),
      get(l7mpPaths.routes()),
    ]);
    const live: L7mpLive = parseL7mpDump({ listeners, clusters, routes });
    if (fallback) live.fallback = true;
    return live;
  }

  /** The recursive listener dump, assembled from the plain one and each listener's recursive rulelist. */
  private async listenersPerRulelist(get: (path: string) => Promise<unknown>): Promise<unknown> {
    const plain = await get(l7mpPaths.listeners());
    if (!Array.isArray(plain)) return plain;
    return Promise.all(
      plain.map(async (listener: unknown) => {
        if (!isRecord(listener) || typeof listener.rules !== 'string') return listener;
        const rulelist = listener.rules;
        try {
          const dump = await get(l7mpPaths.rulelist(rulelist, { recursive: true }));
          return { ...listener, rules: isRecord(dump) ? dump.rules : dump };
        } catch (e) {
          // Deleted in between: dumpListener shows a missing rulelist the same way.
          if (e instanceof L7mpApiError && e.status === 400)
            return { ...listener, rules: `${rulelist}:<STALE>` };
          throw e;
        }
      }),
    );
  }

  private async request(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    body: unknown,
    options: L7mpRequestOptions | undefined,
    op?: L7mpOperation,
  ): Promise<unknown> {
    const url = `${this.apiUrl}${path}`;
    const timeoutMs = options?.timeoutMs ?? this.timeoutMs;
    const headers: Record<string, string | number> = { accept: 'application/json' };
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    if (payload) {
      // Without a Content-Type l7mp answers a POST with 500 (content 415).
      headers['content-type'] = 'application/json';
      headers['content-length'] = payload.length;
    }
    if (this.target instanceof Error)
      throw unreachable(url, this.target, false, options?.signal, timeoutMs, op);
    const exchange: Exchange = { target: this.target, path, method, headers, payload, timeoutMs };
    if (options?.signal) exchange.signal = options.signal;
    let status: number;
    let statusText: string;
    let text: string;
    try {
      ({ status, statusText, text } = await send(exchange));
    } catch (e) {
      throw unreachable(url, e, exchange.timedOut === true, options?.signal, timeoutMs, op);
    }
    const parsed = parseJson(text);
    if (status < 200 || status > 299) {
      const content = isRecord(parsed) ? proxyMessageOf(parsed.content) : undefined;
      const message = isRecord(parsed) && typeof parsed.message === 'string' ? parsed.message : statusText;
      // A body that is not JSON did not come from l7mp (a gateway, another server on the port): show it.
      throw new L7mpApiError(
        url,
        status,
        content ?? (parsed === undefined ? abbreviate(text) : undefined),
        message,
        op,
      );
    }
    if (parsed === undefined) {
      throw new L7mpApiError(
        url,
        status,
        `response is not JSON: ${abbreviate(text)}`,
        'Invalid Response',
        op,
      );
    }
    return parsed;
  }
}

/** Where a client's requests go: the parts of its apiUrl, parsed once. */
interface RequestTarget {
  protocol: string;
  hostname: string;
  port: string;
  /** The apiUrl's own path (without a trailing slash), put before every request path. */
  base: string;
}

function requestTarget(apiUrl: string): RequestTarget | Error {
  let url: URL;
  try {
    url = new URL(apiUrl);
  } catch (e) {
    return e instanceof Error ? e : new Error(String(e));
  }
  return {
    protocol: url.protocol,
    // node:http wants an IPv6 address without the URL's brackets.
    hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port,
    base: url.pathname.replace(/\/+$/, ''),
  };
}

/** One HTTP exchange; `timedOut` is set when its own deadline ended it. */
interface Exchange {
  target: RequestTarget;
  path: string;
  method: string;
  headers: Record<string, string | number>;
  payload: Buffer | undefined;
  timeoutMs: number;
  signal?: AbortSignal;
  timedOut?: boolean;
}

/**
 * Sends one exchange; headers and body leave in one write (`end(payload)`). Rejects on network errors,
 * on its deadline and on an abort of `signal`. A plain timer and listener, not AbortSignal.timeout and
 * AbortSignal.any: those were a tenth of the control plane's CPU in a push to 20 proxies.
 */
function send(exchange: Exchange): Promise<{ status: number; statusText: string; text: string }> {
  const { target, signal } = exchange;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
      return;
    }
    const req = http.request(
      {
        protocol: target.protocol,
        hostname: target.hostname,
        port: target.port,
        path: target.base + exchange.path,
        method: exchange.method,
        headers: exchange.headers,
        agent,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', fail);
        res.on('end', () => {
          settle();
          resolve({
            status: res.statusCode ?? 0,
            statusText: res.statusMessage ?? '',
            text: Buffer.concat(chunks).toString('utf8'),
          });
        });
      },
    );
    const timer = setTimeout(() => {
      exchange.timedOut = true;
      req.destroy(new Error(`no answer within ${exchange.timeoutMs} ms`));
    }, exchange.timeoutMs);
    const onAbort = () => req.destroy(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
    signal?.addEventListener('abort', onAbort, { once: true });
    function settle(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
    function fail(e: unknown): void {
      settle();
      reject(e);
    }
    req.on('error', fail);
    req.end(exchange.payload);
  });
}

/** Whether a DELETE's 400 says that the very object of the path does not exist. */
function isAlreadyGone(path: string, e: L7mpApiError): boolean {
  if (e.status !== 400 || typeof e.proxyMessage !== 'string') return false;
  const message = e.proxyMessage;
  const match = /^\/api\/v1\/([a-z]+)\/([^/?]+)(?:\?.*)?$/.exec(path);
  if (match === null) return false;
  const [, collection = '', encoded = ''] = match;
  // Endpoints and sessions answer a bare "Not Found" / "No such session" for unknown names.
  if (collection === 'endpoints') return message === 'Not Found';
  if (collection === 'sessions') return message === 'No such session';
  const kind = DELETE_KINDS[collection];
  if (kind === undefined) return false;
  let name: string;
  try {
    name = decodeURIComponent(encoded);
  } catch {
    return false;
  }
  const gone = /^Cannot delete (\w+): Unknown (\w+) "(.*)"$/.exec(message);
  return (
    gone !== null && gone[1]?.toLowerCase() === kind && gone[2]?.toLowerCase() === kind && gone[3] === name
  );
}

function unreachable(
  url: string,
  e: unknown,
  ownDeadline: boolean,
  external: AbortSignal | undefined,
  timeoutMs: number,
  op: L7mpOperation | undefined,
): Error {
  const reason: unknown = external?.aborted ? external.reason : undefined;
  // Another request of the same read failed first: rethrow its error, not the abort it caused.
  if (reason instanceof L7mpApiError || reason instanceof L7mpUnreachableError) return reason;
  // AbortSignal.timeout aborts with a DOMException named TimeoutError (a shared read deadline too).
  const timedOut = ownDeadline || (reason as { name?: unknown } | undefined)?.name === 'TimeoutError';
  if (timedOut) {
    return new L7mpUnreachableError(url, `no answer within ${timeoutMs} ms`, { cause: e, op });
  }
  if (external?.aborted) return new L7mpUnreachableError(url, 'aborted', { cause: e, op });
  const why = e instanceof Error ? e.message : String(e);
  return new L7mpUnreachableError(url, why, { cause: e, op });
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

function methodPrefix(op: L7mpOperation | undefined): string {
  return op === undefined ? '' : `${op.method} `;
}

function abbreviate(text: string): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > 80 ? `${oneLine.slice(0, 79)}…` : oneLine || '(empty body)';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
