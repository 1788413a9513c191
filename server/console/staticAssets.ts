/**
 * The console's build output (`/_next/static/**`) served from memory, each file compressed once (brotli
 * and gzip) when the server starts, instead of by Next.js on every request. Next's own compression
 * deflated about 1.3 MB of scripts per first visit on the event loop the draft's request also waits
 * on: a fresh browser had its scripts 0.4-1.1 s after asking on this machine, and the canvas of a
 * 1,000-node mesh drew 0.5 s later than without it (issue 5, P7). Next still compresses its other
 * answers (pages, the API) for browsers on other machines, not on loopback (`dropLoopbackAcceptEncoding`).
 * Files are immutable (their names are content hashes), so each is read and compressed once. A browser
 * on loopback gets them as they are: bytes cost nothing there, and decompressing costs the browser's CPU
 * while it parses them (measured: no slower uncompressed, often faster).
 */
import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import { isLoopback } from '../localMesh/demoApps/isLoopback';

const brotli = promisify(brotliCompress);
const gz = promisify(gzip);

/** The URL prefix Next.js serves its build output under. */
export const STATIC_PREFIX = '/_next/static/';

const TYPES: Record<string, string> = {
  '.js': 'application/javascript; charset=UTF-8',
  '.mjs': 'application/javascript; charset=UTF-8',
  '.css': 'text/css; charset=UTF-8',
  '.json': 'application/json; charset=UTF-8',
  '.map': 'application/json; charset=UTF-8',
  '.svg': 'image/svg+xml',
  '.ttf': 'font/ttf',
  '.woff2': 'font/woff2',
  '.wasm': 'application/wasm',
};
/** Worth compressing: text (a font or an image is compressed already, or barely shrinks). */
const COMPRESSIBLE = new Set(['.js', '.mjs', '.css', '.json', '.map', '.svg', '.ttf', '.wasm']);
/** Source maps (a build with MESHDECK_SOURCE_MAPS) are large and asked for only by DevTools. */
const EAGER = new Set(['.js', '.mjs', '.css', '.svg', '.ttf', '.wasm']);
/** Below this a response is one packet either way. */
const MIN_COMPRESS_BYTES = 1024;

interface Entry {
  type: string;
  etag: string;
  identity: Buffer;
  br?: Buffer;
  gzip?: Buffer;
}

/** Which encoding to send: brotli, else gzip, where the request accepts it (q > 0) and we have it. */
export function pickEncoding(
  accept: string | undefined,
  has: { br: boolean; gzip: boolean },
): 'br' | 'gzip' | undefined {
  if (!accept) return undefined;
  const q = new Map<string, number>();
  for (const part of accept.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    const qp = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const value = qp ? Number(qp.slice(2)) : 1;
    q.set(name, Number.isFinite(value) ? value : 0);
  }
  const ok = (e: string) => (q.get(e) ?? q.get('*') ?? 0) > 0;
  if (has.br && ok('br')) return 'br';
  if (has.gzip && ok('gzip')) return 'gzip';
  return undefined;
}

/** The console's static files, served from memory and compressed ahead of time. */
export class StaticAssets {
  readonly #root: string;
  readonly #entries = new Map<string, Promise<Entry | undefined>>();
  readonly #compressForLoopback: boolean;

  /** `root`: the build's static directory (`.next/static`). */
  constructor(root: string, { compressForLoopback = false }: { compressForLoopback?: boolean } = {}) {
    this.#root = path.resolve(root);
    this.#compressForLoopback = compressForLoopback;
  }

  /** Reads and compresses every script and style sheet, one file at a time (zlib's thread pool, not the event loop). */
  async warm(): Promise<number> {
    let n = 0;
    for (const rel of await this.#list('')) {
      if (!EAGER.has(path.extname(rel))) continue;
      if (await this.#entry(rel)) n++;
    }
    return n;
  }

  /**
   * Answers a GET or HEAD under STATIC_PREFIX from memory; false when it is not one (or the file is
   * not there), for the caller to pass the request on. Never throws.
   */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const rel = this.#relative(req.url);
    if (rel === undefined) return false;
    const entry = this.#entries.get(rel);
    // Not read yet (the warm-up has not reached it, or a source map): Next serves it, and it is read now.
    if (!entry) {
      void this.#entry(rel);
      return false;
    }
    const compress = this.#compressForLoopback || !isLoopbackPeer(req.socket.remoteAddress);
    void entry.then(
      (e) => (e ? send(req, res, e, compress) : notFound(res)),
      () => notFound(res),
    );
    return true;
  }

  /** The path below the root a URL names, or undefined when it is not a plain file path inside it. */
  #relative(url: string | undefined): string | undefined {
    if (!url) return undefined;
    const pathname = url.split('?')[0]!;
    if (!pathname.startsWith(STATIC_PREFIX)) return undefined;
    let rel: string;
    try {
      rel = decodeURIComponent(pathname.slice(STATIC_PREFIX.length));
    } catch {
      return undefined;
    }
    if (rel === '' || rel.includes('\0') || rel.split('/').some((s) => s === '..' || s === '.' || s === ''))
      return undefined;
    return rel;
  }

  #entry(rel: string): Promise<Entry | undefined> {
    let e = this.#entries.get(rel);
    if (!e) {
      e = this.#load(rel);
      this.#entries.set(rel, e);
    }
    return e;
  }

  async #load(rel: string): Promise<Entry | undefined> {
    const file = path.join(this.#root, rel);
    if (!file.startsWith(this.#root + path.sep)) return undefined;
    try {
      if (!(await stat(file)).isFile()) return undefined;
      const identity = await readFile(file);
      const ext = path.extname(rel);
      const entry: Entry = {
        type: TYPES[ext] ?? 'application/octet-stream',
        etag: `"${createHash('sha1').update(identity).digest('base64url')}"`,
        identity,
      };
      if (COMPRESSIBLE.has(ext) && identity.length >= MIN_COMPRESS_BYTES) {
        // Quality 9 of 11: within a few per cent of 11's size at a fraction of its time.
        const br = await brotli(identity, {
          params: {
            [constants.BROTLI_PARAM_QUALITY]: 9,
            [constants.BROTLI_PARAM_SIZE_HINT]: identity.length,
          },
        });
        const gzipped = await gz(identity, { level: 9 });
        if (br.length < identity.length) entry.br = br;
        if (gzipped.length < identity.length) entry.gzip = gzipped;
      }
      return entry;
    } catch {
      // Gone or unreadable: a 404, and read again next time.
      this.#entries.delete(rel);
      return undefined;
    }
  }

  async #list(dir: string): Promise<string[]> {
    let names: import('node:fs').Dirent[];
    try {
      names = await readdir(path.join(this.#root, dir), { withFileTypes: true });
    } catch {
      return [];
    }
    const out: string[] = [];
    for (const d of names) {
      const rel = dir ? `${dir}/${d.name}` : d.name;
      if (d.isDirectory()) out.push(...(await this.#list(rel)));
      else if (d.isFile()) out.push(rel);
    }
    return out;
  }
}

/**
 * Keeps Next.js from compressing its answer to a browser on this machine (it compresses what the
 * request accepts): on loopback the bytes cost nothing and the deflating costs the event loop.
 */
export function dropLoopbackAcceptEncoding(req: IncomingMessage): void {
  if (isLoopbackPeer(req.socket.remoteAddress)) delete req.headers['accept-encoding'];
}

/** Whether a peer address is this machine's own: IPv6 `::1`, or IPv4 loopback (also IPv4-mapped). */
export function isLoopbackPeer(address: string | undefined): boolean {
  return address === '::1' || (address !== undefined && isLoopback(address));
}

function send(req: IncomingMessage, res: ServerResponse, e: Entry, compress: boolean): void {
  const encoding = compress
    ? pickEncoding(req.headers['accept-encoding'], { br: !!e.br, gzip: !!e.gzip })
    : undefined;
  const body = encoding ? e[encoding]! : e.identity;
  res.setHeader('Content-Type', e.type);
  // As Next.js sends them: the name is the content's hash.
  res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
  res.setHeader('ETag', e.etag);
  if (e.br || e.gzip) res.setHeader('Vary', 'Accept-Encoding');
  const match = req.headers['if-none-match'];
  if (match && match.split(',').some((t) => t.trim().replace(/^W\//, '') === e.etag)) {
    res.statusCode = 304;
    res.end();
    return;
  }
  if (encoding) res.setHeader('Content-Encoding', encoding);
  res.setHeader('Content-Length', body.length);
  res.statusCode = 200;
  res.end(req.method === 'HEAD' ? undefined : body);
}

function notFound(res: ServerResponse): void {
  res.statusCode = 404;
  res.setHeader('Content-Type', 'text/plain; charset=UTF-8');
  res.end('Not Found');
}
