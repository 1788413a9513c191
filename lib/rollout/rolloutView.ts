/**
 * How the console shows rollouts (lib/rollout/rollout.ts), pure: the list the server answers, each step
 * as a line (passed, failed, running with its countdown, pending), what each phase lets a user do, the
 * toolbar's chip and the apply history's words for a rollout's records.
 */
import { z } from 'zod';
import type { ApplySummary } from '../console/applyRecord';
import {
  canaryPercent,
  ENDED_PHASES,
  hasAnalysis,
  type ObjectRef,
  type RolloutPhase,
  type RolloutState,
  RolloutState as RolloutStateSchema,
  type StepAnalysis,
  windowSeconds,
} from './rollout';
import type { RolloutAction } from './rolloutApi';

/** GET /api/rollouts: newest first; `available: false` (with why) where this server cannot run one. */
export const RolloutsAnswer = z.strictObject({
  available: z.boolean(),
  reason: z.string().optional(),
  rollouts: z.array(RolloutStateSchema),
});
export type RolloutsAnswer = z.infer<typeof RolloutsAnswer>;

/** The actions that fit a rollout now, in the order the buttons show. */
export function rolloutActions(r: Pick<RolloutState, 'phase' | 'activity'>): RolloutAction[] {
  if (r.phase === 'paused') return ['resume', 'abort', 'promote'];
  // A rollback under way is the end already: nothing to pause or promote.
  if (r.phase === 'progressing' && r.activity !== 'rolling back') return ['pause', 'abort', 'promote'];
  return [];
}

/** Whether a rollout has ended. */
export function rolloutEnded(r: Pick<RolloutState, 'phase'>): boolean {
  return ENDED_PHASES.has(r.phase);
}

/** The rollout of Target `target` that has not ended, if any. */
export function activeRolloutOf(
  rollouts: readonly RolloutState[],
  target: ObjectRef,
): RolloutState | undefined {
  return rollouts.find(
    (r) =>
      !rolloutEnded(r) && r.spec.target.name === target.name && r.spec.target.namespace === target.namespace,
  );
}

export const PHASE_TEXT: Record<RolloutPhase, string> = {
  progressing: 'progressing',
  paused: 'paused',
  succeeded: 'succeeded',
  'rolled-back': 'rolled back',
  aborted: 'aborted',
  failed: 'failed',
};

/** The tone of a phase (CSS `tone-*`). */
export function phaseTone(phase: RolloutPhase): 'busy' | 'warn' | 'ok' | 'bad' | 'idle' {
  switch (phase) {
    case 'progressing':
      return 'busy';
    case 'paused':
      return 'warn';
    case 'succeeded':
      return 'ok';
    case 'aborted':
      return 'idle';
    default:
      return 'bad';
  }
}

/** Whole seconds from `now` until `iso` (0 once it passed); undefined without a time. */
export function secondsLeft(iso: string | undefined, now: number): number | undefined {
  if (!iso) return undefined;
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return undefined;
  return Math.max(0, Math.ceil((t - now) / 1000));
}

export type StepStatus = 'passed' | 'failed' | 'running' | 'paused' | 'stopped' | 'pending' | 'skipped';

/** One step of a rollout as a line of the progress list. */
export interface StepView {
  index: number;
  percent: number;
  status: StepStatus;
  /** The status in words, with the activity and the countdown for the running step. */
  text: string;
  /** The step's analysis as short lines (probes, latency, answers per backend, the webhook). */
  analysis: string[];
  /** Why it failed. */
  reasons: string[];
}

/** A latency as people read it: whole milliseconds, one decimal below 10 ms. */
function ms(x: number): number {
  return x < 10 ? Math.round(x * 10) / 10 : Math.round(x);
}

/**
 * `12 of 20 answered (60%)`, `p50 3 ms, p99 9 ms`, `answers: echo-v1 8, echo-v2 4`; the gRPC clients'
 * `gRPC RPCs to the canary: 38 of 40 succeeded (95%) in 30 s`, `RPCs: echo-v1 160, echo-v2 40 (2 failed)`;
 * the webhook.
 */
export function analysisLines(a: StepAnalysis, entries: readonly string[]): string[] {
  const out: string[] = [];
  const p = a.probe;
  if (p) {
    out.push(`${p.answered} of ${p.sent} probes answered (${p.successPercent}%)`);
    if (p.p50Ms !== undefined || p.p99Ms !== undefined)
      out.push(
        [
          p.p50Ms !== undefined ? `p50 ${ms(p.p50Ms)} ms` : '',
          p.p99Ms !== undefined ? `p99 ${ms(p.p99Ms)} ms` : '',
        ]
          .filter(Boolean)
          .join(', '),
      );
    // The split's order first, then anything else that answered.
    const names = [
      ...entries.filter((e) => e in p.byBackend),
      ...Object.keys(p.byBackend).filter((k) => !entries.includes(k)),
    ];
    if (names.length) out.push(`answers: ${names.map((n) => `${n} ${p.byBackend[n]}`).join(', ')}`);
  }
  const g = a.grpc;
  if (g) {
    const rate = g.successPercent === null ? 'none finished' : `${g.successPercent}%`;
    out.push(
      `gRPC RPCs to the canary: ${g.succeeded} of ${g.requests} succeeded (${rate}) in ${windowSeconds(g.window)} s`,
    );
    // Every entry, in the split's order: how the clients actually split their calls.
    const names = [...entries, ...Object.keys(g.byBackend).filter((k) => !entries.includes(k))];
    const per = names
      .filter((n) => g.byBackend[n])
      .map((n) => {
        const b = g.byBackend[n]!;
        return `${n} ${b.requests}${b.failed ? ` (${b.failed} failed)` : ''}`;
      });
    if (per.length) out.push(`RPCs: ${per.join(', ')}`);
  }
  const w = a.webhook;
  if (w)
    out.push(
      w.status !== undefined
        ? `webhook answered ${w.status} in ${Math.round(w.ms)} ms`
        : `webhook: ${w.error ?? 'no answer'} (${Math.round(w.ms)} ms)`,
    );
  if (!p && !g && !w) out.push('no analysis: the step passed after its pause');
  return out;
}

const ACTIVITY_TEXT = {
  applying: 'applying',
  analysing: 'analysing',
  'rolling back': 'rolling back',
} as const;

/** Every step of the spec, started or not, as the progress list shows it at time `now` (ms). */
export function stepViews(r: RolloutState, now: number): StepView[] {
  const ended = rolloutEnded(r);
  const current = r.steps.length - 1;
  return r.spec.steps.map((percent, index): StepView => {
    const s = r.steps[index];
    const base = { index, percent, analysis: [] as string[], reasons: [] as string[] };
    if (!s) return { ...base, status: ended ? 'skipped' : 'pending', text: ended ? 'not run' : 'pending' };
    if (s.error) return { ...base, status: 'failed', text: 'failed to apply', reasons: [s.error] };
    if (s.analysis) {
      const analysis = analysisLines(s.analysis, r.entries);
      return s.analysis.passed
        ? { ...base, status: 'passed', text: 'passed', analysis }
        : { ...base, status: 'failed', text: 'failed its analysis', analysis, reasons: s.analysis.reasons };
    }
    // A step a promotion jumped over is kept without being applied.
    if (!s.appliedAt && !(index === current && r.phase === 'progressing'))
      return { ...base, status: ended ? 'skipped' : 'pending', text: ended ? 'not run' : 'pending' };
    if (index === current && r.phase === 'progressing') {
      const left = r.activity === 'waiting' ? secondsLeft(r.nextAt, now) : undefined;
      const text =
        r.activity === 'waiting'
          ? left !== undefined
            ? `waiting, analysis in ${left} s`
            : 'waiting'
          : r.activity
            ? ACTIVITY_TEXT[r.activity]
            : 'running';
      return { ...base, status: 'running', text };
    }
    if (index === current && r.phase === 'paused') return { ...base, status: 'paused', text: 'paused' };
    const judged = hasAnalysis(r.spec.analysis);
    // Without an analysis a step passes once the rollout moves on from it.
    if (!judged && (index < current || r.phase === 'succeeded'))
      return {
        ...base,
        status: 'passed',
        text: 'passed',
        analysis: ['no analysis: the step passed after its pause'],
      };
    // Promote applies the last step at once, without its analysis.
    if (r.phase === 'succeeded') return { ...base, status: 'passed', text: 'promoted, not analysed' };
    return { ...base, status: 'stopped', text: 'ended before its analysis' };
  });
}

/** The split now, entry by entry, with its weight before the rollout. */
export function weightsNow(
  r: Pick<RolloutState, 'entries' | 'weights' | 'initial' | 'canaryIndex'>,
): { name: string; weight: number; initial: number; percent: number; canary: boolean }[] {
  return r.entries.map((name, i) => ({
    name,
    weight: r.weights[i] ?? 0,
    initial: r.initial[i] ?? 0,
    percent: canaryPercent(r.weights, i),
    canary: i === r.canaryIndex,
  }));
}

/**
 * The toolbar's chip: a rollout under way or paused, or one that ended badly and this browser has not
 * opened. `short` is the start of `text` a narrow toolbar keeps (the rest goes to the chip's title).
 */
export function rolloutChip(
  rollouts: readonly RolloutState[],
  seen: ReadonlySet<string>,
): { id: string; text: string; short: string; tone: 'busy' | 'warn' | 'bad' } | undefined {
  const active = rollouts.find((r) => !rolloutEnded(r));
  const chip = (id: string, text: string, tone: 'busy' | 'warn' | 'bad', short = text) => ({
    id,
    text,
    short,
    tone,
  });
  if (active?.phase === 'paused') return chip(active.id, 'Rollout paused', 'warn');
  if (active) {
    if (active.activity === 'rolling back') return chip(active.id, 'Rollout: rolling back', 'warn');
    const step = active.steps.length;
    const last = active.steps[step - 1];
    if (!last) return chip(active.id, 'Rollout: starting', 'busy');
    const short = `Rollout: ${last.percent}%`;
    return chip(active.id, `${short} (step ${step} of ${active.spec.steps.length})`, 'busy', short);
  }
  const newest = rollouts[0];
  if (newest && (newest.phase === 'rolled-back' || newest.phase === 'failed') && !seen.has(newest.id))
    // A failed rollout may not have rolled back (its rollback can fail too): it says so.
    return chip(newest.id, newest.phase === 'failed' ? 'Rollout failed' : 'Rollout rolled back', 'bad');
  return undefined;
}

/** The apply history's words for a rollout's record: `rollout step 2 of 4 (25%)`, `rollout rolled back`. */
export function rolloutRecordText(r: NonNullable<ApplySummary['rollout']>): string {
  if (r.action === 'rollback') return 'rollout rolled back';
  return `rollout step ${(r.step ?? 0) + 1} of ${r.of} (${r.percent}%)`;
}
