/**
 * bench/xdsFloorServer.ts in its own process with `n` lean ADS streams connected to it (each answered
 * its four first requests), for bench/xdsFloor.ts and bench/xdsEndToEnd.ts --floor.
 */
import { type ChildProcess, fork } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { TypeUrls } from '../server/xds/envoyProtos';
import { waitFor } from '../server/xds/testing/children';
import { connectLeanAds } from '../server/xds/testing/leanAdsClient';

export interface FloorStreams {
  child: ChildProcess;
  clients: ReturnType<typeof connectLeanAds>[];
  /** Start -> every stream answered. */
  connectMs: number;
  close(): void;
}

/** Starts the floor server and connects `n` streams to it. */
export async function startFloorStreams(n: number): Promise<FloorStreams> {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const child = fork(path.join(here, 'xdsFloorServer.ts'), [], { execArgv: ['--import', 'tsx'] });
  const port = await new Promise<number>((r) => child.once('message', (m: { port: number }) => r(m.port)));
  const subs: [string, string[]][] = [
    [TypeUrls.listener, ['l']],
    [TypeUrls.route, ['r']],
    [TypeUrls.cluster, []],
    [TypeUrls.endpoint, ['e']],
  ];
  const t0 = performance.now();
  const clients = Array.from({ length: n }, (_, i) =>
    connectLeanAds({ address: `127.0.0.1:${port}`, nodeId: `floor/${i}`, subscriptions: subs }),
  );
  await waitFor('all floor streams answered', () => clients.every((c) => c.latest.size === 4), 120_000, 10);
  return {
    child,
    clients,
    connectMs: Math.round(performance.now() - t0),
    close: () => {
      for (const c of clients) c.close();
      child.kill();
    },
  };
}
