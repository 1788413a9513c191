/**
 * Runs the local mesh's l7mp proxies as child processes and keeps them running. See
 * shared/notes/l7mp-rest-api.md §1 for how l7mp starts, and l7mpChild.cjs for the process wrapper.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { mkdir, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** npmlog levels, as l7mp's `-l` accepts them. */
export type L7mpLogLevel = 'silly' | 'verbose' | 'info' | 'http' | 'notice' | 'warn' | 'error' | 'silent';

/**
 * `starting`: a process is being made ready; `ready`: its API answers; `backoff`: it died and waits to
 * be restarted; `exited`: its first start failed and it is not restarted; `stopped`: stopped on request.
 */
export type ProxyState = 'starting' | 'ready' | 'exited' | 'backoff' | 'stopped';

export interface ProxyExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** ISO 8601. */
  at: string;
}

export interface ProxyStatus {
  id: string;
  apiPort: number;
  /** `http://127.0.0.1:<apiPort>`. */
  apiUrl: string;
  /** The current process; undefined while none runs. */
  pid: number | undefined;
  state: ProxyState;
  /** Restart attempts since start(); each one is a new, empty l7mp. */
  restarts: number;
  lastExit: ProxyExit | undefined;
  /** When the current (or last) process was assigned to this proxy (ISO 8601). */
  startedAt: string | undefined;
  /** When the API last became ready (ISO 8601). */
  readyAt: string | undefined;
}

/** Emitted whenever a proxy's API starts answering: after start() and after every restart. */
export interface ProxyReadyEvent {
  id: string;
  pid: number;
  /** ISO 8601. */
  startedAt: string;
  restarts: number;
  apiPort: number;
  apiUrl: string;
  /** From startedAt until the API answered. */
  startupMs: number;
}

/** Emitted when a proxy's process dies unexpectedly (crash, kill()); a restart follows. */
export interface ProxyExitEvent {
  id: string;
  pid: number;
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface L7mpSupervisorEvents {
  ready: [ProxyReadyEvent];
  exit: [ProxyExitEvent];
}

export interface L7mpLogLine {
  /** When the supervisor read the line (ISO 8601). */
  at: string;
  /** `supervisor` lines are the supervisor's own notes (spawned, exited, restarting). */
  stream: 'stdout' | 'stderr' | 'supervisor';
  pid: number | undefined;
  line: string;
}

/** A pre-started l7mp that start() or a restart can take over. */
export interface SpareStatus {
  pid: number;
  state: 'starting' | 'ready';
  /** ISO 8601. */
  spawnedAt: string;
}

export interface L7mpSupervisorOptions {
  /** Where the supervisor writes its files (the bootstrap config). Created if missing. */
  stateDir: string;
  /**
   * Bound on one start attempt (process start, OpenAPI init, API answering). Default 60 s: one cold
   * start takes 2-10 s, but concurrent starts share the CPUs (5 at once took 18-27 s on 2 busy cores).
   */
  startTimeoutMs?: number;
  /** How long stop() waits after SIGTERM before SIGKILL. Default 3 s. */
  stopTimeoutMs?: number;
  /** Restart delays: initialMs doubling up to maxMs; reset once a proxy ran resetAfterMs. */
  backoff?: { initialMs?: number; maxMs?: number; resetAfterMs?: number };
  /**
   * Initialised processes kept in reserve (default 1, 0 disables). l7mp needs 2-10 s to compile its
   * OpenAPI schema before the API can answer; a spare turns that into ~0.3 s for restarts.
   */
  warmSpares?: number;
  /** Lines kept per proxy. Default 1000. */
  logLines?: number;
  /** The @l7mp/l7mp package directory; resolved by the child by default. */
  l7mpDir?: string;
  /** The wrapper script; for bundlers that move this module away from l7mpChild.cjs. */
  childScript?: string;
}

export interface StartProxyOptions {
  id: string;
  /** The REST API port. l7mp's HTTP listener binds all interfaces, so it must be unique per host. */
  apiPort: number;
  /** Default `warn`. */
  logLevel?: L7mpLogLevel;
}

const SPARE_LOG_LEVEL: L7mpLogLevel = 'warn';
/**
 * Node flags of every proxy process. A 2 MB young generation instead of V8's 16 MB: measured with
 * bench:l7mp (20 proxies, quiet machine), 134-146 -> 111-121 MB RSS per proxy, with the same push
 * latency and start-up time (within the run-to-run noise). (TurboFan is turned off at run time, once
 * l7mp is initialised, by l7mpChild.cjs: a flag here would slow the start-up down as well.)
 */
const L7MP_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=2'];
const MAX_LINE = 4000;
const PRE_TAKE_LINES = 200;
const POLL_MS = 50;
const REQUEST_TIMEOUT_MS = 2000;

interface Child {
  proc: ChildProcess;
  pid: number;
  spawnedAt: number;
  initialized: boolean;
  whenInitialized: Promise<void>;
  exit: ProxyExit | undefined;
  whenExited: Promise<ProxyExit>;
  owner: Entry | undefined;
  /** Output before a proxy took this process over. */
  preLines: L7mpLogLine[];
  onListen: ((error: string | undefined) => void) | undefined;
}

interface Entry {
  id: string;
  apiPort: number;
  logLevel: L7mpLogLevel;
  state: ProxyState;
  restarts: number;
  /** Consecutive failed runs, for the backoff. */
  failures: number;
  everReady: boolean;
  lastExit: ProxyExit | undefined;
  startedAt: number | undefined;
  readyAt: number | undefined;
  child: Child | undefined;
  attempt: AbortController | undefined;
  timer: NodeJS.Timeout | undefined;
  stopping: Promise<void> | undefined;
  /** This proxy's entry in the registry's port map (compared by identity). */
  portHolder: { id: string };
  log: L7mpLogLine[];
}

/** What the process-wide cleanup needs from a supervisor; kept minimal so module reloads (HMR) stay compatible. */
interface Cleanup {
  killNow(): void;
  stopAll(): Promise<void>;
}

interface Registry {
  supervisors: Set<Cleanup>;
  /** API port -> the proxy using it, across all supervisors of this process. */
  ports: Map<number, { id: string }>;
  installed: boolean;
}

// On globalThis so that two copies of this module (bundles, dev-server reloads) share one registry
// and one set of process handlers.
const REGISTRY = Symbol.for('meshdeck.localMesh.l7mpSupervisor');

function registry(): Registry {
  const g = globalThis as { [REGISTRY]?: Registry };
  g[REGISTRY] ??= { supervisors: new Set(), ports: new Map(), installed: false };
  return g[REGISTRY];
}

/** Kills every supervised process when this process ends, once per process however many supervisors exist. */
function installProcessCleanup(): void {
  const reg = registry();
  if (reg.installed) return;
  reg.installed = true;
  // 'exit' handlers must be synchronous: SIGKILL is all there is time for.
  process.on('exit', () => {
    for (const s of reg.supervisors) s.killNow();
  });
  const stopEverything = () =>
    Promise.all([...reg.supervisors].map((s) => s.stopAll().catch(() => undefined)));
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    let stopping = false;
    const reraise = () => {
      process.removeListener(signal, handler);
      process.kill(process.pid, signal);
    };
    function handler() {
      // Someone else handles the signal and decides whether the process ends; we only stop ours.
      if (process.listenerCount(signal) > 1) return void stopEverything();
      // Our listener replaced Node's default action (terminate): stop the proxies in order, then
      // raise the signal again without us. A second signal does not wait any longer.
      if (stopping) return reraise();
      stopping = true;
      const timer = setTimeout(reraise, 10_000);
      void stopEverything().then(() => {
        clearTimeout(timer);
        reraise();
      });
    }
    process.on(signal, handler);
  }
}

/**
 * Starts l7mp proxies (one per local-mesh pod) and restarts them when they die, with capped
 * exponential backoff. Emits `ready` whenever a proxy's API answers (a restarted proxy is empty: push
 * its config again) and `exit` when one dies unexpectedly. No proxy outlives this process: each
 * exits when its IPC channel to this process closes, and exit/SIGINT/SIGTERM handlers stop them.
 */
export class L7mpSupervisor extends EventEmitter<L7mpSupervisorEvents> {
  private readonly entries = new Map<string, Entry>();
  private readonly spareList: Child[] = [];
  private spareFailures = 0;
  private spareTimer: NodeJS.Timeout | undefined;
  private closing = 0;
  /** Bumped by stopAll(), so that a spare refill already under way does not spawn after it. */
  private epoch = 0;
  private bootstrap: Promise<string> | undefined;
  private readonly cleanup: Cleanup = {
    killNow: () => this.killNow(),
    stopAll: () => this.stopAll(),
  };
  private readonly startTimeoutMs: number;
  private readonly stopTimeoutMs: number;
  private readonly backoff: { initialMs: number; maxMs: number; resetAfterMs: number };
  private readonly warmSpares: number;
  private readonly logLines: number;
  private readonly childScript: string;

  constructor(private readonly options: L7mpSupervisorOptions) {
    super();
    this.startTimeoutMs = options.startTimeoutMs ?? 60_000;
    this.stopTimeoutMs = options.stopTimeoutMs ?? 3000;
    this.backoff = {
      initialMs: options.backoff?.initialMs ?? 100,
      maxMs: options.backoff?.maxMs ?? 5000,
      resetAfterMs: options.backoff?.resetAfterMs ?? 30_000,
    };
    this.warmSpares = options.warmSpares ?? 1;
    this.logLines = options.logLines ?? 1000;
    this.childScript = options.childScript ?? fileURLToPath(new URL('./l7mpChild.cjs', import.meta.url));
  }

  /**
   * Starts proxy `id` with its REST API on `apiPort` and resolves when the API answers as this very
   * process. Rejects (and does not retry) if the port is taken or the first start fails; later
   * crashes are restarted.
   */
  async start(options: StartProxyOptions): Promise<ProxyReadyEvent> {
    const { id, apiPort } = options;
    if (id === '') throw new Error('a proxy needs an id');
    if (!Number.isInteger(apiPort) || apiPort < 1 || apiPort > 65535) {
      throw new Error(`proxy "${id}": invalid API port ${apiPort}`);
    }
    const existing = this.entries.get(id);
    if (existing && existing.state !== 'stopped' && existing.state !== 'exited') {
      throw new Error(`proxy "${id}" is already running (${existing.state})`);
    }
    const reg = registry();
    const holder = reg.ports.get(apiPort);
    if (holder) {
      throw new Error(
        `proxy "${id}": API port ${apiPort} is already used by local-mesh proxy "${holder.id}" ` +
          '(l7mp binds its API on all interfaces, so every proxy needs its own port)',
      );
    }
    // Reserve synchronously so that two concurrent start() calls cannot both pass the check above.
    const portHolder = { id };
    reg.ports.set(apiPort, portHolder);
    const entry: Entry = {
      id,
      apiPort,
      logLevel: options.logLevel ?? 'warn',
      state: 'starting',
      restarts: 0,
      failures: 0,
      everReady: false,
      lastExit: undefined,
      startedAt: undefined,
      readyAt: undefined,
      child: undefined,
      attempt: undefined,
      timer: undefined,
      stopping: undefined,
      portHolder,
      log: existing?.log ?? [],
    };
    this.entries.set(id, entry);
    reg.supervisors.add(this.cleanup);
    installProcessCleanup();
    try {
      return await this.launch(entry);
    } catch (e) {
      if (entry.stopping) throw new Error(`proxy "${id}" was stopped while starting`);
      await this.discardChild(entry);
      entry.state = 'exited';
      if (reg.ports.get(apiPort) === portHolder) reg.ports.delete(apiPort);
      const tail = entry.log
        .slice(-20)
        .map((l) => l.line)
        .join('\n');
      throw new Error(`proxy "${id}" did not start: ${(e as Error).message}\n--- proxy log ---\n${tail}`);
    }
  }

  /** Sends `signal` to proxy `id`'s process (a fault to test); it is restarted like after a crash. */
  kill(id: string, signal: NodeJS.Signals = 'SIGKILL'): boolean {
    const child = this.entries.get(id)?.child;
    if (!child || child.exit) return false;
    this.note(child, `supervisor: sending ${signal}`);
    return child.proc.kill(signal);
  }

  /** Stops proxy `id` for good (SIGTERM, then SIGKILL) and resolves when its process has exited. */
  stop(id: string): Promise<void> {
    const entry = this.entries.get(id);
    if (!entry) return Promise.resolve();
    entry.stopping ??= this.stopEntry(entry);
    return entry.stopping;
  }

  /** Stops every proxy and spare; resolves when all their processes have exited. */
  async stopAll(): Promise<void> {
    this.closing++;
    this.epoch++;
    try {
      clearTimeout(this.spareTimer);
      this.spareTimer = undefined;
      await Promise.all([
        ...[...this.entries.keys()].map((id) => this.stop(id)),
        ...[...this.spareList].map((c) => this.terminate(c)),
      ]);
    } finally {
      this.closing--;
    }
    if (this.live().length === 0) registry().supervisors.delete(this.cleanup);
  }

  /** The state of proxy `id`, or undefined if it was never started. */
  status(id: string): ProxyStatus | undefined {
    const entry = this.entries.get(id);
    return entry && this.toStatus(entry);
  }

  /** The state of every proxy started so far (stopped ones included). */
  statuses(): ProxyStatus[] {
    return [...this.entries.values()].map((e) => this.toStatus(e));
  }

  /** The last `tail` lines (default all kept) that proxy `id` printed, across restarts, oldest first. */
  logs(id: string, options: { tail?: number } = {}): L7mpLogLine[] {
    const log = this.entries.get(id)?.log ?? [];
    const tail = options.tail ?? log.length;
    return tail > 0 ? log.slice(-tail).map((l) => ({ ...l })) : [];
  }

  /** The pre-started processes waiting to become a proxy. */
  spares(): SpareStatus[] {
    return this.spareList.map((c) => ({
      pid: c.pid,
      state: c.initialized ? 'ready' : 'starting',
      spawnedAt: iso(c.spawnedAt),
    }));
  }

  private toStatus(e: Entry): ProxyStatus {
    return {
      id: e.id,
      apiPort: e.apiPort,
      apiUrl: `http://127.0.0.1:${e.apiPort}`,
      pid: e.child && !e.child.exit ? e.child.pid : undefined,
      state: e.state,
      restarts: e.restarts,
      lastExit: e.lastExit && { ...e.lastExit },
      startedAt: e.startedAt === undefined ? undefined : iso(e.startedAt),
      readyAt: e.readyAt === undefined ? undefined : iso(e.readyAt),
    };
  }

  /** One attempt: a process, its controller listener, and an API that answers as that process. */
  private async launch(entry: Entry): Promise<ProxyReadyEvent> {
    const attempt = new AbortController();
    entry.attempt = attempt;
    entry.state = 'starting';
    try {
      // l7mp reports success even when its HTTP listener cannot bind; ask the kernel first.
      if (!(await portIsFree(entry.apiPort))) {
        throw new Error(`API port ${entry.apiPort} is in use by another process`);
      }
      const bootstrap = await this.writeBootstrap();
      if (attempt.signal.aborted) throw new Error('stopped');
      const child = this.acquire(entry, bootstrap);
      const startedAt = Date.now();
      const deadline = startedAt + this.startTimeoutMs;
      entry.startedAt = startedAt;
      await this.until(child.whenInitialized, child, attempt.signal, deadline, 'initialising');
      // A fresh cluster name per process: only this process can answer a GET for it.
      const controllerCluster = `l7mp-controller-${randomBytes(6).toString('hex')}`;
      await this.until(
        this.listen(child, entry, controllerCluster),
        child,
        attempt.signal,
        deadline,
        'opening the API',
      );
      await this.until(
        waitForApi(entry.apiPort, controllerCluster, deadline, attempt.signal),
        child,
        attempt.signal,
        deadline,
        'waiting for the API',
      );
      const readyAt = Date.now();
      entry.state = 'ready';
      entry.everReady = true;
      entry.readyAt = readyAt;
      const event: ProxyReadyEvent = {
        id: entry.id,
        pid: child.pid,
        startedAt: iso(startedAt),
        restarts: entry.restarts,
        apiPort: entry.apiPort,
        apiUrl: `http://127.0.0.1:${entry.apiPort}`,
        startupMs: readyAt - startedAt,
      };
      this.note(child, `supervisor: API ready on port ${entry.apiPort} after ${event.startupMs} ms`);
      this.emit('ready', event);
      this.refillSpares();
      return event;
    } finally {
      // Ends the background API polling of this attempt, whatever happened.
      attempt.abort();
      if (entry.attempt === attempt) entry.attempt = undefined;
    }
  }

  /** Races `promise` against the process exiting, stop() and the deadline. */
  private async until<T>(
    promise: Promise<T>,
    child: Child,
    signal: AbortSignal,
    deadline: number,
    what: string,
  ): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    try {
      return await Promise.race([
        promise,
        child.whenExited.then((x) => {
          throw new Error(`l7mp exited while ${what} (code ${x.code}, signal ${x.signal})`);
        }),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`timed out after ${this.startTimeoutMs} ms while ${what}`)),
            Math.max(0, deadline - Date.now()),
          );
        }),
        new Promise<never>((_, reject) => {
          onAbort = () => reject(new Error('stopped'));
          if (signal.aborted) onAbort();
          else signal.addEventListener('abort', onAbort, { once: true });
        }),
      ]);
    } finally {
      clearTimeout(timer);
      if (onAbort) signal.removeEventListener('abort', onAbort);
    }
  }

  private listen(child: Child, entry: Entry, controllerCluster: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      child.onListen = (error) => {
        child.onListen = undefined;
        if (error === undefined) resolve();
        else reject(new Error(`l7mp could not open its API: ${error}`));
      };
      child.proc.send(
        { type: 'listen', apiPort: entry.apiPort, controllerCluster, logLevel: entry.logLevel },
        (e) => {
          if (e) reject(e);
        },
      );
    });
  }

  /** A process for `entry`: an initialised spare if there is one, else the oldest starting one, else a new one. */
  private acquire(entry: Entry, bootstrap: string): Child {
    const i = this.spareList.findIndex((c) => c.initialized);
    const [spare] = this.spareList.splice(i >= 0 ? i : 0, 1);
    const child = spare ?? this.spawn(bootstrap);
    child.owner = entry;
    entry.child = child;
    for (const line of child.preLines) this.push(entry, line);
    child.preLines = [];
    this.note(
      child,
      spare
        ? `supervisor: proxy "${entry.id}" takes over ${spare.initialized ? 'ready' : 'starting'} spare pid ${child.pid}`
        : `supervisor: proxy "${entry.id}" starts pid ${child.pid}`,
    );
    return child;
  }

  private spawn(bootstrap: string): Child {
    const args = [bootstrap, SPARE_LOG_LEVEL];
    if (this.options.l7mpDir) args.push(this.options.l7mpDir);
    const proc = fork(this.childScript, args, {
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      // Not the parent's flags: under tsx/vitest they load TypeScript hooks into every proxy.
      execArgv: [...L7MP_NODE_FLAGS],
      // Own process group: a terminal's Ctrl-C reaches Meshdeck only, which then stops the proxies
      // in order instead of racing their restarts.
      detached: true,
    });
    let markInitialized = () => {};
    let markExited: (x: ProxyExit) => void = () => {};
    const child: Child = {
      proc,
      pid: proc.pid ?? -1,
      spawnedAt: Date.now(),
      initialized: false,
      whenInitialized: new Promise<void>((resolve) => (markInitialized = resolve)),
      exit: undefined,
      whenExited: new Promise<ProxyExit>((resolve) => (markExited = resolve)),
      owner: undefined,
      preLines: [],
      onListen: undefined,
    };
    const initTimer = setTimeout(() => {
      if (child.initialized || child.exit) return;
      this.note(child, `supervisor: not initialised after ${this.startTimeoutMs} ms, killing`);
      proc.kill('SIGKILL');
    }, this.startTimeoutMs);
    proc.on('message', (m: { type?: unknown; message?: unknown } | null) => {
      if (m === null || typeof m !== 'object') return;
      if (m.type === 'initialized') {
        child.initialized = true;
        clearTimeout(initTimer);
        this.spareFailures = 0;
        markInitialized();
      } else if (m.type === 'listening') child.onListen?.(undefined);
      else if (m.type === 'listen-failed') child.onListen?.(String(m.message));
    });
    const finish = (code: number | null, signal: NodeJS.Signals | null) => {
      if (child.exit) return;
      clearTimeout(initTimer);
      child.exit = { code, signal, at: iso(Date.now()) };
      this.note(child, `supervisor: pid ${child.pid} exited (code ${code}, signal ${signal})`);
      if (child.owner) this.onProxyExit(child.owner, child);
      else this.onSpareExit(child);
      markExited(child.exit);
    };
    proc.on('exit', finish);
    proc.on('error', (e) => {
      this.note(child, `supervisor: process error: ${e.message}`);
      // A failed spawn has no pid and emits no 'exit'.
      if (proc.pid === undefined) finish(null, null);
    });
    for (const stream of ['stdout', 'stderr'] as const) {
      const readable = proc[stream];
      if (!readable) continue;
      readable.setEncoding('utf8');
      let partial = '';
      readable.on('data', (chunk: string) => {
        partial += chunk;
        let nl: number;
        while ((nl = partial.indexOf('\n')) >= 0) {
          this.output(child, stream, partial.slice(0, nl));
          partial = partial.slice(nl + 1);
        }
        if (partial.length > MAX_LINE) {
          this.output(child, stream, partial);
          partial = '';
        }
      });
      readable.on('end', () => {
        if (partial) this.output(child, stream, partial);
        partial = '';
      });
    }
    return child;
  }

  private onProxyExit(entry: Entry, child: Child): void {
    if (entry.child !== child) return;
    const exit = child.exit!;
    const wasReady = entry.state === 'ready';
    entry.child = undefined;
    entry.lastExit = exit;
    if (entry.stopping) {
      entry.state = 'stopped';
      return;
    }
    // The first start() reports its own failure.
    if (!entry.everReady) return;
    if (wasReady && entry.readyAt !== undefined && Date.now() - entry.readyAt >= this.backoff.resetAfterMs) {
      entry.failures = 0;
    }
    // Otherwise a restart attempt is under way and schedules the next one when it fails. Scheduled
    // before the event so that listeners read the new state ('backoff') from status().
    if (wasReady) this.scheduleRestart(entry);
    this.emit('exit', { id: entry.id, pid: child.pid, code: exit.code, signal: exit.signal });
  }

  private scheduleRestart(entry: Entry): void {
    const delay = Math.min(this.backoff.maxMs, this.backoff.initialMs * 2 ** entry.failures);
    entry.failures++;
    entry.state = 'backoff';
    this.push(entry, {
      at: iso(Date.now()),
      stream: 'supervisor',
      pid: undefined,
      line: `supervisor: restarting in ${delay} ms`,
    });
    entry.timer = setTimeout(() => void this.restart(entry), delay);
  }

  private async restart(entry: Entry): Promise<void> {
    entry.timer = undefined;
    if (entry.stopping) return;
    entry.restarts++;
    try {
      await this.launch(entry);
    } catch (e) {
      if (entry.stopping) return;
      this.push(entry, {
        at: iso(Date.now()),
        stream: 'supervisor',
        pid: entry.child?.pid,
        line: `supervisor: restart failed: ${(e as Error).message}`,
      });
      await this.discardChild(entry);
      if (!entry.stopping) this.scheduleRestart(entry);
    }
  }

  private onSpareExit(child: Child): void {
    const i = this.spareList.indexOf(child);
    if (i >= 0) this.spareList.splice(i, 1);
    if (!child.initialized) this.spareFailures++;
    this.refillSpares();
  }

  /** Tops the spares up, after a backoff if they keep dying before they are initialised. */
  private refillSpares(): void {
    if (this.closing > 0 || this.spareTimer || this.spareList.length >= this.warmSpares) return;
    const delay =
      this.spareFailures === 0
        ? 0
        : Math.min(this.backoff.maxMs, this.backoff.initialMs * 2 ** (this.spareFailures - 1));
    const epoch = this.epoch;
    this.spareTimer = setTimeout(() => {
      void this.writeBootstrap().then(
        (bootstrap) => {
          this.spareTimer = undefined;
          if (this.closing > 0 || this.epoch !== epoch) return;
          while (this.spareList.length < this.warmSpares) this.spareList.push(this.spawn(bootstrap));
        },
        () => {
          // The state dir is not writable: proxies report that when they start.
          this.spareTimer = undefined;
        },
      );
    }, delay);
  }

  private async stopEntry(entry: Entry): Promise<void> {
    clearTimeout(entry.timer);
    entry.timer = undefined;
    entry.attempt?.abort();
    if (entry.child) await this.terminate(entry.child);
    entry.state = 'stopped';
    const reg = registry();
    if (reg.ports.get(entry.apiPort) === entry.portHolder) reg.ports.delete(entry.apiPort);
  }

  /** SIGTERM, then SIGKILL after stopTimeoutMs; resolves when the process has exited. */
  private async terminate(child: Child): Promise<void> {
    if (child.exit) return;
    child.proc.kill('SIGTERM');
    const timer = setTimeout(() => child.proc.kill('SIGKILL'), this.stopTimeoutMs);
    await child.whenExited;
    clearTimeout(timer);
  }

  /** Kills a failed attempt's process so that the next attempt starts alone on the port. */
  private async discardChild(entry: Entry): Promise<void> {
    const child = entry.child;
    if (!child) return;
    if (!child.exit) child.proc.kill('SIGKILL');
    await child.whenExited;
  }

  private live(): Child[] {
    const owned = [...this.entries.values()].flatMap((e) => (e.child && !e.child.exit ? [e.child] : []));
    return [...owned, ...this.spareList.filter((c) => !c.exit)];
  }

  private killNow(): void {
    for (const entry of this.entries.values()) {
      clearTimeout(entry.timer);
      entry.stopping ??= Promise.resolve();
    }
    clearTimeout(this.spareTimer);
    this.closing++;
    for (const child of this.live()) child.proc.kill('SIGKILL');
  }

  /** The bootstrap config every process starts from: admin settings only; see l7mpChild.cjs. */
  private writeBootstrap(): Promise<string> {
    this.bootstrap ??= (async () => {
      await mkdir(this.options.stateDir, { recursive: true });
      const file = path.join(this.options.stateDir, 'l7mp-bootstrap.json');
      await writeFile(file, JSON.stringify({ admin: { log_level: SPARE_LOG_LEVEL } }));
      return file;
    })();
    // A failed write (e.g. a read-only dir) must not poison later attempts.
    this.bootstrap.catch(() => (this.bootstrap = undefined));
    return this.bootstrap;
  }

  private output(child: Child, stream: 'stdout' | 'stderr', text: string): void {
    const line = text.endsWith('\r') ? text.slice(0, -1) : text;
    this.record(child, { at: iso(Date.now()), stream, pid: child.pid, line: line.slice(0, MAX_LINE) });
  }

  private note(child: Child, line: string): void {
    this.record(child, { at: iso(Date.now()), stream: 'supervisor', pid: child.pid, line });
  }

  private record(child: Child, line: L7mpLogLine): void {
    if (child.owner) this.push(child.owner, line);
    else {
      child.preLines.push(line);
      if (child.preLines.length > PRE_TAKE_LINES) child.preLines.shift();
    }
  }

  private push(entry: Entry, line: L7mpLogLine): void {
    entry.log.push(line);
    if (entry.log.length > this.logLines) entry.log.splice(0, entry.log.length - this.logLines);
  }
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** Whether l7mp could listen on `port` (its HTTP listener binds all interfaces, IPv6 and IPv4). */
function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** Polls until GET /api/v1/clusters/<controllerCluster> answers: only the process we configured knows that name. */
async function waitForApi(
  port: number,
  controllerCluster: string,
  deadline: number,
  signal: AbortSignal,
): Promise<void> {
  const apiPath = `/api/v1/clusters/${encodeURIComponent(controllerCluster)}`;
  while (!signal.aborted && Date.now() < deadline) {
    const answer = await httpGetJson(port, apiPath).catch(() => undefined);
    const spec = (answer?.body as { spec?: { protocol?: unknown } } | undefined)?.spec;
    if (answer?.status === 200 && spec?.protocol === 'L7mpController') return;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  // until() has already reported the timeout or the stop; this rejection only ends the loop.
  throw new Error('gave up waiting for the API');
}

/** A GET to 127.0.0.1 without connection reuse (a restarted proxy must not get a dead socket). */
function httpGetJson(port: number, apiPath: string): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      { host: '127.0.0.1', port, path: apiPath, agent: false, timeout: REQUEST_TIMEOUT_MS },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          try {
            resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as unknown });
          } catch (e) {
            reject(e as Error);
          }
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
  });
}
