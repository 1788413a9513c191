import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { MeshMetrics } from './MeshMetrics';
import { handleMetricsRequest } from './metricsHttp';
import { sample } from './testing/promText';

let server: Server | undefined;

/** A real HTTP server that answers /metrics and hands everything else on (a 404 marks "handed on"). */
async function serve(metrics: MeshMetrics | undefined): Promise<string> {
  server = createServer((req, res) => {
    if (handleMetricsRequest(req, res, metrics)) return;
    res.writeHead(404, { 'Content-Type': 'text/plain' });
    res.end('handed on');
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

afterEach(async () => {
  await new Promise((r) => server?.close(r));
  server = undefined;
});

describe('GET /metrics', () => {
  it('answers the exposition text without a session, with or without a query', async () => {
    const m = new MeshMetrics({ version: '9.9.9', mode: 'local', processMetrics: false });
    m.applied('local-mesh', 'applied');
    const url = await serve(m);
    for (const path of ['/metrics', '/metrics?x=1']) {
      const res = await fetch(url + path);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(res.headers.get('cache-control')).toBe('no-store');
      const body = await res.text();
      expect(sample(body, 'meshdeck_build_info', { version: '9.9.9' })).toBe(1);
      expect(sample(body, 'meshdeck_console_applies_total', { result: 'applied' })).toBe(1);
    }
    const head = await fetch(`${url}/metrics`, { method: 'HEAD' });
    expect([head.status, await head.text()]).toEqual([200, '']);
  });

  it('refuses other methods with 405 and hands other paths (and no metrics) on', async () => {
    const url = await serve(new MeshMetrics({ version: '0', mode: 'local', processMetrics: false }));
    const post = await fetch(`${url}/metrics`, { method: 'POST', body: 'x' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    expect(await post.text()).toContain('POST is not allowed on /metrics');
    for (const path of ['/metricsx', '/api/metrics', '/']) {
      const res = await fetch(url + path);
      expect([path, res.status, await res.text()]).toEqual([path, 404, 'handed on']);
    }
    await new Promise((r) => server!.close(r));
    const off = await serve(undefined);
    expect((await fetch(`${off}/metrics`)).status).toBe(404);
  });

  it('answers 500 with the reason when a source fails, and serves the next scrape', async () => {
    const m = new MeshMetrics({ version: '0', mode: 'local', processMetrics: false });
    let broken = true;
    m.setSources({
      syncStates: () => {
        if (broken) throw new Error('the reconciler is gone');
        return [];
      },
    });
    const url = await serve(m);
    const res = await fetch(`${url}/metrics`);
    expect(res.status).toBe(500);
    expect(await res.text()).toContain('collecting the metrics failed: the reconciler is gone');
    broken = false;
    const again = await fetch(`${url}/metrics`);
    expect(again.status).toBe(200);
    expect(sample(await again.text(), 'meshdeck_l7mp_proxies', { phase: 'synced' })).toBe(0);
  });
});
