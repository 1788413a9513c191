/**
 * The probe batch runner with real probes (probeListener) over real UDP sockets to a real echo server on
 * 127.0.0.224-225 (no other test uses them): how many are in flight, a fixed source port, the time
 * limit, and a listener that does not exist. No l7mp here: the listener's address is the echo server's.
 */
import { createSocket, type Socket } from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import type { ProxyL7mpConfig } from '@/lib/engine/renderL7mp';
import { probeListener } from './probe';
import { runProbeBatch } from './probeBatch';

const SERVER = '127.0.0.224';
const PORT = 41300;
const CLIENT = '127.0.0.225';

const proxies: Record<string, ProxyL7mpConfig> = {
  'default/gw': {
    proxy: {
      id: 'default/gw',
      namespace: 'default',
      pod: 'gw',
      role: 'gateway',
      address: SERVER,
      apiPort: 1,
      apiUrl: 'http://127.0.0.1:1',
    },
    config: {
      listeners: [
        {
          name: 'echo.default.virtualservice.cluster.local',
          spec: { protocol: 'UDP', address: SERVER, port: PORT },
          rules: [],
        },
      ],
      routes: [],
      clusters: [],
    },
  },
};
const send = (r: Parameters<typeof probeListener>[1]) => probeListener(proxies, r);

/** A UDP echo server answering `echo-a(<payload>)` after `delayMs`, or never; counts what waits at once. */
async function echoServer(delayMs: number | 'never') {
  const sock: Socket = createSocket('udp4');
  const seen = { received: 0, waiting: 0, maxWaiting: 0 };
  sock.on('message', (msg, rinfo) => {
    seen.received++;
    if (delayMs === 'never') return;
    seen.waiting++;
    seen.maxWaiting = Math.max(seen.maxWaiting, seen.waiting);
    setTimeout(() => {
      seen.waiting--;
      sock.send(`echo-a(${msg.toString()})`, rinfo.port, rinfo.address);
    }, delayMs);
  });
  await new Promise<void>((resolve) => sock.bind(PORT, SERVER, resolve));
  servers.push(sock);
  return seen;
}
const servers: Socket[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
});

describe('runProbeBatch', () => {
  it('sends every probe, each a new flow, never more than `concurrency` at once', async () => {
    const seen = await echoServer(60);
    const batch = await runProbeBatch(
      send,
      { listener: 'echo', payload: 'p', from: { address: CLIENT }, timeoutMs: 5000 },
      { count: 12, concurrency: 3 },
    );
    expect(batch.outcomes).toHaveLength(12);
    expect(batch.outcomes.every((o) => o.ok && o.reply === 'echo-a(p)' && o.latencyMs !== undefined)).toBe(
      true,
    );
    expect(seen.received).toBe(12);
    expect(seen.maxWaiting).toBeLessThanOrEqual(3);
    expect(batch.first).toMatchObject({ ok: true, listener: 'echo.default.virtualservice.cluster.local' });
  });

  it('sends one at a time from a fixed source port (two sockets on it would take each other’s echoes)', async () => {
    const seen = await echoServer(40);
    const batch = await runProbeBatch(
      send,
      { listener: 'echo', payload: 'p', from: { address: CLIENT, port: 41301 }, timeoutMs: 5000 },
      { count: 5, concurrency: 50 },
    );
    expect(batch.outcomes.map((o) => o.ok)).toEqual([true, true, true, true, true]);
    expect(seen.maxWaiting).toBe(1);
  });

  it('starts no probe after the time limit: the rest fail as not sent', async () => {
    const seen = await echoServer('never');
    const batch = await runProbeBatch(
      send,
      { listener: 'echo', payload: 'p', from: { address: CLIENT }, timeoutMs: 50 },
      { count: 100, limitMs: 200 },
    );
    expect(batch.outcomes).toHaveLength(100);
    const byError = new Map<string, number>();
    for (const o of batch.outcomes) byError.set(o.error!, (byError.get(o.error!) ?? 0) + 1);
    // At most one start per 25 ms (or after an answer) within 200 ms: far fewer than 100.
    const notSent = byError.get("not sent: the probes' time limit of 0.2 s ran out") ?? 0;
    expect(notSent).toBeGreaterThanOrEqual(80);
    expect(byError.get('no reply within 50 ms')).toBe(100 - notSent);
    expect(seen.received).toBe(100 - notSent);
  });

  it('sends nothing more when the first probe throws (no such listener), every probe failed with its error', async () => {
    const seen = await echoServer(0);
    const batch = await runProbeBatch(send, { listener: 'nothing', payload: 'p' }, { count: 5 });
    expect(batch.first).toMatchObject({
      name: 'ProbeTargetError',
      message: 'no listener "nothing" is configured',
    });
    expect(batch.outcomes).toEqual(
      Array.from({ length: 5 }, () => ({ ok: false, error: 'no listener "nothing" is configured' })),
    );
    expect(seen.received).toBe(0);
  });
});
