import { createServer, type Server } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort, startL7mp } from './startL7mp';

describe('startL7mp (a real l7mp process)', () => {
  it('says when the proxy exits, how, and whether stop() ended it', async () => {
    const killed = await startL7mp();
    try {
      process.kill(killed.pid, 'SIGKILL');
      expect(await killed.exited).toEqual({ code: null, signal: 'SIGKILL', stopped: false });
    } finally {
      await killed.stop();
    }
    const stopped = await startL7mp();
    await stopped.stop();
    expect((await stopped.exited).stopped).toBe(true);
  }, 120_000);

  it('tries another port when the one it picked is taken before l7mp listens; a given port is not replaced', async () => {
    // Held on all interfaces, as l7mp's controller listener binds.
    const taken: Server = createServer((c) => c.destroy());
    await new Promise<void>((resolve) => taken.listen(0, resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const picked: number[] = [];
      const ports = [port, await freePort('tcp')];
      const proxy = await startL7mp({
        pickPort: async () => {
          picked.push(ports[picked.length]!);
          return picked.at(-1)!;
        },
      });
      try {
        expect(picked).toEqual(ports);
        expect(proxy.apiPort).toBe(ports[1]);
      } finally {
        await proxy.stop();
      }
      await expect(startL7mp({ apiPort: port })).rejects.toThrow('EADDRINUSE');
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
  }, 120_000);
});
