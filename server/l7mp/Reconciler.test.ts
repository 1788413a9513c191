/**
 * Reconciler against real l7mp 0.5.7 processes on loopback: coalescing, per-proxy serialisation,
 * failures with backoff, unreachable proxies, restarts noticed by the drift check, stop().
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { diffL7mp } from '@/lib/l7mp/diffL7mp';
import { l7mpPaths } from '@/lib/l7mp/l7mpPaths';
import type { L7mpConfig } from '@/lib/model/l7mp';
import { freePort, type L7mpProcess, startL7mp } from '../testing/startL7mp';
import { L7mpRestClient } from './L7mpRestClient';
import {
  bindUdp,
  captureLogger,
  config,
  l7mpCall,
  namedRoute,
  udpCluster,
  udpListener,
  waitForState,
} from './l7mpTestConfigs.testutil';
import type { ProxyReconcileResult } from './ProxyReconciler';
import { type ProxySyncState, Reconciler, type ReconcilerOptions } from './Reconciler';

const GW = '127.0.0.81';
const processes: L7mpProcess[] = [];
const reconcilers: Reconciler[] = [];

async function l7mp(apiPort?: number): Promise<L7mpProcess> {
  const p = await startL7mp(apiPort === undefined ? {} : { apiPort });
  processes.push(p);
  return p;
}

function reconciler(options: ReconcilerOptions = {}): Reconciler & { log: string[] } {
  const logger = captureLogger();
  const r = new Reconciler({ driftIntervalMs: 0, logger, ...options }) as Reconciler & { log: string[] };
  r.log = logger.lines;
  reconcilers.push(r);
  return r;
}

/** A small mesh; `variant` changes the cluster's endpoints only. */
function mesh(port: number, variant = 0): L7mpConfig {
  const endpoints = Array.from({ length: 1 + (variant % 3) }, (_, i) => `127.0.0.${90 + i}`);
  return config({
    clusters: [udpCluster('backend', 9999, endpoints)],
    routes: [namedRoute('to-backend', 'backend')],
    listeners: [
      { ...udpListener('front', GW, port, 'backend'), rules: [{ action: { route: 'to-backend' } }] },
    ],
  });
}

async function liveDiff(apiUrl: string, desired: L7mpConfig) {
  return diffL7mp((await new L7mpRestClient(apiUrl).readLive()).config, desired);
}

function collect(r: Reconciler): { states: ProxySyncState[]; pushed: [string, ProxyReconcileResult][] } {
  const seen = { states: [] as ProxySyncState[], pushed: [] as [string, ProxyReconcileResult][] };
  r.on('state', (s) => seen.states.push(s));
  r.on('pushed', (id, result) => seen.pushed.push([id, result]));
  return seen;
}

afterEach(async () => {
  await Promise.all(reconcilers.splice(0).map((r) => r.stop()));
});

afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop()));
});

describe('Reconciler with two proxies (real l7mp)', { timeout: 60_000 }, () => {
  let p1: L7mpProcess;
  let p2: L7mpProcess;
  let port1: number;
  let port2: number;

  beforeAll(async () => {
    [p1, p2] = await Promise.all([l7mp(), l7mp()]);
    port1 = await freePort('udp', GW);
    port2 = await freePort('udp', GW);
  }, 30_000);

  it('syncs both, coalesces a burst of changes into one push of the changed proxy only', async () => {
    const r = reconciler();
    const seen = collect(r);
    r.setDesired({
      a: { apiUrl: p1.apiUrl, config: mesh(port1) },
      b: { apiUrl: p2.apiUrl, config: mesh(port2) },
    });
    expect(r.state('a')).toMatchObject({
      phase: 'pending',
      reachable: null,
      inSync: false,
      desiredVersion: 1,
    });
    await r.whenIdle();
    for (const id of ['a', 'b']) {
      expect(r.state(id)).toMatchObject({ phase: 'synced', reachable: true, inSync: true, attempts: 0 });
      expect(r.state(id)?.lastPush).toMatchObject({ ok: true, operations: 3 });
      expect(r.state(id)?.lastCheck).toMatchObject({ drift: 3 });
    }
    expect(seen.states.some((s) => s.id === 'a' && s.phase === 'syncing')).toBe(true);
    expect(await liveDiff(p1.apiUrl, mesh(port1))).toEqual([]);

    // Five changes of `a` within a few ms, and `b` re-rendered as equal but new objects.
    seen.pushed.length = 0;
    for (let v = 1; v <= 5; v++) {
      r.setDesired({
        a: { apiUrl: p1.apiUrl, config: mesh(port1, v) },
        b: { apiUrl: p2.apiUrl, config: structuredClone(mesh(port2)) },
      });
    }
    expect(r.state('a')).toMatchObject({ phase: 'pending', inSync: false, desiredVersion: 6 });
    await r.whenIdle();
    expect(seen.pushed.map(([id]) => id)).toEqual(['a']);
    expect(r.state('a')).toMatchObject({ phase: 'synced', inSync: true, desiredVersion: 6 });
    expect(r.state('b')).toMatchObject({ desiredVersion: 1 });
    expect(seen.pushed[0]![1].applied.every((op) => op.kind === 'endpoint')).toBe(true);
    expect(await liveDiff(p1.apiUrl, mesh(port1, 5))).toEqual([]);
  });

  it('pushes a change after a quiet period at once, and debounces the changes that follow it', async () => {
    const delays: number[] = [];
    const r = reconciler({
      coalesceMs: 20,
      clock: {
        now: () => Date.now(),
        setTimeout: (callback, ms) => {
          delays.push(ms);
          return setTimeout(callback, ms);
        },
        clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
      },
    });
    const seen = collect(r);
    // Three changes in one turn after a quiet start: one flush, scheduled without waiting.
    for (let v = 0; v < 3; v++) r.setDesired({ a: { apiUrl: p1.apiUrl, config: mesh(port1, v) } });
    expect(delays).toEqual([0]);
    await r.whenIdle();
    expect(seen.pushed.map(([id]) => id)).toEqual(['a']);
    expect(await liveDiff(p1.apiUrl, mesh(port1, 2))).toEqual([]);

    // A change made as the flush starts its push is part of a burst: debounced by coalesceMs. The change
    // that starts it comes after a quiet period: on an idle machine the first push and the read above can
    // take under coalesceMs, and then it would be debounced too (CI saw [20, 20]).
    await new Promise((resolve) => setTimeout(resolve, 30));
    delays.length = 0;
    let followUp = false;
    r.on('state', (s) => {
      if (s.phase === 'syncing' && s.desiredVersion === 4 && !followUp) {
        followUp = true;
        r.setDesired({ a: { apiUrl: p1.apiUrl, config: mesh(port1, 1) } });
      }
    });
    r.setDesired({ a: { apiUrl: p1.apiUrl, config: mesh(port1, 0) } });
    await r.whenIdle();
    expect(followUp).toBe(true);
    expect(delays.slice(0, 2)).toEqual([0, 20]);
    expect(r.state('a')).toMatchObject({ phase: 'synced', inSync: true, desiredVersion: 5 });
    expect(await liveDiff(p1.apiUrl, mesh(port1, 1))).toEqual([]);
  });

  it('emits a state only when it changed, and every state event is a deep copy', async () => {
    const r = reconciler();
    const seen = collect(r);
    r.setDesired({ a: { apiUrl: p1.apiUrl, config: mesh(port1, 0) } });
    await r.whenIdle();
    r.setDesired({ a: { apiUrl: p1.apiUrl, config: mesh(port1, 1) } });
    await r.whenIdle();
    expect(seen.states.map((s) => s.phase)).toEqual([
      'pending',
      'syncing',
      'synced',
      'pending',
      'syncing',
      'synced',
    ]);
    for (let i = 1; i < seen.states.length; i++) expect(seen.states[i]).not.toEqual(seen.states[i - 1]);
    const last = seen.states.at(-1)!;
    expect(last).toEqual(r.state('a'));
    last.lastPush!.operations = -1;
    last.lastCheck!.drift = -1;
    expect(r.state('a')!.lastPush!.operations).not.toBe(-1);
    expect(r.state('a')!.lastCheck!.drift).not.toBe(-1);
  });

  it('a change during a push marks the proxy dirty and reruns it afterwards', async () => {
    const r = reconciler();
    r.setDesired({ a: { apiUrl: p1.apiUrl, config: mesh(port1, 0) } });
    await r.whenIdle();
    let changedDuringPush = false;
    r.on('state', (s) => {
      if (s.phase === 'syncing' && s.desiredVersion === 2 && !changedDuringPush) {
        changedDuringPush = true;
        r.setDesired({ a: { apiUrl: p1.apiUrl, config: mesh(port1, 2) } });
      }
    });
    r.setDesired({ a: { apiUrl: p1.apiUrl, config: mesh(port1, 1) } });
    await r.whenIdle();
    expect(changedDuringPush).toBe(true);
    expect(r.state('a')).toMatchObject({ phase: 'synced', inSync: true, desiredVersion: 3 });
    expect(await liveDiff(p1.apiUrl, mesh(port1, 2))).toEqual([]);
  });

  it('a proxy that is removed from the desired map is no longer managed and keeps its config', async () => {
    const r = reconciler();
    r.setDesired({
      a: { apiUrl: p1.apiUrl, config: mesh(port1) },
      b: { apiUrl: p2.apiUrl, config: mesh(port2) },
    });
    await r.whenIdle();
    r.setDesired({ a: { apiUrl: p1.apiUrl, config: mesh(port1) } });
    await r.whenIdle();
    expect(r.states().map((s) => s.id)).toEqual(['a']);
    expect(r.state('b')).toBeUndefined();
    expect(await liveDiff(p2.apiUrl, mesh(port2))).toEqual([]);
  });

  it('a refused operation: failed with the op and the proxy message, retried with backoff, recovers once the conflict is gone', async () => {
    // Something outside the proxy holds the listener's address:port without SO_REUSEADDR: l7mp's
    // UDP bind fails and addListener answers 400 until that socket goes away.
    const busyPort = await freePort('udp', GW);
    const squatter = await bindUdp(GW, busyPort);
    let released = false;
    try {
      const desired = mesh(port1);
      desired.listeners.push(udpListener('squatted', GW, busyPort, 'backend'));
      // A frozen clock makes nextRetryAt the delay itself; random 0.5 halves each backoff ceiling.
      const r = reconciler({ backoffBaseMs: 20, backoffCapMs: 200, random: () => 0.5, clock: frozenClock() });
      const seen = collect(r);
      r.setDesired({ a: { apiUrl: p1.apiUrl, config: desired } });
      const failed = await waitForState(r, 'a', (s) => s.phase === 'failed' && s.attempts >= 4, 10_000);
      expect(failed).toMatchObject({ reachable: true, inSync: false });
      expect(failed.lastPush).toMatchObject({
        ok: false,
        failed: {
          op: {
            method: 'POST',
            path: l7mpPaths.listeners(),
            kind: 'listener',
            name: 'squatted',
            reason: 'listener added',
          },
          status: 400,
        },
      });
      expect(failed.lastPush?.failed?.message).toMatch(
        /Could not bind to 127\.0\.0\.81:\d+: bind EADDRINUSE/,
      );
      const delays = seen.states
        .filter((s) => s.nextRetryAt !== undefined)
        .map((s) => Date.parse(s.nextRetryAt!))
        .filter((d, i, all) => i === 0 || all[i - 1] !== d);
      expect(delays.slice(0, 4)).toEqual([10, 20, 40, 80]);
      // One warning for the failure, not one per retry; no request body in any log line.
      expect(r.log.filter((l) => l.startsWith('warn'))).toHaveLength(1);
      expect(r.log.join('\n')).not.toMatch(/"listener"|"cluster"|"spec"/);
      expect(seen.pushed.length).toBeGreaterThanOrEqual(4);

      squatter.close();
      released = true;
      const synced = await waitForState(r, 'a', (s) => s.phase === 'synced', 10_000);
      expect(synced).toMatchObject({ inSync: true, attempts: 0, lastPush: { ok: true } });
      expect(synced.nextRetryAt).toBeUndefined();
      expect(await liveDiff(p1.apiUrl, desired)).toEqual([]);
      expect(r.log.some((l) => l.includes('in sync again'))).toBe(true);
    } finally {
      if (!released) squatter.close();
    }
  });
});

/** Real timers, but a clock that never advances: ISO timestamps then are the offsets from 0. */
function frozenClock(): NonNullable<ReconcilerOptions['clock']> {
  return {
    now: () => 0,
    setTimeout: (callback, ms) => setTimeout(callback, ms),
    clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
  };
}

describe('Reconciler and proxies that come and go (real l7mp)', { timeout: 60_000 }, () => {
  it('an unreachable proxy is retried and synced once a proxy starts on its port', async () => {
    const apiPort = await freePort('tcp');
    const apiUrl = `http://127.0.0.1:${apiPort}`;
    const desired = mesh(await freePort('udp', GW));
    const r = reconciler({ backoffBaseMs: 100, backoffCapMs: 400, requestTimeoutMs: 1000 });
    r.setDesired({ x: { apiUrl, config: desired } });
    const down = await waitForState(r, 'x', (s) => s.phase === 'unreachable' && s.attempts >= 2, 10_000);
    expect(down).toMatchObject({ reachable: false, inSync: false });
    expect(down.lastPush?.failed?.op).toBeUndefined();
    expect(down.lastPush?.failed?.message).toContain('ECONNREFUSED');
    expect(down.nextRetryAt).toBeDefined();

    await l7mp(apiPort);
    const up = await waitForState(r, 'x', (s) => s.phase === 'synced', 15_000);
    expect(up).toMatchObject({
      reachable: true,
      inSync: true,
      attempts: 0,
      lastPush: { ok: true, operations: 3 },
    });
    expect(await liveDiff(apiUrl, desired)).toEqual([]);
  });

  it('proxyRestarted() skips a long backoff wait', async () => {
    const apiPort = await freePort('tcp');
    const apiUrl = `http://127.0.0.1:${apiPort}`;
    const r = reconciler({ backoffBaseMs: 60_000, backoffCapMs: 60_000, random: () => 1 });
    r.setDesired({ x: { apiUrl, config: mesh(await freePort('udp', GW)) } });
    await waitForState(r, 'x', (s) => s.phase === 'unreachable' && s.nextRetryAt !== undefined, 5000);
    await l7mp(apiPort);
    r.proxyRestarted('x');
    await waitForState(r, 'x', (s) => s.phase === 'synced', 10_000);
  });

  it('a restart noticed while a push is running is pushed next as a restart (its trigger kept)', async () => {
    // A push that hangs: the API port accepts and never answers. The restart arrives meanwhile; when the
    // hung push fails, the forced follow-up is the restart's push (here it fails too: nothing listens).
    const apiPort = await freePort('tcp');
    const apiUrl = `http://127.0.0.1:${apiPort}`;
    const held: import('node:net').Socket[] = [];
    const blackHole = (await import('node:net')).createServer((sock) => held.push(sock));
    await new Promise<void>((resolve) => blackHole.listen(apiPort, '127.0.0.1', resolve));
    const r = reconciler({ requestTimeoutMs: 20_000, backoffBaseMs: 60_000, backoffCapMs: 60_000 });
    const triggers: string[] = [];
    r.on('pushed', (_id, result, trigger) => triggers.push(`${trigger}:${result.ok ? 'ok' : 'failed'}`));
    r.setDesired({ x: { apiUrl, config: mesh(await freePort('udp', GW)) } });
    const until = async (what: string, ok: () => boolean) => {
      const deadline = Date.now() + 10_000;
      while (!ok()) {
        if (Date.now() > deadline) throw new Error(`${what}: not within 10 s (${triggers.join(', ')})`);
        await new Promise((res) => setTimeout(res, 10));
      }
    };
    await until('the push connected', () => held.length > 0);
    r.proxyRestarted('x');
    for (const sock of held) sock.destroy();
    blackHole.close();
    await until('two pushes', () => triggers.length >= 2);
    expect(triggers).toEqual(['change:failed', 'restart:failed']);
  });

  it('a restarted proxy (and an outside change) is noticed by the drift check and re-pushed', async () => {
    const first = await l7mp();
    const desired = mesh(await freePort('udp', GW));
    const r = reconciler({
      driftIntervalMs: 250,
      backoffBaseMs: 100,
      backoffCapMs: 400,
      requestTimeoutMs: 1000,
    });
    const seen = collect(r);
    r.setDesired({ x: { apiUrl: first.apiUrl, config: desired } });
    await r.whenIdle();
    expect(r.state('x')).toMatchObject({ phase: 'synced' });

    // Outside change: someone deletes the route. The next drift check puts it back.
    expect((await l7mpCall(first.apiUrl, 'DELETE', l7mpPaths.route('to-backend'))).status).toBe(200);
    const repaired = await waitForState(
      r,
      'x',
      (s) => s.phase === 'synced' && s.lastCheck?.drift === 1,
      5000,
    );
    expect(repaired.lastPush).toMatchObject({ ok: true, operations: 1 });

    // Restart: same API port, new process, empty configuration. Nobody calls proxyRestarted().
    await first.stop();
    const restartedAt = new Date().toISOString();
    await waitForState(r, 'x', (s) => s.phase === 'unreachable', 5000);
    const second = await l7mp(first.apiPort);
    const synced = await waitForState(
      r,
      'x',
      (s) => s.phase === 'synced' && (s.lastPush?.at ?? '') > restartedAt && s.lastPush?.operations === 3,
      15_000,
    );
    expect(synced).toMatchObject({ reachable: true, inSync: true, attempts: 0 });
    expect(await liveDiff(second.apiUrl, desired)).toEqual([]);
    expect(seen.states.some((s) => s.phase === 'unreachable' && s.reachable === false)).toBe(true);
  });

  it('stop() aborts a reconcile that waits on a silent proxy and leaves nothing running', async () => {
    const sockets = new Set<import('node:net').Socket>();
    const silent: Server = createServer(() => {}); // accepts, never answers
    silent.on('connection', (s) => sockets.add(s));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const apiUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
      const r = reconciler({ requestTimeoutMs: 30_000, driftIntervalMs: 1000 });
      r.setDesired({ x: { apiUrl, config: mesh(9) } });
      await waitForState(r, 'x', (s) => s.phase === 'syncing', 2000);
      const events: ProxySyncState[] = [];
      r.on('state', (s) => events.push(s));
      const started = Date.now();
      await r.stop();
      expect(Date.now() - started).toBeLessThan(1000);
      await r.whenIdle();
      // Nothing fires after stop: no retry, no drift check, no late state.
      await new Promise((resolve) => setTimeout(resolve, 1200));
      expect(events).toEqual([]);
      r.setDesired({ y: { apiUrl, config: mesh(9) } });
      expect(r.state('y')).toBeUndefined();
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
