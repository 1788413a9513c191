/**
 * Test/bench helpers: fork the ADS server and grpc-js-xds clients as child processes (each with its
 * own event loop), talk to them over IPC with bounded waits, and run tiny @grpc/grpc-js backends.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { type Child, forkChild } from '../../localMesh/demoApps/forkChild';
import { xdsClientBootstrap, XDS_CLIENT_PROCESS } from '../../localMesh/demoApps/startGrpcClientApp';
import { whoService } from '../../localMesh/demoApps/whoService';
import { stopGrpcServer } from '../../stopGrpcServer';

export type { Child };

const here = path.dirname(fileURLToPath(import.meta.url));

export function forkAdsServer(): Promise<Child> {
  return forkChild(path.join(here, 'adsServerProcess.ts'), { readyTimeoutMs: 20_000 });
}

/** A grpc-js-xds client process whose bootstrap points at `adsPort` with node id `nodeId`. */
export function forkXdsClient(
  adsPort: number,
  nodeId: string,
  target = 'xds:///demo-service',
): Promise<Child> {
  return forkChild(XDS_CLIENT_PROCESS, {
    env: {
      GRPC_XDS_BOOTSTRAP_CONFIG: JSON.stringify(xdsClientBootstrap(`127.0.0.1:${adsPort}`, nodeId)),
      XDS_TARGET: target,
    },
    readyTimeoutMs: 30_000,
  });
}

export interface Backend {
  name: string;
  port: number;
  stop(): Promise<void>;
}

/**
 * A unary `/demo.Demo/Who` server on `address` (default 127.0.0.1, any port) answering `{backend: name}`,
 * or UNAVAILABLE while `failing()` says so.
 */
export async function startBackend(
  name: string,
  address = '127.0.0.1:0',
  failing?: () => boolean,
): Promise<Backend> {
  const server = new grpc.Server();
  server.addService(whoService, {
    Who: (_call: unknown, cb: grpc.sendUnaryData<unknown>) =>
      failing?.()
        ? cb({ code: grpc.status.UNAVAILABLE, details: `${name} fails on purpose` })
        : cb(null, { backend: name }),
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (e, p) =>
      e ? reject(e) : resolve(p),
    ),
  );
  return {
    name,
    port,
    stop: () => stopGrpcServer(server),
  };
}

/** Polls `fn` until it returns a truthy value or `timeoutMs` passes (then throws with `what`). */
export async function waitFor<T>(
  what: string,
  fn: () => Promise<T> | T,
  timeoutMs = 5000,
  everyMs = 20,
): Promise<NonNullable<T>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
