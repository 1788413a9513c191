import { lstat, mkdir, rm } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import type { RecordLog } from './RecordLog';

/** sun_path is 108 bytes on Linux, including the terminating NUL. */
const MAX_SOCKET_PATH = 107;

/**
 * A UNIX stream socket server at `socketPath` that answers every chunk it reads with `reply(chunk)`.
 * UDS is a byte stream: a chunk is one message only while messages arrive spaced out (note §9).
 */
export async function startUdsApp(options: {
  path: string;
  records: RecordLog;
  reply: (payload: string) => string;
}): Promise<{ stop(): Promise<void> }> {
  const socketPath = options.path;
  if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH) {
    throw new Error(`socket path is longer than ${MAX_SOCKET_PATH} bytes: ${socketPath}`);
  }
  await mkdir(path.dirname(socketPath), { recursive: true });
  await removeStaleSocket(socketPath);

  const connections = new Set<net.Socket>();
  let count = 0;
  const server = net.createServer((conn) => {
    const from = `unix:${socketPath}#${++count}`;
    connections.add(conn);
    conn.setEncoding('utf8');
    conn.on('data', (chunk: string) => {
      options.records.add({ at: new Date().toISOString(), from, payload: chunk });
      conn.write(options.reply(chunk));
    });
    conn.on('error', () => undefined);
    conn.on('close', () => connections.delete(conn));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => {
      server.removeListener('error', reject);
      resolve();
    });
  });
  server.on('error', () => undefined);
  let stopped: Promise<void> | undefined;
  return {
    stop: () =>
      (stopped ??= (async () => {
        for (const conn of connections) conn.destroy();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        // Node unlinks the socket on close; this covers a server that never got that far.
        await rm(socketPath, { force: true });
      })()),
  };
}

/** Removes a socket file left by a dead process; refuses to touch live sockets and other files. */
async function removeStaleSocket(socketPath: string): Promise<void> {
  const stat = await lstat(socketPath).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return undefined;
    throw e;
  });
  if (!stat) return;
  if (!stat.isSocket()) throw new Error(`${socketPath} exists and is not a socket; not replacing it`);
  const live = await new Promise<boolean>((resolve) => {
    const probe = net.connect({ path: socketPath });
    const done = (answer: boolean) => {
      probe.destroy();
      resolve(answer);
    };
    probe.once('connect', () => done(true));
    // ECONNREFUSED: nobody listens, the file is stale.
    probe.once('error', () => done(false));
    // No answer within a second: something is there; leave it alone.
    probe.setTimeout(1000, () => done(true));
  });
  if (live) throw new Error(`${socketPath}: another process is listening on this socket`);
  await rm(socketPath, { force: true });
}
