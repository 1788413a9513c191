/**
 * A Target's split between the console's applies and progressive rollouts in Kubernetes mode (pure; the
 * requests are server/kube/clusterApply.ts's). A rollout writes `spec.split` alone under a field manager
 * of its own, and server-side apply removes a field only when no manager owns it any more, so a console
 * apply (manager `meshdeck`) of a draft without the split would leave the rollout's split in place, and
 * one with a `serviceName` instead would be refused as a Target with two sources (the CRD's CEL rule).
 * Decided per Target, before anything is written:
 * - a rollout that has not ended (progressing or paused) moves the split: an apply that changes, removes
 *   or prunes it is refused, since the rollout would write its next step over it, or roll it back;
 *   a draft with the split exactly as it runs is applied as usual;
 * - none does, the draft has no split and the split in the cluster is the rollout manager's: that
 *   ownership is released in the same apply, by the transfer the Kubernetes docs describe
 *   ("Transferring ownership between managers"): `meshdeck` applies the draft with the split as it runs
 *   (both managers own it, nothing changes), the rollout's manager applies nothing (it gives the split
 *   up; it stays, `meshdeck` owns it), then `meshdeck` applies the draft (no manager owns the split any
 *   more: the API server removes it). Every state in between is a valid Target that still has a backend:
 *   never one without its split and without what replaces it.
 */
import { ENDED_PHASES, type RolloutState } from '@/lib/rollout/rollout';
import { jsonEqual } from '@/lib/util/jsonEqual';

/**
 * The field manager of a rollout's writes (server/rollout/clusterRolloutTarget.ts). Not the console's
 * `meshdeck`: the step applies a partial Target (its split alone), and server-side apply would remove
 * every other field `meshdeck` owned (the protocol, the load balancer, ...) from an apply of the same
 * manager that leaves them out. Under its own manager the rollout owns `spec.split` only, taken over with
 * force as Flagger owns a canary's weights.
 */
export const ROLLOUT_FIELD_MANAGER = 'meshdeck-rollout';

/** The Status reason of an apply refused because a rollout moves the Target's split (HTTP 409). */
export const ROLLOUT_IN_PROGRESS = 'RolloutInProgress';

/** The field a rollout writes. */
export const SPLIT_FIELD = 'spec.split';

/** The split's alternatives: the CRD lets a Target have one of them or the split (lib/model/resources.ts). */
const SPLIT_ALTERNATIVES = ['serviceName', 'endpoints'] as const;

/** What the decision reads of a rollout (RolloutRunner.list()'s states). */
export type RolloutOnTarget = Pick<RolloutState, 'id' | 'phase' | 'spec' | 'steps'> &
  Partial<Pick<RolloutState, 'target'>>;

/** A manager's claim on `spec.split` in an object's managedFields. */
export interface SplitOwner {
  manager: string;
  /** `Apply` (server-side apply) or `Update` (any other write). */
  operation: string;
}

export type SplitDecision =
  /** Nothing of the split's to do: the apply goes as it would. */
  | { do: 'apply' }
  /** Refused (409): a rollout that has not ended moves the split, and the apply would change it. */
  | { do: 'refuse'; rollout: string; message: string }
  /**
   * The rollout's manager gives up the split (see the module comment): `share` is the draft with the
   * split as it runs, applied first by the console's manager.
   */
  | { do: 'release'; manager: string; share: Record<string, unknown> };

export interface SplitDecisionInput {
  kind: string;
  namespace: string;
  name: string;
  /** The object the apply sends (null: it deletes the object, a prune). */
  draft: Record<string, unknown> | null;
  /** The object in the cluster now, with its managedFields (null: none). */
  live: Record<string, unknown> | null;
  /** The rollouts this server keeps (ended ones and the local mesh's are ignored). */
  rollouts: readonly RolloutOnTarget[];
  /** The field manager of the console's applies (`meshdeck`). */
  consoleManager: string;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const specOf = (o: Record<string, unknown>): Record<string, unknown> => (isRecord(o.spec) ? o.spec : {});

/** The managers that own `spec.split` in `obj`'s managedFields. */
export function splitOwners(obj: Record<string, unknown>): SplitOwner[] {
  const meta = isRecord(obj.metadata) ? obj.metadata : {};
  const entries = Array.isArray(meta.managedFields) ? meta.managedFields : [];
  return entries
    .filter(isRecord)
    .filter((m) => {
      const fields = isRecord(m.fieldsV1) ? m.fieldsV1 : {};
      const spec = fields['f:spec'];
      return isRecord(spec) && 'f:split' in spec;
    })
    .map((m) => ({
      manager: typeof m.manager === 'string' ? m.manager : '',
      operation: typeof m.operation === 'string' ? m.operation : '',
    }));
}

/** `echo-v1 50, echo-v2 50`: a split's entries as they read. */
export function splitText(split: unknown): string {
  if (!Array.isArray(split)) return JSON.stringify(split);
  return split
    .map((e) => (isRecord(e) ? `${String(e.serviceName)} ${String(e.weight)}` : JSON.stringify(e)))
    .join(', ');
}

/** Where rollout `r` is: `paused at step 2 of 4 (25%)`, or `starting` before its first step. */
function progressText(r: RolloutOnTarget): string {
  const k = r.steps.length;
  if (k === 0) return r.phase === 'progressing' ? 'starting' : r.phase;
  return `${r.phase} at step ${k} of ${r.spec.steps.length} (${r.steps[k - 1]!.percent}%)`;
}

/** The rollout that has not ended on Target `namespace/name` in the cluster, if any. */
export function runningRolloutOn(
  rollouts: readonly RolloutOnTarget[],
  namespace: string,
  name: string,
): RolloutOnTarget | undefined {
  return rollouts.find(
    (r) =>
      !ENDED_PHASES.has(r.phase) &&
      r.target !== 'local-mesh' &&
      r.spec.target.namespace === namespace &&
      r.spec.target.name === name,
  );
}

/** What an apply does with Target `input`'s split; see the module comment. */
export function splitDecision(input: SplitDecisionInput): SplitDecision {
  const { kind, namespace, name, draft, live } = input;
  if (kind !== 'Target' || !live) return { do: 'apply' };
  const liveSplit = specOf(live).split;
  if (liveSplit === undefined) return { do: 'apply' };
  const draftSplit = draft ? specOf(draft).split : undefined;
  const running = runningRolloutOn(input.rollouts, namespace, name);
  if (running) {
    if (draft && jsonEqual(draftSplit, liveSplit)) return { do: 'apply' };
    const change = !draft
      ? 'delete the Target'
      : draftSplit === undefined
        ? 'remove its split'
        : `change its split to ${splitText(draftSplit)}`;
    const keep = draft ? ` (or apply a draft that leaves the split as it runs: ${splitText(liveSplit)})` : '';
    return {
      do: 'refuse',
      rollout: running.id,
      message:
        `Target ${namespace}/${name}: rollout ${running.id} of ${running.spec.canary} is ${progressText(running)} ` +
        `and moves its split; this apply would ${change}. ` +
        `Abort or finish the rollout first, then apply again${keep}`,
    };
  }
  if (!draft || draftSplit !== undefined) return { do: 'apply' };
  const owners = splitOwners(live);
  if (!owners.some((o) => o.manager === ROLLOUT_FIELD_MANAGER && o.operation === 'Apply'))
    return { do: 'apply' };
  // Another writer's claim (kubectl edit, another tool) would keep the split after the transfer: then
  // the apply goes as it would, and the API server says what it makes of it.
  const ours = (o: SplitOwner) =>
    o.operation === 'Apply' && (o.manager === ROLLOUT_FIELD_MANAGER || o.manager === input.consoleManager);
  if (!owners.every(ours)) return { do: 'apply' };
  return { do: 'release', manager: ROLLOUT_FIELD_MANAGER, share: shareBody(draft, liveSplit) };
}

/**
 * The draft as the console's manager applies it first in a release: with the split as it runs and
 * without the split's alternatives (the CRD refuses a Target with both; the draft's own apply adds them).
 */
export function shareBody(draft: Record<string, unknown>, liveSplit: unknown): Record<string, unknown> {
  const body = structuredClone(draft);
  const spec: Record<string, unknown> = { ...specOf(body) };
  for (const k of SPLIT_ALTERNATIVES) delete spec[k];
  spec.split = structuredClone(liveSplit);
  body.spec = spec;
  return body;
}

/**
 * What a release makes of the object, from the API server's dry-run answer for the share body (the
 * preview's `result`): its split gone and the draft's alternatives to it in place.
 */
export function releasedResult(
  shared: Record<string, unknown>,
  draft: Record<string, unknown>,
): Record<string, unknown> {
  const out = structuredClone(shared);
  const spec: Record<string, unknown> = { ...specOf(out) };
  delete spec.split;
  const draftSpec = specOf(draft);
  for (const k of SPLIT_ALTERNATIVES) if (draftSpec[k] !== undefined) spec[k] = structuredClone(draftSpec[k]);
  out.spec = spec;
  return out;
}
