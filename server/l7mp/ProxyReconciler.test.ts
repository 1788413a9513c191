/**
 * ProxyReconciler against a real l7mp 0.5.7 process on loopback (and, for the in-flight rules, against
 * a scripted client).
 */
import type { Socket } from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diffL7mp } from '@/lib/l7mp/diffL7mp';
import { l7mpPaths } from '@/lib/l7mp/l7mpPaths';
import { emptyL7mpConfig, type L7mpConfig, type L7mpOperation } from '@/lib/model/l7mp';
import { readL7mpLive } from '../l7mpClient';
import { freePort, type L7mpProcess, startL7mp } from '../testing/startL7mp';
import { L7mpApiError, type L7mpApplyOutcome, type L7mpLive, L7mpRestClient } from './L7mpRestClient';
import {
  config,
  l7mpCall,
  namedRoute,
  udpAsk,
  udpCluster,
  udpEcho,
  udpListener,
} from './l7mpTestConfigs.testutil';
import { ProxyReconciler } from './ProxyReconciler';

const GW = '127.0.0.71';
const WORKER_A = '127.0.0.72';
const WORKER_B = '127.0.0.73';

let l7mp: L7mpProcess;
let reconciler: ProxyReconciler;
let client: L7mpRestClient;
let workerPort: number;
const ports: Record<string, number> = {};
const echoes: Socket[] = [];

function summary(ops: readonly L7mpOperation[]): string[] {
  return ops.map((op) => `${op.method} ${op.kind} ${op.name}`);
}

/** The base mesh: a named route used by one listener, an inline route in another. */
function base(workers: string[] = [WORKER_A]): L7mpConfig {
  return config({
    clusters: [udpCluster('worker', workerPort, workers)],
    routes: [namedRoute('to-worker', 'worker')],
    listeners: [
      { ...udpListener('gw', GW, ports.gw!, 'worker'), rules: [{ action: { route: 'to-worker' } }] },
      udpListener('gw-inline', GW, ports.inline!, 'worker', 65000),
    ],
  });
}

async function liveDiff(desired: L7mpConfig): Promise<L7mpOperation[]> {
  return diffL7mp((await client.readLive()).config, desired);
}

/** Every rulelist is some listener's (no leftovers), and every auto-generated rule is in a rulelist. */
async function expectNoLeftovers(): Promise<void> {
  const listeners = (await l7mpCall(l7mp.apiUrl, 'GET', l7mpPaths.listeners())).body as { rules: string }[];
  const rulelists = (await l7mpCall(l7mp.apiUrl, 'GET', l7mpPaths.rulelists())).body as {
    name: string;
    rules: string[];
  }[];
  const rules = (await l7mpCall(l7mp.apiUrl, 'GET', l7mpPaths.rules())).body as { name: string }[];
  expect(rulelists.map((rl) => rl.name).sort()).toEqual(listeners.map((l) => l.rules).sort());
  expect(rules.map((r) => r.name).sort()).toEqual(rulelists.flatMap((rl) => rl.rules).sort());
}

beforeAll(async () => {
  l7mp = await startL7mp();
  client = new L7mpRestClient(l7mp.apiUrl);
  reconciler = new ProxyReconciler(client);
  workerPort = await freePort('udp', WORKER_A);
  for (const name of ['gw', 'inline', 'stale', 'gw2']) ports[name] = await freePort('udp', GW);
  echoes.push(await udpEcho(WORKER_A, workerPort, 'a'), await udpEcho(WORKER_B, workerPort, 'b'));
}, 30_000);

afterAll(async () => {
  for (const socket of echoes) socket.close();
  await l7mp?.stop();
});

describe('ProxyReconciler (real l7mp)', { timeout: 30_000 }, () => {
  it('configures an empty proxy in dependency order, traffic flows, and a second reconcile does nothing', async () => {
    const desired = base();
    const first = await reconciler.reconcile(desired);
    expect(first.failed).toBeUndefined();
    expect(first.ok).toBe(true);
    expect(summary(first.drift)).toEqual([
      'POST cluster worker',
      'POST route to-worker',
      'POST listener gw',
      'POST listener gw-inline',
    ]);
    expect(first.applied).toEqual(first.drift);
    expect(first.ignored).toEqual([]);
    expect(await udpAsk(GW, ports.gw!, 'hi')).toBe('a(hi)');
    expect(await udpAsk(GW, ports.inline!, 'ho')).toBe('a(ho)');

    const second = await reconciler.reconcile(desired);
    expect(second).toMatchObject({ ok: true, applied: [], drift: [] });
    await expectNoLeftovers();
  });

  it('an endpoint-only change sends only endpoint operations', async () => {
    await reconciler.reconcile(base());
    const added = await reconciler.reconcile(base([WORKER_A, WORKER_B]));
    expect(added.ok).toBe(true);
    expect(summary(added.applied)).toEqual([`POST endpoint worker@${WORKER_B}`]);
    const removed = await reconciler.reconcile(base([WORKER_B]));
    expect(summary(removed.applied)).toEqual([`DELETE endpoint worker@${WORKER_A}`]);
    expect(await liveDiff(base([WORKER_B]))).toEqual([]);
    // A new flow now lands on the remaining endpoint.
    expect(await udpAsk(GW, ports.gw!, 'x')).toBe('b(x)');
  });

  it('a changed listener is deleted (with its auto-generated parts) and added again, nothing else', async () => {
    await reconciler.reconcile(base());
    const changed = base();
    changed.listeners[1] = udpListener('gw-inline', GW, ports.inline!, 'worker', 64000);
    const result = await reconciler.reconcile(changed);
    expect(result.ok).toBe(true);
    const ops = summary(result.applied);
    expect(ops[0]).toBe('DELETE listener gw-inline');
    expect(ops.at(-1)).toBe('POST listener gw-inline');
    expect(ops.slice(1, -1).every((op) => /^DELETE (rulelist|rule|route) gw-inline-RuleList-/.test(op))).toBe(
      true,
    );
    expect(ops.filter((op) => op.startsWith('DELETE rulelist'))).toHaveLength(1);
    expect(await liveDiff(changed)).toEqual([]);
    await expectNoLeftovers();
  });

  it('converges when a stale rule makes the recursive listener dump answer 422 (fallback read)', async () => {
    const desired = base();
    desired.listeners.push({
      name: 'stale-l',
      spec: { protocol: 'UDP', port: ports.stale!, address: GW },
      rules: [
        {
          match: { op: 'test', path: '/UDP/src_port', value: 1 },
          action: { route: { destination: 'worker' } },
        },
        { action: { route: { destination: 'worker' } } },
      ],
    });
    expect((await reconciler.reconcile(desired)).ok).toBe(true);

    // The fixture's situation (lib/l7mp/testdata/stale-rule.json): the first auto-generated rule deleted.
    const rulelists = (await l7mpCall(l7mp.apiUrl, 'GET', l7mpPaths.rulelists())).body as {
      name: string;
      rules: string[];
    }[];
    const rulelist = rulelists.find((rl) => rl.name.startsWith('stale-l-RuleList-'))!;
    expect((await l7mpCall(l7mp.apiUrl, 'DELETE', l7mpPaths.rule(rulelist.rules[0]!))).status).toBe(200);
    const recursive = await l7mpCall(l7mp.apiUrl, 'GET', l7mpPaths.listeners({ recursive: true }));
    expect(recursive.status).toBe(422);

    // The CLI's read falls back too, and sees the listener with its one remaining rule.
    const live: L7mpLive = await readL7mpLive(l7mp.apiUrl);
    expect(live.fallback).toBe(true);
    expect(live.config.listeners.find((l) => l.name === 'stale-l')?.rules).toHaveLength(1);
    expect(live.ignored.join('\n')).toContain(`rule ${rulelist.rules[0]} no longer exists`);

    const result = await reconciler.reconcile(desired);
    expect(result.failed).toBeUndefined();
    expect(summary(result.applied)).toContain('DELETE listener stale-l');
    expect(summary(result.applied)).toContain('POST listener stale-l');
    expect((await l7mpCall(l7mp.apiUrl, 'GET', l7mpPaths.listeners({ recursive: true }))).status).toBe(200);
    expect(await reconciler.reconcile(desired)).toMatchObject({ ok: true, drift: [] });
    expect((await client.readLive()).fallback).toBeUndefined();
    await expectNoLeftovers();
    expect(await udpAsk(GW, ports.stale!, 's')).toBe('a(s)');
  });

  it('removes the leftovers of a failed listener add (note §3) and then converges', async () => {
    await reconciler.reconcile(base());
    // Out of band, as the note describes: a listener with a named inline rule, deleted without
    // ?recursive (the rule stays), then added again: 400, and a second rulelist leaks.
    const gw2 = {
      listener: {
        name: 'gw2',
        spec: { protocol: 'UDP', port: ports.gw2!, address: GW },
        rules: [{ name: 'gw2-rule', action: { route: { destination: 'worker' } } }],
      },
    };
    expect((await l7mpCall(l7mp.apiUrl, 'POST', l7mpPaths.listeners(), gw2)).status).toBe(200);
    expect((await l7mpCall(l7mp.apiUrl, 'DELETE', l7mpPaths.listener('gw2'))).status).toBe(200);
    const failed = await l7mpCall(l7mp.apiUrl, 'POST', l7mpPaths.listeners(), gw2);
    expect(failed).toMatchObject({
      status: 400,
      body: { content: 'Cannot add rule: Rule "gw2-rule" already defined' },
    });
    const before = (await l7mpCall(l7mp.apiUrl, 'GET', l7mpPaths.rulelists())).body as { name: string }[];
    expect(before.filter((rl) => rl.name.startsWith('gw2-RuleList-'))).toHaveLength(2);

    const desired = base();
    desired.listeners.push(udpListener('gw2', GW, ports.gw2!, 'worker'));
    const result = await reconciler.reconcile(desired);
    expect(result.failed).toBeUndefined();
    const ops = summary(result.applied);
    expect(ops).toContain('DELETE rule gw2-rule');
    expect(ops.filter((op) => op.startsWith('DELETE rulelist gw2-RuleList-'))).toHaveLength(2);
    expect(ops.at(-1)).toBe('POST listener gw2');
    await expectNoLeftovers();
    expect((await l7mpCall(l7mp.apiUrl, 'GET', l7mpPaths.rule('gw2-rule'))).status).toBe(400);
    expect(await reconciler.reconcile(desired)).toMatchObject({ ok: true, drift: [] });
    expect(await udpAsk(GW, ports.gw2!, 'g')).toBe('a(g)');
  });

  it('reports the refused operation and the proxy message, having applied everything before it', async () => {
    const desired = base();
    // A UDP listener on an address that is not local: l7mp answers 400 (EADDRNOTAVAIL).
    desired.listeners.push(udpListener('zz-bad', '10.255.255.1', 17008, 'worker'));
    const result = await reconciler.reconcile(desired);
    expect(result.ok).toBe(false);
    expect(result.failed?.op?.name).toBe('zz-bad');
    const error = result.failed?.error as L7mpApiError;
    expect(error).toBeInstanceOf(L7mpApiError);
    expect(error.status).toBe(400);
    expect(error.proxyMessage).toContain('EADDRNOTAVAIL');
    expect(error.op).toBe(result.failed?.op);
    expect(result.drift.at(-1)?.name).toBe('zz-bad');
    expect(result.applied).toEqual(result.drift.slice(0, -1));
    // l7mp removes the listener again after a bind failure, without leaks.
    await expectNoLeftovers();
  });

  it('cleans the proxy back to empty', async () => {
    const result = await reconciler.reconcile(emptyL7mpConfig());
    expect(result.ok).toBe(true);
    expect(await liveDiff(emptyL7mpConfig())).toEqual([]);
    expect((await client.readLive()).config).toEqual(emptyL7mpConfig());
    await expectNoLeftovers();
  });
});

/** A client with a scripted proxy: empty live state, writes that take a few ms, optional failures. */
class ScriptedClient extends L7mpRestClient {
  readonly log: string[] = [];
  inFlight = 0;
  readonly maxInFlightByGroup = new Map<string, number>();

  constructor(private readonly failing: Set<string> = new Set()) {
    super('http://scripted.invalid');
  }

  override async readLive(): Promise<L7mpLive> {
    return { config: emptyL7mpConfig(), ignored: [] };
  }

  readonly gets: string[] = [];

  override async get(path: string): Promise<unknown> {
    this.gets.push(path);
    return [];
  }

  override async apply(op: L7mpOperation): Promise<L7mpApplyOutcome> {
    const group = `${op.method} ${op.kind}`;
    this.inFlight++;
    this.maxInFlightByGroup.set(group, Math.max(this.maxInFlightByGroup.get(group) ?? 0, this.inFlight));
    this.log.push(`start ${op.name}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
    this.inFlight--;
    this.log.push(`end ${op.name}`);
    if (this.failing.has(op.name)) {
      throw new L7mpApiError(op.path, 400, 'scripted failure', 'Bad Request', op);
    }
    return 'applied';
  }
}

function wide(): L7mpConfig {
  return config({
    clusters: Array.from({ length: 6 }, (_, i) => udpCluster(`c${i}`, 9000 + i, [])),
    routes: [namedRoute('r', 'c0')],
    listeners: Array.from({ length: 3 }, (_, i) => udpListener(`l${i}`, GW, 9100 + i, 'c0')),
  });
}

describe('ProxyReconciler in-flight rules (scripted client)', () => {
  it('overlaps at most maxInFlight operations of one group and never crosses groups', async () => {
    const scripted = new ScriptedClient();
    const result = await new ProxyReconciler(scripted, { maxInFlight: 4 }).reconcile(wide());
    expect(result.ok).toBe(true);
    expect(result.applied).toEqual(result.drift);
    expect(scripted.maxInFlightByGroup.get('POST cluster')).toBe(4);
    expect(scripted.maxInFlightByGroup.get('POST listener')).toBe(3);
    // The route starts only after every cluster ended, and the listeners only after the route.
    const log = scripted.log;
    expect(log.indexOf('start r')).toBeGreaterThan(
      Math.max(...[0, 1, 2, 3, 4, 5].map((i) => log.indexOf(`end c${i}`))),
    );
    expect(Math.min(...[0, 1, 2].map((i) => log.indexOf(`start l${i}`)))).toBeGreaterThan(
      log.indexOf('end r'),
    );
  });

  it('overlaps the DELETE and POST of an endpoint move, but not a re-add under the same name', async () => {
    const before = config({ clusters: [udpCluster('c0', 9000, ['10.0.0.1', '10.0.0.2'])] });
    const moved = config({ clusters: [udpCluster('c0', 9000, ['10.0.0.2', '10.0.0.3'])] });
    const scripted = new ScriptedClient();
    const result = await new ProxyReconciler(scripted).reconcile(moved, { assumeLive: before });
    expect(summary(result.applied)).toEqual(['DELETE endpoint c0@10.0.0.1', 'POST endpoint c0@10.0.0.3']);
    expect(scripted.log.indexOf('start c0@10.0.0.3')).toBeLessThan(scripted.log.indexOf('end c0@10.0.0.1'));

    const reweighted = structuredClone(moved);
    reweighted.clusters[0]!.endpoints![1]!.weight = 5;
    const again = new ScriptedClient();
    const second = await new ProxyReconciler(again).reconcile(reweighted, { assumeLive: moved });
    expect(summary(second.applied)).toEqual(['DELETE endpoint c0@10.0.0.3', 'POST endpoint c0@10.0.0.3']);
    expect(again.log).toEqual([
      'start c0@10.0.0.3',
      'end c0@10.0.0.3',
      'start c0@10.0.0.3',
      'end c0@10.0.0.3',
    ]);
  });

  it('reads the rule tables for leftovers unless told not to', async () => {
    const scripted = new ScriptedClient();
    const reconciler = new ProxyReconciler(scripted);
    await reconciler.reconcile(emptyL7mpConfig());
    expect(scripted.gets.sort()).toEqual(['/api/v1/listeners', '/api/v1/rulelists', '/api/v1/rules']);
    scripted.gets.length = 0;
    await reconciler.reconcile(emptyL7mpConfig(), { leftovers: false });
    expect(scripted.gets).toEqual([]);
  });

  it('with maxInFlight 1 sends strictly one after the other', async () => {
    const scripted = new ScriptedClient();
    await new ProxyReconciler(scripted, { maxInFlight: 1 }).reconcile(wide());
    expect(Math.max(...scripted.maxInFlightByGroup.values())).toBe(1);
  });

  it('stops at the first failure: the rest of the group finishes, later groups never start', async () => {
    const scripted = new ScriptedClient(new Set(['c0']));
    const result = await new ProxyReconciler(scripted, { maxInFlight: 4 }).reconcile(wide());
    expect(result.ok).toBe(false);
    expect(result.failed?.op?.name).toBe('c0');
    expect(result.failed?.error).toBeInstanceOf(L7mpApiError);
    // c1, c2 and c3 were in flight with c0 and succeeded; c4, c5, the route and listeners never started.
    expect(summary(result.applied)).toEqual(['POST cluster c1', 'POST cluster c2', 'POST cluster c3']);
    expect(scripted.log.filter((l) => l.startsWith('start'))).toEqual([
      'start c0',
      'start c1',
      'start c2',
      'start c3',
    ]);
    expect(result.drift).toHaveLength(10);
  });

  it('an aborted reconcile reports the first operation it did not send', async () => {
    const scripted = new ScriptedClient();
    const controller = new AbortController();
    const pending = new ProxyReconciler(scripted, { maxInFlight: 1 }).reconcile(wide(), {
      signal: controller.signal,
      onPlan: () => setTimeout(() => controller.abort(), 12),
    });
    const result = await pending;
    expect(result.ok).toBe(false);
    expect(result.failed?.error.message).toContain('aborted');
    expect(result.applied.length).toBeGreaterThan(0);
    expect(result.failed?.op).toBe(result.drift[result.applied.length]);
  });
});
