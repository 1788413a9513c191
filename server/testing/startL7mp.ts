/**
 * Test helpers for running a real l7mp 0.5.7 proxy (the npm package) on loopback, and for picking
 * free ports. See shared/notes/l7mp-rest-api.md §1 for how the proxy is started and bootstrapped.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

/** A running l7mp process. */
export interface L7mpProcess {
  /** `http://127.0.0.1:<port>`: the REST API, as the engine renders a proxy's apiUrl. */
  apiUrl: string;
  apiPort: number;
  pid: number;
  /** Everything the proxy printed so far (stdout and stderr, the last 64 KiB). */
  logs: () => string;
  /** Kills the proxy (SIGTERM, then SIGKILL) and removes its bootstrap config. Idempotent. */
  stop: () => Promise<void>;
  /** Settles when the process has exited, with its exit code or signal, and whether stop() ended it. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stopped: boolean }>;
}

export interface StartL7mpOptions {
  /** The REST API port; a free one by default. */
  apiPort?: number;
  /** l7mp log level (`-l`); `warn` keeps test output quiet. */
  logLevel?: 'error' | 'warn' | 'info' | 'verbose' | 'silly';
  /** How long to wait for the API to answer; the proxy needs ~2.3 s to initialise its OpenAPI. */
  startTimeoutMs?: number;
  /** Where free ports come from when `apiPort` is not given (default: `freePort('tcp')`). */
  pickPort?: () => Promise<number>;
}

const LOG_LIMIT = 64 * 1024;
/** The controller objects of the bootstrap config; parseL7mpDump recognises them by the cluster's protocol. */
const CONTROLLER_LISTENER = 'controller-listener';

/** The directory of the installed @l7mp/l7mp package: l7mp reads `openapi/` relative to its cwd. */
export function l7mpPackageDir(): string {
  return path.dirname(createRequire(import.meta.url).resolve('@l7mp/l7mp/package.json'));
}

/**
 * Starts `node l7mp-proxy.js -c <bootstrap> -s` (strict mode, as l7mp's Helm chart runs it) with only
 * the HTTP controller listener configured, and resolves once the REST API answers as that proxy.
 * The controller listener binds all interfaces (l7mp HTTP listeners have no address option); clients
 * use 127.0.0.1. Rejects with the proxy's output if it exits or does not answer in time.
 */
export async function startL7mp(options: StartL7mpOptions = {}): Promise<L7mpProcess> {
  if (options.apiPort !== undefined) return startOn(options.apiPort, options);
  // A port found free can be taken before l7mp listens on it (test files run side by side, and outgoing
  // connections draw from the same range): l7mp then exits with EADDRINUSE, and another port is tried.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOn(await (options.pickPort ?? (() => freePort('tcp')))(), options);
    } catch (e) {
      if (attempt >= START_ATTEMPTS || !(e as Error).message.includes('EADDRINUSE')) throw e;
    }
  }
}

/** How many free ports startL7mp tries when the one it picked is taken meanwhile. */
const START_ATTEMPTS = 3;

async function startOn(apiPort: number, options: StartL7mpOptions): Promise<L7mpProcess> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'meshdeck-l7mp-'));
  const bootstrap = path.join(dir, 'bootstrap.json');
  await writeFile(
    bootstrap,
    JSON.stringify({
      admin: { log_level: options.logLevel ?? 'warn' },
      listeners: [
        {
          name: CONTROLLER_LISTENER,
          spec: { protocol: 'HTTP', port: apiPort },
          rules: [
            {
              action: {
                route: { destination: { name: 'l7mp-controller', spec: { protocol: 'L7mpController' } } },
              },
            },
          ],
        },
      ],
    }),
  );

  const child = spawn(
    process.execPath,
    ['l7mp-proxy.js', '-c', bootstrap, '-s', '-l', options.logLevel ?? 'warn'],
    {
      cwd: l7mpPackageDir(),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let log = '';
  const append = (chunk: Buffer) => {
    log = (log + chunk.toString('utf8')).slice(-LOG_LIMIT);
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', (e) => {
      append(Buffer.from(`spawn failed: ${e.message}\n`));
      resolve();
    });
  });
  // Safety net: a test runner that dies before afterAll must not leave a proxy behind.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  let stopped = false;
  const stop = async (): Promise<void> => {
    if (!stopped) {
      stopped = true;
      process.removeListener('exit', killOnExit);
      await killChild(child, exited);
      await rm(dir, { recursive: true, force: true });
    }
  };

  const apiUrl = `http://127.0.0.1:${apiPort}`;
  try {
    await waitForApi(apiUrl, apiPort, child, exited, options.startTimeoutMs ?? 60_000);
  } catch (e) {
    await stop();
    throw new Error(`${(e as Error).message}\n--- l7mp output ---\n${log}`);
  }
  if (child.pid === undefined) throw new Error('l7mp did not start');
  return {
    apiUrl,
    apiPort,
    pid: child.pid,
    logs: () => log,
    stop,
    exited: exited.then(() => ({ code: child.exitCode, signal: child.signalCode, stopped })),
  };
}

/** Polls until GET /listeners shows our controller listener on our port (not some other server). */
async function waitForApi(
  apiUrl: string,
  apiPort: number,
  child: ChildProcess,
  exited: Promise<void>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError = 'no answer yet';
  let hasExited = false;
  void exited.then(() => (hasExited = true));
  while (Date.now() < deadline) {
    if (hasExited)
      throw new Error(`l7mp exited during startup (code ${child.exitCode}, signal ${child.signalCode})`);
    try {
      const res = await fetch(`${apiUrl}/api/v1/listeners`, { signal: AbortSignal.timeout(1000) });
      const body = JSON.parse(await res.text()) as unknown;
      const ours =
        Array.isArray(body) &&
        body.some(
          (l: { name?: unknown; spec?: { port?: unknown } }) =>
            l.name === CONTROLLER_LISTENER && l.spec?.port === apiPort,
        );
      if (res.ok && ours) return;
      lastError = `unexpected answer ${res.status}`;
    } catch (e) {
      lastError = (e as Error).message;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`l7mp API at ${apiUrl} did not answer within ${timeoutMs} ms (${lastError})`);
}

async function killChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 2000);
  await exited;
  clearTimeout(timer);
}

/**
 * A port that is free on 127.0.0.1 right now (the kernel picks it). Another process may take it
 * before the caller binds it; ephemeral ports make that unlikely enough for tests.
 */
export async function freePort(protocol: 'tcp' | 'udp' = 'tcp', host = '127.0.0.1'): Promise<number> {
  if (protocol === 'udp') {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(0, host, () => resolve());
    });
    const { port } = socket.address();
    await new Promise<void>((resolve) => socket.close(() => resolve()));
    return port;
  }
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no TCP port');
  return address.port;
}
