/**
 * Rollouts in every phase, as GET /api/rollouts answers them, for the unit and component tests: echo-v2
 * of examples/canary's Target moved 0 -> 10 -> 25 -> 50 -> 100. Each is checked against the schema, so a
 * change of the contract shows here first.
 */
import { type RolloutPhase, RolloutState, type RolloutStep, type StepAnalysis } from './rollout';

export const T0 = Date.parse('2026-12-01T10:00:00.000Z');
const at = (s: number) => new Date(T0 + s * 1000).toISOString();

export function passed(s: number, byBackend: Record<string, number>): StepAnalysis {
  const answered = Object.values(byBackend).reduce((a, b) => a + b, 0);
  return {
    at: at(s),
    probe: {
      sent: 20,
      answered,
      successPercent: (answered / 20) * 100,
      p50Ms: 2,
      p99Ms: 7,
      byBackend,
      errors: [],
    },
    passed: true,
    reasons: [],
  };
}

export const FAILED_ANALYSIS: StepAnalysis = {
  at: at(95),
  probe: {
    sent: 20,
    answered: 12,
    successPercent: 60,
    p50Ms: 3,
    p99Ms: 41,
    byBackend: { 'echo-v1': 9, 'echo-v2': 3 },
    errors: ['no answer in 1000 ms'],
  },
  passed: false,
  reasons: ['12 of 20 probes answered (60%, at least 95% needed): no answer in 1000 ms'],
};

/** A gRPC analysis of a step applied at T0 + `from` s and judged at T0 + `to` s: the canary's RPCs failing. */
export function grpcFailed(from: number, to: number): StepAnalysis {
  return {
    at: at(to),
    grpc: {
      cluster: 'echo-split.default.target.cluster.local/echo-v2',
      requests: 50,
      succeeded: 0,
      failed: 50,
      successPercent: 0,
      byBackend: {
        'echo-v1': { requests: 250, succeeded: 250, failed: 0 },
        'echo-v2': { requests: 50, succeeded: 0, failed: 50 },
      },
      window: { from: at(from), to: at(to) },
    },
    passed: false,
    reasons: ["the canary's success rate was 0% (0 of 50 RPCs succeeded, at least 99% needed)"],
  };
}

const step = (percent: number, s: number, analysis?: StepAnalysis): RolloutStep => ({
  percent,
  weights: [100 - percent, percent],
  appliedAt: at(s),
  historyId: 10 + s,
  ...(analysis ? { analysis } : {}),
});

const STEP1 = step(10, 1, passed(32, { 'echo-v1': 18, 'echo-v2': 2 }));

/** A rollout in `phase`, as the server would have it `now` = T0 + 64 s. */
export function rolloutIn(phase: RolloutPhase, extra: Partial<RolloutState> = {}): RolloutState {
  const common = {
    id: `20261201T100000Z-${phase.slice(0, 4)}`,
    spec: {
      target: { namespace: 'default', name: 'echo-canary' },
      canary: 'echo-v2',
      steps: [10, 25, 50, 100],
      pauseS: 30,
      analysis: { probe: { listener: 'gateway', count: 20, minSuccessPercent: 95 } },
      onFailure: phase === 'paused' ? 'pause' : 'rollback',
    },
    user: 'local-admin',
    target: 'local-mesh' as const,
    startedAt: at(0),
    updatedAt: at(64),
    entries: ['echo-v1', 'echo-v2'],
    initial: [100, 0],
    canaryIndex: 1,
  };
  const byPhase: Record<RolloutPhase, Partial<RolloutState>> = {
    progressing: {
      activity: 'waiting',
      nextAt: at(76),
      weights: [75, 25],
      steps: [STEP1, step(25, 46)],
    },
    paused: {
      weights: [75, 25],
      steps: [STEP1, step(25, 46, FAILED_ANALYSIS)],
      message: `step 2 of 4 (25%) failed: ${FAILED_ANALYSIS.reasons[0]}; paused: resume to run it again, or abort`,
    },
    succeeded: {
      endedAt: at(160),
      weights: [0, 100],
      steps: [
        STEP1,
        step(25, 46, passed(77, { 'echo-v1': 15, 'echo-v2': 5 })),
        step(50, 78, passed(109, { 'echo-v1': 10, 'echo-v2': 10 })),
        step(100, 110, passed(141, { 'echo-v2': 20 })),
      ],
    },
    'rolled-back': {
      endedAt: at(96),
      weights: [100, 0],
      steps: [STEP1, step(25, 46, FAILED_ANALYSIS)],
      message: `step 2 of 4 (25%) failed: ${FAILED_ANALYSIS.reasons[0]}; rolled back to echo-v1 100, echo-v2 0`,
      rollbackHistoryId: 60,
    },
    aborted: {
      endedAt: at(50),
      weights: [100, 0],
      steps: [STEP1, step(25, 46)],
      message: 'aborted by local-admin; rolled back to echo-v1 100, echo-v2 0',
    },
    failed: {
      endedAt: at(50),
      weights: [75, 25],
      steps: [
        STEP1,
        { percent: 25, weights: [75, 25], error: 'the mesh directory could not be written: EACCES' },
      ],
      message:
        'step 2 of 4 (25%) failed: applying it failed: the mesh directory could not be written: EACCES; rolling back failed: EACCES',
    },
  };
  return RolloutState.parse({ ...common, phase, ...byPhase[phase], ...extra });
}

/** `now` for the fixtures: 12 s before the progressing rollout's analysis. */
export const NOW = T0 + 64_000;
