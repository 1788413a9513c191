/**
 * What the "Apply to cluster" panel shows of a server-side dry-run and of an apply (issue 7 §4): rows in
 * the order a reviewer reads them (problems first), the summary line, whether Apply is possible and why
 * not, the RBAC denials in words, and what each apply answer means. Pure: the panel renders these.
 */
import type { AccessDecision } from '@/server/kube/accessReview';
import { type ClusterChange, changesUndoneBy } from './clusterDrift';
import { ROLLOUT_IN_PROGRESS } from '@/lib/kube/rolloutSplit';
import type {
  ApiProblem,
  ApplyResult,
  DryRunResult,
  ObjectOutcome,
  ObjectPlan,
  ObjectRef,
  PlanAction,
} from '@/server/kube/clusterApply';

/**
 * POST /api/cluster/dry-run's answer (server/kube/clusterApplyRoutes.ts); `clusterChanges`: the mesh
 * objects changed in the cluster since the draft started (lib/console/clusterDrift.ts).
 */
export type ClusterDryRun = DryRunResult & {
  revision: number;
  access: AccessDecision;
  clusterChanges: ClusterChange[];
};

/** POST /api/cluster/apply's answer with 200, 502, and 409/422 when the gate refused. */
/** POST /api/cluster/apply's answer; `historyId`: the apply history's record of it, when one was kept. */
export type ClusterApplyAnswer = ApplyResult & { revision: number; historyId?: number };

/** The options a dry-run (and the apply after it) was made with. */
export interface ClusterApplyOptions {
  force: boolean;
  prune: boolean;
  /** Apply over the mesh objects changed in the cluster since the draft started (reverting them). */
  overwrite?: boolean;
}

/** The reading order: what blocks an apply, then what it changes, then what it leaves alone. */
const ORDER: readonly PlanAction[] = [
  'error',
  'conflict',
  'create',
  'update',
  'delete',
  'orphan',
  'unchanged',
  'skipped',
];

/** `Kind namespace/name`, a whole collection as `Kind objects in namespace`, a broken file as `file path`. */
export function objectLabel(ref: ObjectRef): string {
  if (ref.kind === '') return `file ${ref.file ?? ref.name}`;
  if (ref.name === '*') return `${ref.kind} objects in ${ref.namespace}`;
  return ref.namespace ? `${ref.kind} ${ref.namespace}/${ref.name}` : `${ref.kind} ${ref.name}`;
}

/**
 * An `error` row is `invalid` when the API server (or the draft's own parse) rejected its content: an
 * Invalid or BadRequest Status, or any refusal naming a field (kube-apiserver answers an apply it cannot
 * type, e.g. an unknown field, with 500 InternalError). Forbidden and the like are `refused`.
 */
export function isInvalid(p: ObjectPlan): boolean {
  if (p.action !== 'error' || !p.error) return false;
  const { reason, causes } = p.error;
  if (reason === 'Invalid' || reason === 'BadRequest') return true;
  return reason !== 'Forbidden' && reason !== 'Unauthorized' && causes.some((c) => c.field);
}

/**
 * An `error` row Meshdeck itself refused: the apply would change or remove the split of a Target a
 * progressive rollout is moving (lib/kube/rolloutSplit.ts). No Force takes it over.
 */
export function isRolloutHeld(p: ObjectPlan): boolean {
  return p.action === 'error' && p.error?.reason === ROLLOUT_IN_PROGRESS;
}

/** The word for a row's action in a dry-run. */
export function actionLabel(p: ObjectPlan): string {
  switch (p.action) {
    case 'create':
      return 'create';
    case 'update':
      return 'update';
    case 'unchanged':
      return 'unchanged';
    case 'delete':
      return 'delete (prune)';
    case 'orphan':
      return 'not in the draft';
    case 'conflict':
      return 'conflict';
    case 'skipped':
      return 'skipped';
    case 'error':
      if (isRolloutHeld(p)) return 'rollout running';
      return isInvalid(p) ? 'invalid' : p.error?.reason === 'Forbidden' ? 'forbidden' : 'refused';
  }
}

/** The word for a row after an apply: what was written, or why not. */
export function outcomeLabel(o: ObjectOutcome): string {
  if (o.done) {
    const done: Partial<Record<PlanAction, string>> = {
      create: 'created',
      update: 'updated',
      unchanged: 'unchanged',
      delete: 'deleted',
    };
    return done[o.action] ?? o.action;
  }
  if (o.action === 'orphan') return 'kept (not in the draft)';
  if (o.action === 'skipped') return 'skipped';
  if (o.action === 'error' || o.action === 'conflict') return `not applied: ${actionLabel(o)}`;
  return 'not applied';
}

/** The rows sorted for reading: by ORDER, then by object. */
export function sortRows<T extends ObjectPlan>(rows: readonly T[]): T[] {
  return [...rows].sort(
    (a, b) =>
      ORDER.indexOf(a.action) - ORDER.indexOf(b.action) ||
      (a.ref.key < b.ref.key ? -1 : a.ref.key > b.ref.key ? 1 : 0),
  );
}

/** How many rows of each action (errors split into rollout, invalid and refused, as the rows read). */
export function countRows(rows: readonly ObjectPlan[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of rows) {
    const k =
      r.action === 'error' ? (isRolloutHeld(r) ? 'rollout' : isInvalid(r) ? 'invalid' : 'refused') : r.action;
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** "3 to create, 1 to update, 2 unchanged, 1 conflict": the dry-run in one line. */
export function summaryLine(rows: readonly ObjectPlan[]): string {
  const c = countRows(rows);
  const parts: string[] = [];
  if (c.create) parts.push(`${c.create} to create`);
  if (c.update) parts.push(`${c.update} to update`);
  if (c.delete) parts.push(`${c.delete} to delete`);
  if (c.unchanged) parts.push(`${c.unchanged} unchanged`);
  if (c.conflict) parts.push(plural(c.conflict, 'conflict', 'conflicts'));
  if (c.invalid) parts.push(`${c.invalid} invalid`);
  if (c.refused) parts.push(`${c.refused} refused`);
  if (c.rollout) parts.push(`${c.rollout} held by a running rollout`);
  if (c.orphan) parts.push(`${c.orphan} no longer in the draft`);
  if (c.skipped) parts.push(`${c.skipped} skipped`);
  return parts.length ? parts.join(', ') : 'the draft has no objects';
}

/** "2 created, 1 updated, 1 failed": an apply's outcome in one line. */
export function outcomeSummary(objects: readonly ObjectOutcome[]): string {
  const c: Record<string, number> = {};
  for (const o of objects) {
    const k = o.done
      ? o.action
      : o.action === 'orphan' || o.action === 'skipped' || o.action === 'unchanged'
        ? o.action
        : 'failed';
    c[k] = (c[k] ?? 0) + 1;
  }
  const parts: string[] = [];
  if (c.create) parts.push(`${c.create} created`);
  if (c.update) parts.push(`${c.update} updated`);
  if (c.delete) parts.push(`${c.delete} deleted`);
  if (c.unchanged) parts.push(`${c.unchanged} unchanged`);
  if (c.failed) parts.push(`${c.failed} failed`);
  if (c.orphan) parts.push(`${c.orphan} kept (not in the draft)`);
  if (c.skipped) parts.push(`${c.skipped} skipped`);
  return parts.length ? parts.join(', ') : 'nothing to apply';
}

/** One RBAC denial: the verbs a user lacks on a resource in a namespace. */
export interface DeniedAccess {
  resource: string;
  namespace: string;
  verbs: string[];
  reason?: string;
}

/** The denied checks grouped by resource and namespace (verbs in the order they were asked). */
export function deniedAccess(access: AccessDecision): DeniedAccess[] {
  const out = new Map<string, DeniedAccess>();
  for (const c of access.checks) {
    if (c.allowed) continue;
    const resource = c.group ? `${c.resource}.${c.group}` : c.resource;
    const key = `${resource} ${c.namespace}`;
    const row = out.get(key) ?? { resource, namespace: c.namespace, verbs: [] };
    row.verbs.push(c.verb);
    if (c.reason && !row.reason) row.reason = c.reason;
    out.set(key, row);
  }
  return [...out.values()];
}

const words = (xs: readonly string[]) =>
  xs.length <= 1 ? (xs[0] ?? '') : `${xs.slice(0, -1).join(', ')} and ${xs[xs.length - 1]}`;

/** "RBAC does not let alice patch and create routes.msm.l7mp.io in default; …": the denial in words. */
export function deniedText(access: AccessDecision): string {
  const rows = deniedAccess(access);
  if (rows.length === 0) {
    return access.checks.length === 0
      ? 'The draft has no objects the console applies, so there is nothing to ask the cluster about.'
      : `${access.user} may apply these objects.`;
  }
  return `Kubernetes RBAC does not let ${access.user} ${rows
    .map((r) => `${words(r.verbs)} ${r.resource} in ${r.namespace}`)
    .join('; ')}.`;
}

/**
 * Whether "Apply to cluster" may be pressed for a dry-run, and every reason it may not; `overwrite`: the
 * user chose to undo the changes made in the cluster since the draft started; `prune`: the dry-run's.
 */
export function applyBlockers(
  dryRun: ClusterDryRun,
  choices: { overwrite?: boolean; prune?: boolean } = {},
): string[] {
  const reasons: string[] = [];
  if (!dryRun.access.allowed) reasons.push(deniedText(dryRun.access));
  const c = countRows(dryRun.objects);
  if (c.invalid) {
    reasons.push(
      `${plural(c.invalid, 'object is', 'objects are')} invalid: fix ${c.invalid === 1 ? 'it' : 'them'} in the draft.`,
    );
  }
  if (c.refused) {
    reasons.push(`The API server refused ${plural(c.refused, 'object', 'objects')} (see the rows below).`);
  }
  if (c.conflict) {
    reasons.push(
      `${plural(c.conflict, 'object has', 'objects have')} fields another manager owns: choose Force to take them over, or change the draft.`,
    );
  }
  if (c.rollout) {
    reasons.push(
      `A progressive rollout is moving the split of ${plural(c.rollout, 'Target', 'Targets')} this draft changes: abort or finish it first, or leave the split as it runs (see the rows below).`,
    );
  }
  const behind = changesUndoneBy(dryRun.clusterChanges, choices.prune ?? false).length;
  if (behind && !choices.overwrite) {
    reasons.push(
      `${plural(behind, 'object', 'objects')} changed in the cluster since this draft started: rebase the draft, or choose Overwrite to revert ${behind === 1 ? 'that change' : 'those changes'}.`,
    );
  }
  const sendable = dryRun.objects.some((o) => ['create', 'update', 'unchanged', 'delete'].includes(o.action));
  if (!sendable && reasons.length === 0) reasons.push('The draft has no objects to apply to the cluster.');
  return reasons;
}

/** An API server problem as lines: each cause with its field path, or the message when none names one. */
export function problemLines(p: ApiProblem): { field?: string; message: string }[] {
  // Without a field path the message says it all (field-less causes mostly repeat it).
  if (!p.causes.some((c) => c.field)) return [{ message: p.message }];
  return p.causes
    .filter((c) => c.field || c.message !== p.message)
    .map((c) => (c.field ? { field: c.field, message: c.message } : { message: c.message }));
}

/** A field value for a diff line: JSON, long values shortened. */
export function formatValue(v: unknown, max = 120): string {
  if (v === undefined) return '(none)';
  const s = JSON.stringify(v);
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** What an apply answer means for the user: a short heading, the detail, and what they can do next. */
export interface ApplyFailure {
  kind:
    'stale' | 'busy' | 'behind' | 'conflict' | 'rollout' | 'invalid' | 'partial' | 'unavailable' | 'other';
  title: string;
  detail: string;
}

/** Reads a failed POST /api/cluster/apply (status, body, the error message apiFetch made of it). */
export function applyFailure(status: number, body: unknown, message: string): ApplyFailure {
  const b = (body ?? {}) as Partial<ClusterApplyAnswer> & { error?: string };
  const said = typeof b.error === 'string' ? b.error : message;
  const objects = Array.isArray(b.objects) ? (b.objects as ObjectOutcome[]) : undefined;
  if (status === 409 && Array.isArray((b as { clusterChanges?: unknown }).clusterChanges)) {
    return {
      kind: 'behind',
      title: 'Changed in the cluster since the dry-run: nothing was applied',
      detail: `${said}.`,
    };
  }
  if (status === 409 && !objects) {
    return /another apply/.test(said)
      ? { kind: 'busy', title: 'Another apply is running', detail: `${said}. Nothing was applied.` }
      : {
          kind: 'stale',
          title: 'The draft changed since the dry-run: review again',
          detail: `${said}. Nothing was applied.`,
        };
  }
  if (status === 409 && objects?.some(isRolloutHeld)) {
    return { kind: 'rollout', title: 'A progressive rollout is running: nothing was applied', detail: said };
  }
  if (status === 409 && objects) {
    return {
      kind: 'conflict',
      title: 'Conflicts with another field manager: nothing was applied',
      detail: 'Choose Force to take over the fields, or change the draft, then apply again.',
    };
  }
  if (status === 422) {
    return {
      kind: 'invalid',
      title: 'The API server refused the draft: nothing was applied',
      detail: objects ? summaryLine(objects) : said,
    };
  }
  if (status === 502 && objects) {
    const done = objects.filter((o) => o.done).map((o) => objectLabel(o.ref));
    const failed = objects
      .filter((o) => !o.done && (o.action === 'error' || o.action === 'conflict'))
      .map((o) => objectLabel(o.ref));
    return {
      kind: 'partial',
      title: 'Partly applied: some writes failed after the dry-run passed',
      detail: `Applied: ${done.join(', ') || 'nothing'}. Failed: ${failed.join(', ') || 'nothing'}.`,
    };
  }
  if (status === 503 || status === 0) {
    return { kind: 'unavailable', title: 'No cluster to apply to', detail: said };
  }
  return { kind: 'other', title: 'The apply failed', detail: said };
}
