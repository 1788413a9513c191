/**
 * Warms the JavaScript engine's compiled code for the draft compile in the idle time after a slow
 * compile, so that the user's first edits are not the ones V8 learns on. A 500-object draft's edit
 * compile in a fresh Node process took 50-130 ms for the first edits and 11-16 ms after about 35 (on
 * a loaded machine). In Chromium's compile worker (bench/ui.ts P8, 500 nodes) the edits' median fell
 * from 23-36 to 13-28 ms with it, and edit -> marker from 108-199 to 91-119 ms in most runs.
 * Each step is one compile of the last draft asked for, a task of its own, so a real request waits
 * for at most one step; a real request cancels the steps still to come and, while the budget lasts,
 * starts them again after it.
 */
export interface JitWarmupOptions {
  /** Runs one warm-up compile (of the last request). */
  step: () => void;
  /** Compiles per worker, in all: once warm, the user's own edits keep it warm. */
  budget?: number;
  /** A compile faster than this needs no warm-up. */
  minMs?: number;
  /**
   * Idle time after a real compile before the first step: long enough that a large draft's first view
   * (its layout and the staged mount, seconds on 2 cores) is not slowed down by the warm-up beside it.
   */
  delayMs?: number;
  /** Time between two steps. */
  gapMs?: number;
  setTimeout?: (fn: () => void, ms: number) => unknown;
  clearTimeout?: (handle: unknown) => void;
}

/** Idle-time compiles allowed per worker by default. */
export const JIT_WARMUP_BUDGET = 24;

/** The warm-up schedule (see the module comment). */
export class JitWarmup {
  private left: number;
  private timer: unknown;
  private readonly minMs: number;
  private readonly delayMs: number;
  private readonly gapMs: number;
  private readonly set: (fn: () => void, ms: number) => unknown;
  private readonly clear: (handle: unknown) => void;

  constructor(private readonly opts: JitWarmupOptions) {
    this.left = opts.budget ?? JIT_WARMUP_BUDGET;
    this.minMs = opts.minMs ?? 30;
    this.delayMs = opts.delayMs ?? 5000;
    this.gapMs = opts.gapMs ?? 30;
    this.set = opts.setTimeout ?? ((fn, ms) => setTimeout(fn, ms));
    this.clear = opts.clearTimeout ?? ((h) => clearTimeout(h as ReturnType<typeof setTimeout>));
  }

  /** Warm-up compiles still allowed. */
  get remaining(): number {
    return this.left;
  }

  /** A real compile is about to run: no step may run before it. */
  interrupt(): void {
    if (this.timer !== undefined) this.clear(this.timer);
    this.timer = undefined;
  }

  /** A real compile took `ms`: schedule the remaining steps if it was slow. */
  compiled(ms: number): void {
    this.interrupt();
    if (ms >= this.minMs && this.left > 0) this.schedule(this.delayMs);
  }

  private schedule(ms: number): void {
    this.timer = this.set(() => {
      this.timer = undefined;
      if (this.left <= 0) return;
      this.left--;
      try {
        this.opts.step();
      } catch {
        // A warm-up that fails is only a warm-up: the real compile reports its own errors.
        this.left = 0;
        return;
      }
      if (this.left > 0) this.schedule(this.gapMs);
    }, ms);
  }
}
