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
    120000,
  );
  return { cp, dir, stateDir };
}

describe('seed Example 1 on the local mesh', () => {
  let cp: ControlPlane;
  beforeAll(async () => {
    ({ cp } = await startExample('seed-example-1'));
  }, 180000);
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

describe('seed Example 2 on the local mesh', () => {
  let cp: ControlPlane;
  let userA: UdpClient;
  let userB: UdpClient;
  beforeAll(async () => {
    // The gateway's singleton listeners connect back to the users, so the users are there first.
    userA = await UdpClient.bind('127.0.0.101', 8001);
    userB = await UdpClient.bind('127.0.0.102', 8002);
    ({ cp } = await startExample('seed-example-2'));
  }, 180000);
  afterAll(async () => {
    await cp?.stop();
    userA?.close();
    userB?.close();
  });

  it("two users' streams meet at one worker through the transcoder via the rendezvous (sync) target", async () => {
    // Both ends must have reached the Sync cluster before they hear each other: send until both hear.
    let atB: string | undefined;
    let atA: string | undefined;
    for (let i = 0; i < 40 && (atA === undefined || atB === undefined); i++) {
      userA.send(`A-${i}`, 8001, '127.0.0.10');
      userB.send(`B-${i}`, 8002, '127.0.0.10');
      atB ??= await userB.next(150);
      atA ??= await userA.next(150);
    }
    expect(atB).toMatch(/^worker-[01]\(A-\d+\)$/);
    expect(atA).toMatch(/^worker-[01]\(B-\d+\)$/);
    // ConsistentHash on /labels/session_id sends both users of session 1 to the same worker.
    expect(atA!.split('(')[0]).toBe(atB!.split('(')[0]);
  });

  it('the session label set by the gateway rewrite reaches the app through both JSONSocket hops', async () => {
    const records = [...cp.appReceived('worker-0'), ...cp.appReceived('worker-1')];
    expect(records.length).toBeGreaterThan(0);
    expect(records.some((r) => (r.labels as { session_id?: unknown } | undefined)?.session_id === '1')).toBe(
      true,
    );
  });

  it('the gateway lists both user sessions with session_id 1 (no chained sessions here, so l7mp can list them)', async () => {
    const gw = await until('gateway sessions', () => {
      const p = cp.live.get().proxies['default/gateway-0']!;
      return p.sessions.available && p.sessions.items.length >= 2 && p;
    });
    if (!gw.sessions.available) throw new Error('unreachable');
    const users = gw.sessions.items.filter((s) => s.listener?.startsWith('gateway-user-'));
    expect(users.map((s) => s.listener).sort()).toEqual([
      'gateway-user-a-vsvc.default.virtualservice.cluster.local',
      'gateway-user-b-vsvc.default.virtualservice.cluster.local',
    ]);
    for (const s of users) expect(s.labels).toMatchObject({ session_id: '1' });
  });
});

/** Sends one datagram per new flow (a new source port each) and counts the replies by pod. */
async function flows(n: number, from: string, concurrency = 25): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        const i = next++;
        const c = await UdpClient.bind(from);
        try {
          // Generous per try: under CI load (test files running side by side on 2 cores) one flow in
          // 1,000 once went unanswered for 3 x 400 ms; a flow that never answers still counts as none.
          const r = await c.request(`f${i}`, 9100, '127.0.0.10', { timeoutMs: 1000, tries: 3 });
          const pod = r?.split('(')[0] ?? 'none';
          counts[pod] = (counts[pod] ?? 0) + 1;
        } finally {
          c.close();
        }
      }
    }),
  );
  return counts;
}

describe('canary on the local mesh', () => {
  let cp: ControlPlane;
  let dir: string;
  beforeAll(async () => {
    ({ cp, dir } = await startExample('canary'));
  }, 180000);
  afterAll(async () => {
    await cp?.stop();
  });

  it('80/20 is observed within 5 points over 1,000 flows; 50/50 then applies to new flows without dropping existing ones', async () => {
    // Each batch from its own client address: l7mp's UDP sessions never expire, and a reused source port
    // would ride an old session instead of making a new flow.
    const first = await flows(1000, '127.0.0.110');
    const v1 = (first['echo-v1-a'] ?? 0) + (first['echo-v1-b'] ?? 0);
    const v2 = first['echo-v2-a'] ?? 0;
    expect(first['none'] ?? 0).toBe(0);
    console.log(`canary 80/20 over 1000 flows: v1 ${v1}, v2 ${v2}`);
    expect(Math.abs((100 * v1) / (v1 + v2) - 80)).toBeLessThanOrEqual(5);

    // Established flows, each pinned to an endpoint by its session.
    const established = await Promise.all(Array.from({ length: 20 }, () => UdpClient.bind('127.0.0.112')));
    try {
      // As the new flows above: a reply may be slow on a loaded machine (waits, not the expectation, are longer).
      const ask = (c: UdpClient, i: number) =>
        c.request(`e${i}`, 9100, '127.0.0.10', { timeoutMs: 1000, tries: 3 });
      const before = await Promise.all(established.map(ask));
      expect(before.every((r) => r !== undefined)).toBe(true);

      const file = path.join(dir, 'mesh.yaml');
      const text = await readFile(file, 'utf8');
      await writeFile(file, text.replace('weight: 80', 'weight: 50').replace('weight: 20', 'weight: 50'));
      await cp.reload();
      await cp.whenIdle();
      const gw = await until('gateway re-synced', () => {
        const s = cp.syncStates().find((x) => x.id === 'default/gateway-0');
        return s?.inSync && s.lastPush?.ok && s;
      });
      // Only the three endpoints' weights changed: each is deleted and re-added, nothing else.
      expect(gw.lastPush?.operations).toBe(6);

      const after = await Promise.all(established.map(ask));
      expect(after.map((r) => r?.split('(')[0])).toEqual(before.map((r) => r?.split('(')[0]));
    } finally {
      for (const c of established) c.close();
    }

    const second = await flows(1000, '127.0.0.111');
    const w1 = (second['echo-v1-a'] ?? 0) + (second['echo-v1-b'] ?? 0);
    const w2 = second['echo-v2-a'] ?? 0;
    console.log(`canary 50/50 over 1000 new flows: v1 ${w1}, v2 ${w2}`);
    expect(Math.abs((100 * w1) / (w1 + w2) - 50)).toBeLessThanOrEqual(5);
  }, 120000);
});

describe('faults on the local mesh (Example 1)', () => {
  let cp: ControlPlane;
  let dir: string;
  beforeAll(async () => {
    ({ cp, dir } = await startExample('seed-example-1'));
  }, 180000);
  afterAll(async () => {
    await cp?.stop();
    if (dir) await rm(path.dirname(dir), { recursive: true, force: true });
  });

  const ask = async (port: number, text: string) => {
    const c = await UdpClient.bind('127.0.0.100', port);
    try {
      return await c.request(text, 9001, '127.0.0.10', { timeoutMs: 300, tries: 3 });
    } finally {
      c.close();
    }
  };

  it('a killed proxy is restarted and re-configured within 5 s, and traffic recovers', async () => {
    expect(await ask(9060, 'before')).toMatch(/tc\(before\)/);
    // Steady state: the supervisor keeps a warm spare (l7mp needs seconds to compile its OpenAPI schema).
    await until('a warm spare', () => cp.processes.spares().some((s) => s.state === 'ready'), 30000);
    const pid = cp.processes.status('default/gateway-0')!.pid;
    const killedAt = Date.now();
    cp.processes.kill('default/gateway-0', 'SIGKILL');
    const reply = await until('traffic through the restarted gateway', () => ask(9061, 'after'), 10000, 10);
    const recoveredMs = Date.now() - killedAt;
    expect(reply).toMatch(/tc\(after\)/);
    expect(cp.processes.status('default/gateway-0')!.pid).not.toBe(pid);
    expect(recoveredMs).toBeGreaterThan(0);
    console.log(`gateway killed -> restarted, re-configured and passing traffic in ${recoveredMs} ms`);
    expect(cp.live.get().proxies['default/gateway-0']!.counters.restarts).toBeGreaterThanOrEqual(1);
  }, 30000);

  it("removing an endpoint affects only that endpoint's flows", async () => {
    // Pin one established flow to each worker.
    const pinned: Record<string, UdpClient> = {};
    for (let port = 9070; port < 9095 && Object.keys(pinned).length < 2; port++) {
      const c = await UdpClient.bind('127.0.0.100', port);
      const r = await c.request('pin', 9001, '127.0.0.10');
      const pod = r?.split('(')[0];
      if (pod && !pinned[pod]) pinned[pod] = c;
      else c.close();
    }
    expect(Object.keys(pinned).sort()).toEqual(['worker-0', 'worker-1']);
    try {
      await cp.removePod('worker-0');
      await cp.whenIdle();
      await until(
        'worker-0 out of the gateway cluster',
        () =>
          cp.live.get().proxies['default/gateway-0']!.clusters.find((c) => c.name.startsWith('worker-svc'))!
            .endpoints.length === 1,
      );
      // The flow on worker-1 is untouched; the one on worker-0 has lost its pod: l7mp either drops it or,
      // when the dead endpoint's socket errors, reconnects it to a remaining endpoint.
      expect(await pinned['worker-1']!.request('still', 9001, '127.0.0.10')).toBe('worker-1(tc(still))');
      const moved = await pinned['worker-0']!.request('gone', 9001, '127.0.0.10', {
        timeoutMs: 300,
        tries: 2,
      });
      expect(moved === undefined || moved === 'worker-1(tc(gone))').toBe(true);
      // New flows go to worker-1 only.
      for (let port = 9080; port < 9085; port++) expect(await ask(port, 'new')).toBe('worker-1(tc(new))');
    } finally {
      for (const c of Object.values(pinned)) c.close();
    }
  }, 30000);

  it('a bad mesh: diagnostics for the bad objects, nothing pushed for them, the rest still configured', async () => {
    await writeFile(
      path.join(dir, 'bad.yaml'),
      `apiVersion: msm.l7mp.io/v1
kind: VirtualService
metadata: { name: dangling, namespace: default }
spec:
  selector: { serviceName: gateway-svc }
  udp: { port: 9500 }
  rules: [{ action: { route: { destination: no-such-service } } }]
---
apiVersion: msm.l7mp.io/v1
kind: VirtualService
metadata: { name: clash, namespace: default }
spec:
  selector: { serviceName: gateway-svc }
  udp: { port: 9001 }
  rules: [{ action: { route: { destination: worker-svc } } }]
`,
    );
    await cp.reload();
    await cp.whenIdle();
    const codes = cp.live.get().diagnostics.map((d) => `${d.code} ${d.object.name}`);
    expect(codes).toContain('unresolved-reference dangling');
    expect(codes).toContain('port-clash clash');
    expect(codes).toContain('port-clash gateway-vsvc');
    const gw = cp.desiredConfigs()['default/gateway-0']!.config;
    expect(gw.listeners.map((l) => l.name)).toEqual([]);
    // The transcoder's config is untouched by the gateway's problems.
    expect(cp.desiredConfigs()['default/transcoder-0']!.config.listeners).toHaveLength(1);
    await rm(path.join(dir, 'bad.yaml'));
    await cp.reload();
    await cp.whenIdle();
    expect(cp.desiredConfigs()['default/gateway-0']!.config.listeners.map((l) => l.name)).toEqual([
      'gateway-vsvc.default.virtualservice.cluster.local',
    ]);
  }, 30000);
});

describe('model changes are picked up without being asked (Example 1)', () => {
  let cp: ControlPlane;
  let dir: string;
  beforeAll(async () => {
    ({ cp, dir } = await startExample('seed-example-1'));
  }, 180000);
  afterAll(async () => {
    await cp?.stop();
    if (dir) await rm(path.dirname(dir), { recursive: true, force: true });
  });

  it('an edit of the mesh directory is reconciled onto the proxies', async () => {
    await writeFile(
      path.join(dir, 'extra.yaml'),
      `apiVersion: msm.l7mp.io/v1
kind: VirtualService
metadata: { name: extra, namespace: default }
spec:
  selector: { serviceName: gateway-svc }
  udp: { port: 9002 }
  rules: [{ action: { route: { destination: worker-svc } } }]
`,
    );
    await until('the new listener on the gateway', () =>
      cp
        .desiredConfigs()
        ['default/gateway-0']!.config.listeners.some(
          (l) => l.name === 'extra.default.virtualservice.cluster.local',
        ),
    );
    await until(
      'the gateway in sync',
      () => cp.syncStates().find((s) => s.id === 'default/gateway-0')?.inSync,
    );
    const c = await UdpClient.bind('127.0.0.100');
    try {
      expect(await c.request('via-extra', 9002, '127.0.0.10')).toMatch(/^worker-[01]\(via-extra\)$/);
    } finally {
      c.close();
    }
    expect(cp.logs('gateway-0').length).toBeGreaterThan(0);
  }, 30000);

  it('replacing the mesh (as an apply of another example does) stops and starts proxies and apps; back again works too', async () => {
    const original = await Promise.all(
      ['mesh.yaml', 'cluster.yaml'].map((f) => readFile(path.join(dir, f), 'utf8')),
    );
    const canary = path.join(REPO, 'examples', 'canary');
    await rm(path.join(dir, 'extra.yaml'), { force: true });
    for (const f of ['mesh.yaml', 'cluster.yaml'])
      await writeFile(path.join(dir, f), await readFile(path.join(canary, f), 'utf8'));
    await cp.reload();
    await until('only the canary gateway runs', () => {
      const running = cp.processes.statuses().filter((st) => st.state !== 'stopped');
      return running.length === 1 && running[0]!.id === 'default/gateway-0';
    });
    await until(
      'the gateway in sync',
      () => cp.syncStates().find((s) => s.id === 'default/gateway-0')?.inSync,
    );
    const c = await UdpClient.bind('127.0.0.100');
    try {
      expect(await c.request('canary', 9100, '127.0.0.10')).toMatch(/^echo-v[12]/);
    } finally {
      c.close();
    }

    // Back to Example 1: its proxies and apps come back (the reload used to find them "already running").
    await writeFile(path.join(dir, 'mesh.yaml'), original[0]!);
    await writeFile(path.join(dir, 'cluster.yaml'), original[1]!);
    await cp.reload();
    await until('every proxy in sync', () => {
      const states = cp.syncStates();
      return states.length === 2 && states.every((st) => st.inSync);
    });
    // Through the gateway's allowed source port, the transcoder (restarted) and a worker app (restarted).
    const d = await UdpClient.bind('127.0.0.100', 9051);
    try {
      expect(await d.request('back', 9001, '127.0.0.10')).toMatch(/^worker-[01]\(tc\(back\)\)$/);
    } finally {
      d.close();
    }
  }, 90000);
});
