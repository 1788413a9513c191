import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../testing/startL7mp';
import { type DemoApp, type DemoAppSpec, startDemoApp } from './demoApps';
import { loadWs, type WsSocket } from './demoApps/loadWs';
import { L7mpSupervisor } from './L7mpSupervisor';

// Apps on 127.0.0.2x, test clients on 127.0.0.12x (prepareLocalMesh keeps 100-199 for clients).
const APP = (n: number) => `127.0.0.${20 + n}`;
const CLIENT = (n: number) => `127.0.0.${120 + n}`;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** Sends `payload` from `from` to `to` every `retryMs` until the first answer; fails after `timeoutMs`. */
async function udpAsk(
  to: { address: string; port: number },
  payload: string,
  options: { from?: string; timeoutMs?: number; retryMs?: number } = {},
): Promise<{ text: string; from: string; localPort: number }> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, options.from ?? CLIENT(1), () => resolve()));
  try {
    return await new Promise((resolve, reject) => {
      const send = () => socket.send(payload, to.port, to.address);
      // The first datagram of a new flow can be dropped while l7mp sets up the session (note §7).
      const retry = setInterval(send, options.retryMs ?? 300);
      const timer = setTimeout(() => {
        clearInterval(retry);
        reject(new Error(`no answer to "${payload}" from ${to.address}:${to.port}`));
      }, options.timeoutMs ?? 8000);
      socket.once('message', (msg, rinfo) => {
        clearInterval(retry);
        clearTimeout(timer);
        resolve({
          text: msg.toString(),
          from: `${rinfo.address}:${rinfo.port}`,
          localPort: socket.address().port,
        });
      });
      send();
    });
  } finally {
    socket.close();
  }
}

/** Opens a WebSocket, sends `payload` once open and resolves with the first message. */
async function wsAsk(url: string, payload: string | Buffer, timeoutMs = 8000): Promise<string | Buffer> {
  const WebSocket = loadWs();
  const ws: WsSocket = new WebSocket(url);
  try {
    return await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer from ${url}`)), timeoutMs);
      ws.on('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
      ws.on('close', (code) => {
        clearTimeout(timer);
        reject(new Error(`${url} closed the connection (${code})`));
      });
      ws.on('open', () => ws.send(payload));
      ws.on('message', (data) => {
        clearTimeout(timer);
        resolve(data);
      });
    });
  } finally {
    ws.terminate();
  }
}

/** Writes `payload` to a UNIX socket and resolves with the first chunk read back. */
async function udsAsk(socketPath: string, payload: string, timeoutMs = 5000): Promise<string> {
  const conn = net.connect({ path: socketPath });
  try {
    return await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer from ${socketPath}`)), timeoutMs);
      conn.once('error', reject);
      conn.once('connect', () => conn.write(payload));
      conn.once('data', (d) => {
        clearTimeout(timer);
        resolve(d.toString());
      });
    });
  } finally {
    conn.destroy();
  }
}

async function post(apiUrl: string, apiPath: string, body: unknown): Promise<void> {
  const res = await fetch(`${apiUrl}${apiPath}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(5000),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`POST ${apiPath}: ${res.status} ${text}`);
}

describe('demo apps', () => {
  let dir: string;
  const apps: DemoApp[] = [];
  const start = async (spec: DemoAppSpec) => {
    const app = await startDemoApp(spec);
    apps.push(app);
    return app;
  };

  beforeAll(async () => {
    // Short: UNIX socket paths are limited to 107 bytes.
    dir = await mkdtemp(path.join(os.tmpdir(), 'mdk-apps-'));
  });

  afterAll(async () => {
    await Promise.all(apps.map((a) => a.stop()));
    await rm(dir, { recursive: true, force: true });
  });

  it('udp-echo answers name(payload) to the sender and records it', async () => {
    const port = await freePort('udp', APP(1));
    const app = await start({ kind: 'udp-echo', name: 'u1', address: APP(1), port });
    expect(app.listening).toEqual({ address: APP(1), port });
    const answer = await udpAsk({ address: APP(1), port }, 'x', { from: CLIENT(1) });
    expect(answer.text).toBe('u1(x)');
    expect(answer.from).toBe(`${APP(1)}:${port}`);
    expect(app.received()).toEqual([
      { at: expect.stringMatching(ISO), from: `${CLIENT(1)}:${answer.localPort}`, payload: 'x' },
    ]);
  });

  it('uds-echo answers name(chunk), creating the folder and replacing a stale socket', async () => {
    const socketPath = path.join(dir, 'pods', 'default', 'p1', 'app.sock');
    // A stale socket: its server was SIGKILLed, so nobody removed the file.
    const stale = path.join(dir, 'stale.sock');
    const holder = spawn(
      process.execPath,
      ['-e', `require('net').createServer().listen(${JSON.stringify(stale)}, () => console.log('up'))`],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await once(holder.stdout!, 'data');
    holder.kill('SIGKILL');
    await once(holder, 'exit');

    const app = await start({ kind: 'uds-echo', name: 'd1', path: stale });
    expect(await udsAsk(stale, 'm')).toBe('d1(m)');
    expect(app.received()).toEqual([
      { at: expect.stringMatching(ISO), from: `unix:${stale}#1`, payload: 'm' },
    ]);

    const nested = await start({ kind: 'uds-echo', name: 'd2', path: socketPath });
    expect(await udsAsk(socketPath, 'n')).toBe('d2(n)');
    // A live socket is someone else's: refuse.
    await expect(startDemoApp({ kind: 'uds-echo', name: 'd3', path: socketPath })).rejects.toThrow(
      /another process is listening/,
    );
    const file = path.join(dir, 'not-a-socket');
    await writeFile(file, 'x');
    await expect(startDemoApp({ kind: 'uds-echo', name: 'd4', path: file })).rejects.toThrow(/not a socket/);
    await nested.stop();
    await expect(udsAsk(socketPath, 'gone', 1000)).rejects.toThrow();
  });

  it('websocket-echo answers name(message) in the frame type it got', async () => {
    const port = await freePort('tcp', APP(2));
    const app = await start({ kind: 'websocket-echo', name: 'w1', address: APP(2), port });
    expect(await wsAsk(`ws://${APP(2)}:${port}/`, 'hi')).toBe('w1(hi)');
    const binary = await wsAsk(`ws://${APP(2)}:${port}/`, Buffer.from('bin'));
    expect(Buffer.isBuffer(binary) && binary.toString()).toBe('w1(bin)');
    expect(app.received().map((r) => r.payload)).toEqual(['hi', 'bin']);
    // Bound to the given address only.
    await expect(wsAsk(`ws://127.0.0.1:${port}/`, 'no', 2000)).rejects.toThrow(/ECONNREFUSED/);
  });

  it('jsonsocket-echo answers the JSONSocket handshake, then echoes and records the labels', async () => {
    const port = await freePort('udp', APP(3));
    const app = await start({ kind: 'jsonsocket-echo', name: 'j1', address: APP(3), port });
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, CLIENT(2), () => resolve()));
    const ask = (payload: string) =>
      new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no answer')), 3000);
        socket.once('message', (m) => {
          clearTimeout(timer);
          resolve(m.toString());
        });
        socket.send(payload, port, APP(3));
      });
    try {
      expect(JSON.parse(await ask('hello'))).toMatchObject({ JSONSocketStatus: 400 });
      expect(JSON.parse(await ask(JSON.stringify({ JSONSocketVersion: 2 })))).toMatchObject({
        JSONSocketStatus: 505,
      });
      const header = { JSONSocketVersion: 1, labels: { session_id: '7' } };
      expect(JSON.parse(await ask(JSON.stringify(header)))).toEqual({
        JSONSocketVersion: 1,
        JSONSocketStatus: 200,
        JSONSocketMessage: 'OK',
      });
      expect(await ask('x')).toBe('j1(x)');
      expect(await ask('y')).toBe('j1(y)');
    } finally {
      socket.close();
    }
    expect(app.received()).toEqual([
      {
        at: expect.stringMatching(ISO),
        from: expect.stringMatching(/^127\.0\.0\.122:\d+$/),
        payload: 'x',
        labels: { session_id: '7' },
      },
      {
        at: expect.stringMatching(ISO),
        from: expect.stringMatching(/^127\.0\.0\.122:\d+$/),
        payload: 'y',
        labels: { session_id: '7' },
      },
    ]);
  });

  it('transcoder answers tc(payload), over UDS by default and over UDP given an address', async () => {
    const socketPath = path.join(dir, 'tc.sock');
    const uds = await start({ kind: 'transcoder', name: 't1', path: socketPath });
    expect(await udsAsk(socketPath, 'm')).toBe('tc(m)');
    expect(uds.received()).toHaveLength(1);
    const port = await freePort('udp', APP(4));
    await start({ kind: 'transcoder', name: 't2', address: APP(4), port });
    expect((await udpAsk({ address: APP(4), port }, 'k')).text).toBe('tc(k)');
  });

  it('refuses to bind anything but a loopback address, or a relative socket path', async () => {
    for (const address of ['0.0.0.0', '10.0.0.1', '::', 'localhost']) {
      await expect(startDemoApp({ kind: 'udp-echo', name: 'x', address, port: 0 })).rejects.toThrow(
        /not an IPv4 loopback address/,
      );
    }
    await expect(startDemoApp({ kind: 'uds-echo', name: 'x', path: 'rel.sock' })).rejects.toThrow(/absolute/);
  });

  describe('through a supervised l7mp', () => {
    let sup: L7mpSupervisor;
    let apiUrl: string;

    beforeAll(async () => {
      sup = new L7mpSupervisor({ stateDir: path.join(dir, 'state'), warmSpares: 0 });
      const ready = await sup.start({ id: 'mesh/proxy', apiPort: await freePort('tcp') });
      apiUrl = ready.apiUrl;
    }, 60_000);

    afterAll(async () => {
      await sup?.stopAll();
    }, 30_000);

    it('UDP listener -> UDP cluster -> udp-echo', async () => {
      const appPort = await freePort('udp', APP(5));
      const app = await start({ kind: 'udp-echo', name: 'echo-a', address: APP(5), port: appPort });
      await post(apiUrl, '/api/v1/clusters', {
        cluster: {
          name: 'echo-a',
          spec: { protocol: 'UDP', port: appPort },
          endpoints: [{ name: `echo-a.${APP(5)}`, spec: { address: APP(5) } }],
        },
      });
      const port = await freePort('udp', APP(6));
      await post(apiUrl, '/api/v1/listeners', {
        listener: {
          name: 'udp-a',
          spec: { protocol: 'UDP', port, address: APP(6) },
          rules: [{ action: { route: { destination: 'echo-a' } } }],
        },
      });
      const answer = await udpAsk({ address: APP(6), port }, 'x', { from: CLIENT(3) });
      expect(answer).toMatchObject({ text: 'echo-a(x)', from: `${APP(6)}:${port}` });
      // The app saw the proxy, not the client.
      expect(app.received()[0]?.payload).toBe('x');
      expect(app.received()[0]?.from).not.toContain(CLIENT(3));
    });

    it('WebSocket listener -> UnixDomainSocket cluster -> uds-echo, and -> transcoder', async () => {
      for (const [kind, name] of [
        ['uds-echo', 'uds-b'],
        ['transcoder', 'tc-b'],
      ] as const) {
        const socketPath = path.join(dir, 'pods', `${name}.sock`);
        const app = await start({ kind, name, path: socketPath } as DemoAppSpec);
        await post(apiUrl, '/api/v1/clusters', {
          cluster: {
            name,
            spec: { protocol: 'UnixDomainSocket' },
            endpoints: [{ name: `${name}.ep0`, spec: { address: socketPath } }],
          },
        });
        const port = await freePort('tcp');
        await post(apiUrl, '/api/v1/listeners', {
          listener: {
            name: `ws-${name}`,
            spec: { protocol: 'WebSocket', port },
            rules: [{ action: { route: { destination: name } } }],
          },
        });
        const answer = await wsAsk(`ws://127.0.0.1:${port}/`, 'm');
        expect(answer.toString()).toBe(kind === 'transcoder' ? 'tc(m)' : 'uds-b(m)');
        expect(app.received().map((r) => r.payload)).toEqual(['m']);
      }
    });

    it('UDP listener -> WebSocket cluster -> websocket-echo', async () => {
      const appPort = await freePort('tcp', APP(7));
      const app = await start({ kind: 'websocket-echo', name: 'ws-c', address: APP(7), port: appPort });
      await post(apiUrl, '/api/v1/clusters', {
        cluster: {
          name: 'ws-c',
          spec: { protocol: 'WebSocket', port: appPort },
          endpoints: [{ name: `ws-c.${APP(7)}`, spec: { address: APP(7) } }],
        },
      });
      const port = await freePort('udp', APP(6));
      await post(apiUrl, '/api/v1/listeners', {
        listener: {
          name: 'udp-c',
          spec: { protocol: 'UDP', port, address: APP(6) },
          rules: [{ action: { route: { destination: 'ws-c' } } }],
        },
      });
      expect((await udpAsk({ address: APP(6), port }, 'x', { from: CLIENT(4) })).text).toBe('ws-c(x)');
      expect(app.received()[0]?.payload).toBe('x');
    });

    it('UDP listener with a label rewrite -> JSONSocket/UDP cluster -> jsonsocket-echo sees the label', async () => {
      const appPort = await freePort('udp', APP(8));
      const app = await start({ kind: 'jsonsocket-echo', name: 'js-d', address: APP(8), port: appPort });
      await post(apiUrl, '/api/v1/clusters', {
        cluster: {
          name: 'js-d',
          // Without `header`, l7mp sends {"JSONSocketVersion":1} only (note §10, fix 1).
          spec: {
            protocol: 'JSONSocket',
            transport: { protocol: 'UDP', port: appPort },
            header: [{ path: { from: '/labels', to: '/labels' } }],
          },
          endpoints: [{ name: `js-d.${APP(8)}`, spec: { address: APP(8) } }],
        },
      });
      const port = await freePort('udp', APP(6));
      await post(apiUrl, '/api/v1/listeners', {
        listener: {
          name: 'udp-d',
          spec: { protocol: 'UDP', port, address: APP(6) },
          rules: [
            {
              action: {
                rewrite: [{ path: '/labels/session_id', value: '42' }],
                route: { destination: 'js-d' },
              },
            },
          ],
        },
      });
      expect((await udpAsk({ address: APP(6), port }, 'x', { from: CLIENT(5) })).text).toBe('js-d(x)');
      expect(app.received()[0]).toMatchObject({ payload: 'x', labels: { session_id: '42' } });
    });
  });
});
