/**
 * Progressive rollouts judged by what real proxyless gRPC clients report (LRS): a local mesh whose
 * Target splits a grpc VirtualService's calls between real @grpc/grpc-js backends, the control plane's
 * own ADS server, and a real @grpc/grpc-js-xds client in a child process calling through the split at
 * a steady rate and reporting its RPCs per cluster. A healthy canary is promoted step by step; a canary
 * whose backend fails every call is rolled back (through the HTTP routes and the CLI) with the success
 * rate in the reason. Addresses 127.0.0.241-244 and port 39351 are this test's alone.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
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
import { serveRoutes } from '../console/testing/routeServer';
import { main } from '../cli/main';
import { ControlPlane } from '../controlPlane/ControlPlane';
import { until } from '../kube/replicasTestKit';
import { type Backend, type Child, forkXdsClient, startBackend } from '../xds/testing/children';
import { localMeshRolloutTarget } from './localMeshRolloutTarget';
import { NO_LOAD_REPORTS, RolloutRunner } from './RolloutRunner';
import type { RolloutTarget } from './RolloutTarget';

const quiet = { info: () => {}, warn: () => {}, error: (...a: unknown[]) => console.error(...a) };
const ANN = { user: 'ann', groups: ['mesh-admins'] };
const TOKEN = 'grpc-rollout-test-token';
const PORT = 39351;
const TARGET = { namespace: 'default', name: 'echo-split' };
const CLUSTER = (entry: string) => `echo-split.default.target.cluster.local/${entry}`;

const MESH = `apiVersion: msm.l7mp.io/v1
kind: VirtualService
metadata: { name: echo, namespace: default }
spec:
  selector: { matchLabels: { app: grpc-client } }
  grpc: { port: ${PORT} }
  rules:
    - action: { route: { destination: echo-split } }
---
apiVersion: msm.l7mp.io/v1
kind: Target
metadata: { name: echo-split, namespace: default }
spec:
  split:
    - { serviceName: echo-v1, weight: 100 }
    - { serviceName: echo-v2, weight: 0 }
    - { serviceName: echo-v3, weight: 0 }
---
# No client routes here: a gRPC analysis of it is refused.
apiVersion: msm.l7mp.io/v1
kind: Target
metadata: { name: lonely-split, namespace: default }
spec:
  split:
    - { serviceName: echo-v1, weight: 50 }
    - { serviceName: echo-v2, weight: 50 }
`;

const pod = (name: string, labels: string, ip: string) =>
  `apiVersion: v1\nkind: Pod\nmetadata: { name: ${name}, namespace: default, labels: { ${labels} } }\nstatus: { podIP: ${ip} }\n`;
const service = (v: string) =>
  `apiVersion: v1\nkind: Service\nmetadata: { name: echo-${v}, namespace: default }\nspec: { selector: { app: echo, version: ${v} }, ports: [{ protocol: TCP, port: ${PORT}, targetPort: ${PORT} }] }\n`;
const CLUSTER_YAML = [
  pod('grpc-client', 'app: grpc-client, msm.l7mp.io/proxy: grpc', '127.0.0.241'),
  service('v1'),
  service('v2'),
  service('v3'),
  pod('echo-v1-a', 'app: echo, version: v1', '127.0.0.242'),
  pod('echo-v2-a', 'app: echo, version: v2', '127.0.0.243'),
  pod('echo-v3-a', 'app: echo, version: v3', '127.0.0.244'),
].join('---\n');

describe('rollouts judged by proxyless gRPC clients’ load reports (real grpc-js-xds, real backends)', () => {
  let tmp: string;
  let meshDir: string;
  let stateDir: string;
  let cp: ControlPlane;
  let drafts: DraftRegistry;
  let target: RolloutTarget;
  let runner: RolloutRunner;
  let client: Child | undefined;
  const backends: Backend[] = [];
  const runners: RolloutRunner[] = [];
  /** The backends that answered the client's steady calls, and its errors, in order. */
  const calls: { backend?: string; error?: string }[] = [];

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
  const newRunner = (t: RolloutTarget = target) => {
    const r = new RolloutRunner({ target: t, stateDir, logger: quiet });
    runners.push(r);
    return r;
  };

  beforeAll(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'md-grpc-rollout-'));
    meshDir = path.join(tmp, 'mesh');
    stateDir = path.join(tmp, 'state');
    await mkdir(meshDir, { recursive: true });
    await writeFile(path.join(meshDir, 'mesh.yaml'), MESH);
    await writeFile(path.join(meshDir, 'cluster.yaml'), CLUSTER_YAML);
    backends.push(
      await startBackend('echo-v1-a', `127.0.0.242:${PORT}`),
      await startBackend('echo-v2-a', `127.0.0.243:${PORT}`),
      await startBackend('echo-v3-a', `127.0.0.244:${PORT}`, () => true),
    );
    cp = await ControlPlane.startLocal({
      meshDir,
      stateDir,
      logger: quiet,
      // Reports every half second: a step's few seconds of hold hold several of them.
      xds: { host: '127.0.0.1', port: 0, insecure: true, loadReportingIntervalMs: 500 },
    });
    const ads = cp.xdsServer;
    if (!ads) throw new Error('the control plane serves no xDS');
    client = await forkXdsClient(ads.port, 'default/grpc-client', 'xds:///echo');
    const first = client;
    await until(
      'the gRPC client to reach echo-v1 through xDS',
      async () => {
        const r = await first.request<{ byBackend: Record<string, number> }>(
          'call',
          { n: 4, deadlineMs: 2000 },
          10_000,
        );
        return r.byBackend['echo-v1-a'] === 4;
      },
      60_000,
    );
    first.onEvent((msg) => {
      if (msg.event === 'calls') calls.push(...(msg.calls as { backend?: string; error?: string }[]));
    });
    await first.request('rate', { perSecond: 40, deadlineMs: 1000 });
    // The client's load reports reach the control plane's store (LRS), under the split's cluster.
    await until(
      'a load report of echo-v1',
      () => (cp.loadReports.between(0, Date.now())[CLUSTER('echo-v1')]?.succeeded ?? 0) > 0,
      30_000,
    );
    drafts = new DraftRegistry({ meshDir, stateDir, logger: { warn: () => {} } });
    const history = new ApplyHistory({ dir: path.join(stateDir, 'console', 'applies'), logger: quiet });
    target = localMeshRolloutTarget({ drafts: drafts.main, controlPlane: () => cp, history, logger: quiet });
    runner = newRunner();
    await runner.load();
  }, 180_000);

  afterAll(async () => {
    for (const r of runners) await r.stop();
    setConsoleContext(undefined);
    setConsoleAuth(undefined);
    await client?.request('stop', {}, 5000).catch(() => undefined);
    await client?.kill();
    await cp?.stop();
    for (const b of backends) await b.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('promotes a healthy canary step by step, each step judged by the RPCs the client reported over its hold', async () => {
    const spec: RolloutSpecInput = {
      target: TARGET,
      canary: 'echo-v2',
      steps: [50, 100],
      pauseS: 3,
      analysis: { grpc: { minSuccessPercent: 99, minRequests: 10 } },
    };
    const out = await runner.start(spec, ANN);
    if (!('rollout' in out)) throw new Error(`not started: ${JSON.stringify(out)}`);
    expect(out.rollout.clusters).toEqual(['echo-v1', 'echo-v2', 'echo-v3'].map(CLUSTER));
    const done = await settled(runner, out.rollout.id);
    expect(done.phase, done.message).toBe('succeeded');
    expect(done.weights).toEqual([0, 100, 0]);
    for (const s of done.steps) {
      const g = s.analysis?.grpc;
      expect(g, JSON.stringify(s)).toBeDefined();
      expect(s.analysis!.passed).toBe(true);
      expect(g!.cluster).toBe(CLUSTER('echo-v2'));
      expect(g!.requests).toBeGreaterThanOrEqual(10);
      expect(g!.failed).toBe(0);
      expect(g!.successPercent).toBe(100);
      expect(Object.keys(g!.byBackend)).toEqual(['echo-v1', 'echo-v2', 'echo-v3']);
      expect(g!.byBackend['echo-v3']!.requests).toBe(0);
      // The window starts when the step's weights were applied.
      expect(g!.window.from).toBe(s.appliedAt);
    }
    // At 50% the clients really split their calls between both backends.
    const half = done.steps[0]!.analysis!.grpc!;
    expect(half.byBackend['echo-v1']!.requests).toBeGreaterThan(0);
    expect(half.byBackend['echo-v2']!.requests).toBeGreaterThan(0);
    // The client's own answers agree: echo-v2 answers after the last step.
    const end = calls.length;
    await until('more calls answered', () => calls.length > end + 20, 30_000);
    expect(new Set(calls.slice(end + 10).map((c) => c.backend ?? c.error))).toEqual(new Set(['echo-v2-a']));
  }, 120_000);

  it('refuses a gRPC analysis where no client reports the split, or where no load reports are read (422)', async () => {
    expect(
      await runner.start(
        { target: { name: 'lonely-split' }, canary: 'echo-v2', steps: [100], analysis: { grpc: {} } },
        ANN,
      ),
    ).toMatchObject({
      status: 422,
      fields: [{ path: 'analysis.grpc', message: expect.stringContaining('no proxyless gRPC client') }],
    });
    // The same target without a source of load reports.
    const { loadReports: _none, ...blind } = target;
    const refused = await newRunner(blind).start(
      { target: TARGET, canary: 'echo-v1', steps: [100], analysis: { grpc: {} } },
      ANN,
    );
    expect(refused).toEqual({
      status: 422,
      error: NO_LOAD_REPORTS,
      fields: [{ path: 'analysis.grpc', message: NO_LOAD_REPORTS }],
    });
    expect(runner.list().filter((r) => !ENDED_PHASES.has(r.phase))).toEqual([]);
  });

  it('rolls back a canary whose backend fails every call, started and followed with the CLI over HTTP; the reason names the success rate', async () => {
    const auth = new ConsoleAuth(TOKEN);
    setConsoleAuth(auth);
    setConsoleContext({ drafts, examplesDir: path.join(tmp, 'examples'), rollouts: runner });
    const console_ = await serveRoutes([
      { path: '/api/session', methods: { POST: signIn, DELETE: signOut } },
      { path: '/api/rollouts', methods: { GET: getRollouts, POST: postRollout } },
      { path: '/api/rollouts/:id', methods: { POST: postAction } },
    ]);
    try {
      let stdout = '';
      let stderr = '';
      const code = await main(
        [
          'rollout',
          'start',
          'echo-split',
          '--canary',
          'echo-v3',
          '--steps',
          '50,100',
          '--pause',
          '3',
          '--grpc-min-success',
          '99',
          '--grpc-min-requests',
          '10',
          '--token',
          TOKEN,
          '--url',
          console_.url,
          '--wait',
        ],
        { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s) },
      );
      expect(code, stdout + stderr).toBe(1);
      const [r] = runner.list() as [RolloutState];
      expect(r).toMatchObject({ phase: 'rolled-back', spec: { canary: 'echo-v3' }, weights: [0, 100, 0] });
      expect(r.steps).toHaveLength(1);
      const g = r.steps[0]!.analysis!.grpc!;
      expect(g.cluster).toBe(CLUSTER('echo-v3'));
      expect(g.requests).toBeGreaterThanOrEqual(10);
      expect(g).toMatchObject({ succeeded: 0, successPercent: 0 });
      expect(g.failed).toBe(g.requests);
      expect(g.byBackend['echo-v2']!.succeeded).toBeGreaterThan(0);
      expect(r.message).toMatch(
        /^step 1 of 2 \(50%\) failed: the canary's success rate was 0% \(0 of \d+ RPCs succeeded, at least 99% needed\); rolled back to echo-v1 0, echo-v2 100, echo-v3 0$/,
      );
      expect(stdout).toMatch(
        /step 1 of 2 \(50%\): failed its analysis: gRPC RPCs to the canary: 0 of \d+ succeeded \(0%\) in [\d.]+ s; RPCs: echo-v1 \d+, echo-v2 \d+, echo-v3 \d+ \(\d+ failed\)/,
      );
      expect(stdout.trim().split('\n').at(-1)).toMatch(
        /^rolled back: .*success rate was 0% .* \(split now: echo-v1 0, echo-v2 100, echo-v3 0\)$/,
      );
    } finally {
      await console_.close();
    }
  }, 120_000);
});
