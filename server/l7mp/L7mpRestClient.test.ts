/**
 * L7mpRestClient against a local HTTP server that answers the way l7mp 0.5.7 does (bodies recorded
 * from the real proxy; the real-proxy behaviour is covered by ProxyReconciler.test.ts).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { L7mpOperation } from '@/lib/model/l7mp';
import { L7mpApiError, L7mpRestClient, L7mpUnreachableError } from './L7mpRestClient';

interface Seen {
  method: string;
  url: string;
  contentType: string | undefined;
  body: string;
  socket: number;
}

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;
let handler: Handler;
let seen: Seen[];
let server: Server;
let apiUrl: string;
let connections = 0;

beforeAll(async () => {
  const sockets = new WeakMap<object, number>();
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      if (!sockets.has(req.socket)) sockets.set(req.socket, ++connections);
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        contentType: req.headers['content-type'],
        body,
        socket: sockets.get(req.socket)!,
      });
      handler(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

beforeEach(() => {
  seen = [];
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** Answers like l7mp: JSON bodies; successes without a Content-Type header. */
function reply(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, status === 200 ? {} : { 'content-type': 'application/json' });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

const OK = { status: 200, message: 'OK' };
const bad = (content: string) => ({ status: 400, message: 'Bad Request', content });

function op(method: 'POST' | 'DELETE', path: string, body?: unknown): L7mpOperation {
  return { method, path, body, kind: 'cluster', name: 'c1', reason: 'test' };
}

describe('L7mpRestClient', () => {
  it('POSTs JSON with a Content-Type, parses answers without one, and reuses one connection', async () => {
    handler = (req, res) => reply(res, 200, req.method === 'GET' ? [{ name: 'c1' }] : OK);
    const client = new L7mpRestClient(`${apiUrl}/`);
    const body = { cluster: { name: 'c1', spec: { protocol: 'UDP', port: 1 } } };
    expect(await client.apply(op('POST', '/api/v1/clusters', body))).toBe('applied');
    expect(await client.get('/api/v1/clusters')).toEqual([{ name: 'c1' }]);
    expect(await client.apply(op('DELETE', '/api/v1/clusters/c1'))).toBe('applied');
    expect(seen.map((s) => `${s.method} ${s.url} ${s.contentType}`)).toEqual([
      'POST /api/v1/clusters application/json',
      'GET /api/v1/clusters undefined',
      'DELETE /api/v1/clusters/c1 undefined',
    ]);
    expect(JSON.parse(seen[0]!.body)).toEqual(body);
    // Keep-alive: connections are reused. undici hands the next request a second pooled connection when
    // it is sent before the first one is released, so sequential calls alternate over two at most.
    for (let i = 0; i < 5; i++) await client.get('/api/v1/clusters');
    expect(seen).toHaveLength(8);
    expect(new Set(seen.map((s) => s.socket)).size).toBeLessThanOrEqual(2);
  });

  it('treats a DELETE of an object that is already gone as done, in each of l7mp wordings', async () => {
    const answers: Record<string, string> = {
      '/api/v1/listeners/l%2F1': 'Cannot delete listener: Unknown listener "l/1"',
      '/api/v1/clusters/c1?recursive=true': 'Cannot delete cluster: Unknown cluster "c1"',
      '/api/v1/routes/r1': 'Cannot delete Route: Unknown Route "r1"',
      '/api/v1/rules/x': 'Cannot delete rule: Unknown rule "x"',
      '/api/v1/rulelists/rl': 'Cannot delete RuleList: Unknown RuleList "rl"',
      '/api/v1/endpoints/e1': 'Not Found',
      '/api/v1/sessions/s%3A1': 'No such session',
    };
    handler = (req, res) => reply(res, 400, bad(answers[req.url ?? '']!));
    const client = new L7mpRestClient(apiUrl);
    for (const path of Object.keys(answers)) {
      expect(await client.apply(op('DELETE', path))).toBe('already-gone');
    }
  });

  it('does not mistake a failed recursive delete (a missing child) for an object already gone', async () => {
    // l7mp's answer when a rulelist's recursive delete trips over a rule that is already gone.
    handler = (_req, res) => reply(res, 400, bad('Cannot delete rule: Unknown rule "rl-Rule-1"'));
    const client = new L7mpRestClient(apiUrl);
    const failing = op('DELETE', '/api/v1/rulelists/rl?recursive=true');
    const error = (await client.apply(failing).catch((e: unknown) => e)) as L7mpApiError;
    expect(error).toBeInstanceOf(L7mpApiError);
    expect(error).toMatchObject({
      status: 400,
      proxyMessage: 'Cannot delete rule: Unknown rule "rl-Rule-1"',
    });
    expect(error.op).toBe(failing);
    expect(error.message).toBe(
      `l7mp API DELETE ${apiUrl}/api/v1/rulelists/rl?recursive=true: 400 Bad Request: Cannot delete rule: Unknown rule "rl-Rule-1"`,
    );
    // Another object's name in the message is not "gone" either.
    handler = (_req, res) => reply(res, 400, bad('Cannot delete cluster: Unknown cluster "other"'));
    await expect(client.apply(op('DELETE', '/api/v1/clusters/c1'))).rejects.toBeInstanceOf(L7mpApiError);
  });

  it('keeps the proxy message of a refused POST: string, ajv list or bare code', async () => {
    const client = new L7mpRestClient(apiUrl);
    handler = (_req, res) => reply(res, 400, bad('Cannot add cluster: Cluster "c1" already defined'));
    await expect(client.apply(op('POST', '/api/v1/clusters', {}))).rejects.toMatchObject({
      status: 400,
      proxyMessage: 'Cannot add cluster: Cluster "c1" already defined',
    });
    const ajv = [
      {
        keyword: 'required',
        dataPath: '',
        params: { missingProperty: 'cluster' },
        message: "should have required property 'cluster'",
      },
    ];
    handler = (_req, res) => reply(res, 422, { status: 422, message: 'Unprocessable Entity', content: ajv });
    await expect(client.apply(op('POST', '/api/v1/clusters', {}))).rejects.toMatchObject({
      status: 422,
      proxyMessage: ajv,
    });
    handler = (_req, res) => reply(res, 500, { status: 500, message: 'General Server Error', content: 415 });
    await expect(client.apply(op('POST', '/api/v1/clusters', {}))).rejects.toMatchObject({
      status: 500,
      proxyMessage: 415,
    });
  });

  it('falls back to plain listeners plus one recursive rulelist each when the recursive dump answers 422', async () => {
    const controller = {
      name: 'controller-listener',
      spec: { protocol: 'HTTP', port: 1234 },
      rules: 'controller-listener-RuleList-0',
      options: { track: 0 },
    };
    const controllerRule = {
      name: 'controller-listener-RuleList-0-Rule-0',
      match: { match: '*' },
      action: {
        route: {
          name: 'controller-listener-RuleList-0-Rule-0-Route-0',
          destination: { name: 'l7mp-controller', spec: { protocol: 'L7mpController' } },
          ingress: [],
          egress: [],
        },
      },
    };
    const listener = {
      name: 'l',
      spec: { protocol: 'UDP', port: 19006, address: '127.0.0.61' },
      rules: 'l-RuleList-7',
      options: { track: 0 },
    };
    const rule = {
      name: 'l-RuleList-7-Rule-11',
      match: { match: '*' },
      action: {
        route: {
          name: 'l-RuleList-7-Rule-11-Route-7',
          destination: { name: 'echo', spec: { protocol: 'Echo' } },
          ingress: [],
          egress: [],
          retry: { retry_on: 'never', num_retries: 1, timeout: 2000 },
        },
      },
    };
    const answers: Record<string, [number, unknown]> = {
      '/api/v1/listeners?recursive=true': [
        422,
        { status: 422, message: 'Internal Server Error: Response validation failed', content: [] },
      ],
      '/api/v1/listeners': [200, [controller, listener]],
      '/api/v1/rulelists/controller-listener-RuleList-0?recursive=true': [
        200,
        { name: 'controller-listener-RuleList-0', rules: [controllerRule] },
      ],
      '/api/v1/rulelists/l-RuleList-7?recursive=true': [
        200,
        { name: 'l-RuleList-7', rules: ['l-RuleList-7-Rule-10:<STALE>', rule] },
      ],
      '/api/v1/clusters?recursive=true': [
        200,
        [{ name: 'echo', spec: { protocol: 'Echo' }, endpoints: [], loadbalancer: { policy: 'Trivial' } }],
      ],
      '/api/v1/routes': [
        200,
        [
          {
            name: 'l-RuleList-7-Rule-10-Route-6',
            destination: 'echo',
            ingress: [],
            egress: [],
            retry: rule.action.route.retry,
          },
        ],
      ],
    };
    handler = (req, res) => {
      const [status, body] = answers[req.url ?? ''] ?? [404, { status: 404, message: 'Not Found' }];
      reply(res, status, body);
    };
    const live = await new L7mpRestClient(apiUrl).readLive();
    expect(live.fallback).toBe(true);
    expect(live.config.listeners).toEqual([
      {
        name: 'l',
        spec: listener.spec,
        options: { track: 0 },
        rules: [
          {
            action: {
              route: { destination: 'echo', ingress: [], egress: [], retry: rule.action.route.retry },
            },
          },
        ],
        live: {
          rulelist: 'l-RuleList-7',
          rules: ['l-RuleList-7-Rule-11'],
          routes: ['l-RuleList-7-Rule-11-Route-7'],
        },
      },
    ]);
    // The stale rule's route is left over among the named routes, for diffL7mp to remove.
    expect(live.config.routes.map((r) => r.name)).toEqual(['l-RuleList-7-Rule-10-Route-6']);
    expect(live.ignored).toEqual([
      'listener l: rule l-RuleList-7-Rule-10 no longer exists (l-RuleList-7-Rule-10:<STALE>)',
    ]);
    expect(seen.map((s) => s.url).sort()).toEqual(Object.keys(answers).sort());
  });

  it('reports timeouts, refusals and aborts as L7mpUnreachableError carrying the operation', async () => {
    handler = () => {}; // never answers
    const client = new L7mpRestClient(apiUrl, { timeoutMs: 150 });
    const slow = op('POST', '/api/v1/clusters', {});
    const timedOut = (await client.apply(slow).catch((e: unknown) => e)) as L7mpUnreachableError;
    expect(timedOut).toBeInstanceOf(L7mpUnreachableError);
    expect(timedOut.reason).toBe('no answer within 150 ms');
    expect(timedOut.op).toBe(slow);

    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    const aborted = (await client
      .get('/api/v1/clusters', { signal: controller.signal, timeoutMs: 5000 })
      .catch((e: unknown) => e)) as L7mpUnreachableError;
    expect(aborted).toBeInstanceOf(L7mpUnreachableError);
    expect(aborted.reason).toBe('aborted');

    const closed = await new Promise<number>((resolve) => {
      const probe = createServer();
      probe.listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const refused = (await new L7mpRestClient(`http://127.0.0.1:${closed}`)
      .get('/api/v1/clusters')
      .catch((e: unknown) => e)) as L7mpUnreachableError;
    expect(refused).toBeInstanceOf(L7mpUnreachableError);
    expect(refused.reason).toContain('ECONNREFUSED');

    const already = new AbortController();
    already.abort();
    const early = (await client
      .get('/api/v1/clusters', { signal: already.signal })
      .catch((e: unknown) => e)) as L7mpUnreachableError;
    expect(early).toBeInstanceOf(L7mpUnreachableError);
    expect(early.reason).toBe('aborted');

    // An apiUrl that cannot be parsed fails each request the same way, never the constructor.
    const malformed = new L7mpRestClient('http://[not-an-address');
    const invalid = (await malformed
      .get('/api/v1/clusters')
      .catch((e: unknown) => e)) as L7mpUnreachableError;
    expect(invalid).toBeInstanceOf(L7mpUnreachableError);
    expect(invalid.reason).toContain('Invalid URL');
  });

  it('sends to the path of the apiUrl, with or without a trailing slash', async () => {
    handler = (_req, res) => reply(res, 200, []);
    await new L7mpRestClient(`${apiUrl}/mesh/gw-1/`).get('/api/v1/clusters');
    await new L7mpRestClient(apiUrl).get('/api/v1/routes');
    expect(seen.map((s) => s.url)).toEqual(['/mesh/gw-1/api/v1/clusters', '/api/v1/routes']);
  });
});
