import path from 'node:path';
import type { DemoApp, DemoAppSpec } from './DemoApp';
import { isLoopback } from './isLoopback';
import { RecordLog } from './RecordLog';
import { startJsonSocketApp } from './startJsonSocketApp';
import { startUdpApp } from './startUdpApp';
import { startUdsApp } from './startUdsApp';
import { startWebSocketApp } from './startWebSocketApp';

/**
 * Starts one of the local mesh's built-in demo apps. Replies name the app (`${name}(${payload})`, or
 * `tc(${payload})` for the transcoder) so that a test can read the path a message took. Apps bind only
 * the given loopback address (never 0.0.0.0) and only ever answer the sender, on loopback.
 */
export async function startDemoApp(spec: DemoAppSpec): Promise<DemoApp> {
  const records = new RecordLog();
  const echo = (payload: string) => `${spec.name}(${payload})`;
  const base = { kind: spec.kind, name: spec.name, received: () => records.list() };

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
