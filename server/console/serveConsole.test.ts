import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getConsoleAuth } from './consoleAuth';
import { getConsoleContext } from './consoleContext';
import {
  consoleUrl,
  findConsoleToken,
  gitSyncEveryMs,
  resolveConsoleToken,
  runtimeFile,
  SERVER_LAYOUT_LATER_ENV,
  SERVER_LAYOUTS_ENV,
  serveConsole,
  serverLayoutOptions,
} from './serveConsole';

let tmp: string;
beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'md-serve-console-'));
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('the console token of meshdeck serve', () => {
  it('is --token, else $MESHDECK_CONSOLE_TOKEN, else random; an unusable one is refused with where it came from', () => {
    expect(resolveConsoleToken('flag-token', { MESHDECK_CONSOLE_TOKEN: 'env-token1' })).toBe('flag-token');
    expect(resolveConsoleToken(undefined, { MESHDECK_CONSOLE_TOKEN: 'env-token1' })).toBe('env-token1');
    const random = resolveConsoleToken(undefined, {});
    expect(random).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(resolveConsoleToken(undefined, {})).not.toBe(random);
    expect(() => resolveConsoleToken(undefined, { MESHDECK_CONSOLE_TOKEN: 'a b' })).toThrow(
      /^MESHDECK_CONSOLE_TOKEN: a console token must be/,
    );
  });

  it('goes into the printed URL', () => {
    expect(consoleUrl('127.0.0.1', 3100, 'e2e-token')).toBe('http://127.0.0.1:3100/?token=e2e-token');
    expect(consoleUrl('::1', 3100, 'e2e-token')).toBe('http://[::1]:3100/?token=e2e-token');
  });
});

describe('serverLayoutOptions', () => {
  it('is off only for MESHDECK_SERVER_LAYOUTS=0, and takes a delay of ms >= 0', () => {
    expect(serverLayoutOptions({ [SERVER_LAYOUTS_ENV]: '0' })).toBeUndefined();
    expect(serverLayoutOptions({ [SERVER_LAYOUTS_ENV]: '1' })).toEqual({});
    expect(serverLayoutOptions({})).toEqual({});
    expect(serverLayoutOptions({ [SERVER_LAYOUT_LATER_ENV]: '1000' })).toEqual({ laterMs: 1000 });
    expect(serverLayoutOptions({ [SERVER_LAYOUT_LATER_ENV]: '0' })).toEqual({ laterMs: 0 });
    for (const bad of ['', ' ', 'soon', '-5', 'Infinity']) {
      expect(serverLayoutOptions({ [SERVER_LAYOUT_LATER_ENV]: bad })).toEqual({});
    }
  });
});

describe('gitSyncEveryMs', () => {
  it('is MESHDECK_GIT_SYNC_INTERVAL_S in ms (0: off), 180 s when unset or unusable', () => {
    expect(gitSyncEveryMs({})).toBe(180_000);
    expect(gitSyncEveryMs({ MESHDECK_GIT_SYNC_INTERVAL_S: '30' })).toBe(30_000);
    expect(gitSyncEveryMs({ MESHDECK_GIT_SYNC_INTERVAL_S: '0' })).toBe(0);
    for (const bad of ['', ' ', 'often', '-1', 'Infinity']) {
      expect(gitSyncEveryMs({ MESHDECK_GIT_SYNC_INTERVAL_S: bad })).toBe(180_000);
    }
  });
});

/** A console on 127.0.0.1:`port` with its state in the test's folder. */
const options = (port: number, localMesh: boolean) => ({
  meshDir: path.join(tmp, 'mesh'),
  host: '127.0.0.1',
  port,
  token: 'serve-test-token',
  stateDir: tmp,
  examplesDir: path.join(tmp, 'examples'),
  localMesh,
});

describe('serveConsole', () => {
  it('installs sign-in and the draft, writes a 0600 runtime file for meshdeck probe, and removes it all on dispose', async () => {
    const served = await serveConsole(options(3999, true));
    try {
      expect(served.url).toBe('http://127.0.0.1:3999/?token=serve-test-token');
      expect(getConsoleAuth()!.login('serve-test-token')).toBeDefined();
      expect(getConsoleAuth()!.login('other-token')).toBeUndefined();
      expect(getConsoleContext()!.drafts.meshDir).toBe(path.join(tmp, 'mesh'));
      expect(getConsoleContext()!.layouts).toBeDefined();
      // Rollouts run on the local mesh, once its control plane runs in this process (not in this test).
      expect(getConsoleContext()!.rollouts?.unavailable()).toBe(
        'the local mesh is not running in this process',
      );
      const file = runtimeFile(tmp, 3999);
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({
        url: served.url,
        token: 'serve-test-token',
        pid: process.pid,
      });
      expect(await findConsoleToken(tmp, 3999)).toBe('serve-test-token');
      expect(await findConsoleToken(tmp, 3998)).toBeUndefined();
    } finally {
      await served.dispose();
    }
    expect(getConsoleAuth()).toBeUndefined();
    expect(getConsoleContext()).toBeUndefined();
    expect(await findConsoleToken(tmp, 3999)).toBeUndefined();
  });

  it('has no rollouts where the console does not serve the local mesh', async () => {
    const served = await serveConsole(options(3996, false));
    try {
      expect(getConsoleContext()!.drafts).toBeDefined();
      expect(getConsoleContext()!.rollouts).toBeUndefined();
    } finally {
      await served.dispose();
    }
  });

  it('a runtime file left by a server that is gone is ignored', async () => {
    const child = spawn(process.execPath, ['-e', '0']);
    const pid = child.pid!;
    await new Promise((r) => child.once('exit', r));
    await mkdir(path.join(tmp, 'console'), { recursive: true });
    await writeFile(runtimeFile(tmp, 3997), JSON.stringify({ url: 'x', token: 'stale-token', pid }));
    expect(await findConsoleToken(tmp, 3997)).toBeUndefined();
    await writeFile(
      runtimeFile(tmp, 3997),
      JSON.stringify({ url: 'x', token: 'live-token1', pid: process.pid }),
    );
    expect(await findConsoleToken(tmp, 3997)).toBe('live-token1');
  });
});
