/**
 * The console's "Progressive rollout…" form, pure: its fields as the user types them, their defaults
 * (the canary, steps that start above its share now, the listener that routes to the Target, the gRPC
 * clients' success rate and request floor), and the request built from them (RolloutSpecInput, checked
 * with the same schema and checks the server uses), with each problem, ours or the server's 400/422,
 * placed on the field it is about.
 */
import type { MeshGraph } from '../console/meshGraph';
import { virtualServiceListener } from '../console/probeForm';
import { formatFieldPath } from '../model/fieldPath';
import {
  canaryPercent,
  checkRollout,
  type ObjectRef,
  type RolloutProblem,
  RolloutSpec,
  type RolloutSpecInput,
} from './rollout';

/** A split as written: what the form chooses the canary from and compares. */
export type SplitEntries = readonly { serviceName: string; weight: number }[];

/** The form's fields, as text where the user types. */
export interface RolloutFormValues {
  canary: string;
  steps: string;
  pauseS: string;
  /** Probes through a listener after each step. */
  probe: boolean;
  listener: string;
  count: string;
  minSuccess: string;
  /** Empty: p99 is not judged. */
  maxP99: string;
  /** Judged by the RPCs proxyless gRPC clients report over each step's hold. */
  grpc: boolean;
  grpcMinSuccess: string;
  grpcMinRequests: string;
  /** Empty: no webhook. */
  webhook: string;
  onFailure: 'rollback' | 'pause';
}

/** Where a problem shows: a field of the form, or above its buttons (`form`). */
export type RolloutFormField = Exclude<keyof RolloutFormValues, 'probe'> | 'form';

export type RolloutFormErrors = Partial<Record<RolloutFormField, string[]>>;

/** Ready-made steps; the ones at or below the canary's share now are left out when one is picked. */
export const STEP_PRESETS: readonly { name: string; steps: readonly number[] }[] = [
  { name: 'gradual', steps: [10, 25, 50, 100] },
  { name: 'quick', steps: [50, 100] },
  { name: 'careful', steps: [5, 10, 20, 35, 50, 75, 100] },
];

/** A preset's steps from a share of `now` percent on, as the steps field writes them. */
export function presetText(steps: readonly number[], now: number): string {
  const above = steps.filter((s) => s > now);
  return (above.length ? above : [100]).join(', ');
}

/** The steps field (`10, 25, 50, 100`; `%` and spaces allowed) as numbers, or what is wrong with it. */
export function parseSteps(text: string): { steps: number[] } | { error: string } {
  const parts = text
    .split(/[\s,;]+/)
    .map((p) => p.trim())
    .filter(Boolean);
  if (parts.length === 0) return { error: 'give the canary’s share after each step, e.g. 10, 25, 50, 100' };
  const steps: number[] = [];
  for (const p of parts) {
    const m = /^(\d+)%?$/.exec(p);
    if (!m) return { error: `“${p}” is not a whole percentage (write e.g. 10, 25, 50, 100)` };
    const n = Number(m[1]);
    if (n < 1 || n > 100) return { error: `${n}% is outside 1 to 100` };
    const last = steps[steps.length - 1];
    if (last !== undefined && n <= last)
      return { error: `each step must be above the one before (${n}% after ${last}%)` };
    steps.push(n);
  }
  if (steps.length > 20) return { error: `at most 20 steps (${steps.length} given)` };
  return { steps };
}

/** The canary a rollout most likely means: the entry with the smallest weight (the last of equals). */
export function defaultCanary(split: SplitEntries): string | undefined {
  let best: SplitEntries[number] | undefined;
  for (const e of split) if (!best || e.weight <= best.weight) best = e;
  return best?.serviceName;
}

/** The canary's share of `split` in percent (0 when it is not there). */
export function shareOf(split: SplitEntries, canary: string): number {
  const i = split.findIndex((e) => e.serviceName === canary);
  return i < 0
    ? 0
    : canaryPercent(
        split.map((e) => e.weight),
        i,
      );
}

/**
 * The VirtualServices whose traffic reaches the Target node `targetId` (its rules' routes, chains),
 * as the probe's listener names them: the short name in `default`, else the long name. Only what
 * leads to the Target counts, not what its own backends are.
 */
export function listenersTo(
  graph: Pick<MeshGraph, 'edges' | 'listeners' | 'nodes'>,
  targetId: string,
): string[] {
  const into = new Map<string, string[]>();
  for (const e of graph.edges) {
    if (e.kind !== 'rule' && e.kind !== 'destination' && e.kind !== 'ingress' && e.kind !== 'egress')
      continue;
    let l = into.get(e.target);
    if (!l) into.set(e.target, (l = []));
    l.push(e.source);
  }
  const seen = new Set([targetId]);
  const queue = [targetId];
  for (let k = 0; k < queue.length; k++)
    for (const from of into.get(queue[k]!) ?? [])
      if (!seen.has(from)) {
        seen.add(from);
        queue.push(from);
      }
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  const out: string[] = [];
  for (const { node } of Object.values(graph.listeners)) {
    const n = byId.get(node);
    if (!n || !seen.has(node) || n.kind !== 'VirtualService') continue;
    out.push(n.namespace === 'default' ? n.name : virtualServiceListener(n.name, n.namespace));
  }
  return [...new Set(out)].sort();
}

/** The form as it opens: the canary with the smallest weight, steps from its share on, probes through `listener`. */
export function rolloutFormDefaults(split: SplitEntries, listener: string | undefined): RolloutFormValues {
  const canary = defaultCanary(split) ?? '';
  return {
    canary,
    steps: presetText(STEP_PRESETS[0]!.steps, shareOf(split, canary)),
    pauseS: '30',
    probe: listener !== undefined,
    listener: listener ?? '',
    count: '20',
    minSuccess: '95',
    maxP99: '',
    grpc: false,
    grpcMinSuccess: '99',
    grpcMinRequests: '20',
    webhook: '',
    onFailure: 'rollback',
  };
}

/** Which form field a request path (`steps.0`, `steps[0]`, `analysis.probe.count`) is about. */
export function fieldOfPath(path: string): RolloutFormField {
  const p = path.replace(/\[(\d+)\]/g, '.$1');
  const starts = (prefix: string) => p === prefix || p.startsWith(`${prefix}.`);
  if (starts('canary')) return 'canary';
  if (starts('steps')) return 'steps';
  if (starts('pauseS')) return 'pauseS';
  if (starts('onFailure')) return 'onFailure';
  if (starts('analysis.probe.count')) return 'count';
  if (starts('analysis.probe.minSuccessPercent')) return 'minSuccess';
  if (starts('analysis.probe.maxP99Ms')) return 'maxP99';
  if (starts('analysis.probe')) return 'listener';
  if (starts('analysis.grpc.minSuccessPercent')) return 'grpcMinSuccess';
  if (starts('analysis.grpc.minRequests')) return 'grpcMinRequests';
  if (starts('analysis.grpc')) return 'grpc';
  if (starts('analysis.webhook')) return 'webhook';
  return 'form';
}

/** Problems (a 400's or 422's `fields`, or our own) by the form field they belong to. */
export function formErrorsOf(fields: readonly RolloutProblem[]): RolloutFormErrors {
  const out: RolloutFormErrors = {};
  for (const f of fields) {
    const at = fieldOfPath(f.path);
    // A problem of the whole request (the Target) says what it is about.
    const text = at === 'form' && f.path && f.path !== '(body)' ? `${f.path}: ${f.message}` : f.message;
    (out[at] ??= []).push(text);
  }
  return out;
}

/** A number field: the number, or why not. */
function numberField(text: string, what: string): number | string {
  const t = text.trim();
  if (!t) return `give ${what}`;
  const n = Number(t);
  return Number.isFinite(n) ? n : `“${t}” is not a number`;
}

/**
 * The request the form stands for, or its problems by field. `running` is the Target's split as it
 * runs (when known): the canary must be in it and the first step above its share there, as the
 * server checks (lib/rollout/rollout.ts checkRollout).
 */
export function buildRolloutSpec(
  target: ObjectRef,
  v: RolloutFormValues,
  running?: SplitEntries,
): { spec: RolloutSpecInput } | { errors: RolloutFormErrors } {
  const errors: RolloutFormErrors = {};
  const put = (field: RolloutFormField, message: string) => (errors[field] ??= []).push(message);
  const steps = parseSteps(v.steps);
  if ('error' in steps) put('steps', steps.error);
  const pauseS = numberField(v.pauseS, 'a pause in seconds');
  if (typeof pauseS === 'string') put('pauseS', pauseS);
  let probe: NonNullable<RolloutSpecInput['analysis']>['probe'];
  if (v.probe) {
    const count = numberField(v.count, 'how many probes');
    const minSuccess = numberField(v.minSuccess, 'the share of probes that must answer');
    const maxP99 = v.maxP99.trim() ? numberField(v.maxP99, 'a latency in ms') : undefined;
    if (!v.listener.trim()) put('listener', 'name the VirtualService the probes go through');
    if (typeof count === 'string') put('count', count);
    if (typeof minSuccess === 'string') put('minSuccess', minSuccess);
    if (typeof maxP99 === 'string') put('maxP99', maxP99);
    if (typeof count === 'number' && typeof minSuccess === 'number' && typeof maxP99 !== 'string')
      probe = {
        listener: v.listener.trim(),
        count,
        minSuccessPercent: minSuccess,
        ...(maxP99 !== undefined ? { maxP99Ms: maxP99 } : {}),
      };
  }
  let grpc: NonNullable<RolloutSpecInput['analysis']>['grpc'];
  if (v.grpc) {
    const minSuccess = numberField(v.grpcMinSuccess, 'the share of RPCs that must succeed');
    const minRequests = numberField(v.grpcMinRequests, 'how many RPCs at least');
    if (typeof minSuccess === 'string') put('grpcMinSuccess', minSuccess);
    if (typeof minRequests === 'string') put('grpcMinRequests', minRequests);
    if (typeof minSuccess === 'number' && typeof minRequests === 'number')
      grpc = { minSuccessPercent: minSuccess, minRequests };
  }
  if (Object.keys(errors).length > 0) return { errors };
  const spec: RolloutSpecInput = {
    target,
    canary: v.canary,
    steps: 'steps' in steps ? steps.steps : [],
    pauseS: pauseS as number,
    analysis: {
      ...(probe ? { probe } : {}),
      ...(grpc ? { grpc } : {}),
      ...(v.webhook.trim() ? { webhook: { url: v.webhook.trim() } } : {}),
    },
    onFailure: v.onFailure,
  };
  // The schema's own words for ranges and URLs, so the form and the server's 400 say the same.
  const parsed = RolloutSpec.safeParse(spec);
  if (!parsed.success)
    return {
      errors: formErrorsOf(
        parsed.error.issues.map((i) => ({
          path: formatFieldPath(i.path as PropertyKey[]),
          message: i.message,
        })),
      ),
    };
  if (running) {
    const problems = checkRollout(parsed.data, running);
    if (problems.length) return { errors: formErrorsOf(problems) };
  }
  return { spec };
}

/** `echo-v1 80, echo-v2 20`. */
export function splitText(split: SplitEntries): string {
  return split.map((e) => `${e.serviceName} ${e.weight}`).join(', ');
}

/** Whether the draft's split is not the one that runs (other entries or weights). */
export function splitsDiffer(draft: SplitEntries, running: SplitEntries): boolean {
  return (
    draft.length !== running.length ||
    draft.some((e, i) => e.serviceName !== running[i]!.serviceName || e.weight !== running[i]!.weight)
  );
}
