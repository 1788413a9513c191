import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { L7mpApiError, L7mpUnreachableError, readL7mpLive } from './l7mpClient';
import { freePort } from './testing/startL7mp';

/** What a fresh l7mp 0.5.7 answers (recorded from the real proxy): the controller's objects only. */
const controllerRule = {
  name: 'controller-listener-RuleList-0-Rule-0',
  match: { match: '*' },
  action: {
    route: {
      name: 'controller-listener-RuleList-0-Rule-0-Route-0',
      destination: {
        name: 'l7mp-controller',
        spec: { protocol: 'L7mpController' },
        endpoints: [{ name: 'l7mp-controller', spec: { address: '<VIRTUAL>' } }],
        loadbalancer: { policy: 'None' },
      },
      ingress: [],
      egress: [],
      retry: { retry_on: 'never', num_retries: 1, timeout: 2000 },
    },
  },
};
const FRESH: Record<string, unknown> = {
  '/api/v1/listeners?recursive=true': [
    {
      name: 'controller-listener',
      spec: { protocol: 'HTTP', port: 1234 },
      rules: [controllerRule],
      options: { track: 0 },
    },
  ],
  '/api/v1/clusters?recursive=true': [
    {
      name: 'l7mp-controller',
      spec: { protocol: 'L7mpController' },
      endpoints: [],
      loadbalancer: { policy: 'None' },
    },
    {
      name: 'c1',
      spec: { protocol: 'UDP', port: 9999 },
      endpoints: [{ name: 'c1@127.0.0.5', spec: { address: '127.0.0.5' }, weight: 1 }],
      loadbalancer: { policy: 'Trivial' },
    },
  ],
  '/api/v1/routes': [
    {
      name: 'controller-listener-RuleList-0-Rule-0-Route-0',
      destination: 'l7mp-controller',
      ingress: [],
      egress: [],
      retry: { retry_on: 'never', num_retries: 1, timeout: 2000 },
    },
  ],
};

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
let handler: Handler;
let server: Server;
let apiUrl: string;

beforeAll(async () => {
  server = createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** Answers like l7mp: JSON bodies and no Content-Type header. */
function answer(status: number, body: unknown): Handler {
  return (_req, res) => {
    res.writeHead(status);
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };
}

describe('readL7mpLive', () => {
  it('GETs the three dumps, parses them without a Content-Type and drops the controller', async () => {
    const seen: string[] = [];
    handler = (req, res) => {
      seen.push(`${req.method} ${req.url}`);
      answer(200, FRESH[req.url ?? ''] ?? [])(req, res);
    };
    const live = await readL7mpLive(`${apiUrl}/`);
    expect(seen.sort()).toEqual([
      'GET /api/v1/clusters?recursive=true',
      'GET /api/v1/listeners?recursive=true',
      'GET /api/v1/routes',
    ]);
    expect(live.config).toEqual({
      listeners: [],
      routes: [],
      clusters: [
        {
          name: 'c1',
          spec: { protocol: 'UDP', port: 9999 },
          endpoints: [{ name: 'c1@127.0.0.5', spec: { address: '127.0.0.5' }, weight: 1 }],
          loadbalancer: { policy: 'Trivial' },
        },
      ],
    });
    expect(live.ignored).toEqual([]);
  });

  it('turns an error body into an L7mpApiError with the status, the content and the URL', async () => {
    handler = answer(400, { status: 400, message: 'Bad Request', content: 'Not Found' });
    const error = await readL7mpLive(apiUrl).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(L7mpApiError);
    expect(error).toMatchObject({ status: 400, proxyMessage: 'Not Found', statusMessage: 'Bad Request' });
    expect((error as L7mpApiError).url).toMatch(new RegExp(`^${apiUrl}/api/v1/(listeners|clusters|routes)`));
    expect((error as Error).message).toContain('400 Bad Request: Not Found');
  });

  it('keeps an ajv error list as the proxy message and describes its last entry', async () => {
    const ajv = [
      { keyword: 'required', dataPath: '.sessions[0]', message: 'first' },
      { keyword: 'type', dataPath: '.sessions[2].ingress[0]', message: 'should be object' },
    ];
    handler = answer(422, {
      status: 422,
      message: 'Internal Server Error: Response validation failed',
      content: ajv,
    });
    const error = (await readL7mpLive(apiUrl).catch((e: unknown) => e)) as L7mpApiError;
    expect(error).toBeInstanceOf(L7mpApiError);
    expect(error.proxyMessage).toEqual(ajv);
    expect(error.message).toContain(
      '422 Internal Server Error: Response validation failed: .sessions[2].ingress[0]: should be object (and 1 more)',
    );
  });

  it('keeps a bare status code as the proxy message', async () => {
    handler = answer(500, { status: 500, message: 'General Server Error', content: 415 });
    const error = (await readL7mpLive(apiUrl).catch((e: unknown) => e)) as L7mpApiError;
    expect(error).toMatchObject({ status: 500, proxyMessage: 415 });
    expect(error.message).toContain('500 General Server Error: code 415');
  });

  it('rejects a successful answer that is not JSON', async () => {
    handler = answer(200, '<html>hello</html>');
    const error = (await readL7mpLive(apiUrl).catch((e: unknown) => e)) as L7mpApiError;
    expect(error).toBeInstanceOf(L7mpApiError);
    expect(error.message).toContain('response is not JSON: <html>hello</html>');
  });

  it('reports a refused connection as L7mpUnreachableError', async () => {
    const port = await freePort('tcp');
    const error = (await readL7mpLive(`http://127.0.0.1:${port}`).catch(
      (e: unknown) => e,
    )) as L7mpUnreachableError;
    expect(error).toBeInstanceOf(L7mpUnreachableError);
    expect(error.reason).toContain('ECONNREFUSED');
    expect(error.message).toContain(`cannot reach l7mp API at http://127.0.0.1:${port}/api/v1/`);
  });

  it('gives up after timeoutMs', async () => {
    handler = () => {}; // never answers
    const started = Date.now();
    const error = (await readL7mpLive(apiUrl, { timeoutMs: 200 }).catch(
      (e: unknown) => e,
    )) as L7mpUnreachableError;
    expect(error).toBeInstanceOf(L7mpUnreachableError);
    expect(error.reason).toBe('no answer within 200 ms');
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
