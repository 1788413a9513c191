import { describe, expect, it } from 'vitest';
import { coalescingRunner } from './coalescingRunner';

/** A job whose runs the test finishes by hand. */
function controlled() {
  const log: string[] = [];
  const finish: (() => void)[] = [];
  let running = 0;
  let overlap = false;
  const job = () =>
    new Promise<void>((resolve) => {
      running++;
      if (running > 1) overlap = true;
      log.push(`start ${log.length}`);
      finish.push(() => {
        running--;
        resolve();
      });
    });
  return { log, finish, job, overlapped: () => overlap };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('coalescingRunner', () => {
  it('asks before a run starts share it; an ask during a run queues exactly one more; runs never overlap', async () => {
    const c = controlled();
    const run = coalescingRunner(c.job);
    const a = run();
    const b = run();
    expect(b).toBe(a);
    await tick();
    expect(c.log).toHaveLength(1);
    const d = run();
    const e = run();
    expect(d).not.toBe(a);
    expect(e).toBe(d);
    await tick();
    expect(c.log).toHaveLength(1); // d waits for a
    c.finish[0]!();
    await a;
    await tick();
    expect(c.log).toHaveLength(2);
    c.finish[1]!();
    await d;
    expect(c.overlapped()).toBe(false);
  });

  it('a failed run rejects its askers but does not stop later runs', async () => {
    let n = 0;
    const run = coalescingRunner(async () => {
      n++;
      if (n === 1) throw new Error('boom');
    });
    await expect(run()).rejects.toThrow('boom');
    await expect(run()).resolves.toBeUndefined();
    expect(n).toBe(2);
  });
});
