import { createSocket } from 'node:dgram';
import { isLoopback } from './isLoopback';
import type { RecordLog } from './RecordLog';

/** Sessions kept per app; l7mp opens a new UDP socket (a new source port) per session. */
const MAX_SESSIONS = 1024;

interface Session {
  labels: Record<string, unknown> | undefined;
}

/**
 * A JSONSocket server over UDP, as l7mp's JSONSocket cluster (cluster.js) speaks it: the first datagram
 * of a sender is a JSON request header with a numeric `JSONSocketVersion`, answered with the response
 * header `{JSONSocketVersion: 1, JSONSocketStatus: 200, JSONSocketMessage: "OK"}`; every later
 * datagram is payload, answered with `reply(payload)`. Records carry the header's `labels`.
 */
export async function startJsonSocketApp(options: {
  address: string;
  port: number;
  records: RecordLog;
  reply: (payload: string) => string;
}): Promise<{ port: number; stop(): Promise<void> }> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind({ address: options.address, port: options.port, exclusive: true }, () => {
      socket.removeListener('error', reject);
      resolve();
    });
  });
  socket.on('error', () => undefined);
  const sessions = new Map<string, Session>();
  const send = (text: string, port: number, address: string) =>
    socket.send(Buffer.from(text, 'utf8'), port, address);

  socket.on('message', (msg, rinfo) => {
    if (!isLoopback(rinfo.address)) return;
    const from = `${rinfo.address}:${rinfo.port}`;
    const text = msg.toString('utf8');
    const header = parseHeader(text);
    const session = sessions.get(from);
    // A header from a known sender starts a new session: l7mp retries may reuse nothing, but a
    // client that reconnects from the same port must not have its header echoed as payload.
    if (header !== undefined || session === undefined) {
      const answer = handshake(header);
      send(JSON.stringify(answer), rinfo.port, rinfo.address);
      if (answer.JSONSocketStatus !== 200 || header === undefined) {
        sessions.delete(from);
        return;
      }
      const labels = header.labels;
      sessions.delete(from);
      sessions.set(from, { labels: isRecord(labels) ? { ...labels } : undefined });
      if (sessions.size > MAX_SESSIONS) sessions.delete(sessions.keys().next().value as string);
      return;
    }
    options.records.add({
      at: new Date().toISOString(),
      from,
      payload: text,
      ...(session.labels ? { labels: session.labels } : {}),
    });
    send(options.reply(text), rinfo.port, rinfo.address);
  });
  let stopped: Promise<void> | undefined;
  return {
    port: socket.address().port,
    stop: () => (stopped ??= new Promise<void>((resolve) => socket.close(() => resolve()))),
  };
}

/** A JSONSocket request header (an object with `JSONSocketVersion`), or undefined if `text` is none. */
function parseHeader(text: string): Record<string, unknown> | undefined {
  if (!text.startsWith('{')) return undefined;
  try {
    const value = JSON.parse(text) as unknown;
    return isRecord(value) && 'JSONSocketVersion' in value ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The response header, with the status codes and messages of l7mp's own JSONSocket listener. */
function handshake(header: Record<string, unknown> | undefined): {
  JSONSocketVersion: 1;
  JSONSocketStatus: number;
  JSONSocketMessage: string;
} {
  const fail = (status: number, message: string) => ({
    JSONSocketVersion: 1 as const,
    JSONSocketStatus: status,
    JSONSocketMessage: message,
  });
  if (header === undefined) return fail(400, 'Bad Request: Invalid JSON request header');
  const version = header.JSONSocketVersion;
  if (typeof version !== 'number' || !Number.isInteger(version)) {
    return fail(400, 'Bad Request: Invalid JSONSocket version');
  }
  if (version < 0 || version > 1) return fail(505, 'JSONSocket Version Not Supported');
  return fail(200, 'OK');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
