/**
 * A real @grpc/grpc-js-xds client in its own process: the grpc-client demo app and the tests' xDS
 * client. The bootstrap comes from the environment (GRPC_XDS_BOOTSTRAP_CONFIG, read once per process;
 * see `xdsClientBootstrap`), the target from XDS_TARGET. It calls `/demo.Demo/Who` (whoService.ts).
 *
 * Requests {id, op, ...} get {id, ok, result | error}:
 * - call {n, concurrency?, deadlineMs?} -> {byBackend, failures: string[]}
 * - start {concurrency?} -> null: call continuously, recording [timeMs, backend | 'ERR:<msg>']
 * - collect -> the records since the last collect
 * - stop -> null (also ends `rate`)
 * - rate {perSecond, deadlineMs?} -> null: call at a steady rate until stopped, reporting every
 *   answer in events {event: 'calls', calls: RateCall[]} (batched, a few per second)
 */
import * as grpc from '@grpc/grpc-js';
import { register } from '@grpc/grpc-js-xds';
import { WHO_PATH, type WhoAnswer, whoDeserialize, whoSerialize } from './whoService';

/** One call of the `rate` mode, as reported to the parent. */
export interface RateCall {
  /** Epoch milliseconds of the answer. */
  at: number;
  /** The backend's `<ip>:<port>`, when the call reached one. */
  peer?: string;
  backend?: string;
  /** `<STATUS>: <details>` of a failed call. */
  error?: string;
}

register();

const target = process.env.XDS_TARGET ?? 'xds:///demo-service';
const client = new grpc.Client(target, grpc.credentials.createInsecure());

function call(deadlineMs: number): Promise<{ backend: string; peer?: string }> {
  return new Promise((resolve, reject) => {
    const c = client.makeUnaryRequest(
      WHO_PATH,
      whoSerialize,
      whoDeserialize as (b: Buffer) => WhoAnswer,
      {},
      { deadline: Date.now() + deadlineMs },
      (err: grpc.ServiceError | null, res?: WhoAnswer) => {
        const peer = peerOf(c);
        if (err) reject(Object.assign(err, { peer }));
        else resolve({ backend: res!.backend, ...(peer ? { peer } : {}) });
      },
    );
  });
}

/** grpc-js names the peer `ipv4:a.b.c.d:port` or plain `a.b.c.d:port`, and `unknown` before it has one. */
function peerOf(c: grpc.ClientUnaryCall): string | undefined {
  const peer = c.getPeer().replace(/^ipv[46]:/, '');
  return peer && peer !== 'unknown' ? peer : undefined;
}

function describeError(e: unknown): string {
  const err = e as Partial<grpc.ServiceError>;
  return err.code !== undefined ? `${grpc.status[err.code]}: ${err.details ?? ''}` : String(e);
}

let records: [number, string][] = [];
let running = false;

async function loop(deadlineMs: number) {
  while (running) {
    try {
      const { backend } = await call(deadlineMs);
      records.push([Date.now(), backend]);
    } catch (e) {
      records.push([Date.now(), `ERR:${(e as Error).message}`]);
    }
  }
}

let rateTimer: NodeJS.Timeout | undefined;
let flushTimer: NodeJS.Timeout | undefined;

/**
 * Open loop: calls start on schedule whatever the earlier ones do, so a slow backend shows as errors
 * (deadlines) rather than a lower rate. In-flight calls are capped, and a stalled event loop does not
 * make up for the calls it missed in one burst.
 */
function startRate(perSecond: number, deadlineMs: number): void {
  stopRate();
  const maxInFlight = Math.max(16, Math.ceil((perSecond * deadlineMs) / 1000) * 2);
  let t0 = Date.now();
  let issued = 0;
  let inFlight = 0;
  let batch: RateCall[] = [];
  const tick = () => {
    let due = Math.floor(((Date.now() - t0) * perSecond) / 1000) - issued;
    if (due > perSecond) {
      t0 = Date.now();
      issued = 0;
      due = 1;
    }
    for (; due > 0 && inFlight < maxInFlight; due--) {
      issued++;
      inFlight++;
      call(deadlineMs).then(
        ({ backend, peer }) => {
          inFlight--;
          batch.push({ at: Date.now(), backend, ...(peer ? { peer } : {}) });
        },
        (e: unknown) => {
          inFlight--;
          const peer = (e as { peer?: string }).peer;
          batch.push({ at: Date.now(), error: describeError(e), ...(peer ? { peer } : {}) });
        },
      );
    }
  };
  const flush = () => {
    if (batch.length === 0) return;
    const calls = batch;
    batch = [];
    process.send?.({ event: 'calls', calls });
  };
  rateTimer = setInterval(tick, Math.max(5, Math.min(100, 1000 / perSecond)));
  flushTimer = setInterval(flush, 200);
  tick();
}

function stopRate(): void {
  clearInterval(rateTimer);
  clearInterval(flushTimer);
  rateTimer = flushTimer = undefined;
}

type Req =
  | { id: number; op: 'call'; n: number; concurrency?: number; deadlineMs?: number }
  | { id: number; op: 'start'; concurrency?: number; deadlineMs?: number }
  | { id: number; op: 'rate'; perSecond: number; deadlineMs?: number }
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
            const { backend } = await call(req.deadlineMs ?? 5000);
            byBackend[backend] = (byBackend[backend] ?? 0) + 1;
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
    case 'rate':
      if (!(req.perSecond > 0 && req.perSecond <= 1000))
        throw new Error(`rate: bad perSecond ${req.perSecond}`);
      startRate(req.perSecond, req.deadlineMs ?? 2000);
      return null;
    case 'collect': {
      const r = records;
      records = [];
      return r;
    }
    case 'stop':
      running = false;
      stopRate();
      return null;
  }
}

process.on('message', (req: Req) => {
  handle(req).then(
    (result) => process.send?.({ id: req.id, ok: true, result }),
    (e: Error) => process.send?.({ id: req.id, ok: false, error: e.message }),
  );
});
// The parent is gone (even SIGKILLed): nothing would ever stop this process.
process.on('disconnect', () => process.exit(0));
process.send?.({ event: 'ready' });
