import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropLoopbackAcceptEncoding, isLoopbackPeer, pickEncoding, StaticAssets } from './staticAssets';

const SCRIPT = `export const x = ${JSON.stringify('meshdeck '.repeat(2000))};\n`;

describe('pickEncoding', () => {
  const both = { br: true, gzip: true };
  it('prefers brotli, then gzip, as the request accepts them', () => {
    expect(pickEncoding('gzip, deflate, br, zstd', both)).toBe('br');
    expect(pickEncoding('gzip', both)).toBe('gzip');
    expect(pickEncoding('br;q=0, gzip;q=0.5', both)).toBe('gzip');
    expect(pickEncoding('*', both)).toBe('br');
    expect(pickEncoding('identity', both)).toBeUndefined();
    expect(pickEncoding(undefined, both)).toBeUndefined();
    expect(pickEncoding('br', { br: false, gzip: true })).toBeUndefined();
  });
});

describe('isLoopbackPeer', () => {
  it("knows this machine's own addresses", () => {
    expect(['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1'].map(isLoopbackPeer)).toEqual([
      true,
      true,
      true,
      true,
    ]);
    expect(['10.0.0.1', '::ffff:10.0.0.1', '2001:db8::1', '', undefined].map(isLoopbackPeer)).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
  });
});

describe('dropLoopbackAcceptEncoding', () => {
  it('drops what a browser on loopback accepts, so Next.js answers it uncompressed; keeps it for others', () => {
    const req = (remoteAddress: string) =>
      ({
        socket: { remoteAddress },
        headers: { 'accept-encoding': 'gzip, br', accept: '*/*' },
      }) as never as import('node:http').IncomingMessage;
    const local = req('::ffff:127.0.0.1');
    dropLoopbackAcceptEncoding(local);
    expect(local.headers).toEqual({ accept: '*/*' });
    const remote = req('10.1.2.3');
    dropLoopbackAcceptEncoding(remote);
    expect(remote.headers['accept-encoding']).toBe('gzip, br');
  });
});

describe('StaticAssets', () => {
  let dir: string;
  let server: Server;
  let port: number;
  let passed: string[];
  let assets: StaticAssets;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'md-static-'));
    mkdirSync(path.join(dir, 'chunks'));
    writeFileSync(path.join(dir, 'chunks', 'app.js'), SCRIPT);
    writeFileSync(path.join(dir, 'chunks', 'tiny.css'), 'a{}');
    writeFileSync(path.join(dir, 'chunks', 'app.js.map'), '{"version":3}');
    writeFileSync(path.join(dir, '..', `${path.basename(dir)}-secret.txt`), 'secret');
    // As a browser on another machine is answered (this test's requests come from loopback).
    assets = new StaticAssets(dir, { compressForLoopback: true });
    const onLoopback = new StaticAssets(dir);
    passed = [];
    server = createServer((req, res) => {
      if (req.headers['x-as'] === 'loopback' ? onLoopback.handle(req, res) : assets.handle(req, res)) return;
      passed.push(req.url ?? '');
      res.statusCode = 299;
      res.end('next');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
    // Two scripts read and compressed; the source map is left for a request to read.
    expect(await assets.warm()).toBe(2);
    expect(await onLoopback.warm()).toBe(2);
  });

  afterAll(async () => {
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
    rmSync(path.join(dir, '..', `${path.basename(dir)}-secret.txt`), { force: true });
  });

  /** A raw GET (fetch would decode the body itself, and never sends a `..` segment). */
  function get(
    p: string,
    headers: Record<string, string> = {},
    method = 'GET',
  ): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
    return new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: p, method, headers }, (res) => {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(parts) }),
        );
      });
      req.on('error', reject);
      req.end();
    });
  }

  it('serves a script compressed with brotli or gzip, or as it is, with the same bytes inside', async () => {
    const br = await get('/_next/static/chunks/app.js', { 'accept-encoding': 'gzip, deflate, br' });
    expect(br.status).toBe(200);
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers['content-type']).toBe('application/javascript; charset=UTF-8');
    expect(br.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(br.headers['vary']).toBe('Accept-Encoding');
    expect(Number(br.headers['content-length'])).toBe(br.body.length);
    expect(br.body.length).toBeLessThan(SCRIPT.length / 10);
    expect(brotliDecompressSync(br.body).toString()).toBe(SCRIPT);

    const gz = await get('/_next/static/chunks/app.js', { 'accept-encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.body).toString()).toBe(SCRIPT);

    const plain = await get('/_next/static/chunks/app.js');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.toString()).toBe(SCRIPT);
    expect(passed).toEqual([]);
  });

  it('sends a browser on loopback the script as it is, whatever it accepts', async () => {
    const r = await get('/_next/static/chunks/app.js', { 'accept-encoding': 'br, gzip', 'x-as': 'loopback' });
    expect(r.status).toBe(200);
    expect(r.headers['content-encoding']).toBeUndefined();
    expect(r.headers['vary']).toBe('Accept-Encoding');
    expect(r.body.toString()).toBe(SCRIPT);
  });

  it('answers a matching ETag with 304 and HEAD without a body', async () => {
    const first = await get('/_next/static/chunks/app.js');
    const etag = first.headers['etag'] as string;
    expect(etag).toMatch(/^"[\w-]+"$/);
    const again = await get('/_next/static/chunks/app.js', { 'if-none-match': `W/${etag}` });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    const head = await get('/_next/static/chunks/app.js', { 'accept-encoding': 'br' }, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
  });

  it('sends a small file as it is', async () => {
    const css = await get('/_next/static/chunks/tiny.css', { 'accept-encoding': 'br, gzip' });
    expect(css.headers['content-encoding']).toBeUndefined();
    expect(css.headers['content-type']).toBe('text/css; charset=UTF-8');
    expect(css.body.toString()).toBe('a{}');
  });

  it('passes on what it has not read yet (then serves it), other paths, other methods and paths out of its directory', async () => {
    passed.length = 0;
    const map = await get('/_next/static/chunks/app.js.map');
    expect(map.status).toBe(299);
    // Read since: served from memory now, compressed or not by its size.
    for (let i = 0; i < 50 && (await get('/_next/static/chunks/app.js.map')).status === 299; i++)
      await new Promise((r) => setTimeout(r, 20));
    expect((await get('/_next/static/chunks/app.js.map')).body.toString()).toBe('{"version":3}');

    await get('/api/draft');
    await get('/_next/static/chunks/app.js', {}, 'POST');
    await get(`/_next/static/../${path.basename(dir)}-secret.txt`);
    await get(`/_next/static/%2e%2e/${path.basename(dir)}-secret.txt`);
    await get('/_next/static/chunks//app.js');
    expect(passed.slice(-5)).toEqual([
      '/api/draft',
      '/_next/static/chunks/app.js',
      `/_next/static/../${path.basename(dir)}-secret.txt`,
      `/_next/static/%2e%2e/${path.basename(dir)}-secret.txt`,
      '/_next/static/chunks//app.js',
    ]);
  });

  it('passes on a file that is not there, every time (Next.js answers its 404), and keeps serving the others', async () => {
    passed.length = 0;
    for (let i = 0; i < 3; i++) {
      expect((await get('/_next/static/chunks/missing.js')).status).toBe(299);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(passed).toEqual(Array(3).fill('/_next/static/chunks/missing.js'));
    expect((await get('/_next/static/chunks/app.js')).status).toBe(200);
  });
});
