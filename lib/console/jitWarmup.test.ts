import { describe, expect, it } from 'vitest';
import { JitWarmup, type JitWarmupOptions } from './jitWarmup';

/** Timers run by hand: `due()` lists the pending ones, `fire()` runs the next. */
function manualTimers() {
  let seq = 0;
  const pending = new Map<number, { fn: () => void; ms: number }>();
  return {
    setTimeout: (fn: () => void, ms: number) => {
      pending.set(++seq, { fn, ms });
      return seq;
    },
    clearTimeout: (h: unknown) => void pending.delete(h as number),
    due: () => [...pending.values()].map((t) => t.ms),
    fire() {
      const [id, t] = [...pending.entries()][0]!;
      pending.delete(id);
      t.fn();
    },
  };
}

function warmup(opts: Partial<JitWarmupOptions> = {}) {
  const timers = manualTimers();
  let steps = 0;
  const w = new JitWarmup({
    budget: 3,
    minMs: 30,
    delayMs: 1500,
    gapMs: 30,
    step: () => void steps++,
    ...timers,
    ...opts,
  });
  return { w, timers, steps: () => steps };
}

describe('JitWarmup', () => {
  it('after a slow compile, runs its budget of steps, one timer each: the delay, then the gap', () => {
    const { w, timers, steps } = warmup();
    w.compiled(80);
    expect(timers.due()).toEqual([1500]);
    timers.fire();
    expect(steps()).toBe(1);
    expect(timers.due()).toEqual([30]);
    timers.fire();
    timers.fire();
    expect(steps()).toBe(3);
    expect(timers.due()).toEqual([]);
    expect(w.remaining).toBe(0);
    // The budget is for the worker's life: another slow compile warms no more.
    w.compiled(80);
    expect(timers.due()).toEqual([]);
  });

  it('leaves a fast compile alone', () => {
    const { w, timers } = warmup();
    w.compiled(29);
    expect(timers.due()).toEqual([]);
    expect(w.remaining).toBe(3);
  });

  it('a real request cancels the next step; the next slow compile goes on with what is left', () => {
    const { w, timers, steps } = warmup();
    w.compiled(80);
    timers.fire();
    w.interrupt();
    expect(timers.due()).toEqual([]);
    w.compiled(80);
    expect(timers.due()).toEqual([1500]);
    timers.fire();
    timers.fire();
    expect(steps()).toBe(3);
    expect(timers.due()).toEqual([]);
  });

  it('stops for good when a step throws', () => {
    const { w, timers } = warmup({
      step: () => {
        throw new Error('boom');
      },
    });
    w.compiled(80);
    timers.fire();
    expect(timers.due()).toEqual([]);
    expect(w.remaining).toBe(0);
  });

  it('does nothing with no budget (the switch is off)', () => {
    const { w, timers } = warmup({ budget: 0 });
    w.compiled(500);
    expect(timers.due()).toEqual([]);
  });
});
