import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../testing/startL7mp';
import { L7mpSupervisor, type L7mpSupervisorEvents, type ProxyReadyEvent } from './L7mpSupervisor';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../..');

/** Whether `pid` runs; a zombie (exited, not yet reaped by its new parent) counts as gone. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    // /proc/<pid>/stat: "pid (comm) state ..."; comm may contain spaces, so split after ')'.
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(')').pop()?.trim()[0] !== 'Z';
  } catch {
    return true;
  }
}

/** Polls `check` every 50 ms until it is true; fails after `timeoutMs`. */
async function waitFor(what: string, check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The next `event` from the supervisor, or a rejection after `timeoutMs`. */
async function next<E extends 'ready' | 'exit'>(
  sup: L7mpSupervisor,
  event: E,
  timeoutMs: number,
): Promise<L7mpSupervisorEvents[E][0]> {
  const [e] = (await once(sup, event, { signal: AbortSignal.timeout(timeoutMs) })) as L7mpSupervisorEvents[E];
  return e;
}

async function api(apiUrl: string, apiPath: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${apiUrl}${apiPath}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(5000),
  });
  return { status: res.status, json: JSON.parse(await res.text()) };
}

describe('L7mpSupervisor', () => {
  let stateDir: string;
  let sup: L7mpSupervisor;
  let apiPort: number;
  let first: ProxyReadyEvent;
  const pids = new Set<number>();

  beforeAll(async () => {
    stateDir = await mkdtemp(path.join(os.tmpdir(), 'mdk-sup-'));
    sup = new L7mpSupervisor({ stateDir });
    apiPort = await freePort('tcp');
    const t0 = Date.now();
    first = await sup.start({ id: 'default/gw', apiPort, logLevel: 'info' });
    console.info(`[measured] cold start until the API answered: ${Date.now() - t0} ms`);
    pids.add(first.pid);
  }, 60_000);

  afterAll(async () => {
    await sup?.stopAll();
    for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGKILL');
    await rm(stateDir, { recursive: true, force: true });
  }, 30_000);

  it('starts a proxy whose REST API answers as that process', async () => {
    expect(first).toMatchObject({
      id: 'default/gw',
      restarts: 0,
      apiPort,
      apiUrl: `http://127.0.0.1:${apiPort}`,
    });
    expect(alive(first.pid)).toBe(true);
    const listeners = await api(first.apiUrl, '/api/v1/listeners');
    expect(listeners.status).toBe(200);
    expect(listeners.json).toEqual([
      expect.objectContaining({ name: 'controller-listener', spec: { protocol: 'HTTP', port: apiPort } }),
    ]);
    expect(sup.status('default/gw')).toMatchObject({ state: 'ready', pid: first.pid, restarts: 0 });
    const lines = sup.logs('default/gw');
    expect(lines.some((l) => l.stream === 'supervisor' && l.line.includes('API ready'))).toBe(true);
    // log level info: l7mp logs each API call on stderr
    expect(lines.some((l) => l.stream === 'stderr' && l.line.includes('getListeners'))).toBe(true);
    expect(sup.logs('default/gw', { tail: 3 })).toHaveLength(3);
  });

  it('restarts a SIGKILLed proxy within 5 s as a new, empty process', async () => {
    // The restart takes over the warm spare: wait until it has compiled its OpenAPI schema.
    await waitFor('a ready spare', () => sup.spares().some((s) => s.state === 'ready'), 30_000);
    for (const s of sup.spares()) pids.add(s.pid);
    const added = await api(first.apiUrl, '/api/v1/clusters', {
      cluster: { name: 'c1', spec: { protocol: 'UDP', port: 9999 } },
    });
    expect(added.status).toBe(200);

    const exit = next(sup, 'exit', 5000);
    const ready = next(sup, 'ready', 5000);
    const t0 = Date.now();
    expect(sup.kill('default/gw', 'SIGKILL')).toBe(true);
    expect(await exit).toEqual({ id: 'default/gw', pid: first.pid, code: null, signal: 'SIGKILL' });
    expect(sup.status('default/gw')).toMatchObject({ state: 'backoff', pid: undefined });
    const again = await ready;
    console.info(`[measured] restart after SIGKILL (warm spare): ${Date.now() - t0} ms`);
    pids.add(again.pid);
    expect(again.restarts).toBe(1);
    expect(again.pid).not.toBe(first.pid);
    expect(alive(first.pid)).toBe(false);
    expect(sup.status('default/gw')).toMatchObject({
      state: 'ready',
      pid: again.pid,
      restarts: 1,
      lastExit: { code: null, signal: 'SIGKILL' },
    });
    const clusters = await api(again.apiUrl, '/api/v1/clusters');
    expect(clusters.json).toHaveLength(1);
    expect(clusters.json[0].spec).toEqual({ protocol: 'L7mpController' });
    first = again;
  });

  it('rejects an API port that another supervised proxy uses', async () => {
    await expect(sup.start({ id: 'default/other', apiPort })).rejects.toThrow(
      /API port \d+ is already used by local-mesh proxy "default\/gw"/,
    );
    const other = new L7mpSupervisor({ stateDir });
    await expect(other.start({ id: 'x', apiPort })).rejects.toThrow(/already used by local-mesh proxy/);
    await expect(sup.start({ id: 'default/gw', apiPort: apiPort + 1 })).rejects.toThrow(/already running/);
  });

  it('rejects an API port that some other process listens on, without waiting', async () => {
    const server = net.createServer();
    server.listen(0);
    await once(server, 'listening');
    const port = (server.address() as net.AddressInfo).port;
    const t0 = Date.now();
    await expect(sup.start({ id: 'default/busy', apiPort: port })).rejects.toThrow(
      /in use by another process/,
    );
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(sup.status('default/busy')?.state).toBe('exited');
    server.close();
  });

  it('restarts without a spare (cold) too, with backoff between attempts', async () => {
    const cold = new L7mpSupervisor({ stateDir: path.join(stateDir, 'cold'), warmSpares: 0 });
    try {
      const port = await freePort('tcp');
      const r0 = await cold.start({ id: 'cold', apiPort: port });
      pids.add(r0.pid);
      expect(cold.spares()).toEqual([]);
      const ready = next(cold, 'ready', 45_000);
      const t0 = Date.now();
      cold.kill('cold', 'SIGTERM');
      const r1 = await ready;
      pids.add(r1.pid);
      console.info(`[measured] restart after SIGTERM without a spare (cold start): ${Date.now() - t0} ms`);
      expect(r1).toMatchObject({ restarts: 1 });
      expect(cold.logs('cold').some((l) => l.line.includes('restarting in 100 ms'))).toBe(true);
    } finally {
      await cold.stopAll();
    }
  }, 120_000);

  it('stopAll stops every proxy and spare, and nothing restarts', async () => {
    const live = [first.pid, ...sup.spares().map((s) => s.pid)];
    for (const pid of live) pids.add(pid);
    expect(live.every(alive)).toBe(true);
    let restarted = false;
    sup.on('ready', () => (restarted = true));
    await sup.stopAll();
    expect(live.filter(alive)).toEqual([]);
    expect(sup.status('default/gw')).toMatchObject({ state: 'stopped', pid: undefined });
    expect(sup.spares()).toEqual([]);
    await new Promise((r) => setTimeout(r, 500));
    expect(restarted).toBe(false);
    expect(sup.spares()).toEqual([]);
  });

  // SIGKILL: the children notice the closed IPC channel (or, blocked, the watchdog does). SIGTERM: the
  // supervisor's handler stops them, then re-raises the signal so that the parent still terminates.
  it.each(['SIGKILL', 'SIGTERM'] as const)(
    'leaves no l7mp behind when its parent gets %s',
    async (signal) => {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'mdk-orphan-'));
      const script = path.join(dir, 'parent.mts');
      await writeFile(
        script,
        [
          `import { L7mpSupervisor } from ${JSON.stringify(path.join(here, 'L7mpSupervisor.ts'))};`,
          `const sup = new L7mpSupervisor({ stateDir: ${JSON.stringify(dir)} });`,
          `const ready = await sup.start({ id: 'orphan', apiPort: Number(process.argv[2]) });`,
          `while (sup.spares().length === 0) await new Promise((r) => setTimeout(r, 20));`,
          `console.log(JSON.stringify({ pids: [ready.pid, ...sup.spares().map((s) => s.pid)] }));`,
        ].join('\n'),
      );
      let parent: ChildProcess | undefined;
      let children: number[] = [];
      try {
        // `node --import tsx` keeps it one process (the tsx CLI would put a process in between).
        parent = spawn(process.execPath, ['--import', 'tsx', script, String(await freePort('tcp'))], {
          cwd: repoRoot,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        let err = '';
        parent.stderr!.on('data', (d: Buffer) => (err += d.toString()));
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(
            () => reject(new Error(`parent printed no pids in 60 s: ${out}${err}`)),
            60_000,
          );
          parent!.stdout!.on('data', (d: Buffer) => {
            out += d.toString();
            const line = out.split('\n').find((l) => l.startsWith('{'));
            if (line) {
              clearTimeout(timer);
              children = (JSON.parse(line) as { pids: number[] }).pids;
              resolve();
            }
          });
          parent!.once('exit', (code) => reject(new Error(`parent exited (${code}): ${out}${err}`)));
        });
        for (const pid of children) pids.add(pid);
        expect(children).toHaveLength(2);
        expect(children.every(alive)).toBe(true);

        const parentExit = once(parent, 'exit');
        parent.kill(signal);
        const t0 = Date.now();
        const goneAfter = await Promise.all(
          children.map(async (pid) => {
            // SIGTERM: a spare still compiling its OpenAPI schema ignores it until stopAll's SIGKILL (3 s).
            await waitFor(`l7mp pid ${pid} to exit`, () => !alive(pid), signal === 'SIGKILL' ? 5000 : 8000);
            return Date.now() - t0;
          }),
        );
        console.info(
          `[measured] after the parent's ${signal}: proxy gone in ${goneAfter[0]} ms, spare in ${goneAfter[1]} ms`,
        );
        expect((await parentExit)[1]).toBe(signal);
      } finally {
        if (parent && parent.exitCode === null && parent.signalCode === null) parent.kill('SIGKILL');
        await rm(dir, { recursive: true, force: true });
      }
    },
    90_000,
  );
});
