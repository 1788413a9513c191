// `meshdeck serve --kubeconfig` as users run it (node bin/meshdeck.mjs in child processes) against a REAL
// kube-apiserver: two replicas elect one leader through the Lease; SIGTERM to the leader releases it and the
// other takes over. --no-xds: nothing binds a fixed port. The command line itself is checked first.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseArgs, UsageError } from '../cli/args';
import { freePort } from '../testing/startL7mp';
import { LEASE_NAME } from './kubeControlPlane';
import { installCrds, NS, until } from './replicasTestKit';
import { type KubeApiServer, startKubeApiServer } from './testing/kubeApiServer';

const BIN = path.resolve(__dirname, '../../bin/meshdeck.mjs');

interface Serve {
  id: string;
  child: ChildProcess;
  out: string;
  exit?: number | null;
}

let kube: KubeApiServer;
let coordination: k8s.CoordinationV1Api;
const serves: Serve[] = [];
const tmpDirs: string[] = [];

async function serve(id: string): Promise<Serve> {
  // Each replica is its own pod: its own state directory, and its own console port when the console is
  // built (nothing else binds a port with --no-xds).
  const stateDir = await mkdtemp(path.join(os.tmpdir(), `md-serve-${id}-`));
  tmpDirs.push(stateDir);
  const port = String(await freePort('tcp'));
  const child = spawn(
    process.execPath,
    [BIN, 'serve', '--kubeconfig', kube.admin.kubeconfigPath, '--namespace', NS, '--no-xds', '--port', port],
    {
      env: { ...process.env, POD_NAME: id, POD_NAMESPACE: NS, MESHDECK_STATE_DIR: stateDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const s: Serve = { id, child, out: '' };
  child.stdout!.on('data', (d: Buffer) => (s.out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (s.out += d.toString()));
  child.on('exit', (code) => (s.exit = code));
  serves.push(s);
  return s;
}

const holder = async () =>
  (await coordination.readNamespacedLease({ name: LEASE_NAME, namespace: NS })).spec?.holderIdentity ?? '';
const context = () => serves.map((s) => `--- ${s.id}:\n${s.out.slice(-3000)}`).join('\n');

beforeAll(async () => {
  kube = await startKubeApiServer();
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kube.admin.kubeconfigPath);
  coordination = kc.makeApiClient(k8s.CoordinationV1Api);
  await installCrds(kube, kc);
}, 240_000);

afterAll(async () => {
  for (const s of serves) if (s.exit === undefined) s.child.kill('SIGKILL');
  await kube?.stop();
  for (const d of tmpDirs) await rm(d, { recursive: true, force: true });
});

describe('meshdeck serve --kubeconfig', () => {
  it('parses --kubeconfig and --namespace, and refuses them where they make no sense', () => {
    expect(parseArgs(['serve', '--kubeconfig', '/k', '--namespace', 'mesh', '--no-xds'])).toMatchObject({
      command: 'serve',
      kube: { kubeconfig: '/k', namespace: 'mesh' },
      xds: false,
    });
    expect(parseArgs(['serve', 'examples/x'])).not.toHaveProperty('kube');
    expect(() => parseArgs(['serve', '--namespace', 'mesh'])).toThrow(UsageError);
    expect(() => parseArgs(['serve', 'DIR', '--kubeconfig', '/k'])).toThrow(/excludes DIR/);
  });

  it(
    'two replicas: one leads; SIGTERM to the leader releases the Lease and the other takes over',
    { timeout: 240_000 },
    async () => {
      const [r1, r2] = await Promise.all([serve('r1'), serve('r2')]);
      for (const s of [r1, r2]) {
        // With a built console, Next starts first (slow on a loaded machine).
        await until(
          `${s.id} ready`,
          () => /informers: (\d+)\/\1 synced, ready/.test(s.out),
          120_000,
          context,
        );
        expect(s.out).toContain(`replica ${s.id}, lease ${NS}/${LEASE_NAME}`);
      }
      const first = await until('a holder', async () => (await holder()) || undefined, 20_000, context);
      expect(['r1', 'r2']).toContain(first);
      const leader = first === 'r1' ? r1 : r2;
      const other = leader === r1 ? r2 : r1;
      leader.child.kill('SIGTERM');
      await until(`${leader.id} exits`, () => leader.exit !== undefined, 30_000, context);
      expect(leader.exit).toBe(0);
      expect(leader.out).toContain('SIGTERM: leaving the election');
      await until(`${other.id} holds the lease`, async () => (await holder()) === other.id, 20_000, context);
      expect(other.exit).toBeUndefined();
      other.child.kill('SIGTERM');
      await until(`${other.id} exits`, () => other.exit !== undefined, 30_000, context);
      expect(other.exit).toBe(0);
      // Released on the way out: no holder left behind.
      expect(await holder()).toBe('');
    },
  );
});
