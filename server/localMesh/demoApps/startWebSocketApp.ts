import { isLoopback } from './isLoopback';
import { loadWs, type WsSocket } from './loadWs';
import type { RecordLog } from './RecordLog';

/** A WebSocket server on `address:port` that answers every message with `reply(message)`, in the same frame type. */
export async function startWebSocketApp(options: {
  address: string;
  port: number;
  records: RecordLog;
  reply: (payload: string) => string;
}): Promise<{ port: number; stop(): Promise<void> }> {
  const { Server } = loadWs();
  const server = new Server({ host: options.address, port: options.port });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.once('listening', () => {
      server.removeListener('error', reject);
      resolve();
    });
  });
  server.on('error', () => undefined);
  server.on('connection', (socket: WsSocket, request) => {
    const address = request.socket.remoteAddress ?? '';
    if (!isLoopback(address)) return socket.terminate();
    const from = `${address.replace(/^::ffff:/, '')}:${request.socket.remotePort}`;
    socket.on('error', () => undefined);
    socket.on('message', (data) => {
      const payload = typeof data === 'string' ? data : data.toString('utf8');
      options.records.add({ at: new Date().toISOString(), from, payload });
      const answer = options.reply(payload);
      // l7mp forwards binary frames; answer in kind so the proxy sees what it sent.
      socket.send(typeof data === 'string' ? answer : Buffer.from(answer, 'utf8'));
    });
  });
  const bound = server.address();
  let stopped: Promise<void> | undefined;
  return {
    port: typeof bound === 'string' ? options.port : bound.port,
    stop: () =>
      (stopped ??= new Promise<void>((resolve) => {
        for (const client of server.clients) client.terminate();
        server.close(() => resolve());
      })),
  };
}
