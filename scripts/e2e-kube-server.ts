/**
 * The third server of the browser tests (playwright.config.ts, e2e/console-cluster.spec.ts): a REAL
 * kube-apiserver + etcd on loopback (server/kube/testing/kubeApiServer.ts, the binaries from
 * scripts/kube-build.sh) holding seed Example 2 as custom resources, three REAL l7mp processes as its
 * proxy pods (status.podIP set through the status subresource, as a kubelet would), and
 * `meshdeck serve --kubeconfig` on port 3102 (token e2e-token) in Kubernetes mode.
 *
 * The console user of a token session is `local-admin`; RBAC lets it apply the mesh kinds in `default`
 * through the Role/RoleBinding `e2e-mesh-writer`, which a spec may delete to see the console offer a pull
 * request instead. The spec finds the admin kubeconfig in the info file KUBE_E2E_INFO names.
 *
 *   node --import tsx scripts/e2e-kube-server.ts    (E2E_KUBE_PORT, default 3102)
 *
 * Runs until SIGTERM/SIGINT, then stops meshdeck, the proxies and the API server and removes its temp dirs.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as k8s from '@kubernetes/client-node';
import { KUBE_E2E_INFO, KUBE_E2E_WRITER_ROLE } from '../e2e/kubeE2eInfo';
import { applySeed, installCrds, localizer } from '../server/kube/replicasTestKit';
import { type KubeApiServer, kubeRequest, startKubeApiServer } from '../server/kube/testing/kubeApiServer';
import { freePort, type L7mpProcess, startL7mp } from '../server/testing/startL7mp';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PORT = Number(process.env.E2E_KUBE_PORT ?? 3102);

/** How often a crashed l7mp proxy is started again (see supervise in main). */
const MAX_RESTARTS = 20;

/** Says whether the control plane configured a restarted proxy again (its listeners beyond the API's), within 30 s. */
async function reconfigured(pod: string, proc: L7mpProcess): Promise<void> {
  const start = Date.now();
  for (let i = 0; i < 60; i++) {
    await new Promise((r) => setTimeout(r, 500));
    try {
      const res = await fetch(`${proc.apiUrl}/api/v1/listeners`);
      const listeners = (await res.json()) as unknown[];
      if (listeners.length > 1) {
        process.stderr.write(
          `e2e-kube-server: l7mp ${pod} configured again after ${Date.now() - start} ms (${listeners.length} listeners)\n`,
        );
        return;
      }
    } catch {
      // Gone again, or not answering yet.
    }
  }
  process.stderr.write(`e2e-kube-server: l7mp ${pod} was not configured again within 30 s\n`);
}

/** Golden pod address -> a loopback address of its own (the l7mp REST API binds every interface). */
const PROXIES: Record<string, { goldenIp: string; ip: string }> = {
  'gateway-0': { goldenIp: '10.0.1.1', ip: '127.0.0.244' },
  'worker-0': { goldenIp: '10.0.4.1', ip: '127.0.0.245' },
  'worker-1': { goldenIp: '10.0.4.2', ip: '127.0.0.246' },
};

async function main(): Promise<void> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'md-e2e-kube-'));
  let kube: KubeApiServer | undefined;
  const procs: L7mpProcess[] = [];
  let serve: ChildProcess | undefined;
  let stopping: Promise<void> | undefined;
  const stop = (code: number) => {
    stopping ??= (async () => {
      if (serve && serve.exitCode === null && serve.signalCode === null) {
        const exited = new Promise((r) => serve!.once('exit', r));
        serve.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
      }
      await Promise.all(procs.map((p) => p.stop().catch(() => undefined)));
      await kube?.stop().catch(() => undefined);
      await rm(tmp, { recursive: true, force: true });
      await rm(KUBE_E2E_INFO, { force: true });
      process.exit(code);
    })();
    return stopping;
  };
  process.on('SIGTERM', () => void stop(0));
  process.on('SIGINT', () => void stop(0));

  try {
    kube = await startKubeApiServer();
    // A proxy that dies under a test says why, and is started again on the same API port, as the
    // kubelet restarts a crashed container (at most MAX_RESTARTS times). The gateway does crash: l7mp
    // 0.5.7 deletes a session whose pipeline setup failed twice ("Cannot delete session: Unknown
    // session"), about 12 s after a listener change leaves Example 2's rendezvous without its pair.
    const supervise = (pod: string, i: number, restarts: number) => {
      const proc = procs[i]!;
      void proc.exited.then(async ({ code, signal, stopped }) => {
        if (stopped || stopping) return;
        process.stderr.write(
          `e2e-kube-server: l7mp ${pod} (pid ${proc.pid}) exited (${code ?? signal}); its last output:\n` +
            `${proc.logs().slice(-8000)}\n`,
        );
        if (restarts >= MAX_RESTARTS) return;
        try {
          procs[i] = await startL7mp({ apiPort: proc.apiPort });
          process.stderr.write(`e2e-kube-server: l7mp ${pod} restarted (pid ${procs[i]!.pid})\n`);
          supervise(pod, i, restarts + 1);
          void reconfigured(pod, procs[i]!);
        } catch (e) {
          process.stderr.write(`e2e-kube-server: l7mp ${pod} did not restart: ${(e as Error).message}\n`);
        }
      });
    };
    for (const pod of Object.keys(PROXIES)) {
      procs.push(await startL7mp());
      supervise(pod, procs.length - 1, 0);
    }
    const ports: Record<number, number> = {};
    for (const p of [8001, 8002, 19000, 19001]) ports[p] = await freePort('udp', '0.0.0.0');
    const localize = localizer(
      Object.fromEntries(Object.values(PROXIES).map((p) => [p.goldenIp, p.ip])),
      ports,
    );
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(kube.admin.kubeconfigPath);
    await installCrds(kube, kc);
    const pods = Object.keys(PROXIES);
    await applySeed(
      kc,
      'seed-example-2',
      localize,
      Object.fromEntries(pods.map((pod, i) => [pod, procs[i]!.apiPort])),
    );
    const rbac = '/apis/rbac.authorization.k8s.io/v1/namespaces/default';
    for (const [collection, body] of [
      [
        'roles',
        {
          metadata: { name: KUBE_E2E_WRITER_ROLE },
          rules: [
            {
              apiGroups: ['msm.l7mp.io'],
              resources: ['virtualservices', 'routes', 'targets'],
              verbs: ['get', 'list', 'create', 'patch', 'delete'],
            },
          ],
        },
      ],
      [
        'rolebindings',
        {
          metadata: { name: KUBE_E2E_WRITER_ROLE },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: KUBE_E2E_WRITER_ROLE },
          subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'local-admin' }],
        },
      ],
    ] as const) {
      const res = await kubeRequest(kube.url, kube.admin, 'POST', `${rbac}/${collection}`, body);
      if (res.status !== 201) throw new Error(`${collection}: HTTP ${res.status} ${res.text}`);
    }
    await writeFile(
      KUBE_E2E_INFO,
      JSON.stringify({
        url: kube.url,
        admin: kube.admin,
        ports,
        proxies: Object.fromEntries(
          pods.map((pod, i) => [pod, { ...PROXIES[pod], apiPort: procs[i]!.apiPort }]),
        ),
      }),
      { mode: 0o600 },
    );
    process.stderr.write(`e2e-kube-server: kube-apiserver at ${kube.url}, seed Example 2 applied\n`);

    serve = spawn(
      process.execPath,
      [
        'bin/meshdeck.mjs',
        'serve',
        '--kubeconfig',
        kube.admin.kubeconfigPath,
        '--port',
        String(PORT),
        '--token',
        'e2e-token',
        '--no-xds',
      ],
      {
        cwd: ROOT,
        env: { ...process.env, MESHDECK_STATE_DIR: path.join(tmp, 'state'), NEXT_TELEMETRY_DISABLED: '1' },
        stdio: 'inherit',
      },
    );
    serve.once('exit', (code, signal) => {
      if (!stopping) {
        process.stderr.write(`e2e-kube-server: meshdeck serve exited (${code ?? signal})\n`);
        void stop(1);
      }
    });
  } catch (e) {
    process.stderr.write(`e2e-kube-server: ${e instanceof Error ? e.message : String(e)}\n`);
    await stop(1);
  }
}

void main();
