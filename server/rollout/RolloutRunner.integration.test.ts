/**
 * Progressive rollouts on real l7mp 0.5.7 processes and the demo echo apps: the canary example (its
 * addresses and host-wide ports moved, so it never meets another test's local mesh) with a third backend,
 * echo-v3, whose pod runs no app (nothing answers there). Steps are written into the mesh directory, the
 * gateway proxy takes them, probes through the gateway and a real webhook on 127.0.0.1 judge them; the
 * HTTP routes run once with a console session.
 */
import { cp as copyDir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GET as getRollouts, POST as postRollout } from '@/app/api/rollouts/route';
import { POST as postAction } from '@/app/api/rollouts/[id]/route';
import { DELETE as signOut, POST as signIn } from '@/app/api/session/route';
import { ENDED_PHASES, type RolloutSpecInput, type RolloutState } from '@/lib/rollout/rollout';
import { ApplyHistory } from '../console/ApplyHistory';
import { ConsoleAuth, setConsoleAuth } from '../console/consoleAuth';
import { setConsoleContext } from '../console/consoleContext';
import { DraftRegistry } from '../console/DraftRegistry';
import { main } from '../cli/main';
import { jsonPost } from '../console/testing/jsonPost';
import { serveRoutes } from '../console/testing/routeServer';
import { ControlPlane } from '../controlPlane/ControlPlane';
import { until } from '../kube/replicasTestKit';
import { L7mpRestClient } from '../l7mp/L7mpRestClient';
import { localMeshRolloutTarget } from './localMeshRolloutTarget';
import { RolloutRunner, type RolloutRunnerOptions } from './RolloutRunner';
import type { RolloutTarget } from './RolloutTarget';

const REPO = path.resolve(__dirname, '..', '..');
const quiet = { info: () => {}, warn: () => {}, error: (...a: unknown[]) => console.error(...a) };
const GATEWAY = 'default/gateway-0';
const TARGET = { namespace: 'default', name: 'echo-canary' };
const ANN = { user: 'ann', groups: ['mesh-admins'] };
const TOKEN = 'rollout-test-token';
/** The probes' client address (100-199 are the local mesh's clients). */
const CLIENT = '127.0.0.190';
/** echo-v2's pod, the only one left in the split at 100%. */
const V2_ADDRESS = '127.0.0.213';

/** The canary example moved to 127.0.0.210-214 and ports 3xxxx, plus echo-v3 with no app (see above). */
function relocate(file: string, text: string): string {
  const address: Record<string, string> = { '10': '210', '51': '211', '52': '212', '61': '213' };
  let out = text
    .replace("api-port: '1234'", "api-port: '31234'")
    .replace(/\b9100\b/g, '39100')
    .replace(/\b9200\b/g, '39200')
    .replace(/127\.0\.0\.(10|51|52|61)\b/g, (_m, last: string) => `127.0.0.${address[last]}`);
  if (file === 'cluster.yaml')
    out += [
      '---',
      'apiVersion: v1',
      'kind: Service',
      'metadata: { name: echo-v3, namespace: default }',
      'spec: { selector: { app: echo, version: v3 }, ports: [{ protocol: UDP, port: 39200 }] }',
      '---',
      'apiVersion: v1',
      'kind: Pod',
      'metadata: { name: echo-v3-a, namespace: default, labels: { app: echo, version: v3 } }',
      'status: { podIP: 127.0.0.214 }',
      '',
    ].join('\n');
  if (file === 'mesh.yaml') out += '    - { serviceName: echo-v3, weight: 0 }\n';
  return out;
}

/** `canary` to 50% then 100%, each step judged by 20 probes through the gateway. */
const probed = (canary: string): RolloutSpecInput => ({
  target: TARGET,
  canary,
  steps: [50, 100],
  pauseS: 0.3,
  analysis: { probe: { listener: 'gateway', count: 20, from: { address: CLIENT }, timeoutMs: 5000 } },
});

describe('progressive rollouts on the local mesh (real l7mp, real probes, a real webhook)', () => {
  let tmp: string;
  let meshDir: string;
  let stateDir: string;
  let cp: ControlPlane;
  let drafts: DraftRegistry;
  let history: ApplyHistory;
  let target: RolloutTarget;
  let runner: RolloutRunner;
  const runners: RolloutRunner[] = [];
  const ended: string[] = [];
  const analyses: string[] = [];

  const meshFile = () => readFile(path.join(meshDir, 'mesh.yaml'), 'utf8');
  const newRunner = (o: Partial<RolloutRunnerOptions> = {}) => {
    const r = new RolloutRunner({
      target,
      stateDir,
      logger: quiet,
      metrics: { ended: (x) => ended.push(x), analysed: (x) => analyses.push(x) },
      ...o,
    });
    runners.push(r);
    return r;
  };
  const started = async (r: RolloutRunner, spec: RolloutSpecInput): Promise<RolloutState> => {
    const out = await r.start(spec, ANN);
    if (!('rollout' in out)) throw new Error(`not started: ${JSON.stringify(out)}`);
    return out.rollout;
  };
  /** The rollout once it ended or paused (bounded). */
  const settled = (r: RolloutRunner, id: string) =>
    until(
      `rollout ${id} to settle`,
      () => {
        const s = r.get(id);
        return s && (ENDED_PHASES.has(s.phase) || s.phase === 'paused') && s;
      },
      90_000,
      () => JSON.stringify(r.get(id)),
    );
  const liveEndpoints = async () => {
    const { config } = await new L7mpRestClient(cp.live.get().proxies[GATEWAY]!.apiUrl!).readLive();
    const cluster = config.clusters.find((c) => c.name.startsWith('echo-canary.'));
    return (cluster?.endpoints ?? []).map((e) => String(e.spec.address)).sort();
  };
  const weightsOnDisk = async () =>
    [...(await meshFile()).matchAll(/serviceName: (echo-v\d), weight: (\d+)/g)].map((m) => `${m[1]} ${m[2]}`);

  beforeAll(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'md-rollout-'));
    meshDir = path.join(tmp, 'mesh');
    stateDir = path.join(tmp, 'state');
    await copyDir(path.join(REPO, 'examples', 'canary'), meshDir, { recursive: true });
    for (const f of ['cluster.yaml', 'mesh.yaml']) {
      const file = path.join(meshDir, f);
      await writeFile(file, relocate(f, await readFile(file, 'utf8')));
    }
    cp = await ControlPlane.startLocal({ meshDir, stateDir, driftIntervalMs: 1000, logger: quiet });
    await until(
      'every proxy in sync',
      () => cp.syncStates().length === 1 && cp.syncStates().every((s) => s.inSync),
      120_000,
    );
    drafts = new DraftRegistry({ meshDir, stateDir, logger: { warn: () => {} } });
    history = new ApplyHistory({ dir: path.join(stateDir, 'console', 'applies'), logger: quiet });
    target = localMeshRolloutTarget({ drafts: drafts.main, controlPlane: () => cp, history, logger: quiet });
    runner = newRunner();
    await runner.load();
  }, 180_000);

  afterAll(async () => {
    for (const r of runners) await r.stop();
    setConsoleContext(undefined);
    setConsoleAuth(undefined);
    await cp?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('moves echo-v2 to 50% then 100%, judged by probes through the gateway, recorded in the apply history', async () => {
    const before = await meshFile();
    expect(await weightsOnDisk()).toEqual(['echo-v1 80', 'echo-v2 20', 'echo-v3 0']);
    const r = await started(runner, probed('echo-v2'));
    expect(r).toMatchObject({
      phase: 'progressing',
      user: 'ann',
      target: 'local-mesh',
      initial: [80, 20, 0],
    });
    const done = await settled(runner, r.id);
    expect(done.phase, done.message).toBe('succeeded');
    expect(done.weights).toEqual([0, 100, 0]);
    expect(done.steps.map((s) => s.weights)).toEqual([
      [50, 50, 0],
      [0, 100, 0],
    ]);
    // Each step passed its probes, and echo-v2's pod answered them.
    for (const s of done.steps) {
      expect(s.analysis, JSON.stringify(s)).toMatchObject({ passed: true, probe: { sent: 20 } });
      expect(s.analysis!.probe!.byBackend['echo-v2']).toBeGreaterThan(0);
      expect(s.analysis!.probe!.byBackend.other).toBeUndefined();
    }
    // Only the weights' characters changed in the file.
    const after = await meshFile();
    expect(await weightsOnDisk()).toEqual(['echo-v1 0', 'echo-v2 100', 'echo-v3 0']);
    expect(after.replace(/weight: \d+/g, 'weight: N')).toBe(before.replace(/weight: \d+/g, 'weight: N'));
    // The gateway runs it: echo-v1's pods are out of the split, echo-v3 (weight 0) is not in.
    expect(await liveEndpoints()).toEqual([V2_ADDRESS]);
    const records = (await history.list()).filter((h) => h.rollout?.id === r.id);
    expect(records.map((h) => h.rollout)).toEqual([
      { id: r.id, step: 1, of: 2, percent: 100, action: 'step' },
      { id: r.id, step: 0, of: 2, percent: 50, action: 'step' },
    ]);
    expect(records.map((h) => [h.user, h.draft, h.applied, h.proxies?.notInSync])).toEqual([
      ['ann', 'rollout', ['mesh.yaml'], []],
      ['ann', 'rollout', ['mesh.yaml'], []],
    ]);
    expect(done.steps.map((s) => s.historyId)).toEqual(records.map((h) => h.id).reverse());
    expect(ended).toEqual(['succeeded']);
    expect(analyses).toEqual(['passed', 'passed']);
  });

  it('rolls back a canary that does not answer: the file is byte for byte what it was', async () => {
    const before = await meshFile();
    const r = await started(runner, probed('echo-v3'));
    const done = await settled(runner, r.id);
    expect(done.phase, done.message).toBe('rolled-back');
    expect(done.steps).toHaveLength(1);
    expect(done.steps[0]!.analysis).toMatchObject({ passed: false });
    expect(done.message).toMatch(/^step 1 of 2 \(50%\) failed: \d+ of 20 probes answered .*; rolled back to/);
    expect(await meshFile()).toBe(before);
    expect(await liveEndpoints()).toEqual([V2_ADDRESS]);
    const [rollback] = await history.list();
    expect(rollback).toMatchObject({
      id: done.rollbackHistoryId,
      user: 'ann',
      rollout: { id: r.id, of: 2, percent: 0, action: 'rollback' },
    });
    expect(ended.at(-1)).toBe('rolled-back');
    expect(analyses.at(-1)).toBe('failed');
  });

  it('a webhook that answers 500 pauses the rollout (onFailure pause); resumed, it answers 200 and the rollout succeeds', async () => {
    const calls: { body: unknown; type?: string }[] = [];
    const server: Server = createServer((req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString()));
      req.on('end', () => {
        calls.push({ body: JSON.parse(text) as unknown, type: req.headers['content-type'] });
        res.writeHead(calls.length === 1 ? 500 : 200).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/judge`;
      const r = await started(runner, {
        target: TARGET,
        canary: 'echo-v1',
        steps: [50, 100],
        pauseS: 0.2,
        analysis: { webhook: { url, timeoutMs: 5000 } },
        onFailure: 'pause',
      });
      const paused = await settled(runner, r.id);
      expect(paused.phase).toBe('paused');
      expect(paused.message).toMatch(/^step 1 of 2 \(50%\) failed: the webhook answered 500; paused/);
      expect(paused.weights).toEqual([50, 50, 0]);
      expect(calls[0]).toEqual({
        type: 'application/json',
        body: {
          rollout: r.id,
          target: TARGET,
          canary: 'echo-v1',
          step: 0,
          of: 2,
          percent: 50,
          entries: ['echo-v1', 'echo-v2', 'echo-v3'],
          weights: [50, 50, 0],
        },
      });
      // Another start meanwhile is refused: the paused one has not ended.
      const second = await runner.start({ target: TARGET, canary: 'echo-v2', steps: [100] }, ANN);
      expect(second).toMatchObject({ status: 409, error: expect.stringContaining(r.id) });

      const resumed = await runner.act(r.id, 'resume', { user: 'bob', groups: [] });
      expect(resumed).toMatchObject({ rollout: { phase: 'progressing' } });
      const done = await settled(runner, r.id);
      expect(done.phase, done.message).toBe('succeeded');
      expect(done.weights).toEqual([100, 0, 0]);
      expect(calls.map((c) => (c.body as { step: number }).step)).toEqual([0, 0, 1]);
      expect(done.steps.map((s) => s.analysis?.webhook?.status)).toEqual([200, 200]);
      // Applied as the user who started it, also after bob resumed it.
      const [last] = await history.list();
      expect(last).toMatchObject({ user: 'ann', rollout: { id: r.id, step: 1, action: 'step' } });
      expect(await runner.act(r.id, 'pause', ANN)).toMatchObject({ status: 409 });
    } finally {
      server.close();
    }
  });

  it('abort during a long pause rolls back and names the user', async () => {
    const before = await meshFile();
    const r = await started(runner, { target: TARGET, canary: 'echo-v2', steps: [50], pauseS: 600 });
    await until('the step to wait', () => runner.get(r.id)?.activity === 'waiting', 60_000);
    expect(await weightsOnDisk()).toEqual(['echo-v1 50', 'echo-v2 50', 'echo-v3 0']);
    const out = await runner.act(r.id, 'abort', { user: 'carol', groups: [] });
    expect(out).toMatchObject({ rollout: { id: r.id } });
    const done = await settled(runner, r.id);
    expect(done).toMatchObject({ phase: 'aborted', weights: [100, 0, 0] });
    expect(done.message).toMatch(/^aborted by carol; rolled back to echo-v1 100, echo-v2 0, echo-v3 0$/);
    expect(await meshFile()).toBe(before);
    expect(ended.at(-1)).toBe('aborted');
  });

  it('refuses a second start (409), a bad spec naming the field (400), a canary not in the split (422) and a self-heal conflict (409)', async () => {
    const r = await started(runner, { target: TARGET, canary: 'echo-v2', steps: [10, 20], pauseS: 600 });
    try {
      expect(await runner.start({ target: TARGET, canary: 'echo-v3', steps: [10] }, ANN)).toMatchObject({
        status: 409,
        error: expect.stringContaining(`rollout ${r.id} of echo-v2 is progressing`),
      });
    } finally {
      await runner.act(r.id, 'abort', ANN);
      await settled(runner, r.id);
    }
    expect(await runner.start({ target: TARGET, canary: 'echo-v2', steps: [50, 20] }, ANN)).toMatchObject({
      status: 400,
      fields: [{ path: 'steps[1]', message: expect.stringContaining('above the one before') }],
    });
    expect(
      await runner.start({ target: TARGET, canary: 'echo-v2', steps: [50], pauseS: -1 }, ANN),
    ).toMatchObject({ status: 400, fields: [{ path: 'pauseS' }] });
    expect(await runner.start({ target: TARGET, canary: 'echo-v9', steps: [50] }, ANN)).toMatchObject({
      status: 422,
      fields: [{ path: 'canary', message: expect.stringContaining('echo-v1, echo-v2, echo-v3') }],
    });
    expect(
      await runner.start({ target: { name: 'no-such-target' }, canary: 'echo-v2', steps: [50] }, ANN),
    ).toMatchObject({ status: 422, fields: [{ path: 'target' }] });
    const healing = newRunner({ conflict: async () => 'self-heal would take every step back' });
    expect(await healing.start({ target: TARGET, canary: 'echo-v2', steps: [50] }, ANN)).toEqual({
      status: 409,
      error: 'self-heal would take every step back',
    });
    expect(await weightsOnDisk()).toEqual(['echo-v1 100', 'echo-v2 0', 'echo-v3 0']);
  });

  it('a rollout progressing when the server stops is paused after the restart, and can be aborted then', async () => {
    const first = newRunner();
    await first.load();
    const r = await started(first, { target: TARGET, canary: 'echo-v2', steps: [30, 60], pauseS: 600 });
    await until('the step to wait', () => first.get(r.id)?.activity === 'waiting', 60_000);
    await first.stop();
    const second = newRunner();
    await second.load();
    expect(second.get(r.id)).toMatchObject({
      phase: 'paused',
      message: 'the server restarted during step 1: resume or abort',
    });
    expect(second.get(r.id)!.activity).toBeUndefined();
    expect(second.list()[0]!.id).toBe(r.id);
    await second.act(r.id, 'abort', ANN);
    expect(await settled(second, r.id)).toMatchObject({ phase: 'aborted', weights: [100, 0, 0] });
    // Its last write done before the next test's runner reads the state file.
    await second.stop();
    expect(await weightsOnDisk()).toEqual(['echo-v1 100', 'echo-v2 0', 'echo-v3 0']);
  });

  it('POST /api/rollouts needs a session; with one it starts (201), GET lists it, actions answer 400/404/409', async () => {
    const http = newRunner();
    await http.load();
    const auth = new ConsoleAuth(TOKEN);
    setConsoleAuth(auth);
    setConsoleContext({ drafts, examplesDir: path.join(REPO, 'examples'), rollouts: http });
    const base = 'http://127.0.0.1:3100/api/rollouts';
    const spec = JSON.stringify({ target: TARGET, canary: 'echo-v2', steps: [100], pauseS: 0.2 });
    const countBefore = http.list().length;
    const anonymous = await postRollout(jsonPost(base, spec));
    expect(anonymous.status).toBe(401);
    expect(http.list()).toHaveLength(countBefore);
    const session = auth.login(TOKEN)!;
    const signedIn = (url: string, body: string) => jsonPost(url, body, session);
    const bad = await postRollout(signedIn(base, '{"target": {"name": "echo-canary"}, "canary": "echo-v2"}'));
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: 'invalid rollout', fields: [{ path: 'steps' }] });
    expect(http.list()).toHaveLength(countBefore);
    const res = await postRollout(signedIn(base, spec));
    const body = (await res.json()) as { rollout: RolloutState };
    expect(res.status, JSON.stringify(body)).toBe(201);
    expect(body.rollout).toMatchObject({
      user: 'local-admin',
      phase: 'progressing',
      spec: { canary: 'echo-v2' },
    });
    const listed = await getRollouts(new Request(base));
    expect(listed.status).toBe(200);
    const list = (await listed.json()) as { available: boolean; rollouts: RolloutState[] };
    expect(list.available).toBe(true);
    expect(list.rollouts[0]!.id).toBe(body.rollout.id);
    const done = await settled(http, body.rollout.id);
    expect(done.phase, done.message).toBe('succeeded');

    const action = (id: string, b: string) =>
      postAction(signedIn(`${base}/${id}`, b), { params: Promise.resolve({ id }) });
    const badAction = await action(body.rollout.id, '{"action": "rewind"}');
    expect(badAction.status).toBe(400);
    expect(await badAction.json()).toMatchObject({ fields: [{ path: 'action' }] });
    expect((await action('20990101T000000Z-zzzz', '{"action": "abort"}')).status).toBe(404);
    const onEnded = await action(body.rollout.id, '{"action": "abort"}');
    expect(onEnded.status).toBe(409);
    expect(await onEnded.json()).toEqual({ error: `rollout ${body.rollout.id} has ended (succeeded)` });
  });
  it('a pause asked during the analysis takes effect when it ends; promote then applies the last step at once', async () => {
    const held: (() => void)[] = [];
    const server: Server = createServer((req, res) => {
      req.resume();
      held.push(() => {
        if (!res.headersSent) res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      const r = await started(runner, {
        target: TARGET,
        canary: 'echo-v1',
        steps: [25, 50, 75],
        pauseS: 0,
        analysis: { webhook: { url } },
      });
      expect(r.initial).toEqual([0, 100, 0]);
      await until(
        'the webhook to be called',
        () => held.length === 1 && runner.get(r.id)?.activity === 'analysing',
      );
      const asked = await runner.act(r.id, 'pause', { user: 'dave', groups: [] });
      expect(asked).toMatchObject({
        rollout: { phase: 'progressing', message: 'pause asked by dave: done when the analysing ends' },
      });
      held[0]!();
      const paused = await settled(runner, r.id);
      expect(paused).toMatchObject({ phase: 'paused', message: 'paused by dave', weights: [25, 75, 0] });
      expect(paused.steps.map((s) => s.analysis?.passed)).toEqual([true]);
      expect(held).toHaveLength(1);

      await runner.act(r.id, 'promote', { user: 'dave', groups: [] });
      const done = await settled(runner, r.id);
      expect(done).toMatchObject({
        phase: 'succeeded',
        message: 'promoted by dave: echo-v1 at 75% at once',
        weights: [75, 25, 0],
      });
      // The step between was skipped: never applied.
      expect(done.steps.map((s) => [s.percent, s.appliedAt !== undefined])).toEqual([
        [25, true],
        [50, false],
        [75, true],
      ]);
      expect(await weightsOnDisk()).toEqual(['echo-v1 75', 'echo-v2 25', 'echo-v3 0']);
      expect(held).toHaveLength(1);
      const [last] = await history.list();
      expect(last).toMatchObject({
        id: done.steps[2]!.historyId,
        rollout: { id: r.id, step: 2, percent: 75 },
      });
    } finally {
      for (const release of held) release();
      server.close();
    }
  });
  it('meshdeck rollout (the CLI) starts and follows a rollout over HTTP: exit 0 when it succeeds, 1 when it is rolled back', async () => {
    const cli = newRunner();
    await cli.load();
    const auth = new ConsoleAuth(TOKEN);
    setConsoleAuth(auth);
    setConsoleContext({ drafts, examplesDir: path.join(REPO, 'examples'), rollouts: cli });
    const console_ = await serveRoutes([
      { path: '/api/session', methods: { POST: signIn, DELETE: signOut } },
      { path: '/api/rollouts', methods: { GET: getRollouts, POST: postRollout } },
      { path: '/api/rollouts/:id', methods: { POST: postAction } },
    ]);
    const run = async (...args: string[]) => {
      let stdout = '';
      let stderr = '';
      const code = await main(['rollout', ...args, '--url', console_.url], {
        stdout: (s) => (stdout += s),
        stderr: (s) => (stderr += s),
      });
      return { code, stdout, stderr };
    };
    try {
      const before = cli.list().length;
      const ok = await run(
        'start',
        'default/echo-canary',
        '--canary',
        'echo-v2',
        '--steps',
        '50,100',
        '--pause',
        '0.2',
        '--probe',
        'gateway',
        '--probe-from',
        CLIENT,
        '--token',
        TOKEN,
        '--wait',
      );
      expect(ok.code, ok.stdout + ok.stderr).toBe(0);
      const [r] = cli.list();
      expect(cli.list()).toHaveLength(before + 1);
      expect(r).toMatchObject({ phase: 'succeeded', user: 'local-admin', weights: [0, 100, 0] });
      const lines = ok.stdout.trim().split('\n');
      expect(lines[0]).toBe(`rollout ${r!.id} of Target default/echo-canary: echo-v2 to 50, 100%`);
      expect(lines[1]).toMatch(
        /^  step 1 of 2 \(50%\): passed: 20 of 20 probes answered \(100%\); p50 [\d.]+ ms, p99 [\d.]+ ms; answers: /,
      );
      expect(lines[2]).toMatch(
        /^  step 2 of 2 \(100%\): passed: 20 of 20 probes answered \(100%\); p50 [\d.]+ ms, p99 [\d.]+ ms; answers: echo-v2 20$/,
      );
      expect(lines.at(-1)).toBe(
        'succeeded: echo-v2 runs at 100% after 2 steps (split now: echo-v1 0, echo-v2 100, echo-v3 0)',
      );
      expect(await weightsOnDisk()).toEqual(['echo-v1 0', 'echo-v2 100', 'echo-v3 0']);

      const status = await run('status');
      expect(status.code).toBe(0);
      expect(status.stdout).toContain(
        `rollout ${r!.id} of Target default/echo-canary (canary echo-v2, by local-admin`,
      );
      expect(status.stdout).toContain('  split now: echo-v1 0 (was 75), echo-v2 100 (was 25), echo-v3 0');

      const late = await run('abort', r!.id, '--token', TOKEN);
      expect(late).toMatchObject({
        code: 2,
        stderr: `meshdeck: rollout: rollout ${r!.id} has ended (succeeded)\n`,
      });

      // echo-v3 answers nothing: its first step fails and the rollout is rolled back; --wait exits 1.
      const bad = await run(
        'start',
        'echo-canary',
        '--canary',
        'echo-v3',
        '--steps',
        '50',
        '--pause',
        '0',
        '--probe',
        'gateway',
        '--probe-from',
        CLIENT,
        '--token',
        TOKEN,
        '--wait',
      );
      expect(bad.code, bad.stdout + bad.stderr).toBe(1);
      expect(bad.stdout).toMatch(/step 1 of 1 \(50%\): failed its analysis: \d+ of 20 probes answered/);
      expect(bad.stdout.trim().split('\n').at(-1)).toMatch(
        /^rolled back: .*probes answered .* \(split now: echo-v1 0, echo-v2 100, echo-v3 0\)$/,
      );
      const refused = await run(
        'start',
        'echo-canary',
        '--canary',
        'echo-v9',
        '--steps',
        '50',
        '--token',
        TOKEN,
      );
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('canary: echo-v9 is not in the split of Target default/echo-canary');
    } finally {
      await console_.close();
    }
  });
});
