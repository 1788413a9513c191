/**
 * The local mesh end to end, on real l7mp 0.5.7 processes and real sockets on 127.0.0.x: seed
 * Example 1, seed Example 2, the canary example and faults. One file, so that the examples' fixed
 * ports are never used by two meshes at once.
 */
import { cp as copyDir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ControlPlane } from './ControlPlane';
import { UdpClient } from './testing/udpClient';

const REPO = path.resolve(__dirname, '..', '..');
const quiet = { info: () => {}, warn: () => {}, error: (...a: unknown[]) => console.error(...a) };

async function until<T>(
  what: string,
  fn: () => T | Promise<T>,
  timeoutMs = 15000,
  everyMs = 50,
): Promise<Exclude<T, false | null | undefined | 0 | ''>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v as Exclude<T, false | null | undefined | 0 | ''>;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

async function startExample(name: string): Promise<{ cp: ControlPlane; dir: string; stateDir: string }> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), `md-${name}-`));
  const dir = path.join(tmp, 'mesh');
  await copyDir(path.join(REPO, 'examples', name), dir, { recursive: true });
  const stateDir = path.join(tmp, 'state');
  const cp = await ControlPlane.startLocal({ meshDir: dir, stateDir, driftIntervalMs: 1000, logger: quiet });
  await until(
    'every proxy in sync',
    () => cp.syncStates().length > 0 && cp.syncStates().every((s) => s.inSync),
    30000,
  );
  return { cp, dir, stateDir };
}

describe('seed Example 1 on the local mesh', () => {
  let cp: ControlPlane;
  beforeAll(async () => {
    ({ cp } = await startExample('seed-example-1'));
  }, 60000);
  afterAll(async () => {
    await cp?.stop();
  });

  it('an allowed client gets its datagram back through gateway -> transcoder (WebSocket -> UDS app) -> worker', async () => {
    const client = await UdpClient.bind('127.0.0.100', 9050);
    try {
      const reply = await client.request('m', 9001, '127.0.0.10');
      expect(reply).toMatch(/^worker-[01]\(tc\(m\)\)$/);
    } finally {
      client.close();
    }
  });

  it('a disallowed source address or port gets nothing', async () => {
    for (const [address, port] of [
      ['127.0.0.101', 9050],
      ['127.0.0.100', 9150],
    ] as const) {
      const client = await UdpClient.bind(address, port);
      try {
        expect(await client.request('x', 9001, '127.0.0.10', { timeoutMs: 300, tries: 2 })).toBeUndefined();
      } finally {
        client.close();
      }
    }
  });

  it('probe reports the echo, the path and the latency', async () => {
    const r = await cp.probe({
      listener: 'gateway-vsvc',
      payload: 'hello',
      from: { address: '127.0.0.100', port: 9051 },
    });
    expect(r.ok).toBe(true);
    expect(r.reply).toMatch(/^worker-[01]\(tc\(hello\)\)$/);
    expect(r.path.join('\n')).toContain('ingress transcoder-vsvc.default.target.cluster.local');
    expect(r.latencyMs).toBeGreaterThan(0);
  });

  it('live state: proxies reachable and in sync, endpoints per service, sessions or why not', async () => {
    const state = await until('live sessions read', () => {
      const s = cp.live.get();
      return (
        Object.values(s.proxies).every((p) => p.sessions.available || p.sessions.reason !== 'not read yet') &&
        s
      );
    });
    const gw = state.proxies['default/gateway-0']!;
    expect(gw.reachable).toBe(true);
    expect(gw.inSync).toBe(true);
    expect(gw.lastPush?.ok).toBe(true);
    expect(gw.clusters.map((c) => c.name)).toEqual([
      'transcoder-vsvc.default.target.cluster.local',
      'worker-svc.default.target.cluster.local',
    ]);
    expect(state.services['default/worker-svc']!.endpoints.map((e) => e.address)).toEqual([
      '127.0.0.30',
      '127.0.0.31',
    ]);
    // Example 1's gateway sessions have an ingress chain: l7mp 0.5.7 then answers 422 to GET /sessions.
    if (!gw.sessions.available) expect(gw.sessions.reason).toContain('422');
  });
});
