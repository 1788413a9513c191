/**
 * FIXTURES, not a forge: a loopback HTTP server that answers with recorded request/response pairs taken
 * from the forges' published API documentation (see each fixture's `source`). It lets the GitHub and
 * GitLab providers be tested without their services (which this machine cannot reach) and records every
 * request so tests can check what the providers send. A request no fixture matches gets a 501, so a
 * provider calling the wrong endpoint fails its test.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One recorded exchange. */
export interface FixtureExchange {
  /** Where the response (body shape, status, message) is documented. */
  source: string;
  request: {
    method: 'GET' | 'POST';
    /** The path after the provider's base URL path, e.g. `/repos/octocat/Hello-World/pulls`. */
    path: string;
    /** Query parameters the request must carry (others are allowed). */
    query?: Record<string, string>;
  };
  response: { status: number; body: unknown; headers?: Record<string, string> };
}

/** A request the fixture server received. */
export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export interface FixtureForge {
  /** `http://127.0.0.1:<port>` (the instance root; the API prefix is not part of it). */
  url: string;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  /** Replaces the exchanges to answer with; each answers one request, in the order given. */
  use(exchanges: FixtureExchange[]): void;
  /** The exchanges not used yet (a test can assert that every one was used). */
  pending(): FixtureExchange[];
  close(): Promise<void>;
}

/**
 * Starts the fixture server on 127.0.0.1. `basePath` is the API prefix (`/api/v4`, `/api/v1`, `/api/v3`)
 * taken off the recorded and matched paths.
 */
export async function startFixtureForge(basePath = ''): Promise<FixtureForge> {
  let queue: FixtureExchange[] = [];
  const requests: RecordedRequest[] = [];

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const raw = Buffer.concat(chunks).toString();
      let body: unknown = raw;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        // Kept as text: a provider that sends something else than JSON is visible in the record.
      }
      const path = url.pathname.startsWith(basePath) ? url.pathname.slice(basePath.length) : url.pathname;
      const query = Object.fromEntries(url.searchParams);
      requests.push({ method: req.method ?? '', path, query, headers: req.headers, body });

      const i = queue.findIndex(
        (x) =>
          x.request.method === req.method &&
          x.request.path === path &&
          Object.entries(x.request.query ?? {}).every(([k, v]) => query[k] === v),
      );
      const match = i >= 0 ? queue.splice(i, 1)[0] : undefined;
      if (!match) {
        res.writeHead(501, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ message: `no fixture for ${req.method} ${url.pathname}${url.search}` }));
        return;
      }
      const text =
        typeof match.response.body === 'string' ? match.response.body : JSON.stringify(match.response.body);
      res.writeHead(match.response.status, {
        'content-type': 'application/json; charset=utf-8',
        ...match.response.headers,
      });
      res.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    use(exchanges) {
      queue = [...exchanges];
      requests.length = 0;
    },
    pending: () => [...queue],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
