/**
 * The console's own route handlers (app/api/...) served over real HTTP on 127.0.0.1, without Next.js:
 * for tests of clients that speak HTTP to the console (the CLI), where a `next build` is not at hand. It
 * only turns node's request into a fetch Request and the handler's Response back; the handlers are the
 * real ones, with their session and CSRF checks.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

// Each handler names its own params (`{id: string}`); the server hands every one what the path held.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Handler = (req: Request, ctx: { params: Promise<any> }) => Response | Promise<Response>;

/** A route: its path pattern (`:name` is a parameter) and its handlers by method. */
export interface TestRoute {
  path: string;
  methods: Partial<Record<'GET' | 'POST' | 'DELETE', Handler>>;
}

/** Serves `routes` on 127.0.0.1 (an ephemeral port); its base URL and a close function. */
export async function serveRoutes(routes: TestRoute[]): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    void answer(routes, req).then(
      async (r) => {
        res.writeHead(r.status, Object.fromEntries(r.headers));
        res.end(Buffer.from(await r.arrayBuffer()));
      },
      (e: unknown) => res.writeHead(500).end(String(e)),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

async function answer(routes: TestRoute[], req: IncomingMessage): Promise<Response> {
  const url = new URL(req.url ?? '/', `http://${req.headers.host ?? '127.0.0.1'}`);
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
  for (const route of routes) {
    const params = match(route.path, url.pathname);
    if (!params) continue;
    const handler = route.methods[req.method as keyof TestRoute['methods']];
    if (!handler) return new Response(null, { status: 405 });
    const body = chunks.length && req.method !== 'GET' ? Buffer.concat(chunks) : undefined;
    return handler(new Request(url, { method: req.method, headers, body }), {
      params: Promise.resolve(params),
    });
  }
  return new Response(null, { status: 404 });
}

function match(pattern: string, pathname: string): Record<string, string> | undefined {
  const want = pattern.split('/');
  const got = pathname.split('/');
  if (want.length !== got.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    if (want[i]!.startsWith(':')) params[want[i]!.slice(1)] = decodeURIComponent(got[i]!);
    else if (want[i] !== got[i]) return undefined;
  }
  return params;
}
