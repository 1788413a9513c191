import { createSocket } from 'node:dgram';
import { isLoopback } from './isLoopback';
import type { RecordLog } from './RecordLog';

/** A UDP server on `address:port` that answers every datagram with `reply(payload)`, to the sender only. */
export async function startUdpApp(options: {
  address: string;
  port: number;
  records: RecordLog;
  reply: (payload: string) => string;
}): Promise<{ port: number; stop(): Promise<void> }> {
  // No reuseAddr (l7mp sets it on its sockets): a port clash must fail here, not split the traffic.
  const socket = createSocket('udp4');
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind({ address: options.address, port: options.port, exclusive: true }, () => {
      socket.removeListener('error', reject);
      resolve();
    });
  });
  // A send error (e.g. the sender's port went away) concerns one datagram only.
  socket.on('error', () => undefined);
  socket.on('message', (msg, rinfo) => {
    if (!isLoopback(rinfo.address)) return;
    const payload = msg.toString('utf8');
    options.records.add({ at: new Date().toISOString(), from: `${rinfo.address}:${rinfo.port}`, payload });
    socket.send(Buffer.from(options.reply(payload), 'utf8'), rinfo.port, rinfo.address);
  });
  let stopped: Promise<void> | undefined;
  return {
    port: socket.address().port,
    stop: () => (stopped ??= new Promise<void>((resolve) => socket.close(() => resolve()))),
  };
}
