/**
 * Forks a TypeScript module as a child process (its own event loop, and for grpc-js-xds its own
 * bootstrap) and talks to it over IPC: requests `{id, op, ...}` answered `{id, ok, result | error}`,
 * events `{event, ...}`. Every wait is bounded, and no child outlives this process.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

export interface Child {
  proc: ChildProcess;
  request<T = unknown>(op: string, args?: Record<string, unknown>, timeoutMs?: number): Promise<T>;
  /** Kills the child (SIGKILL after 2 s) and waits for it to exit. Idempotent. */
  kill(): Promise<void>;
  /** Messages with an `event` field (other than 'ready'). */
  onEvent(fn: (msg: Record<string, unknown>) => void): void;
  /** Called once when the child exits, whoever ended it. */
  onExit(fn: (code: number | null, signal: NodeJS.Signals | null) => void): void;
}

export interface ForkChildOptions {
  env?: Record<string, string>;
  /** How long the child may take to send `{event: 'ready'}`. */
  readyTimeoutMs: number;
  /** The child's stdout and stderr (default: inherited). */
  output?: 'inherit' | 'ignore';
}

// A SIGKILLed parent closes the IPC channel, and the children exit on 'disconnect'; a parent that exits
// normally kills them here, synchronously, before they could see it.
const live = new Set<ChildProcess>();
let exitHooked = false;
function killOnExit(proc: ChildProcess): void {
  live.add(proc);
  if (exitHooked) return;
  exitHooked = true;
  process.once('exit', () => {
    for (const p of live) p.kill('SIGKILL');
  });
}

/**
 * The tsx loader by absolute URL: a bare `--import tsx` resolves from the working directory, which
 * for `npx meshdeck` run elsewhere has no tsx.
 */
function tsxLoader(): string {
  return pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
}

/** Forks `file` (an absolute path to a .ts module) and resolves once it sent `{event: 'ready'}`. */
export async function forkChild(file: string, options: ForkChildOptions): Promise<Child> {
  const name = file.split('/').pop()!;
  const output = options.output ?? 'inherit';
  const proc = fork(file, [], {
    // XDS_CHILD_EXEC_ARGV (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`) is for profiling the children.
    execArgv: [
      '--import',
      tsxLoader(),
      ...(process.env.XDS_CHILD_EXEC_ARGV?.split(' ').filter(Boolean) ?? []),
    ],
    env: { ...process.env, ...options.env },
    stdio: ['ignore', output, output, 'ipc'],
  });
  killOnExit(proc);
  let seq = 0;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  const listeners: ((m: Record<string, unknown>) => void)[] = [];
  const exitListeners: ((code: number | null, signal: NodeJS.Signals | null) => void)[] = [];
  let exited = false;
  const exitPromise = new Promise<void>((r) =>
    proc.once('exit', (code, signal) => {
      exited = true;
      live.delete(proc);
      for (const p of pending.values()) p.reject(new Error(`${name} exited`));
      pending.clear();
      for (const l of exitListeners) l(code, signal);
      r();
    }),
  );
  // A fork that fails (e.g. EAGAIN) emits 'error' and no 'exit'; a send to a child that just died emits
  // 'error' too, which without a listener would take this process down.
  proc.on('error', () => {
    if (proc.pid === undefined && !exited) proc.emit('exit', null, null);
  });
  const ready = new Promise<void>((resolve, reject) => {
    const t = setTimeout(
      () => reject(new Error(`${name} not ready in ${options.readyTimeoutMs} ms`)),
      options.readyTimeoutMs,
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
    proc.once('exit', (code) => {
      clearTimeout(t);
      reject(new Error(`${name} exited with ${code} before ready`));
    });
  });
  const child: Child = {
    proc,
    request<T>(op: string, args: Record<string, unknown> = {}, timeoutMs = 10_000) {
      if (exited) return Promise.reject(new Error(`${name} is not running`));
      const id = ++seq;
      return new Promise<T>((resolve, reject) => {
        const t = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`${name}: ${op} timed out after ${timeoutMs} ms`));
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
    onExit(fn) {
      exitListeners.push(fn);
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
