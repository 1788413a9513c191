/**
 * The ADS transport floor on this machine: the same lean streams as bench/xdsStreams.ts against
 * bench/xdsFloorServer.ts, a grpc-js server that only writes one pre-encoded EDS response to every
 * stream. What bench/xdsStreams.ts measures for the real server minus this is what the server adds
 * (snapshot, coalescing, per-stream bookkeeping, ACK handling). Each push is timed from the IPC
 * request to each stream's receipt, as in bench/xdsStreams.ts, once writing every stream in one turn
 * and once `--chunk` streams per event-loop turn, with the server's CPU time per push (as in
 * bench/xdsStreams.ts). Prints JSON; no assertions.
 * Run: `node --import tsx bench/xdsFloor.ts [counts...] [--pushes 9] [--chunk 64]`.
 */
import { TypeUrls } from '../server/xds/envoyProtos';
import { waitFor } from '../server/xds/testing/children';
import { countsArg, numberArg } from './argv';
import { pct } from './pct';
import { processCpuMs } from './processCpu';
import { startFloorStreams } from './xdsFloorStreams';

const pushes = numberArg('pushes', 9);
const chunk = numberArg('chunk', 64);
const COUNTS = countsArg(['pushes', 'chunk'], [500, 2000]);

const median = (xs: number[]) => pct(xs, 50);

async function main() {
  const results: unknown[] = [];
  for (const n of COUNTS) {
    const { child, clients, connectMs, close } = await startFloorStreams(n);
    await new Promise((r) => setTimeout(r, 500));
    let version = 1;
    const run = async (chunkSize: number) => {
      const p99s: number[] = [];
      const p50s: number[] = [];
      const writeMs: number[] = [];
      const cpu: number[] = [];
      for (let k = 0; k < pushes; k++) {
        const v = `v${++version}`;
        const cpu0 = processCpuMs(child.pid);
        const start = performance.now();
        const done = new Promise<{ writeStart: number; writeEnd: number }>((r) => child.once('message', r));
        child.send({ push: v, chunk: chunkSize });
        await waitFor(
          `${v} everywhere`,
          () => clients.every((c) => c.latest.get(TypeUrls.endpoint)!.version === v),
          60_000,
          2,
        );
        const w = await done;
        const lat = clients.map((c) => c.latest.get(TypeUrls.endpoint)!.at - start);
        p50s.push(pct(lat, 50));
        p99s.push(pct(lat, 99));
        writeMs.push(Math.round((w.writeEnd - w.writeStart) * 10) / 10);
        // As in bench/xdsStreams.ts: the server's CPU up to 300 ms after the last receipt.
        await new Promise((r) => setTimeout(r, 300));
        cpu.push(processCpuMs(child.pid) - cpu0);
      }
      return {
        p50: median(p50s),
        p99: median(p99s),
        p99Runs: p99s,
        writeAllMs: median(writeMs),
        serverCpuMs: median(cpu),
      };
    };
    const oneTurn = await run(n);
    const chunked = await run(chunk);
    results.push({
      streams: n,
      connectAllAnsweredMs: connectMs,
      ackMs: { oneTurn, [`chunk${chunk}`]: chunked },
    });
    close();
    await new Promise((r) => setTimeout(r, 1000));
  }
  console.log(
    JSON.stringify(
      {
        bench: 'xdsFloor',
        node: process.version,
        note: 'median over pushes of the per-push p50/p99 (ms from the IPC request to receipt); a server that only writes',
        results,
      },
      null,
      2,
    ),
  );
  process.exit(0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
