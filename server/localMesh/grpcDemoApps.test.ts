/**
 * The gRPC demo apps with real parts: grpc-echo servers answered by a plain @grpc/grpc-js client, and a
 * grpc-client app (a grpc-js-xds child process) configured by a real ADS server (serveXdsDir) on a
 * copy of examples/grpc-canary moved to addresses of its own.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cp as copyDir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../testing/startL7mp';
import { serveXdsDir, type XdsDirServer } from '../xds/serveXdsDir';
import { waitFor } from '../xds/testing/children';
import { type DemoApp, type DemoAppSpec, startDemoApp } from './demoApps';
import { WHO_PATH, whoDeserialize, whoSerialize } from './demoApps/whoService';

// 127.0.0.9x: no other test uses them (grep the tests for 127.0.0.9 before taking one).
const CLIENT_POD = '127.0.0.90';
const V1 = '127.0.0.91';
const V2 = '127.0.0.92';
const ECHO = '127.0.0.97';
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const REPO = path.resolve(__dirname, '..', '..');

/** One unary Who call with a plain (non-xDS) client; resolves with the answer or the status. */
function who(address: string): Promise<{ backend?: string; code?: grpc.status; details?: string }> {
  const client = new grpc.Client(address, grpc.credentials.createInsecure());
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      WHO_PATH,
      whoSerialize,
      whoDeserialize as (b: Buffer) => { backend: string },
      { hello: 1 },
      { deadline: Date.now() + 5000 },
      (err, res) => {
        client.close();
        resolve(err ? { code: err.code, details: err.details } : { backend: res!.backend });
      },
    );
  });
}

/** Whether `pid` runs (a zombie does not: an orphan's reaper may be slow, or missing in a container). */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** A port free on both addresses (a split's backends share their Services' targetPort). */
async function sharedFreePort(a: string, b: string): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = await freePort('tcp', a);
    if (await portFree(b, port)) return port;
  }
  throw new Error(`no port free on both ${a} and ${b}`);
}

function portFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen({ host, port, exclusive: true }, () => s.close(() => resolve(true)));
  });
}

describe('gRPC demo apps', () => {
  const apps: DemoApp[] = [];
  const start = async (spec: DemoAppSpec) => {
    const app = await startDemoApp(spec);
    apps.push(app);
    return app;
  };

  afterAll(async () => {
    await Promise.all(apps.map((a) => a.stop()));
  }, 20_000);

  it('grpc-echo answers {backend: name} on its address only, and records what it got', async () => {
    const port = await freePort('tcp', ECHO);
    const app = await start({ kind: 'grpc-echo', name: 'e1', address: ECHO, port });
    expect(app.listening).toEqual({ address: ECHO, port });
    expect(await who(`${ECHO}:${port}`)).toEqual({ backend: 'e1' });
    expect(app.received()).toEqual([
      {
        at: expect.stringMatching(ISO),
        from: expect.stringMatching(/^127\.0\.0\.1:\d+$/),
        payload: '{"hello":1}',
      },
    ]);
    expect((await who(`127.0.0.1:${port}`)).code).toBe(grpc.status.UNAVAILABLE);
    await app.stop();
    expect((await who(`${ECHO}:${port}`)).code).toBe(grpc.status.UNAVAILABLE);
  });

  it('grpc-echo with a fail percent fails exactly that share of calls with UNAVAILABLE', async () => {
    const port = await freePort('tcp', ECHO);
    const app = await start({ kind: 'grpc-echo', name: 'e2', address: ECHO, port, failPercent: 30 });
    const answers = [];
    for (let i = 0; i < 10; i++) answers.push(await who(`${ECHO}:${port}`));
    const failed = answers.filter((a) => a.code !== undefined);
    expect(failed).toHaveLength(3);
    expect(failed[0]).toEqual({
      code: grpc.status.UNAVAILABLE,
      details: 'e2 fails 30% of calls (meshdeck.l7mp.io/app-fail-percent)',
    });
    expect(answers.filter((a) => a.backend === 'e2')).toHaveLength(7);
    expect(app.received().filter((r) => r.error?.startsWith('UNAVAILABLE: e2 fails 30%'))).toHaveLength(3);
    await expect(
      startDemoApp({ kind: 'grpc-echo', name: 'x', address: ECHO, port: 0, failPercent: 101 }),
    ).rejects.toThrow(/0-100/);
    await expect(startDemoApp({ kind: 'grpc-echo', name: 'x', address: '0.0.0.0', port: 0 })).rejects.toThrow(
      /not an IPv4 loopback address/,
    );
  });

  describe('grpc-client over a real ADS server', () => {
    let tmp: string;
    let served: XdsDirServer | undefined;
    let port: number;

    beforeAll(async () => {
      tmp = await mkdtemp(path.join(os.tmpdir(), 'md-grpc-apps-'));
      port = await sharedFreePort(V1, V2);
      const dir = path.join(tmp, 'mesh');
      await copyDir(path.join(REPO, 'examples', 'grpc-canary'), dir, { recursive: true });
      const file = path.join(dir, 'cluster.yaml');
      const text = (await readFile(file, 'utf8'))
        .replaceAll('127.0.0.70', CLIENT_POD)
        .replaceAll('127.0.0.71', V1)
        .replaceAll('127.0.0.72', V2)
        .replaceAll('targetPort: 50051', `targetPort: ${port}`);
      await writeFile(file, text);
      served = await serveXdsDir({
        dir,
        port: 0,
        insecure: true,
        logger: { info: () => {}, warn: () => {} },
      });
      await start({ kind: 'grpc-echo', name: 'echo-v1-a', address: V1, port });
      await start({ kind: 'grpc-echo', name: 'echo-v2-a', address: V2, port, failPercent: 100 });
    }, 60_000);

    afterAll(async () => {
      await served?.stop();
      if (tmp) await rm(tmp, { recursive: true, force: true });
    }, 20_000);

    it('calls xds:///echo at its rate, recording each backend and each error; stop kills its process', async () => {
      const app = await start({
        kind: 'grpc-client',
        name: 'c1',
        target: 'echo',
        ratePerSecond: 50,
        ads: `127.0.0.1:${served!.port}`,
        nodeId: 'default/grpc-client',
      });
      expect(app.listening).toEqual({ target: 'xds:///echo' });
      expect(app.pid).toBeGreaterThan(0);
      const records = await waitFor(
        'answers from echo-v1-a and UNAVAILABLE from echo-v2-a',
        () => {
          const r = app.received();
          return r.some((x) => x.payload === 'echo-v1-a') && r.some((x) => x.error) ? r : undefined;
        },
        30_000,
        100,
      );
      const ok = records.find((r) => r.payload === 'echo-v1-a')!;
      expect(ok).toEqual({ at: expect.stringMatching(ISO), from: `${V1}:${port}`, payload: 'echo-v1-a' });
      const bad = records.find((r) => r.error)!;
      expect(bad).toEqual({
        at: expect.stringMatching(ISO),
        from: `${V2}:${port}`,
        payload: '',
        error: 'UNAVAILABLE: echo-v2-a fails 100% of calls (meshdeck.l7mp.io/app-fail-percent)',
      });
      await app.stop();
      expect(alive(app.pid!)).toBe(false);
    }, 60_000);

    it('refuses a bad rate or target without starting a process', async () => {
      const base = { kind: 'grpc-client' as const, name: 'x', ads: '127.0.0.1:1', nodeId: 'default/x' };
      await expect(startDemoApp({ ...base, target: 'echo', ratePerSecond: 201 })).rejects.toThrow(/200/);
      await expect(startDemoApp({ ...base, target: 'a/b', ratePerSecond: 1 })).rejects.toThrow(/target/);
    });
  });

  it('the client process dies with its parent, even a SIGKILLed one (no orphans)', async () => {
    const script = `
      import { startDemoApp } from ${JSON.stringify(path.join(__dirname, 'demoApps', 'index.ts'))};
      const app = await startDemoApp({ kind: 'grpc-client', name: 'o', target: 'echo', ratePerSecond: 5,
        ads: '127.0.0.1:1', nodeId: 'default/orphan' });
      console.log('pid ' + app.pid);
      setInterval(() => {}, 1000);`;
    const parent = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      let out = '';
      parent.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      const pid = Number(
        (await waitFor('the child pid', () => /pid (\d+)/.exec(out)?.[1], 40_000, 50)) as string,
      );
      expect(alive(pid)).toBe(true);
      parent.kill('SIGKILL');
      await waitFor('the orphaned client process to exit', () => !alive(pid), 10_000, 50);
    } finally {
      parent.kill('SIGKILL');
    }
  }, 60_000);
});
