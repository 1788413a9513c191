/**
 * Test/bench helpers: fork the ADS server and grpc-js-xds clients as child processes (each with its
 * own event loop), talk to them over IPC with bounded waits, and run tiny @grpc/grpc-js backends.
 */
import { type ChildProcess, fork } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';

const here = path.dirname(fileURLToPath(import.meta.url));

export interface Child {
  proc: ChildProcess;
  request<T = unknown>(op: string, args?: Record<string, unknown>, timeoutMs?: number): Promise<T>;
  /** Kills the child (SIGKILL after 2 s) and waits for it to exit. Idempotent. */
  kill(): Promise<void>;
  /** Messages with an `event` field (other than 'ready'). */
  onEvent(fn: (msg: Record<string, unknown>) => void): void;
}

async function forkChild(file: string, env: Record<string, string>, readyTimeoutMs: number): Promise<Child> {
  const proc = fork(path.join(here, file), [], {
    // XDS_CHILD_EXEC_ARGV (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`) is for profiling the children.
    execArgv: ['--import', 'tsx', ...(process.env.XDS_CHILD_EXEC_ARGV?.split(' ').filter(Boolean) ?? [])],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let seq = 0;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  const listeners: ((m: Record<string, unknown>) => void)[] = [];
  let exited = false;
  const exitPromise = new Promise<void>((r) =>
    proc.once('exit', () => {
      exited = true;
      for (const p of pending.values()) p.reject(new Error(`${file} exited`));
      pending.clear();
      r();
    }),
  );
  const ready = new Promise<void>((resolve, reject) => {
    const t = setTimeout(
      () => reject(new Error(`${file} not ready in ${readyTimeoutMs} ms`)),
      readyTimeoutMs,
    );
    proc.on('message', (m: Record<string, unknown>) => {
      if (m.event === 'ready') {
        clearTimeout(t);
        resolve();
      } else if (m.event) listeners.forEach((l) => l(m));
      else {
        const p = pending.get(m.id as number);
        if (!p) return;
        pending.delete(m.id as number);
        if (m.ok) p.resolve(m.result);
        else p.reject(new Error(String(m.error)));
      }
    });
    proc.once('exit', (code) => reject(new Error(`${file} exited with ${code} before ready`)));
  });
  const child: Child = {
    proc,
    request<T>(op: string, args: Record<string, unknown> = {}, timeoutMs = 10_000) {
      if (exited) return Promise.reject(new Error(`${file} is not running`));
      const id = ++seq;
      return new Promise<T>((resolve, reject) => {
        const t = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`${file}: ${op} timed out after ${timeoutMs} ms`));
        }, timeoutMs);
        pending.set(id, {
          resolve: (v) => {
            clearTimeout(t);
            resolve(v as T);
          },
          reject: (e) => {
            clearTimeout(t);
            reject(e);
          },
        });
        proc.send({ id, op, ...args });
      });
    },
    async kill() {
      if (exited) return;
      proc.kill('SIGTERM');
      const t = setTimeout(() => proc.kill('SIGKILL'), 2000);
      await exitPromise;
      clearTimeout(t);
    },
    onEvent(fn) {
      listeners.push(fn);
    },
  };
  try {
    await ready;
  } catch (e) {
    await child.kill();
    throw e;
  }
  return child;
}

export function forkAdsServer(): Promise<Child> {
  return forkChild('adsServerProcess.ts', {}, 20_000);
}

/** A grpc-js-xds client process whose bootstrap points at `adsPort` with node id `nodeId`. */
export function forkXdsClient(
  adsPort: number,
  nodeId: string,
  target = 'xds:///demo-service',
): Promise<Child> {
  const bootstrap = {
    xds_servers: [{ server_uri: `127.0.0.1:${adsPort}`, channel_creds: [{ type: 'insecure' }] }],
    node: { id: nodeId, cluster: 'meshdeck-test', locality: {} },
  };
  return forkChild(
    'xdsClientProcess.ts',
    { GRPC_XDS_BOOTSTRAP_CONFIG: JSON.stringify(bootstrap), XDS_TARGET: target },
    30_000,
  );
}

export interface Backend {
  name: string;
  port: number;
  stop(): Promise<void>;
}

/** A unary `/demo.Demo/Who` server on `address` (default 127.0.0.1, any port) answering `{backend: name}`. */
export async function startBackend(name: string, address = '127.0.0.1:0'): Promise<Backend> {
  const server = new grpc.Server();
  server.addService(
    {
      Who: {
        path: '/demo.Demo/Who',
        requestStream: false,
        responseStream: false,
        requestSerialize: (v: unknown) => Buffer.from(JSON.stringify(v)),
        requestDeserialize: (b: Buffer) => JSON.parse(b.toString() || 'null'),
        responseSerialize: (v: unknown) => Buffer.from(JSON.stringify(v)),
        responseDeserialize: (b: Buffer) => JSON.parse(b.toString()),
      },
    },
    {
      Who: (_call: unknown, cb: grpc.sendUnaryData<unknown>) => cb(null, { backend: name }),
    },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (e, p) =>
      e ? reject(e) : resolve(p),
    ),
  );
  return {
    name,
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 1000);
        server.tryShutdown(() => {
          clearTimeout(t);
          resolve();
        });
      }),
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
