import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MAX_CLIENT_RATE } from '../../../lib/localMesh/prepareLocalMesh';
import { type Child, forkChild } from './forkChild';
import type { RecordLog } from './RecordLog';
import type { RateCall } from './xdsClientProcess';

/** The grpc-js-xds client process (one per client: grpc-js-xds reads its bootstrap once per process). */
export const XDS_CLIENT_PROCESS = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  'xdsClientProcess.ts',
);

/** A grpc-js-xds bootstrap for node `nodeId` with one plaintext ADS server at `ads` (`host:port`). */
export function xdsClientBootstrap(ads: string, nodeId: string): Record<string, unknown> {
  return {
    xds_servers: [{ server_uri: ads, channel_creds: [{ type: 'insecure' }], server_features: ['xds_v3'] }],
    node: { id: nodeId, cluster: 'meshdeck-local', locality: {} },
  };
}

/**
 * Runs a grpc-js-xds client in a child process that calls `/demo.Demo/Who` on `xds:///<target>` at
 * `ratePerSecond`, recording each answer's backend (or its error) in `records`. The child dies with
 * the app and with this process.
 */
export async function startGrpcClientApp(options: {
  name: string;
  target: string;
  ratePerSecond: number;
  ads: string;
  nodeId: string;
  records: RecordLog;
}): Promise<{ pid: number | undefined; stop(): Promise<void> }> {
  const { records } = options;
  if (!(options.ratePerSecond > 0 && options.ratePerSecond <= MAX_CLIENT_RATE)) {
    throw new Error(`calls per second must be in (0, ${MAX_CLIENT_RATE}], not ${options.ratePerSecond}`);
  }
  if (!/^[A-Za-z0-9][A-Za-z0-9._:-]*$/.test(options.target)) {
    throw new Error(`invalid xDS target name "${options.target}"`);
  }
  const dial = `xds:///${options.target}`;
  const child: Child = await forkChild(XDS_CLIENT_PROCESS, {
    env: {
      GRPC_XDS_BOOTSTRAP_CONFIG: JSON.stringify(xdsClientBootstrap(options.ads, options.nodeId)),
      XDS_TARGET: dial,
      // Failed calls are recorded; grpc-js's own error lines would only repeat them on the terminal.
      GRPC_VERBOSITY: process.env.GRPC_VERBOSITY ?? 'NONE',
    },
    readyTimeoutMs: 30_000,
    output: 'ignore',
  });
  let stopping = false;
  child.onEvent((m) => {
    if (m.event !== 'calls') return;
    for (const c of m.calls as RateCall[]) {
      records.add({
        at: new Date(c.at).toISOString(),
        from: c.peer ?? dial,
        payload: c.backend ?? '',
        ...(c.error !== undefined ? { error: c.error } : {}),
      });
    }
  });
  child.onExit((code, signal) => {
    if (stopping) return;
    records.add({
      at: new Date().toISOString(),
      from: dial,
      payload: '',
      error: `the client process exited (${signal ?? `code ${code}`}); the app has stopped`,
    });
  });
  try {
    await child.request('rate', { perSecond: options.ratePerSecond, deadlineMs: 2000 });
  } catch (e) {
    await child.kill();
    throw e;
  }
  let stopped: Promise<void> | undefined;
  return {
    pid: child.proc.pid,
    stop: () => {
      stopping = true;
      return (stopped ??= child.kill());
    },
  };
}
