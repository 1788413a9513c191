/**
 * Progressive canary rollouts (lib/rollout/rollout.ts), the state machine: one rollout that has not ended
 * at a time moves a Target's split step by step through a RolloutTarget. Each step's weights are applied
 * (as the user who started it), held for the spec's pause, then judged by probes through a listener of the
 * mesh, the proxyless gRPC clients' load reports over the hold and/or a webhook; a failed step rolls the split back to its weights before the rollout, or pauses,
 * as the spec says. Users pause, resume, abort or promote it. Every change is kept in
 * `<stateDir>/rollouts/rollouts.json` (the last 20 rollouts) and announced to onChange's listeners; a
 * rollout that was progressing when the server stopped is found paused after a restart. While the target
 * is unavailable (Kubernetes mode: this replica does not hold the Lease) nothing starts, no action is
 * taken (503), and a rollout under way pauses before its next write. Never throws: every failure becomes
 * the rollout's state.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { ApplySummary } from '@/lib/console/applyRecord';
import { RolloutAction } from '@/lib/rollout/rolloutApi';
import {
  canaryPercent,
  checkRollout,
  ENDED_PHASES,
  type GrpcRouting,
  hasAnalysis,
  nextMove,
  type RolloutPhase,
  type RolloutProblem,
  rolloutId,
  RolloutSpec,
  RolloutState,
  type RolloutStep,
  type StepAnalysis,
  stepWeights,
} from '@/lib/rollout/rollout';
import { zodFieldErrors } from '../console/DraftStore';
import { writeFileAtomic } from '../console/meshDirFiles';
import { analyseStep } from './analyseStep';
import type { RolloutActor, RolloutTarget } from './RolloutTarget';

export type { RolloutActor, RolloutTarget } from './RolloutTarget';

/** Why a spec with probes is refused where the target sends none (Kubernetes mode). */
export const NO_PROBES = 'probes need the local mesh; in Kubernetes mode judge steps with a webhook';

/** Why a spec with a gRPC analysis is refused where the target reads no load reports. */
export const NO_LOAD_REPORTS =
  'a gRPC analysis needs the load reports (LRS) of proxyless gRPC clients, which this server does not receive (it serves no xDS)';

/** Rollouts kept in the state file (and listed), newest first. */
export const KEEP_ROLLOUTS = 20;
/** How long stop() waits for a step under way. */
const STOP_WAIT_MS = 4000;

/** Counts rollouts as they end and analyses as they are judged (the metrics). */
export interface RolloutMetrics {
  ended(result: 'succeeded' | 'rolled-back' | 'aborted' | 'failed'): void;
  analysed(result: 'passed' | 'failed'): void;
}

export interface RolloutRunnerOptions {
  target: RolloutTarget;
  /** The server's state directory: rollouts are kept in `rollouts/rollouts.json` below it. */
  stateDir: string;
  /** Why no rollout may start now (sync from Git with self-heal would take every step back), or undefined. */
  conflict?: () => string | undefined | Promise<string | undefined>;
  metrics?: RolloutMetrics;
  logger?: { info?(m: string): void; warn(m: string): void };
  now?: () => Date;
}

/** A refusal: the HTTP status and why, with the fields of a bad spec. */
export interface RolloutRefusal {
  status: 400 | 404 | 409 | 422 | 503;
  error: string;
  fields?: RolloutProblem[];
}

export type RolloutOutcome = { rollout: RolloutState } | RolloutRefusal;

/** An action asked for while a step's apply or analysis runs: done when that ends. */
interface Request {
  action: 'pause' | 'abort' | 'promote';
  user: string;
}

/** See the module comment. */
export class RolloutRunner {
  private rollouts: RolloutState[] = [];
  private loaded: Promise<void> | undefined;
  private readonly listeners = new Set<(r: RolloutState) => void>();
  private readonly now: () => Date;
  /** A start between its checks and its first state (two starts must not both pass). */
  private starting = false;
  /** The task that drives the rollout that has not ended (steps, a rollback or a promotion). */
  private task: Promise<void> | undefined;
  /** Bumped when a wait is cut short: the task that waited gives up the rollout to whoever cut it. */
  private generation = 0;
  private request: Request | undefined;
  /** A rollback or promotion under way: the rollout's end, nothing more may be asked. */
  private finishing = false;
  private wait: { timer: NodeJS.Timeout; wake: () => void } | undefined;
  private stopped = false;
  /** Who started each rollout, with their groups (the state keeps the user only). */
  private readonly actors = new Map<string, RolloutActor>();
  private saving: Promise<void> = Promise.resolve();

  constructor(private readonly o: RolloutRunnerOptions) {
    this.now = o.now ?? (() => new Date());
  }

  private get file(): string {
    return path.join(this.o.stateDir, 'rollouts', 'rollouts.json');
  }

  /** Reads the kept rollouts (once); one found progressing is paused: its step's outcome is unknown. */
  load(): Promise<void> {
    this.loaded ??= this.read();
    return this.loaded;
  }

  /** Every kept rollout, newest first. */
  list(): RolloutState[] {
    return this.rollouts.map((r) => structuredClone(r));
  }

  /** One rollout, or undefined. */
  get(id: string): RolloutState | undefined {
    const r = this.find(id);
    return r && structuredClone(r);
  }

  /** Why rollouts cannot run here now, or undefined. */
  unavailable(): string | undefined {
    try {
      return this.o.target.unavailable?.();
    } catch (e) {
      return (e as Error).message;
    }
  }

  /** Calls `listener` with each rollout that changed; returns the unsubscribe. */
  onChange(listener: (r: RolloutState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Checks a spec against the split that runs and starts it as `actor`; see the module comment. */
  async start(input: unknown, actor: RolloutActor): Promise<RolloutOutcome> {
    await this.load();
    const parsed = RolloutSpec.safeParse(input);
    if (!parsed.success)
      return { status: 400, error: 'invalid rollout', fields: zodFieldErrors(parsed.error) };
    const spec = parsed.data;
    // Refused up front: without a way to send them, every step's probes would fail it.
    if (spec.analysis.probe && !this.o.target.probe)
      return {
        status: 422,
        error: NO_PROBES,
        fields: [{ path: 'analysis.probe', message: NO_PROBES }],
      };
    if (this.stopped) return { status: 503, error: 'the server is stopping' };
    // Before the other refusals: whatever this replica keeps, it runs nothing now.
    const unavailable = this.unavailable();
    if (unavailable) return { status: 503, error: unavailable };
    // After unavailable(): the local mesh's source is its running control plane's.
    if (spec.analysis.grpc && !(this.o.target.loadReports && this.o.target.grpcRouting))
      return {
        status: 422,
        error: NO_LOAD_REPORTS,
        fields: [{ path: 'analysis.grpc', message: NO_LOAD_REPORTS }],
      };
    const busy = this.busy();
    if (busy) return { status: 409, error: busy };
    this.starting = true;
    try {
      const refused = await this.refusal();
      if (refused) return refused;
      const split = await this.o.target.split(spec.target).catch((e: unknown) => ({ error: message(e) }));
      if ('error' in split)
        return { status: 422, error: split.error, fields: [{ path: 'target', message: split.error }] };
      const entries = split.map((e) => e.serviceName);
      const grpc = spec.analysis.grpc ? await this.grpcRouting(spec, entries) : undefined;
      if (this.stopped) return { status: 503, error: 'the server is stopping' };
      const problems = checkRollout(spec, split, grpc);
      if (problems.length > 0) return { status: 422, error: problems[0]!.message, fields: problems };
      const at = this.now();
      const initial = split.map((e) => e.weight);
      const r: RolloutState = {
        id: rolloutId(at),
        spec,
        user: actor.user,
        target: this.o.target.kind,
        startedAt: at.toISOString(),
        updatedAt: at.toISOString(),
        phase: 'progressing',
        entries,
        initial,
        weights: initial,
        canaryIndex: entries.indexOf(spec.canary),
        ...(grpc && 'clusters' in grpc ? { clusters: grpc.clusters } : {}),
        steps: [],
      };
      this.rollouts = [r, ...this.rollouts].slice(0, KEEP_ROLLOUTS);
      this.o.logger?.info?.(
        `meshdeck: rollout ${r.id} of ${spec.canary} in Target ${spec.target.namespace}/${spec.target.name} started by ${actor.user}: ${spec.steps.join('% -> ')}%`,
      );
      this.changed(r);
      this.actors.set(r.id, actor);
      this.drive(() => this.runSteps(r, 0));
      return { rollout: structuredClone(r) };
    } finally {
      this.starting = false;
    }
  }

  /** Pauses, resumes, aborts or promotes rollout `id` for `actor`; see the module comment. */
  async act(id: string, action: RolloutAction, actor: RolloutActor): Promise<RolloutOutcome> {
    await this.load();
    if (!RolloutAction.safeParse(action).success)
      return {
        status: 400,
        error: `unknown action ${JSON.stringify(action)}: pause, resume, abort or promote`,
      };
    const r = this.find(id);
    if (!r) return { status: 404, error: `no rollout ${id} (the last ${KEEP_ROLLOUTS} are kept)` };
    if (ENDED_PHASES.has(r.phase)) return { status: 409, error: `rollout ${id} has ended (${r.phase})` };
    if (this.stopped) return { status: 409, error: 'the server is stopping' };
    // Kubernetes mode: a replica that does not hold the Lease must not write; GET still lists its rollouts.
    const unavailable = this.unavailable();
    if (unavailable) return { status: 503, error: unavailable };
    if (this.finishing)
      return {
        status: 409,
        error: `rollout ${id} is ${r.activity === 'rolling back' ? 'rolling back' : 'ending'}`,
      };
    const by = actor.user;
    if (action === 'resume') {
      if (r.phase !== 'paused')
        return { status: 409, error: `rollout ${id} is not paused${this.request ? ' yet' : ''}` };
      this.update(r, { phase: 'progressing', message: undefined });
      // The current step runs again from its apply (the same weights: nothing is written if they run).
      this.drive(() => this.runSteps(r, Math.max(0, r.steps.length - 1)));
      return { rollout: structuredClone(r) };
    }
    if (action === 'pause' && r.phase !== 'progressing')
      return { status: 409, error: `rollout ${id} is already paused` };
    // Waiting, or paused: nothing is under way, so the action is done now.
    if (r.phase === 'paused' || r.activity === 'waiting' || !this.task) {
      this.interrupt();
      if (action === 'pause') this.update(r, { phase: 'paused', ...idle(), message: `paused by ${by}` });
      else if (action === 'abort') this.drive(() => this.rollback(r, 'aborted', `aborted by ${by}`));
      else this.drive(() => this.promote(r, by));
      return { rollout: structuredClone(r) };
    }
    // An apply or an analysis is under way: done when it ends. An abort outranks a promotion, both a pause.
    const rank = { pause: 0, promote: 1, abort: 2 } as const;
    if (!this.request || rank[action] >= rank[this.request.action]) this.request = { action, user: by };
    this.update(r, { message: `${action} asked by ${by}: done when the ${r.activity ?? 'step'} ends` });
    return { rollout: structuredClone(r) };
  }

  /** Stops the timers and waits (a few seconds at most) for a step under way; nothing changes after. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.interrupt();
    const task = this.task;
    if (task) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([task, new Promise((r) => (timer = setTimeout(r, STOP_WAIT_MS)))]);
      clearTimeout(timer);
    }
    await this.saving;
  }

  // ------------------------------------------------------------------ the steps

  /** Runs steps `from`.. of `r`: apply, pause, analysis, next move; see the module comment. */
  private async runSteps(r: RolloutState, from: number): Promise<void> {
    const gen = this.generation;
    const { spec } = r;
    for (let i = from; i < spec.steps.length; i++) {
      if (this.gone(gen)) return;
      const percent = spec.steps[i]!;
      const weights = stepWeights(r.initial, r.canaryIndex, percent);
      const step: RolloutStep = { percent, weights };
      r.steps = [...r.steps.slice(0, i), step];
      this.update(r, { activity: 'applying', nextAt: undefined });
      const applied = await this.setWeights(r, weights, { step: i, percent, action: 'step' });
      if (this.gone(gen)) return;
      if (applied.historyId !== undefined) step.historyId = applied.historyId;
      let verdict: Pick<StepAnalysis, 'passed' | 'reasons'> = { passed: true, reasons: [] };
      if (applied.error !== undefined) {
        step.error = applied.error;
        verdict = { passed: false, reasons: [`applying it failed: ${applied.error}`] };
        this.update(r, {});
      } else {
        step.appliedAt = this.now().toISOString();
        this.update(r, { weights });
        if (await this.honour(r)) return;
        if (spec.pauseS > 0) {
          const ms = spec.pauseS * 1000;
          this.update(r, { activity: 'waiting', nextAt: new Date(this.now().getTime() + ms).toISOString() });
          await this.sleep(ms);
          if (this.gone(gen)) return;
        }
        if (hasAnalysis(spec.analysis)) {
          this.update(r, { activity: 'analysing', nextAt: undefined });
          const analysis = await analyseStep(this.o.target, r, i, this.now);
          if (this.gone(gen)) return;
          step.analysis = analysis;
          verdict = analysis;
          this.o.metrics?.analysed(analysis.passed ? 'passed' : 'failed');
          this.update(r, {});
        }
      }
      const move = nextMove(spec, i, verdict);
      // The target became unavailable while the step ran (Kubernetes mode: this replica lost the Lease):
      // nothing more is written, neither the next step nor a rollback, until it can run here again.
      const writes =
        move.do === 'next' ||
        move.do === 'rollback' ||
        (this.request !== undefined && this.request.action !== 'pause');
      const lost = writes ? this.unavailable() : undefined;
      if (lost) {
        this.request = undefined;
        const judged = verdict.passed ? 'passed' : `failed: ${verdict.reasons.join('; ')}`;
        const what = `step ${i + 1} of ${spec.steps.length} (${percent}%) ${judged}`;
        this.update(r, {
          phase: 'paused',
          ...idle(),
          message: `${what}; paused, nothing more written: ${lost}. Resume or abort once rollouts run here again`,
        });
        this.o.logger?.warn(`meshdeck: rollout ${r.id}: ${what}; paused: ${lost}`);
        return;
      }
      // The user's abort or promotion goes first; a failed step before a pause asked for meanwhile.
      if (this.request && this.request.action !== 'pause' && (await this.honour(r))) return;
      if (move.do === 'rollback' || move.do === 'pause') {
        this.request = undefined;
        return this.failStep(r, i, verdict.reasons, move.do);
      }
      if (await this.honour(r)) return;
      if (move.do === 'done')
        return this.end(
          r,
          'succeeded',
          `${spec.canary} runs at ${percent}% after ${spec.steps.length} steps`,
        );
    }
  }

  /** Step `i` failed: the split goes back to its weights before the rollout, or the rollout pauses. */
  private async failStep(
    r: RolloutState,
    i: number,
    reasons: readonly string[],
    move: 'rollback' | 'pause',
  ): Promise<void> {
    const what = `step ${i + 1} of ${r.spec.steps.length} (${r.spec.steps[i]}%) failed: ${reasons.join('; ')}`;
    if (move === 'rollback') return this.rollback(r, 'rolled-back', what);
    this.update(r, {
      phase: 'paused',
      ...idle(),
      message: `${what}; paused: resume to run it again, or abort`,
    });
    this.o.logger?.warn(`meshdeck: rollout ${r.id}: ${what}; paused`);
  }

  /** Applies the weights before the rollout and ends it in `phase` (`failed` when that apply fails). */
  private async rollback(r: RolloutState, phase: 'rolled-back' | 'aborted', why: string): Promise<void> {
    this.finishing = true;
    try {
      this.update(r, { phase: 'progressing', activity: 'rolling back', nextAt: undefined, message: why });
      const percent = canaryPercent(r.initial, r.canaryIndex);
      const done = await this.setWeights(r, r.initial, { percent, action: 'rollback' });
      if (this.stopped) return;
      if (done.historyId !== undefined) r.rollbackHistoryId = done.historyId;
      if (done.error !== undefined)
        return this.end(r, 'failed', `${why}; rolling back failed: ${done.error}`);
      r.weights = [...r.initial];
      this.end(r, phase, `${why}; rolled back to ${weightsText(r)}`);
    } finally {
      this.finishing = false;
    }
  }

  /** Applies the last step's weights at once, without analysis, for `by`. */
  private async promote(r: RolloutState, by: string): Promise<void> {
    this.finishing = true;
    try {
      const { spec } = r;
      const last = spec.steps.length - 1;
      const percent = spec.steps[last]!;
      const weights = stepWeights(r.initial, r.canaryIndex, percent);
      // Steps not run are kept without appliedAt: skipped.
      const steps = spec.steps.map(
        (p, i) => r.steps[i] ?? { percent: p, weights: stepWeights(r.initial, r.canaryIndex, p) },
      );
      const step: RolloutStep = { percent, weights };
      steps[last] = step;
      this.update(r, { phase: 'progressing', activity: 'applying', nextAt: undefined, steps });
      const done = await this.setWeights(r, weights, { step: last, percent, action: 'step' });
      if (this.stopped) return;
      if (done.historyId !== undefined) step.historyId = done.historyId;
      if (done.error !== undefined) {
        step.error = done.error;
        return this.update(r, {
          phase: 'paused',
          ...idle(),
          message: `promoting failed: ${done.error}; resume, promote again or abort`,
        });
      }
      step.appliedAt = this.now().toISOString();
      r.weights = weights;
      this.end(r, 'succeeded', `promoted by ${by}: ${spec.canary} at ${percent}% at once`);
    } finally {
      this.finishing = false;
    }
  }

  /** Does the action asked for while a step ran; true when it did one (the steps stop). */
  private async honour(r: RolloutState): Promise<boolean> {
    const req = this.request;
    if (!req) return false;
    this.request = undefined;
    if (req.action === 'pause')
      this.update(r, { phase: 'paused', ...idle(), message: `paused by ${req.user}` });
    else if (req.action === 'abort') await this.rollback(r, 'aborted', `aborted by ${req.user}`);
    else await this.promote(r, req.user);
    return true;
  }

  private end(
    r: RolloutState,
    phase: Exclude<RolloutPhase, 'progressing' | 'paused'>,
    message: string,
  ): void {
    this.update(r, { phase, ...idle(), endedAt: this.now().toISOString(), message });
    this.actors.delete(r.id);
    this.o.metrics?.ended(phase);
    const line = `meshdeck: rollout ${r.id} ${phase}: ${message}`;
    if (phase === 'succeeded' || phase === 'aborted') this.o.logger?.info?.(line);
    else this.o.logger?.warn(line);
  }

  /** Sets the split's weights as the user who started `r` (the apply history's user). */
  private async setWeights(
    r: RolloutState,
    weights: readonly number[],
    what: { step?: number; percent: number; action: 'step' | 'rollback' },
  ): Promise<{ historyId?: number; error?: string }> {
    const rollout: NonNullable<ApplySummary['rollout']> = { id: r.id, of: r.spec.steps.length, ...what };
    return this.o.target
      .setWeights(r.spec.target, weights, {
        actor: this.actors.get(r.id) ?? { user: r.user, groups: [] },
        rollout,
      })
      .catch((e: unknown) => ({ error: message(e) }));
  }

  // ------------------------------------------------------------------ plumbing

  /** Where the gRPC clients report the split's entries, or why they cannot judge it. */
  private async grpcRouting(spec: RolloutSpec, entries: string[]): Promise<GrpcRouting> {
    try {
      return await this.o.target.grpcRouting!(spec.target, entries);
    } catch (e) {
      return { error: `cannot tell which gRPC clients report the split: ${message(e)}` };
    }
  }

  /** Why no rollout may start now, besides the spec: another one, or the conflict hook. */
  private busy(): string | undefined {
    if (this.starting) return 'another rollout is starting';
    const active = this.rollouts.find((r) => !ENDED_PHASES.has(r.phase));
    return active
      ? `rollout ${active.id} of ${active.spec.canary} is ${active.phase}: abort or finish it first`
      : undefined;
  }

  /** The conflict hook's refusal (409), or undefined. */
  private async refusal(): Promise<RolloutRefusal | undefined> {
    let conflict: string | undefined;
    try {
      conflict = await this.o.conflict?.();
    } catch (e) {
      conflict = `cannot tell whether a rollout may start: ${message(e)}`;
    }
    if (conflict) return { status: 409, error: conflict };
    return undefined;
  }

  /** Runs the rollout's next task; it never rejects (every failure is state). */
  private drive(fn: () => Promise<void>): void {
    const task = fn().catch((e: unknown) => {
      this.o.logger?.warn(`meshdeck: a rollout task failed: ${message(e)}`);
    });
    this.task = task;
    void task.finally(() => {
      if (this.task === task) this.task = undefined;
    });
  }

  /** Cuts a wait short: the task waiting gives the rollout up (see `generation`). */
  private interrupt(): void {
    this.generation++;
    const w = this.wait;
    this.wait = undefined;
    if (w) {
      clearTimeout(w.timer);
      w.wake();
    }
  }

  private sleep(ms: number): Promise<void> {
    // Stopped: no timer may keep the process up.
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wait = undefined;
        resolve();
      }, ms);
      this.wait = { timer, wake: resolve };
    });
  }

  /** Whether the task of generation `gen` must leave the rollout alone (stopped, or a wait cut short). */
  private gone(gen: number): boolean {
    return this.stopped || gen !== this.generation;
  }

  private find(id: string): RolloutState | undefined {
    return this.rollouts.find((r) => r.id === id);
  }

  /** Sets fields of `r` (undefined removes one), then keeps and announces it. */
  private update(r: RolloutState, patch: Partial<RolloutState>): void {
    for (const [k, v] of Object.entries(patch)) {
      if (v === undefined) delete (r as Record<string, unknown>)[k];
      else (r as Record<string, unknown>)[k] = v;
    }
    this.changed(r);
  }

  private changed(r: RolloutState): void {
    if (this.stopped) return;
    r.updatedAt = this.now().toISOString();
    this.save();
    for (const l of this.listeners) {
      try {
        l(structuredClone(r));
      } catch (e) {
        this.o.logger?.warn(`meshdeck: a rollout listener failed: ${message(e)}`);
      }
    }
  }

  /** Writes the rollouts as they are now, after any write before it (so the file ends with the last). */
  private save(): void {
    const text = `${JSON.stringify({ rollouts: this.rollouts }, null, 2)}\n`;
    this.saving = this.saving.then(() =>
      writeFileAtomic(this.file, text, 0o600).catch((e: unknown) =>
        this.o.logger?.warn(`meshdeck: the rollouts could not be kept: ${message(e)}`),
      ),
    );
  }

  private async read(): Promise<void> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT')
        this.o.logger?.warn(`meshdeck: ${this.file} cannot be read: ${message(e)}`);
      return;
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      this.o.logger?.warn(`meshdeck: ${this.file} is not JSON; no rollout is kept from it`);
      return;
    }
    const list = (raw as { rollouts?: unknown } | null)?.rollouts;
    const kept: RolloutState[] = [];
    for (const item of Array.isArray(list) ? list : []) {
      const parsed = RolloutState.safeParse(item);
      if (parsed.success) kept.push(parsed.data);
      else this.o.logger?.warn(`meshdeck: a rollout in ${this.file} is not a rollout state; left out`);
    }
    // Loaded before any start: nothing else is in the list yet.
    this.rollouts = kept.slice(0, KEEP_ROLLOUTS);
    for (const r of this.rollouts) {
      if (r.phase !== 'progressing') continue;
      const k = Math.max(1, r.steps.length);
      // A rollback under way is not a step: resuming would go on with the steps it was undoing.
      const message =
        r.activity === 'rolling back'
          ? `the server restarted while rolling back (${r.message ?? 'no reason kept'}): abort to roll back again`
          : `the server restarted during step ${k}: resume or abort`;
      this.update(r, { phase: 'paused', ...idle(), message });
    }
  }
}

/** The fields a rollout has only while a step runs. */
function idle(): Pick<RolloutState, 'activity' | 'nextAt'> {
  return { activity: undefined, nextAt: undefined };
}

function weightsText(r: RolloutState): string {
  return r.entries.map((e, i) => `${e} ${r.initial[i]}`).join(', ');
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
