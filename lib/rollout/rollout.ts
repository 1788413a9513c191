/**
 * Progressive canary rollouts: the weight of one backend of a Target's `split` moved step by step
 * (Flagger's and Argo Rollouts' canary steps), each step applied to what runs, held for a pause, then
 * judged by an analysis: probes sent through a listener of the mesh (success rate, latency, which
 * backend answered), what the proxyless gRPC clients reported of their RPCs to the canary (LRS, as
 * Flagger judges a request success rate, without Prometheus) and an optional webhook that must answer 2xx. A failed analysis rolls the split back
 * to the weights it had before the rollout (or pauses it, as the spec says). Pure: the schemas of the
 * spec and of the state the server keeps (server/rollout/RolloutRunner.ts) and shows in the console, and
 * the decisions between steps.
 */
import { z } from 'zod';
import { moveWeight } from '../console/splitWeights';
import type { LoadTotals } from '../xds/loadReports';

/** A namespaced object's name. */
export const ObjectRef = z.strictObject({
  namespace: z.string().min(1).max(253).default('default'),
  name: z.string().min(1).max(253),
});
export type ObjectRef = z.infer<typeof ObjectRef>;

/** Probes through a listener after each step (local mesh: probes are sent on this host only). */
export const RolloutProbe = z.strictObject({
  /** The VirtualService (short or long name) or l7mp listener the probes go through. */
  listener: z.string().min(1).max(253),
  /** The proxy (pod or namespace/pod) when the listener runs on several. */
  proxy: z.string().min(1).max(253).optional(),
  /** Probes per analysis, each a new flow (a new source port), so each picks a backend by weight. */
  count: z.number().int().min(1).max(200).default(20),
  payload: z.string().min(1).max(1000).default('meshdeck-rollout'),
  /** The client address (and port: then every probe is the same flow) the probes are sent from. */
  from: z
    .strictObject({ address: z.string().min(1), port: z.number().int().min(0).max(65535).optional() })
    .optional(),
  /** How long one probe waits for its echo. */
  timeoutMs: z.number().int().min(10).max(10_000).default(1000),
  /** The share of probes that must come back, in percent. */
  minSuccessPercent: z.number().min(0).max(100).default(95),
  /** The highest p99 latency of the answered probes allowed, in ms; absent: not judged. */
  maxP99Ms: z.number().positive().max(60_000).optional(),
});
export type RolloutProbe = z.infer<typeof RolloutProbe>;

/**
 * The canary judged by the RPCs proxyless gRPC clients reported (LRS) over the step's hold window:
 * from when its weights were applied until its analysis.
 */
export const RolloutGrpc = z.strictObject({
  /** The share of the canary's finished RPCs (succeeded + failed) that must have succeeded, in percent. */
  minSuccessPercent: z.number().min(0).max(100).default(99),
  /** The fewest finished RPCs to the canary that can be judged; fewer fail the step. */
  minRequests: z.number().int().min(1).max(1_000_000).default(20),
});
export type RolloutGrpc = z.infer<typeof RolloutGrpc>;

/** A URL the server POSTs each step's state to; any answer but 2xx (or none in time) fails the step. */
export const RolloutWebhook = z.strictObject({
  url: z
    .string()
    .max(2048)
    .refine((u) => /^https?:\/\/[^\s/]+/i.test(u) && URL.canParse(u), 'an http:// or https:// URL'),
  timeoutMs: z.number().int().min(100).max(60_000).default(5000),
});
export type RolloutWebhook = z.infer<typeof RolloutWebhook>;

/** What a user asks for (POST /api/rollouts). */
export const RolloutSpec = z
  .strictObject({
    /** The Target whose split moves. */
    target: ObjectRef,
    /** The split entry (its `serviceName`) whose share grows. */
    canary: z.string().min(1).max(253),
    /** The canary's share after each step, in percent, increasing; 100 makes it the only backend. */
    steps: z.array(z.number().int().min(1).max(100)).min(1).max(20),
    /** How long each step runs before its analysis, in seconds. */
    pauseS: z.number().min(0).max(86_400).default(30),
    analysis: z
      .strictObject({
        probe: RolloutProbe.optional(),
        grpc: RolloutGrpc.optional(),
        webhook: RolloutWebhook.optional(),
      })
      .default({}),
    /** A failed step rolls the split back to its weights before the rollout, or pauses the rollout there. */
    onFailure: z.enum(['rollback', 'pause']).default('rollback'),
  })
  .superRefine((s, ctx) => {
    for (let i = 1; i < s.steps.length; i++) {
      if (s.steps[i]! <= s.steps[i - 1]!)
        ctx.addIssue({
          code: 'custom',
          path: ['steps', i],
          message: `each step must be above the one before (${s.steps[i]}% after ${s.steps[i - 1]}%)`,
        });
    }
  });
export type RolloutSpec = z.infer<typeof RolloutSpec>;
export type RolloutSpecInput = z.input<typeof RolloutSpec>;

/** The probes of one analysis, summed up. */
export const ProbeAnalysis = z.strictObject({
  sent: z.number().int().nonnegative(),
  answered: z.number().int().nonnegative(),
  successPercent: z.number(),
  p50Ms: z.number().optional(),
  p99Ms: z.number().optional(),
  /** Answers per split entry (the backend whose pod echoed); `other` for an answer from none of them. */
  byBackend: z.record(z.string(), z.number().int().nonnegative()),
  /** The first distinct errors (at most 3). */
  errors: z.array(z.string()),
});
export type ProbeAnalysis = z.infer<typeof ProbeAnalysis>;

/** One split entry's RPCs in a gRPC analysis: finished ones (`requests`), and how they ended. */
export const GrpcBackendLoad = z.strictObject({
  requests: z.number().int().nonnegative(),
  succeeded: z.number().int().nonnegative(),
  failed: z.number().int().nonnegative(),
});
export type GrpcBackendLoad = z.infer<typeof GrpcBackendLoad>;

/** What the proxyless gRPC clients reported of the canary over a step's hold window. */
export const GrpcAnalysis = z.strictObject({
  /** The canary's xDS cluster. */
  cluster: z.string(),
  /** The canary's finished RPCs (succeeded + failed). */
  requests: z.number().int().nonnegative(),
  succeeded: z.number().int().nonnegative(),
  failed: z.number().int().nonnegative(),
  /** succeeded / requests in percent, to one decimal; null when none finished. */
  successPercent: z.number().nullable(),
  /** Every split entry's RPCs (0 for one that got none), so the split the clients made shows. */
  byBackend: z.record(z.string(), GrpcBackendLoad),
  /** The reports that arrived in (from, to] were counted (ISO 8601). */
  window: z.strictObject({ from: z.string(), to: z.string() }),
});
export type GrpcAnalysis = z.infer<typeof GrpcAnalysis>;

export const WebhookAnalysis = z.strictObject({
  ok: z.boolean(),
  status: z.number().int().optional(),
  error: z.string().optional(),
  ms: z.number(),
});
export type WebhookAnalysis = z.infer<typeof WebhookAnalysis>;

/** One step's analysis and its verdict. */
export const StepAnalysis = z.strictObject({
  at: z.string(),
  probe: ProbeAnalysis.optional(),
  grpc: GrpcAnalysis.optional(),
  webhook: WebhookAnalysis.optional(),
  passed: z.boolean(),
  /** Why it failed (empty when it passed). */
  reasons: z.array(z.string()),
});
export type StepAnalysis = z.infer<typeof StepAnalysis>;

/** One step as it went. */
export const RolloutStep = z.strictObject({
  /** The canary's share this step sets, in percent. */
  percent: z.number(),
  /** The split's weights this step sets, in the split's order. */
  weights: z.array(z.number().int().nonnegative()),
  /** When the weights were applied. */
  appliedAt: z.string().optional(),
  /** The apply history's record of the step. */
  historyId: z.number().int().positive().optional(),
  /** Applying the step failed (nothing to analyse). */
  error: z.string().optional(),
  analysis: StepAnalysis.optional(),
});
export type RolloutStep = z.infer<typeof RolloutStep>;

export const RolloutPhase = z.enum([
  'progressing',
  'paused',
  'succeeded',
  'rolled-back',
  'aborted',
  'failed',
]);
export type RolloutPhase = z.infer<typeof RolloutPhase>;

/** Phases a rollout does not leave. */
export const ENDED_PHASES: ReadonlySet<RolloutPhase> = new Set([
  'succeeded',
  'rolled-back',
  'aborted',
  'failed',
]);

/** A rollout as the server keeps it and the console shows it (GET /api/rollouts). */
export const RolloutState = z.strictObject({
  id: z.string(),
  spec: RolloutSpec,
  /** Who started it. */
  user: z.string(),
  /** Where it runs. */
  target: z.enum(['local-mesh', 'cluster']),
  startedAt: z.string(),
  updatedAt: z.string(),
  endedAt: z.string().optional(),
  phase: RolloutPhase,
  /** What it is doing now, while progressing. */
  activity: z.enum(['applying', 'waiting', 'analysing', 'rolling back']).optional(),
  /** When the current step's pause ends (ISO 8601), while waiting. */
  nextAt: z.string().optional(),
  /** The split's entries (serviceName) in order, and their weights before the rollout and now. */
  entries: z.array(z.string()),
  initial: z.array(z.number().int().nonnegative()),
  weights: z.array(z.number().int().nonnegative()),
  /** The index in `entries` of the canary. */
  canaryIndex: z.number().int().nonnegative(),
  /** With a gRPC analysis: the xDS cluster of each entry (in `entries`' order) the clients report. */
  clusters: z.array(z.string()).optional(),
  /** Every step started so far, in order (a step's index is its index in spec.steps). */
  steps: z.array(RolloutStep),
  /** Why it paused, failed, was rolled back or aborted. */
  message: z.string().optional(),
  /** The apply history's record of the rollback. */
  rollbackHistoryId: z.number().int().positive().optional(),
});
export type RolloutState = z.infer<typeof RolloutState>;

/** A rollout ID: start time and a random suffix, sortable. */
export function rolloutId(now: Date, random: () => number = Math.random): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `${stamp}-${Math.floor(random() * 36 ** 4)
    .toString(36)
    .padStart(4, '0')}`;
}

/** The split's weights with the canary at `percent` and the others sharing the rest as they did before. */
export function stepWeights(initial: readonly number[], canaryIndex: number, percent: number): number[] {
  return moveWeight(initial, [], canaryIndex, percent);
}

/** The canary's share of the split in percent, to one decimal. */
export function canaryPercent(weights: readonly number[], canaryIndex: number): number {
  const total = weights.reduce((a, b) => a + b, 0);
  if (total <= 0) return 0;
  return Math.round(((weights[canaryIndex] ?? 0) / total) * 1000) / 10;
}

/** A problem with a rollout request against the split it would move: the field and why. */
export interface RolloutProblem {
  path: string;
  message: string;
}

/**
 * Where proxyless gRPC clients report a Target's split (lib/rollout/grpcRouting.ts): the xDS cluster of
 * each entry and the clients whose routes lead there, or why a gRPC analysis cannot judge it.
 */
export type GrpcRouting = { clusters: string[]; clients: string[] } | { error: string };

/**
 * Whether `spec` can start on a Target whose split is `split` (undefined: no such Target, or it has no
 * split): the canary must be one of its entries and the first step above the canary's share now; with
 * a gRPC analysis, `grpc` (when known) must name clients that report the split.
 */
export function checkRollout(
  spec: RolloutSpec,
  split: readonly { serviceName: string; weight: number }[] | undefined,
  grpc?: GrpcRouting,
): RolloutProblem[] {
  const name = `Target ${spec.target.namespace}/${spec.target.name}`;
  if (!split) return [{ path: 'target', message: `${name} does not run with a split` }];
  const entries = split.map((e) => e.serviceName);
  const index = entries.indexOf(spec.canary);
  if (index < 0)
    return [
      {
        path: 'canary',
        message: `${spec.canary} is not in the split of ${name} (it has ${entries.join(', ')})`,
      },
    ];
  if (entries.indexOf(spec.canary, index + 1) >= 0)
    return [{ path: 'canary', message: `${spec.canary} is in the split of ${name} more than once` }];
  if (split.length < 2)
    return [{ path: 'target', message: `${name}'s split has one entry: there is nothing to shift from` }];
  const now = canaryPercent(
    split.map((e) => e.weight),
    index,
  );
  if (spec.steps[0]! <= now)
    return [
      {
        path: 'steps.0',
        message: `the first step (${spec.steps[0]}%) must be above the canary's share now (${now}%)`,
      },
    ];
  if (spec.analysis.grpc && grpc && 'error' in grpc) return [{ path: 'analysis.grpc', message: grpc.error }];
  return [];
}

/** Whether a spec judges its steps at all (without an analysis a step passes after its pause). */
export function hasAnalysis(analysis: RolloutSpec['analysis']): boolean {
  return analysis.probe !== undefined || analysis.grpc !== undefined || analysis.webhook !== undefined;
}

/** The pod that answered a probe, from the demo apps' echo `<pod>(<payload>)`; undefined for another answer. */
export function replyPod(reply: string | undefined): string | undefined {
  const m = reply ? /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?)\(/.exec(reply) : null;
  return m?.[1];
}

/** One probe's outcome as the analysis reads it. */
export interface ProbeOutcome {
  ok: boolean;
  reply?: string;
  latencyMs?: number;
  error?: string;
}

/** The nearest-rank percentile of sorted numbers (undefined for none); shared with lib/console/trafficTest.ts. */
export function nearestRank(sorted: readonly number[], p: number): number | undefined {
  if (sorted.length === 0) return undefined;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** Sums up one analysis's probes; `backendOf` names the split entry a pod belongs to. */
export function summariseProbes(
  outcomes: readonly ProbeOutcome[],
  backendOf: (pod: string) => string | undefined,
): ProbeAnalysis {
  const answered = outcomes.filter((o) => o.ok);
  const latencies = answered
    .map((o) => o.latencyMs)
    .filter((l): l is number => l !== undefined)
    .sort((a, b) => a - b);
  const byBackend: Record<string, number> = {};
  for (const o of answered) {
    const pod = replyPod(o.reply);
    const backend = (pod && backendOf(pod)) ?? 'other';
    byBackend[backend] = (byBackend[backend] ?? 0) + 1;
  }
  const errors = [...new Set(outcomes.filter((o) => !o.ok).map((o) => o.error ?? 'no answer'))].slice(0, 3);
  const p50 = nearestRank(latencies, 50);
  const p99 = nearestRank(latencies, 99);
  return {
    sent: outcomes.length,
    answered: answered.length,
    successPercent: outcomes.length === 0 ? 0 : Math.round((answered.length / outcomes.length) * 1000) / 10,
    ...(p50 !== undefined ? { p50Ms: p50 } : {}),
    ...(p99 !== undefined ? { p99Ms: p99 } : {}),
    byBackend,
    errors,
  };
}

/** What the gRPC clients reported over a step's window (`totals` per xDS cluster), for the split's entries. */
export function summariseLoad(
  totals: Readonly<Record<string, LoadTotals>>,
  o: {
    entries: readonly string[];
    clusters: readonly string[];
    canaryIndex: number;
    fromMs: number;
    toMs: number;
  },
): GrpcAnalysis {
  const byBackend: Record<string, GrpcBackendLoad> = {};
  o.entries.forEach((entry, i) => {
    const t = totals[o.clusters[i] ?? ''];
    const succeeded = t?.succeeded ?? 0;
    const failed = t?.failed ?? 0;
    byBackend[entry] = { requests: succeeded + failed, succeeded, failed };
  });
  const canary = byBackend[o.entries[o.canaryIndex] ?? ''] ?? { requests: 0, succeeded: 0, failed: 0 };
  return {
    cluster: o.clusters[o.canaryIndex] ?? '',
    ...canary,
    successPercent:
      canary.requests === 0 ? null : Math.round((canary.succeeded / canary.requests) * 1000) / 10,
    byBackend,
    window: { from: new Date(o.fromMs).toISOString(), to: new Date(o.toMs).toISOString() },
  };
}

/** The window's length in seconds, to one decimal. */
export function windowSeconds(w: GrpcAnalysis['window']): number {
  return Math.max(0, Math.round((Date.parse(w.to) - Date.parse(w.from)) / 100) / 10);
}

/** The verdict on one step: every analysis the spec asks for must pass. */
export function judgeStep(
  analysis: RolloutSpec['analysis'],
  results: { probe?: ProbeAnalysis; grpc?: GrpcAnalysis; webhook?: WebhookAnalysis },
  at: Date,
): StepAnalysis {
  const reasons: string[] = [];
  const { probe, grpc, webhook } = results;
  if (analysis.probe) {
    if (!probe) reasons.push('the probes did not run');
    else {
      if (probe.successPercent < analysis.probe.minSuccessPercent)
        reasons.push(
          `${probe.answered} of ${probe.sent} probes answered (${probe.successPercent}%, at least ${analysis.probe.minSuccessPercent}% needed)` +
            (probe.errors.length ? `: ${probe.errors.join('; ')}` : ''),
        );
      if (
        analysis.probe.maxP99Ms !== undefined &&
        probe.p99Ms !== undefined &&
        probe.p99Ms > analysis.probe.maxP99Ms
      )
        reasons.push(
          `the probes' p99 latency was ${probe.p99Ms} ms (at most ${analysis.probe.maxP99Ms} ms allowed)`,
        );
    }
  }
  if (analysis.grpc) {
    const want = analysis.grpc;
    if (!grpc) reasons.push("the gRPC clients' load reports were not read");
    else {
      // Exact, not the rounded percentage: 98.96% must not pass a 99% bar. Said also when there were too
      // few RPCs to pass: a canary failing every call must read as failing, not only as quiet.
      if (grpc.requests > 0 && grpc.succeeded * 100 < want.minSuccessPercent * grpc.requests)
        reasons.push(
          `the canary's success rate was ${grpc.successPercent}% (${grpc.succeeded} of ${grpc.requests} RPCs succeeded, at least ${want.minSuccessPercent}% needed)`,
        );
      // Flagger halts on "no values found"; here too few RPCs is a failed analysis, so onFailure decides.
      if (grpc.requests < want.minRequests)
        reasons.push(
          `too few requests: the gRPC clients reported ${grpc.requests} finished RPC${grpc.requests === 1 ? '' : 's'} to the canary (${grpc.cluster}) in ${windowSeconds(grpc.window)} s, at least ${want.minRequests} needed to judge it`,
        );
    }
  }
  if (analysis.webhook) {
    if (!webhook) reasons.push('the webhook was not called');
    else if (!webhook.ok)
      reasons.push(
        `the webhook ${webhook.status !== undefined ? `answered ${webhook.status}` : `failed: ${webhook.error ?? 'no answer'}`}`,
      );
  }
  return {
    at: at.toISOString(),
    ...(probe ? { probe } : {}),
    ...(grpc ? { grpc } : {}),
    ...(webhook ? { webhook } : {}),
    passed: reasons.length === 0,
    reasons,
  };
}

/** What the runner does after a step's verdict. */
export type NextMove = { do: 'next'; step: number } | { do: 'done' } | { do: 'rollback' } | { do: 'pause' };

/** After step `step` was judged: the next step, done after the last, or the spec's onFailure. */
export function nextMove(spec: RolloutSpec, step: number, verdict: Pick<StepAnalysis, 'passed'>): NextMove {
  if (!verdict.passed) return { do: spec.onFailure === 'pause' ? 'pause' : 'rollback' };
  return step + 1 < spec.steps.length ? { do: 'next', step: step + 1 } : { do: 'done' };
}
