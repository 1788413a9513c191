import { describe, expect, it } from 'vitest';
import { startL7mp } from './startL7mp';

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
});
