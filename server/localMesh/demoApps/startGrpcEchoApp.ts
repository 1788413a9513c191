import * as grpc from '@grpc/grpc-js';
import type { RecordLog } from './RecordLog';
import { type WhoAnswer, whoService } from './whoService';
import { stopGrpcServer } from '../../stopGrpcServer';

/**
 * A gRPC server on `address:port` answering `/demo.Demo/Who` with `{backend: name}`. `failPercent`
 * of the calls fail with UNAVAILABLE, spread evenly (every call k fails when ⌊k·p/100⌋ grows), so that
 * a broken canary fails exactly its share however few calls it got.
 */
export async function startGrpcEchoApp(options: {
  name: string;
  address: string;
  port: number;
  failPercent: number;
  records: RecordLog;
}): Promise<{ port: number; stop(): Promise<void> }> {
  const { name, failPercent, records } = options;
  let calls = 0;
  const server = new grpc.Server();
  server.addService(whoService, {
    Who: (call: grpc.ServerUnaryCall<unknown, WhoAnswer>, cb: grpc.sendUnaryData<WhoAnswer>) => {
      const k = calls++;
      const fail = Math.floor(((k + 1) * failPercent) / 100) > Math.floor((k * failPercent) / 100);
      const details = `${name} fails ${failPercent}% of calls (meshdeck.l7mp.io/app-fail-percent)`;
      records.add({
        at: new Date().toISOString(),
        from: call.getPeer().replace(/^ipv[46]:/, ''),
        payload: JSON.stringify(call.request),
        ...(fail ? { error: `UNAVAILABLE: ${details}` } : {}),
      });
      if (fail) cb({ code: grpc.status.UNAVAILABLE, details });
      else cb(null, { backend: name });
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${options.address}:${options.port}`, grpc.ServerCredentials.createInsecure(), (e, p) =>
      e ? reject(e) : resolve(p),
    ),
  );
  let stopped: Promise<void> | undefined;
  return {
    port,
    // Bounded: a client that keeps calling would hold a graceful shutdown open for ever.
    stop: () => (stopped ??= stopGrpcServer(server)),
  };
}
