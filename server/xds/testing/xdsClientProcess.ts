/**
 * A real @grpc/grpc-js-xds client in its own process. The bootstrap comes from the environment
 * (GRPC_XDS_BOOTSTRAP_CONFIG, read once per process; see `forkXdsClient`).
 *
 * Requests {id, op, ...} get {id, ok, result | error}:
 * - call {n, concurrency?, deadlineMs?} -> {byBackend, failures: string[], firstError?}
 * - start {concurrency?} -> null: call continuously, recording [timeMs, backend | 'ERR:<msg>']
 * - collect -> the records since the last collect
 * - stop -> null
 */
import * as grpc from '@grpc/grpc-js';
import { register } from '@grpc/grpc-js-xds';

register();

const target = process.env.XDS_TARGET ?? 'xds:///demo-service';
const client = new grpc.Client(target, grpc.credentials.createInsecure());
const ser = (v: unknown) => Buffer.from(JSON.stringify(v));
const de = (b: Buffer) => JSON.parse(b.toString()) as { backend: string };

function once(deadlineMs: number): Promise<string> {
  return new Promise((resolve, reject) =>
    client.makeUnaryRequest(
      '/demo.Demo/Who',
      ser,
      de,
      {},
      { deadline: Date.now() + deadlineMs },
      (err: grpc.ServiceError | null, res?: { backend: string }) =>
        err ? reject(err) : resolve(res!.backend),
    ),
  );
}

let records: [number, string][] = [];
let running = false;

async function loop(deadlineMs: number) {
  while (running) {
    try {
      const b = await once(deadlineMs);
      records.push([Date.now(), b]);
    } catch (e) {
      records.push([Date.now(), `ERR:${(e as Error).message}`]);
    }
  }
}

type Req =
  | { id: number; op: 'call'; n: number; concurrency?: number; deadlineMs?: number }
  | { id: number; op: 'start'; concurrency?: number; deadlineMs?: number }
  | { id: number; op: 'collect' | 'stop' };

async function handle(req: Req): Promise<unknown> {
  switch (req.op) {
    case 'call': {
      const byBackend: Record<string, number> = {};
      const failures: string[] = [];
      let i = 0;
      const worker = async () => {
        while (i < req.n) {
          i++;
          try {
            const b = await once(req.deadlineMs ?? 5000);
            byBackend[b] = (byBackend[b] ?? 0) + 1;
          } catch (e) {
            failures.push((e as Error).message);
          }
        }
      };
      await Promise.all(Array.from({ length: req.concurrency ?? 8 }, worker));
      return { byBackend, failures };
    }
    case 'start':
      if (!running) {
        running = true;
        for (let k = 0; k < (req.concurrency ?? 4); k++) void loop(req.deadlineMs ?? 2000);
      }
      return null;
    case 'collect': {
      const r = records;
      records = [];
      return r;
    }
    case 'stop':
      running = false;
      return null;
  }
}

process.on('message', (req: Req) => {
  handle(req).then(
    (result) => process.send?.({ id: req.id, ok: true, result }),
    (e: Error) => process.send?.({ id: req.id, ok: false, error: e.message }),
  );
});
process.on('disconnect', () => process.exit(0));
process.send?.({ event: 'ready' });
