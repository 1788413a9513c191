import path from 'node:path';
import type { DemoApp, DemoAppSpec } from './DemoApp';
import { isLoopback } from './isLoopback';
import { RecordLog } from './RecordLog';
import { startGrpcClientApp } from './startGrpcClientApp';
import { startGrpcEchoApp } from './startGrpcEchoApp';
import { startJsonSocketApp } from './startJsonSocketApp';
import { startUdpApp } from './startUdpApp';
import { startUdsApp } from './startUdsApp';
import { startWebSocketApp } from './startWebSocketApp';

/**
 * Starts one of the local mesh's built-in demo apps. Replies name the app (`${name}(${payload})`, or
 * `tc(${payload})` for the transcoder) so that a test can read the path a message took. Apps bind only
 * the given loopback address (never 0.0.0.0) and only ever answer the sender, on loopback. The
 * grpc-client app listens nowhere: it calls a target over xDS from a child process.
 */
export async function startDemoApp(spec: DemoAppSpec): Promise<DemoApp> {
  const records = new RecordLog();
  const echo = (payload: string) => `${spec.name}(${payload})`;
  const base = { kind: spec.kind, name: spec.name, received: () => records.list() };

  if (spec.kind === 'grpc-client') {
    const app = await startGrpcClientApp({ ...spec, records });
    return {
      ...base,
      listening: { target: `xds:///${spec.target}` },
      ...(app.pid !== undefined ? { pid: app.pid } : {}),
      stop: app.stop,
    };
  }

  if ('path' in spec) {
    if (!path.isAbsolute(spec.path))
      throw new Error(`${spec.kind} "${spec.name}": socket path must be absolute`);
    const reply = spec.kind === 'transcoder' ? transcode : echo;
    const app = await startUdsApp({ path: spec.path, records, reply });
    return { ...base, listening: { path: spec.path }, stop: app.stop };
  }

  const { address, port } = spec;
  if (!isLoopback(address) || address.startsWith('::ffff:')) {
    throw new Error(`${spec.kind} "${spec.name}": ${address} is not an IPv4 loopback address (127.x.x.x)`);
  }
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`${spec.kind} "${spec.name}": invalid port ${port}`);
  }
  const options = { address, port, records };
  if (spec.kind === 'grpc-echo') {
    const failPercent = spec.failPercent ?? 0;
    if (!Number.isInteger(failPercent) || failPercent < 0 || failPercent > 100) {
      throw new Error(`grpc-echo "${spec.name}": fail percent must be an integer 0-100, not ${failPercent}`);
    }
    const app = await startGrpcEchoApp({ ...options, name: spec.name, failPercent });
    return { ...base, listening: { address, port: app.port }, stop: app.stop };
  }
  const app =
    spec.kind === 'websocket-echo'
      ? await startWebSocketApp({ ...options, reply: echo })
      : spec.kind === 'jsonsocket-echo'
        ? await startJsonSocketApp({ ...options, reply: echo })
        : await startUdpApp({ ...options, reply: spec.kind === 'transcoder' ? transcode : echo });
  return { ...base, listening: { address, port: app.port }, stop: app.stop };
}

/** The transcoder's "transcoding", as in the note's Example 1 reproduction. */
function transcode(payload: string): string {
  return `tc(${payload})`;
}
