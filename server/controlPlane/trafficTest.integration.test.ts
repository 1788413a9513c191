/**
 * Traffic tests on real l7mp 0.5.7 processes and the demo echo apps: the canary example (80/20 over
 * echo-v1's two pods and echo-v2's one) moved to 127.0.0.220-223 and ports 41100/41200/41234, so it
 * never meets another test's local mesh. 200 probes through the gateway, straight through the control
 * plane (one at a time, and as the default sends them), through POST /api/probe/burst with a console
 * session, and through `meshdeck probe --count`.
 *
 * Probes in flight together can go unanswered: l7mp 0.5.7's UDP listener binds a socket for each new
 * peer on its own port before it connects it, and that socket takes (and loses) the first datagram of
 * another new peer that arrives in between (see probeBatch.ts). One at a time every probe must be
 * answered; by default (the next probe 25 ms after the last while it waits, up to 50 in flight) probes
 * overlap only where answers take longer than that, as on a busy machine, so most must.
 */
import { cp as copyDir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POST as postBurst } from '@/app/api/probe/burst/route';
import { POST as postProbe } from '@/app/api/probe/route';
import { DELETE as signOut, POST as signIn } from '@/app/api/session/route';
import { type TrafficTestResult, TrafficTestResultSchema } from '@/lib/console/trafficTest';
import { main } from '../cli/main';
import { ConsoleAuth, setConsoleAuth } from '../console/consoleAuth';
import { jsonPost } from '../console/testing/jsonPost';
import { serveRoutes } from '../console/testing/routeServer';
import { until } from '../kube/replicasTestKit';
import { ControlPlane } from './ControlPlane';
import { setControlPlane } from './registry';

const REPO = path.resolve(__dirname, '..', '..');
const quiet = { info: () => {}, warn: () => {}, error: (...a: unknown[]) => console.error(...a) };
const TOKEN = 'traffic-test-token';
/** The probes' client address (100-199 are the local mesh's clients; no other test uses this one). */
const CLIENT = '127.0.0.192';
const COUNT = 200;
/** The fewest answers of COUNT probes sent as by default: 80% (the worst seen, 50 at once, was 95.5%). */
const MIN_ANSWERED = 160;
/**
 * How far an observed share may be from the configured one, in percentage points. Each probe is a new
 * flow (its own source port) that l7mp's consistent hash gives to echo-v2 with probability p = 0.2 (the
 * engine calibrates the endpoint weights so that the ring gives the configured shares), independently of
 * the others (a lost datagram is lost before any backend is picked): echo-v2's count over the n answered
 * probes is Binomial(n, 0.2), whose share has a standard deviation of sqrt(0.2 * 0.8 / n): 2.83 pp at
 * n = 200, 3.16 pp at n = 160. 12 pp is 3.8 to 4.2 standard deviations: a correct split fails this
 * about 1 to 14 times in 100,000 runs, while a split that ignored the weights (50/50) or sent everything
 * to one backend is 30 pp or more away.
 */
const BOUND_PP = 12;

/** The canary example moved (see the module comment). */
function relocate(text: string): string {
  const address: Record<string, string> = { '10': '220', '51': '221', '52': '222', '61': '223' };
  return text
    .replace("api-port: '1234'", "api-port: '41234'")
    .replace(/\b9100\b/g, '41100')
    .replace(/\b9200\b/g, '41200')
    .replace(/127\.0\.0\.(10|51|52|61)\b/g, (_m, last: string) => `127.0.0.${address[last]}`);
}

describe('traffic tests through the local mesh (real l7mp, real echo apps)', () => {
  let tmp: string;
  let meshDir: string;
  let cp: ControlPlane;
  /** The split's weights as the example's file writes them, by entry. */
  let weights: Record<string, number>;

  beforeAll(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'md-traffic-'));
    meshDir = path.join(tmp, 'mesh');
    await copyDir(path.join(REPO, 'examples', 'canary'), meshDir, { recursive: true });
    for (const f of ['cluster.yaml', 'mesh.yaml']) {
      const file = path.join(meshDir, f);
      await writeFile(file, relocate(await readFile(file, 'utf8')));
    }
    const mesh = await readFile(path.join(meshDir, 'mesh.yaml'), 'utf8');
    weights = Object.fromEntries(
      [...mesh.matchAll(/serviceName: (echo-v\d), weight: (\d+)/g)].map((m) => [m[1]!, Number(m[2])]),
    );
    cp = await ControlPlane.startLocal({
      meshDir,
      stateDir: path.join(tmp, 'state'),
      driftIntervalMs: 1000,
      logger: quiet,
      watch: false,
    });
    await until(
      'every proxy in sync',
      () => cp.syncStates().length === 1 && cp.syncStates().every((s) => s.inSync),
      120_000,
    );
  }, 180_000);

  afterAll(async () => {
    setControlPlane(undefined);
    setConsoleAuth(undefined);
    await cp?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  /**
   * What a traffic test of COUNT probes through the gateway must show: every probe answered (`all`), or
   * at least MIN_ANSWERED with the rest lost (no other failure); the split as configured.
   */
  const expectSplitAnswered = (r: TrafficTestResult, all: boolean) => {
    expect(TrafficTestResultSchema.parse(r)).toEqual(r);
    expect(r).toMatchObject({
      proxy: 'default/gateway-0',
      listener: 'gateway.default.virtualservice.cluster.local',
      protocol: 'UDP',
      to: '127.0.0.220:41100',
      from: `${CLIENT}:*`,
      sent: COUNT,
    });
    if (all)
      expect(r, JSON.stringify(r.errors)).toMatchObject({ answered: COUNT, successPercent: 100, errors: [] });
    else {
      expect(r.answered, JSON.stringify(r.errors)).toBeGreaterThanOrEqual(MIN_ANSWERED);
      expect(r.errors.map((e) => e.message).filter((m) => !/^no reply within \d+ ms$/.test(m))).toEqual([]);
      expect(r.errors.reduce((n, e) => n + e.count, 0)).toBe(r.sent - r.answered);
    }
    expect(r.path[0]).toBe('listener gateway.default.virtualservice.cluster.local (UDP)');
    const { p50Ms, p90Ms, p99Ms, maxMs } = r.latency!;
    expect(p50Ms).toBeLessThanOrEqual(p90Ms);
    expect(p90Ms).toBeLessThanOrEqual(p99Ms);
    expect(p99Ms).toBeLessThanOrEqual(maxMs);
    // Only the echo pods answer, each with its own name.
    expect(Object.keys(r.byPod).every((p) => ['echo-v1-a', 'echo-v1-b', 'echo-v2-a'].includes(p))).toBe(true);
    expect(Object.values(r.byPod).reduce((a, b) => a + b, 0)).toBe(r.answered);
    const split = r.split!;
    expect(split.target).toEqual({ namespace: 'default', name: 'echo-canary' });
    expect(split.other).toBe(0);
    expect(split.backends.map((b) => b.name)).toEqual(['echo-v1', 'echo-v2']);
    const total = Object.values(weights).reduce((a, b) => a + b, 0);
    for (const b of split.backends) {
      expect(b.configuredPercent).toBe(Math.round((weights[b.name]! / total) * 1000) / 10);
      expect(Math.abs(b.observedPercent - b.configuredPercent), JSON.stringify(split)).toBeLessThanOrEqual(
        BOUND_PP,
      );
      // Within chance on the real proxy: no false alarm (shareOff's 4 sd are this test's bound too).
      expect(b.off, JSON.stringify(split)).toBe(false);
    }
    expect(split.backends.map((b) => b.configuredPercent)).toEqual([80, 20]);
    expect(split.backends.reduce((s, b) => s + b.answered, 0)).toBe(r.answered);
    expect(split.backends[0]!.answered).toBe((r.byPod['echo-v1-a'] ?? 0) + (r.byPod['echo-v1-b'] ?? 0));
  };
  const figures = (what: string, r: TrafficTestResult) =>
    console.info(
      `traffic test ${what}: ${r.answered}/${r.sent} answered, ${r.split!.backends.map((b) => `${b.name} ${b.observedPercent}%`).join(', ')} in ${r.durationMs} ms, p50 ${r.latency!.p50Ms} p99 ${r.latency!.p99Ms} ms`,
    );
  const gateway = {
    listener: 'gateway',
    payload: 'traffic',
    count: COUNT,
    from: { address: CLIENT },
    timeoutMs: 5000,
  };

  it('sends 200 probes through the gateway one at a time: all answered, the split as configured within the bound', async () => {
    const r = await cp.trafficTest({ ...gateway, concurrency: 1 });
    expectSplitAnswered(r, true);
    figures('one at a time', r);
  });

  it('sends 200 probes as the default does (paced, up to 50 in flight): nearly all answered, the split as configured within the bound', async () => {
    const r = await cp.trafficTest(gateway);
    expectSplitAnswered(r, false);
    figures('by default', r);
  });

  it('refuses a listener that does not exist with the probe’s ProbeTargetError, sending nothing', async () => {
    const err = await cp.trafficTest({ listener: 'nothing', payload: 'x', count: 10 }).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err).toMatchObject({ name: 'ProbeTargetError', message: 'no listener "nothing" is configured' });
  });

  it('over HTTP: POST /api/probe/burst with a session (200, 400 with field paths, 404), and meshdeck probe --count', async () => {
    setControlPlane(cp);
    const auth = new ConsoleAuth(TOKEN);
    setConsoleAuth(auth);
    const session = auth.login(TOKEN)!;
    const base = 'http://127.0.0.1:3100/api/probe/burst';
    const post = (body: unknown) => postBurst(jsonPost(base, JSON.stringify(body), session));

    const anonymous = await postBurst(
      jsonPost(base, JSON.stringify({ listener: 'gateway', payload: 'x', count: 2 })),
    );
    expect(anonymous.status).toBe(401);
    const bad = await post({
      listener: 'gateway',
      payload: 'x',
      count: 0,
      from: { address: CLIENT, port: 'x' },
    });
    expect(bad.status).toBe(400);
    const badBody = (await bad.json()) as { error: string; fields: { path: string }[] };
    expect(badBody.error).toBe('invalid traffic test request');
    expect(badBody.fields.map((f) => f.path).sort()).toEqual(['count', 'from.port']);
    const missing = await post({ listener: 'nothing', payload: 'x', count: 3 });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: 'no listener "nothing" is configured' });
    const ok = await post(gateway);
    expect(ok.status).toBe(200);
    expectSplitAnswered((await ok.json()) as TrafficTestResult, false);

    const console_ = await serveRoutes([
      { path: '/api/session', methods: { POST: signIn, DELETE: signOut } },
      { path: '/api/probe/burst', methods: { POST: postBurst } },
      { path: '/api/probe', methods: { POST: postProbe } },
    ]);
    const run = async (...args: string[]) => {
      let stdout = '';
      let stderr = '';
      const code = await main(['probe', ...args, '--url', console_.url, '--token', TOKEN], {
        stdout: (s) => (stdout += s),
        stderr: (s) => (stderr += s),
      });
      return { code, stdout, stderr };
    };
    try {
      const cli = await run('gateway', '--count', String(COUNT), '--from', CLIENT, '--timeout', '5000');
      const lines = cli.stdout.trimEnd().split('\n');
      expect(lines[0], cli.stdout + cli.stderr).toBe(
        `probe gateway.default.virtualservice.cluster.local on default/gateway-0 (UDP 127.0.0.220:41100) from ${CLIENT}:*`,
      );
      expect(lines[1]).toBe('  path: listener gateway.default.virtualservice.cluster.local (UDP)');
      const summary = /^200 sent, (\d+) answered \([\d.]+%\) in [\d.]+ ms$/m.exec(cli.stdout);
      expect(summary, cli.stdout).not.toBeNull();
      const answered = Number(summary![1]);
      expect(answered).toBeGreaterThanOrEqual(MIN_ANSWERED);
      // Exit 1 when any probe went unanswered, as with single probes.
      expect(cli.code).toBe(answered === COUNT ? 0 : 1);
      expect(cli.stdout).toMatch(/^latency p50 [\d.]+ p90 [\d.]+ p99 [\d.]+ max [\d.]+ ms$/m);
      const table = lines.slice(lines.indexOf('split of Target default/echo-canary:') + 1);
      expect(table[0]).toMatch(/^ {2}backend +configured +observed +answered$/);
      expect(table[1]).toMatch(/^ {2}echo-v1 +80% +[\d.]+% +\d+$/);
      expect(table[2]).toMatch(/^ {2}echo-v2 +20% +[\d.]+% +\d+$/);
      expect(table.slice(3)).toEqual(
        answered === COUNT ? [] : ['errors:', `  ${COUNT - answered} × no reply within 5000 ms`],
      );

      // --count 1 (the default) is one probe through POST /api/probe, printed as before.
      const one = await run('gateway', '--from', CLIENT, '--payload', 'hello');
      expect(one.code, one.stdout + one.stderr).toBe(0);
      const oneLines = one.stdout.trimEnd().split('\n');
      expect(oneLines[0]).toBe(lines[0]);
      expect(oneLines.at(-1)).toMatch(/^ {2}reply: "echo-v[12]-[ab]\(hello\)" in [\d.]+ ms$/);

      const unknown = await run('nothing', '--count', '5');
      expect(unknown).toMatchObject({
        code: 2,
        stdout: '',
        stderr: 'meshdeck: probe: no listener "nothing" is configured\n',
      });
    } finally {
      await console_.close();
    }
  });
});
