/**
 * A real smart-HTTP git remote for tests: a node:http server on loopback that runs
 * `git http-backend` as a CGI for every request, behind HTTP basic auth, with receive-pack (push)
 * enabled. Repositories are bare repositories under `root`, served as `<url>/<name>.git`.
 */
import { spawn } from 'node:child_process';
import { timingSafeEqual } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

const HTTP_BACKEND = '/usr/lib/git-core/git-http-backend';

export interface SmartHttpRemote {
  /** `http://127.0.0.1:<port>` (no credentials in it). */
  baseUrl: string;
  /** The folder holding the bare repositories (GIT_PROJECT_ROOT). */
  root: string;
  /** The clone URL of `<root>/<name>.git`. */
  url(name: string): string;
  /**
   * Requests answered, how many of them were refused for missing or wrong credentials, and how many
   * receive-pack ref advertisements (`info/refs?service=git-receive-pack`: one per push) were served.
   */
  stats: { requests: number; unauthorized: number; receivePackAdvertisements: number };
  /** Stops the server and removes `root` (when the remote created it). */
  stop(): Promise<void>;
}

export interface SmartHttpRemoteOptions {
  username: string;
  token: string;
  /** Serve an existing folder instead of a new temp one (then stop() leaves it). */
  root?: string;
  /**
   * Echo refused credentials in the 401 body, which git prints as `remote:` lines: a careless
   * proxy does that, and it is how a test shows that a secret git prints is redacted.
   */
  echoRefusedCredentials?: boolean;
  /**
   * Awaited before the n-th receive-pack ref advertisement (n = 1, 2, ...) is served: git decides
   * "non-fast-forward" / "fetch first" from the refs advertised, so a test moves refs here to make
   * someone else's push land between a client's fetch and its push. A throw answers 500.
   */
  beforeReceivePackAdvertisement?: (n: number) => Promise<void>;
}

/** Starts the remote on 127.0.0.1 with a free port. */
export async function startSmartHttpRemote(o: SmartHttpRemoteOptions): Promise<SmartHttpRemote> {
  const ownRoot = o.root === undefined;
  const root = o.root ?? (await mkdtemp(path.join(os.tmpdir(), 'meshdeck-git-remote-')));
  const stats = { requests: 0, unauthorized: 0, receivePackAdvertisements: 0 };
  const expected = Buffer.from(`${o.username}:${o.token}`);

  const authorized = (req: IncomingMessage): boolean => {
    const m = /^Basic ([A-Za-z0-9+/=]+)$/.exec(req.headers.authorization ?? '');
    if (!m) return false;
    const given = Buffer.from(m[1]!, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  };

  const server = createServer((req, res) => {
    stats.requests++;
    if (!authorized(req)) {
      stats.unauthorized++;
      req.resume();
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="meshdeck-test"', 'Content-Type': 'text/plain' });
      const sent = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      const echo =
        o.echoRefusedCredentials && sent
          ? `refused credentials: ${Buffer.from(sent, 'base64').toString('utf8')} (Basic ${sent})\n`
          : '';
      res.end(`authentication required\n${echo}`);
      return;
    }
    const url = new URL(req.url ?? '/', 'http://localhost');
    const advertisement =
      req.method === 'GET' &&
      url.pathname.endsWith('/info/refs') &&
      url.searchParams.get('service') === 'git-receive-pack';
    if (!advertisement) {
      runBackend(root, o.username, req, res);
      return;
    }
    const n = ++stats.receivePackAdvertisements;
    const hook = o.beforeReceivePackAdvertisement ?? (() => Promise.resolve());
    hook(n).then(
      () => runBackend(root, o.username, req, res),
      (e: unknown) => {
        req.resume();
        res.writeHead(500, { 'Content-Type': 'text/plain' });
        res.end(`beforeReceivePackAdvertisement(${n}) failed: ${(e as Error).message ?? String(e)}\n`);
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const port = (server.address() as AddressInfo).port;
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    baseUrl,
    root,
    stats,
    url: (name) => `${baseUrl}/${name}.git`,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (ownRoot) await rm(root, { recursive: true, force: true });
    },
  };
}

/** One CGI request: the request body streams into git http-backend, its CGI answer back out. */
function runBackend(root: string, user: string, req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    GIT_PROJECT_ROOT: root,
    GIT_HTTP_EXPORT_ALL: '1',
    // http-backend enables receive-pack for an authenticated REMOTE_USER; say so explicitly anyway.
    GIT_CONFIG_COUNT: '1',
    GIT_CONFIG_KEY_0: 'http.receivepack',
    GIT_CONFIG_VALUE_0: 'true',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    REMOTE_USER: user,
    REMOTE_ADDR: req.socket.remoteAddress ?? '127.0.0.1',
    REQUEST_METHOD: req.method ?? 'GET',
    PATH_INFO: decodeURIComponent(url.pathname),
    QUERY_STRING: url.search.replace(/^\?/, ''),
    CONTENT_TYPE: req.headers['content-type'] ?? '',
    SERVER_PROTOCOL: 'HTTP/1.1',
    GATEWAY_INTERFACE: 'CGI/1.1',
  };
  if (req.headers['content-length'] !== undefined) env.CONTENT_LENGTH = req.headers['content-length'];
  if (req.headers['content-encoding']) env.HTTP_CONTENT_ENCODING = String(req.headers['content-encoding']);
  if (req.headers['git-protocol']) env.GIT_PROTOCOL = String(req.headers['git-protocol']);

  const cgi = spawn(HTTP_BACKEND, [], { env: env as NodeJS.ProcessEnv, stdio: ['pipe', 'pipe', 'pipe'] });
  req.pipe(cgi.stdin);
  cgi.stdin.on('error', () => undefined);
  let stderr = '';
  cgi.stderr.on('data', (b: Buffer) => (stderr += b.toString('utf8')));

  // The CGI answer: header lines up to a blank line ("Status: 404 Not Found" sets the status), then the body.
  let head = Buffer.alloc(0);
  let headersDone = false;
  cgi.stdout.on('data', (chunk: Buffer) => {
    if (headersDone) {
      res.write(chunk);
      return;
    }
    head = Buffer.concat([head, chunk]);
    const crlf = head.indexOf('\r\n\r\n');
    const lf = head.indexOf('\n\n');
    const end = crlf >= 0 && (lf < 0 || crlf < lf) ? crlf : lf;
    if (end < 0) return;
    const sep = end === crlf ? 4 : 2;
    headersDone = true;
    let status = 200;
    const headers: Record<string, string> = {};
    for (const line of head.subarray(0, end).toString('latin1').split(/\r?\n/)) {
      const i = line.indexOf(':');
      if (i <= 0) continue;
      const name = line.slice(0, i).trim();
      const value = line.slice(i + 1).trim();
      if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10) || 500;
      else headers[name] = value;
    }
    res.writeHead(status, headers);
    res.write(head.subarray(end + sep));
  });
  cgi.on('close', (code) => {
    if (!headersDone) {
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain' });
      res.end(`git http-backend failed (exit ${code}): ${stderr}`);
      return;
    }
    res.end();
  });
  cgi.on('error', (e) => {
    if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain' });
    res.end(`cannot run git http-backend: ${e.message}`);
  });
}
