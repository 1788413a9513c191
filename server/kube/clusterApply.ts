/**
 * Apply from the console (issue 7 §4): the draft's objects go to the cluster by server-side apply as
 * field manager `meshdeck`, with every request impersonating the signed-in user so that Kubernetes RBAC
 * decides. `dryRun` asks the API server itself (dryRun=All, strict field validation) what each apply
 * would do: the live object, the would-be result and their diff, the server's validation errors with
 * field paths, and conflicts with other field managers. `apply` repeats that gate and writes only when
 * every object passed it. Nothing here throws on API errors: each answer names the object and the field.
 * A Target's split that a progressive rollout wrote under its own field manager is kept out of the way
 * of a draft by lib/kube/rolloutSplit.ts: refused while the rollout runs, released once it has ended.
 */
import { CRD_GROUP, CRD_VERSION, crdPlural, MESH_CRD_KINDS, type MeshCrdKind } from '@/lib/kube/crds';
import { type FileMap, type ManifestObject, parseFiles } from '@/lib/gitops/manifestObjects';
import type { ActingUser, ClusterClient, ClusterResponse } from './clusterClient';
import { type FieldChange, objectDiff } from '@/lib/kube/objectDiff';
import {
  releasedResult,
  ROLLOUT_IN_PROGRESS,
  type RolloutOnTarget,
  shareBody,
  SPLIT_FIELD,
  type SplitDecision,
  splitDecision,
} from '@/lib/kube/rolloutSplit';

/** The field manager of every apply the console makes (and the mark of objects it may prune). */
export const FIELD_MANAGER = 'meshdeck';

/** The manager of the read-only probe in ClusterApply.readLive (dry-run only: it never owns anything). */
const READ_MANAGER = 'meshdeck-read';

/** The kinds applied by default. Pods in a draft describe the local mesh's simulated cluster, not real ones. */
export const DEFAULT_APPLY_KINDS: readonly string[] = [...MESH_CRD_KINDS, 'Service'];

/** Which object an answer is about, and where the draft has it. */
export interface ObjectRef {
  /** `Kind/namespace/name`, as lib/console/nodeIds.ts spells it. */
  key: string;
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  /** Where the draft defines it (absent for a live object the draft no longer has). */
  file?: string;
  line?: number;
}

/** One cause of an API server error: `field` is a path such as `spec.websocket.port` when it names one. */
export interface ApiCause {
  field?: string;
  reason?: string;
  message: string;
}

/** An API server refusal, from its Status (HTTP status 0: the server did not answer). */
export interface ApiProblem {
  status: number;
  /** Status.reason, e.g. `Invalid`, `Forbidden`, `BadRequest`, `Conflict`. */
  reason: string;
  message: string;
  causes: ApiCause[];
}

/** A field another manager owns with a different value (an apply without force is refused for it). */
export interface FieldConflict {
  manager: string;
  field: string;
  message: string;
}

/**
 * What an apply does to one object: `create`/`update`/`unchanged` (dry-run passed), `delete` (the draft
 * removed an object Meshdeck applied, prune asked), `orphan` (same, prune not asked: left alone),
 * `conflict`, `error`, or `skipped` (a kind the console does not apply).
 */
export type PlanAction =
  'create' | 'update' | 'unchanged' | 'delete' | 'orphan' | 'conflict' | 'error' | 'skipped';

export interface ObjectPlan {
  ref: ObjectRef;
  action: PlanAction;
  /** The object in the cluster now (null: none). */
  live: Record<string, unknown> | null;
  /** What the API server answered for the dry-run apply (null for deletes, errors, conflicts, skips). */
  result: Record<string, unknown> | null;
  /** live -> result, bookkeeping fields ignored (see lib/kube/objectDiff). */
  diff: FieldChange[];
  error?: ApiProblem;
  conflicts: FieldConflict[];
  /** The API server's Warning headers (e.g. deprecated fields). */
  warnings: string[];
  /** Why a `skipped` object was not sent; what a release does (below). */
  note?: string;
  /**
   * A field another manager of Meshdeck's owns that this apply takes from it so the draft's value holds:
   * a progressive rollout's `spec.split` when the draft has none (lib/kube/rolloutSplit.ts).
   */
  release?: { manager: string; field: string };
}

export interface DryRunResult {
  /** Every object passed: an apply with the same options would be accepted. */
  ok: boolean;
  user: ActingUser;
  objects: ObjectPlan[];
}

export interface ApplyOptions {
  /** Take over fields other managers own (only when the user chose to). */
  force?: boolean;
  /** Delete objects Meshdeck applied earlier that the draft no longer has (only when asked). */
  prune?: boolean;
  /** Kinds to apply (default DEFAULT_APPLY_KINDS); objects of other kinds are `skipped`. */
  kinds?: readonly string[];
  /**
   * Apply a part of objects that exist, as a field manager of its own (a progressive rollout's
   * `spec.split`: server/rollout/clusterRolloutTarget.ts). Under `meshdeck` a partial object would make
   * server-side apply remove every other field `meshdeck` owned; under its own manager it owns only what
   * it sends. A part is no object: one the cluster does not have is refused (NotFound), not created; and
   * it says nothing of the objects it does not name, so none is listed as an orphan or pruned.
   */
  partial?: { fieldManager: string };
  /**
   * The progressive rollouts this server keeps (RolloutRunner.list()): a draft that changes, removes or
   * prunes the split of a Target one that has not ended moves is refused (409, `RolloutInProgress`)
   * whatever `force` says, and a split an ended one left is released when the draft has none
   * (lib/kube/rolloutSplit.ts). Not for `partial` applies (the rollout's own).
   */
  rollouts?: readonly RolloutOnTarget[];
}

/** The outcome of one object in a real apply. */
export interface ObjectOutcome extends ObjectPlan {
  /** The write happened (apply or delete). */
  done: boolean;
}

export interface ApplyResult {
  /** Something was written. False when the dry-run gate refused: then nothing was. */
  applied: boolean;
  /** Every object was written (or needed nothing). */
  ok: boolean;
  user: ActingUser;
  objects: ObjectOutcome[];
}

/** An object of the draft ready to send. */
export interface DraftObject {
  ref: ObjectRef;
  body: Record<string, unknown>;
}

const CORE: Record<string, string> = { Service: 'services', Pod: 'pods', ConfigMap: 'configmaps' };

/** The REST collection path of a kind in a namespace, or undefined for kinds the console does not know. */
export function collectionPath(kind: string, namespace: string): string | undefined {
  if ((MESH_CRD_KINDS as readonly string[]).includes(kind)) {
    return `/apis/${CRD_GROUP}/${CRD_VERSION}/namespaces/${encodeURIComponent(namespace)}/${crdPlural(kind as MeshCrdKind)}`;
  }
  const plural = CORE[kind];
  return plural ? `/api/v1/namespaces/${encodeURIComponent(namespace)}/${plural}` : undefined;
}

const objectPath = (ref: ObjectRef) =>
  `${collectionPath(ref.kind, ref.namespace)}/${encodeURIComponent(ref.name)}`;

/** The objects of a draft's files (seed dialect converted), each as the body an apply sends. */
export function draftObjects(files: FileMap): { objects: DraftObject[]; problems: ObjectPlan[] } {
  const parsed = parseFiles(files);
  const objects: DraftObject[] = [];
  const problems: ObjectPlan[] = [];
  for (const f of parsed.files.values()) {
    if (f.error) {
      problems.push(
        plan(
          {
            key: `file/${f.path}`,
            apiVersion: '',
            kind: '',
            namespace: '',
            name: f.path,
            file: f.path,
            line: f.error.line,
          },
          'error',
          { error: localProblem(`${f.path}:${f.error.line}: not valid YAML: ${f.error.message}`) },
        ),
      );
    }
  }
  for (const [, list] of [...parsed.byKey].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const first = list[0]!;
    objects.push(toDraftObject(first));
    for (const dup of list.slice(1)) {
      problems.push(
        plan(refOf(dup), 'error', {
          error: localProblem(
            `${dup.key} is defined twice (${first.file}:${first.line} and ${dup.file}:${dup.line}); the first is applied`,
            'metadata.name',
          ),
        }),
      );
    }
  }
  return { objects, problems };
}

function refOf(o: ManifestObject): ObjectRef {
  const apiVersion = typeof o.value.apiVersion === 'string' ? o.value.apiVersion : '';
  return {
    key: o.key,
    apiVersion,
    kind: o.kind,
    namespace: o.namespace,
    name: o.name,
    file: o.file,
    line: o.line,
  };
}

/** The body an apply sends: no status and no server bookkeeping (SSA refuses resourceVersion mismatches and managedFields). */
function toDraftObject(o: ManifestObject): DraftObject {
  const body = structuredClone(o.value);
  delete body.status;
  const meta = { ...(body.metadata as Record<string, unknown>) };
  for (const k of [
    'resourceVersion',
    'uid',
    'generation',
    'creationTimestamp',
    'managedFields',
    'selfLink',
  ]) {
    delete meta[k];
  }
  meta.namespace = o.namespace;
  body.metadata = meta;
  return { ref: refOf(o), body };
}

function plan(ref: ObjectRef, action: PlanAction, extra: Partial<ObjectPlan> = {}): ObjectPlan {
  return { ref, action, live: null, result: null, diff: [], conflicts: [], warnings: [], ...extra };
}

function localProblem(message: string, field?: string): ApiProblem {
  return { status: 0, reason: 'Invalid', message, causes: [field ? { field, message } : { message }] };
}

/** Meshdeck's own refusal of an apply that would undo a running rollout's split (no field: nothing to fix in it). */
function rolloutProblem(message: string): ApiProblem {
  return { status: 409, reason: ROLLOUT_IN_PROGRESS, message, causes: [] };
}

const releaseNote = (manager: string, done: boolean) =>
  done
    ? `released ${SPLIT_FIELD} from ${manager}: the split is gone, as the draft has it`
    : `${SPLIT_FIELD} is released from ${manager} (the rollout that wrote it has ended), so the split goes as the draft has it`;

/** `.spec.a` and `spec.a` both read `spec.a`; the API server writes both forms. */
const cleanField = (f: string) => f.replace(/^\./, '');

/** Status reasons by HTTP status, for answers whose Status has none (the apiserver omits it on some 500s). */
const REASONS: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  409: 'Conflict',
  422: 'Invalid',
  500: 'InternalError',
};

/** The API server's Status as a problem: message, reason and causes (with field paths). */
export function problemOf(res: ClusterResponse): ApiProblem {
  const body = res.body;
  const message = typeof body.message === 'string' ? body.message : `HTTP ${res.status}`;
  const details = (body.details ?? {}) as {
    causes?: { field?: string; reason?: string; message?: string }[];
  };
  const causes: ApiCause[] = (details.causes ?? []).map((c) => {
    const cause: ApiCause = { message: c.message ?? '' };
    if (c.field) cause.field = cleanField(c.field);
    if (c.reason) cause.reason = c.reason;
    return cause;
  });
  for (const m of message.matchAll(/unknown field "([^"]+)"/g)) {
    if (!causes.some((c) => c.field === m[1]))
      causes.push({ field: m[1]!, message: `unknown field "${m[1]}"` });
  }
  if (causes.length === 0) {
    // Strict decoding and typed-patch errors carry the path only in the message: `...: .spec.foo: field not declared in schema`.
    for (const m of message.matchAll(/(?:^|: |, )(\.[A-Za-z0-9_.[\]"=-]+): ([^,]+)/g)) {
      causes.push({ field: cleanField(m[1]!), message: m[2]!.trim() });
    }
  }
  const reason =
    typeof body.reason === 'string' && body.reason
      ? body.reason
      : (REASONS[res.status] ?? (res.status === 0 ? 'NoAnswer' : `HTTP${res.status}`));
  return { status: res.status, reason, message, causes };
}

/** The conflicts of a 409 apply answer: the other manager's name and the field, per cause. */
export function conflictsOf(res: ClusterResponse): FieldConflict[] {
  return problemOf(res)
    .causes.filter((c) => c.reason === 'FieldManagerConflict' || /conflict with "/.test(c.message))
    .map((c) => ({
      manager: /conflict with "([^"]*)"/.exec(c.message)?.[1] ?? '',
      field: c.field ?? '',
      message: c.message,
    }));
}

const isApplyConflict = (res: ClusterResponse) => res.status === 409 && conflictsOf(res).length > 0;

const managedByMeshdeck = (o: Record<string, unknown>) =>
  (
    ((o.metadata as Record<string, unknown> | undefined)?.managedFields ?? []) as {
      manager?: string;
      operation?: string;
    }[]
  ).some((m) => m.manager === FIELD_MANAGER && m.operation === 'Apply');

/** Requests in flight per dry-run or apply: a large draft should not open hundreds of connections at once. */
const CONCURRENCY = 8;

/** `items.map(fn)` with at most CONCURRENCY calls running, results in input order. */
async function mapLimit<T, R>(items: readonly T[], fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, items.length) }, worker));
  return out;
}

/** The console's apply of a draft to one cluster as one user. */
export class ClusterApply {
  constructor(
    private readonly client: ClusterClient,
    private readonly user: ActingUser,
  ) {}

  /** Server-side dry-run of every draft object (and of pruning, when asked); nothing is written. */
  async dryRun(files: FileMap, options: ApplyOptions = {}): Promise<DryRunResult> {
    const { objects, problems } = draftObjects(files);
    const kinds = new Set(options.kinds ?? DEFAULT_APPLY_KINDS);
    const plans: ObjectPlan[] = [...problems];
    const sendable: DraftObject[] = [];
    for (const o of objects) {
      if (!kinds.has(o.ref.kind) || !collectionPath(o.ref.kind, o.ref.namespace)) {
        plans.push(
          plan(o.ref, 'skipped', {
            note: `${o.ref.kind} objects are not applied to the cluster from the console`,
          }),
        );
      } else sendable.push(o);
    }
    plans.push(...(await mapLimit(sendable, (o) => this.dryRunOne(o, options))));
    if (!options.partial)
      plans.push(...(await this.orphans(sendable, options.prune ?? false, options.rollouts ?? [])));
    const ok = plans.every((p) => p.action !== 'error' && p.action !== 'conflict');
    return { ok, user: this.user, objects: plans };
  }

  /**
   * Dry-runs first and writes nothing unless every object passes; then the real apply of each object,
   * and the deletes when `prune` is set. Conflicts are taken over only with `force`.
   */
  async apply(files: FileMap, options: ApplyOptions = {}): Promise<ApplyResult> {
    const gate = await this.dryRun(files, options);
    if (!gate.ok) {
      return {
        applied: false,
        ok: false,
        user: this.user,
        objects: gate.objects.map((p) => ({ ...p, done: false })),
      };
    }
    const { objects } = draftObjects(files);
    const bodies = new Map(objects.map((o) => [o.ref.key, o]));
    // Objects written in part (a release's first writes): something was applied even though they failed.
    let wrotePart = false;
    const outcomes = await mapLimit(gate.objects, async (p): Promise<ObjectOutcome> => {
      if (p.action === 'delete') {
        const res = await this.send('DELETE', objectPath(p.ref), {
          body: { propagationPolicy: 'Background' },
        });
        return res.status === 200 || res.status === 202 || res.status === 404
          ? { ...p, done: true, warnings: res.warnings }
          : { ...p, action: 'error', error: problemOf(res), done: false };
      }
      const o = bodies.get(p.ref.key);
      if (!o || !['create', 'update', 'unchanged'].includes(p.action)) return { ...p, done: false };
      if (p.release) {
        const out = await this.applyReleasing(o, p, p.release.manager, options);
        wrotePart ||= out.wrotePart;
        return out.outcome;
      }
      const res = await this.applyOne(o, options, false);
      if (res.status === 200 || res.status === 201) {
        return {
          ...p,
          result: res.body,
          diff: objectDiff(p.live, res.body),
          warnings: res.warnings,
          done: true,
        };
      }
      // Changed between the dry-run and now (another writer): reported like the dry-run would.
      return isApplyConflict(res)
        ? { ...p, action: 'conflict', conflicts: conflictsOf(res), done: false }
        : { ...p, action: 'error', error: problemOf(res), done: false };
    });
    return {
      applied: wrotePart || outcomes.some((o) => o.done),
      ok: outcomes.every((o) => o.done || o.action === 'skipped' || o.action === 'orphan'),
      user: this.user,
      objects: outcomes,
    };
  }

  /**
   * The writes of a Target whose split a rollout's manager gives up (lib/kube/rolloutSplit.ts): the draft
   * with the split as it runs (shared with the rollout's manager), the rollout's manager applying nothing
   * (it no longer owns the split), then the draft (no manager owns the split: the API server removes
   * it). Each state between them is a valid Target with a backend. A failure after the first write is
   * the object's error, saying what was written.
   */
  private async applyReleasing(
    o: DraftObject,
    p: ObjectPlan,
    manager: string,
    options: ApplyOptions,
  ): Promise<{ outcome: ObjectOutcome; wrotePart: boolean }> {
    const spec = (p.live?.spec ?? {}) as Record<string, unknown>;
    const warnings: string[] = [];
    const shared = await this.applyOne({ ref: o.ref, body: shareBody(o.body, spec.split) }, options, false);
    warnings.push(...shared.warnings);
    if (shared.status !== 200) {
      const outcome: ObjectOutcome = isApplyConflict(shared)
        ? { ...p, action: 'conflict', conflicts: conflictsOf(shared), warnings, done: false }
        : { ...p, action: 'error', error: problemOf(shared), warnings, done: false };
      return { outcome, wrotePart: false };
    }
    const failed = (res: ClusterResponse, what: string): { outcome: ObjectOutcome; wrotePart: boolean } => {
      const problem = problemOf(res);
      return {
        outcome: {
          ...p,
          action: 'error',
          error: { ...problem, message: `${what}: ${problem.message}` },
          warnings,
          done: false,
        },
        wrotePart: true,
      };
    };
    const released = await this.send('PATCH', objectPath(o.ref), {
      query: { fieldManager: manager, fieldValidation: 'Strict' },
      // Nothing but the object's identity: the manager gives up every field it owned (the split alone).
      body: identityOf(o),
      contentType: 'application/apply-patch+yaml',
    });
    warnings.push(...released.warnings);
    if (released.status !== 200)
      return failed(
        released,
        `the draft's other fields were applied with the split as it runs, then releasing ${SPLIT_FIELD} from ${manager} failed`,
      );
    const res = await this.applyOne(o, options, false);
    warnings.push(...res.warnings);
    if (res.status !== 200)
      return failed(
        res,
        `${SPLIT_FIELD} was released from ${manager} (the split still runs, now the console's), then the draft's apply failed`,
      );
    const left = ((res.body.spec ?? {}) as Record<string, unknown>).split !== undefined;
    return {
      outcome: {
        ...p,
        result: res.body,
        diff: objectDiff(p.live, res.body),
        warnings,
        done: true,
        note: left
          ? `released ${SPLIT_FIELD} from ${manager}, but another manager still owns it: the split stays`
          : releaseNote(manager, true),
      },
      wrotePart: true,
    };
  }

  private send(
    method: 'GET' | 'PATCH' | 'DELETE',
    path: string,
    extra: { query?: Record<string, string | undefined>; body?: unknown; contentType?: string } = {},
  ): Promise<ClusterResponse> {
    return this.client.request({ method, path, as: this.user, ...extra });
  }

  private applyOne(o: DraftObject, options: ApplyOptions, dryRun: boolean): Promise<ClusterResponse> {
    return this.send('PATCH', objectPath(o.ref), {
      query: {
        fieldManager: options.partial?.fieldManager ?? FIELD_MANAGER,
        fieldValidation: 'Strict',
        force: options.force ? 'true' : undefined,
        dryRun: dryRun ? 'All' : undefined,
      },
      // JSON is YAML: the apply patch type takes it as is.
      body: o.body,
      contentType: 'application/apply-patch+yaml',
    });
  }

  /**
   * The live object as the user sees it. A user may hold patch and create without get (SSA needs only
   * those): then a dry-run apply of the bare identity under a manager that owns nothing changes nothing
   * and answers the stored object (200), or would create it (anything else: there is none). Still the
   * user's own request, so RBAC decides, and still nothing is written.
   */
  private async readLive(
    o: DraftObject,
  ): Promise<{ live: Record<string, unknown> | null } | { error: ApiProblem }> {
    const got = await this.send('GET', objectPath(o.ref));
    if (got.status === 200) return { live: got.body };
    if (got.status === 404) return { live: null };
    if (got.status !== 403) return { error: problemOf(got) };
    const res = await this.send('PATCH', objectPath(o.ref), {
      query: { fieldManager: READ_MANAGER, dryRun: 'All' },
      body: identityOf(o),
      contentType: 'application/apply-patch+yaml',
    });
    // 403 again: the user may not patch either; the real dry-run below reports that with the verb it needs.
    return { live: res.status === 200 ? res.body : null };
  }

  private async dryRunOne(o: DraftObject, options: ApplyOptions): Promise<ObjectPlan> {
    const got = await this.readLive(o);
    if ('error' in got) return plan(o.ref, 'error', { error: got.error });
    const { live } = got;
    const split: SplitDecision = options.partial
      ? { do: 'apply' }
      : splitDecision({
          ...o.ref,
          draft: o.body,
          live,
          rollouts: options.rollouts ?? [],
          consoleManager: FIELD_MANAGER,
        });
    // Before the dry-run: no force takes a split from a rollout that is moving it.
    if (split.do === 'refuse') return plan(o.ref, 'error', { live, error: rolloutProblem(split.message) });
    // A release is checked by its first write (the draft with the split as it runs): the draft as it is
    // would be a Target with two sources until the rollout's manager lets the split go.
    const res = await this.applyOne(
      split.do === 'release' ? { ref: o.ref, body: split.share } : o,
      options,
      true,
    );
    if (isApplyConflict(res))
      return plan(o.ref, 'conflict', { live, conflicts: conflictsOf(res), warnings: res.warnings });
    if (res.status !== 200 && res.status !== 201) {
      return plan(o.ref, 'error', { live, error: problemOf(res), warnings: res.warnings });
    }
    // After the dry-run, so a user who may not write it hears Forbidden rather than NotFound (readLive
    // cannot tell "none" from "not yours to read" for a user without get).
    if (options.partial && (live === null || res.status === 201)) {
      const message = `${o.ref.kind} ${o.ref.namespace}/${o.ref.name} does not exist (a part of an object is applied only to one that does)`;
      return plan(o.ref, 'error', { error: { status: 404, reason: 'NotFound', message, causes: [] } });
    }
    const result = split.do === 'release' ? releasedResult(res.body, o.body) : res.body;
    const diff = objectDiff(live, result);
    const action: PlanAction = live === null ? 'create' : diff.length > 0 ? 'update' : 'unchanged';
    const release =
      split.do === 'release'
        ? { release: { manager: split.manager, field: SPLIT_FIELD }, note: releaseNote(split.manager, false) }
        : {};
    return plan(o.ref, action, { live, result, diff, warnings: res.warnings, ...release });
  }

  /**
   * Mesh objects Meshdeck applied (an Apply entry of its field manager) in the draft's namespaces that the
   * draft no longer has: dry-run deletes when pruning, `orphan` otherwise. Only the mesh kinds are pruned;
   * a Target whose split a rollout is moving is not (refused, as a draft that changes the split).
   */
  private async orphans(
    sent: DraftObject[],
    prune: boolean,
    rollouts: readonly RolloutOnTarget[],
  ): Promise<ObjectPlan[]> {
    const keys = new Set(sent.map((o) => o.ref.key));
    const namespaces = [...new Set(['default', ...sent.map((o) => o.ref.namespace)])].sort();
    const out: ObjectPlan[] = [];
    for (const ns of namespaces) {
      for (const kind of MESH_CRD_KINDS) {
        const list = await this.send('GET', collectionPath(kind, ns)!);
        const collection: ObjectRef = {
          key: `${kind}/${ns}/*`,
          apiVersion: `${CRD_GROUP}/${CRD_VERSION}`,
          kind,
          namespace: ns,
          name: '*',
        };
        if (list.status !== 200) {
          // Without list rights pruning cannot be planned; that only matters when it was asked for.
          if (prune) out.push(plan(collection, 'error', { error: problemOf(list) }));
          continue;
        }
        for (const item of (list.body.items ?? []) as Record<string, unknown>[]) {
          const meta = (item.metadata ?? {}) as { name?: string };
          const ref: ObjectRef = { ...collection, key: `${kind}/${ns}/${meta.name}`, name: meta.name ?? '' };
          if (keys.has(ref.key) || !managedByMeshdeck(item)) continue;
          // A list omits apiVersion/kind on items; the diff should show the object as it reads.
          const live = { apiVersion: ref.apiVersion, kind, ...item };
          if (!prune) {
            out.push(
              plan(ref, 'orphan', {
                live,
                note: 'the draft no longer has it; applied with prune it is deleted',
              }),
            );
            continue;
          }
          const split = splitDecision({ ...ref, draft: null, live, rollouts, consoleManager: FIELD_MANAGER });
          if (split.do === 'refuse') {
            out.push(plan(ref, 'error', { live, error: rolloutProblem(split.message) }));
            continue;
          }
          const res = await this.send('DELETE', objectPath(ref), { query: { dryRun: 'All' } });
          out.push(
            res.status === 200 || res.status === 202
              ? plan(ref, 'delete', { live, diff: objectDiff(live, null), warnings: res.warnings })
              : plan(ref, 'error', { live, error: problemOf(res) }),
          );
        }
      }
    }
    return out;
  }
}

/** An apply body of the object's identity alone (apiVersion, kind, name, namespace). */
function identityOf(o: DraftObject): Record<string, unknown> {
  const meta = o.body.metadata as Record<string, unknown>;
  return {
    apiVersion: o.body.apiVersion,
    kind: o.body.kind,
    metadata: { name: meta.name, namespace: meta.namespace },
  };
}
