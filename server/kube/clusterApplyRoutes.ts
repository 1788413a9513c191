/**
 * The handlers behind POST /api/cluster/dry-run and POST /api/cluster/apply: session and CSRF as every
 * console mutation, the draft named by `?draft=`, the cluster from clusterContext, and the acting user
 * from the session's identity (Kubernetes RBAC decides what it may do).
 */
import { z } from 'zod';
import { type DraftStore, zodFieldErrors } from '@/server/console/DraftStore';
import { requireSession } from '@/server/console/consoleAuth';
import { getConsoleContext } from '@/server/console/consoleContext';
import { draftOf, jsonResponse, notServing, readJsonBody } from '@/server/console/routeUtil';
import { APPLY_VERBS, canApply } from './accessReview';
import type { DraftDoc } from '@/lib/console/draftDoc';
import { meshDirDoc, readMeshDirContent } from '@/server/console/meshDirFiles';
import { changesUndoneBy, clusterChangeLabel } from '@/lib/console/clusterDrift';
import { clusterChangesOf } from '@/server/console/diskDrift';
import { type ApplyResult, ClusterApply } from './clusterApply';
import type { ActingUser } from './clusterClient';
import { getClusterContext } from './clusterContext';
import { getMeshMetrics } from '../metrics/metricsRegistry';
import { ROLLOUT_IN_PROGRESS, type RolloutOnTarget } from '@/lib/kube/rolloutSplit';

export const DryRunBody = z.strictObject({
  /** Dry-run taking over other managers' fields (what Apply with force would do). */
  force: z.boolean().optional(),
  /** Include the deletes of objects the draft removed. */
  prune: z.boolean().optional(),
});

export const ClusterApplyBody = DryRunBody.extend({
  /** The draft revision the user reviewed: a newer one is refused (409), as POST /api/apply does. */
  revision: z.number().int().nonnegative(),
  /**
   * Apply even though it undoes changes made in the cluster since the draft started (lib/console/
   * clusterDrift.ts changesUndoneBy); without it such an apply is refused (409 with `clusterChanges`).
   */
  overwrite: z.boolean().optional(),
});

type Prepared =
  | { ok: false; response: Response }
  | {
      ok: true;
      apply: ClusterApply;
      client: NonNullable<ReturnType<typeof getClusterContext>>['client'];
      user: ActingUser;
      files: Record<string, string>;
      draft: DraftDoc;
      draftId: string;
      revision: number;
      body: z.infer<typeof ClusterApplyBody> | z.infer<typeof DryRunBody>;
      store: DraftStore;
      kinds: { kinds?: readonly string[] };
      /** The console's progressive rollouts: one moving a Target's split holds an apply that would undo it. */
      rollouts: { rollouts: readonly RolloutOnTarget[] };
    };

async function prepare(req: Request, schema: typeof DryRunBody | typeof ClusterApplyBody): Promise<Prepared> {
  const guard = requireSession(req);
  if (!guard.ok) return guard;
  const ctx = getConsoleContext();
  if (!ctx) return { ok: false, response: notServing('the console is not running in this process') };
  const cluster = getClusterContext();
  if (!cluster) {
    return {
      ok: false,
      response: notServing(
        'no cluster is configured: start the console with `meshdeck serve --kubeconfig PATH`',
      ),
    };
  }
  const d = await draftOf(req, ctx);
  if (!d.ok) return d;
  const raw = await readJsonBody(req, 4096);
  if (!raw.ok) return raw;
  const parsed = schema.safeParse(raw.value);
  if (!parsed.success) {
    return {
      ok: false,
      response: jsonResponse({ error: 'invalid request', fields: zodFieldErrors(parsed.error) }, 400),
    };
  }
  const state = await d.store.get();
  const { identity } = guard.session;
  const user: ActingUser = { user: identity.user, groups: [...identity.groups] };
  return {
    ok: true,
    apply: new ClusterApply(cluster.client, user),
    client: cluster.client,
    user,
    files: state.draft.files,
    draft: state.draft,
    draftId: d.id,
    revision: state.revision,
    body: parsed.data,
    store: d.store,
    kinds: cluster.applyKinds ? { kinds: cluster.applyKinds } : {},
    rollouts: { rollouts: ctx.rollouts?.list() ?? [] },
  };
}

/**
 * POST /api/cluster/dry-run?draft=<id> `{force?, prune?}`: `{ok, user, revision, objects, access,
 * clusterChanges}` where `access.allowed` chooses between "Apply" and "Open PR" and `clusterChanges` lists
 * the mesh objects changed in the cluster since the draft started (Kubernetes mode). Always 200 once the
 * request is valid: what the API server refused is in `objects`.
 */
export async function postClusterDryRun(req: Request): Promise<Response> {
  const p = await prepare(req, DryRunBody);
  if (!p.ok) return p.response;
  const result = await p.apply.dryRun(p.files, { ...p.body, ...p.kinds, ...p.rollouts });
  const targets = result.objects.filter((o) => o.action !== 'skipped' && o.ref.kind !== '').map((o) => o.ref);
  const verbs = p.body.prune ? [...APPLY_VERBS, 'delete'] : APPLY_VERBS;
  const access = await canApply(p.client, p.user, targets, verbs);
  const clusterChanges = p.kinds.kinds ? await clusterChangesOf(p.store, p.kinds.kinds) : [];
  return jsonResponse({ ...result, revision: p.revision, access, clusterChanges });
}

/**
 * POST /api/cluster/apply?draft=<id> `{revision, force?, prune?, overwrite?}`: dry-run gate, then the
 * apply. 200 when every object was applied, 409 for a stale revision, mesh objects changed in the cluster
 * since the draft started (`clusterChanges`; unless `overwrite`), field conflicts, or a Target's split a
 * progressive rollout is moving (`error` names it; nothing applied), 422 when the API
 * server refused an object (nothing applied), 502 when some writes failed after the gate passed.
 */
export async function postClusterApply(req: Request): Promise<Response> {
  const p = await prepare(req, ClusterApplyBody);
  if (!p.ok) return p.response;
  const body = p.body as z.infer<typeof ClusterApplyBody>;
  if (body.revision !== p.revision) {
    return jsonResponse(
      {
        error: `the draft is at revision ${p.revision}, not ${body.revision}: review the dry-run again, then apply`,
        revision: p.revision,
      },
      409,
    );
  }
  // One apply of a draft at a time (shared with POST /api/apply): two would race on the same objects.
  const release = p.store.tryBeginApply();
  if (!release) return jsonResponse({ error: 'another apply is running; wait for it to finish' }, 409);
  let result;
  let historyId: number | undefined;
  try {
    // Kubernetes mode: a draft behind the cluster would revert what others changed meanwhile.
    const changes = p.kinds.kinds
      ? changesUndoneBy(await clusterChangesOf(p.store, p.kinds.kinds), body.prune ?? false)
      : [];
    if (changes.length > 0 && !body.overwrite) {
      getMeshMetrics()?.applied('cluster', 'refused');
      return jsonResponse(
        {
          error: `changed in the cluster since this draft started: ${changes.map(clusterChangeLabel).join('; ')}. Rebase the draft onto the cluster, or apply with overwrite to revert these changes`,
          revision: p.revision,
          clusterChanges: changes,
        },
        409,
      );
    }
    // The cluster's objects as the mirror has them now, before the apply changes them: the record's "before".
    const before = await readMeshDirContent(p.store.meshDir).then(meshDirDoc, () => undefined);
    result = await p.apply.apply(p.files, { ...body, ...p.kinds, ...p.rollouts });
    if (result.applied)
      historyId = await recordClusterApply(
        p,
        body,
        result,
        before,
        changes.map((c) => c.key),
      );
  } finally {
    release();
  }
  // A running rollout's refusal names the Target, the rollout and what to do: the answer's error too.
  const held = result.applied
    ? []
    : result.objects.filter((o) => o.error?.reason === ROLLOUT_IN_PROGRESS).map((o) => o.error!.message);
  const status = result.ok
    ? 200
    : result.applied
      ? 502
      : held.length > 0 || result.objects.some((o) => o.action === 'conflict')
        ? 409
        : 422;
  getMeshMetrics()?.applied('cluster', result.ok ? 'applied' : status === 502 ? 'failed' : 'refused');
  return jsonResponse(
    {
      ...result,
      revision: p.revision,
      ...(held.length > 0 ? { error: `nothing was applied: ${held.join('; ')}` } : {}),
      ...(historyId !== undefined ? { historyId } : {}),
    },
    status,
  );
}

/**
 * Keeps a cluster apply that wrote something in the apply history (GET /api/applies): who, the options,
 * each object's action and outcome, and the files from the cluster's objects before it to the draft
 * applied. Its id, or undefined when there is no history or it could not be written (the apply stands
 * either way: a history that cannot be written must not turn it into a failure).
 */
async function recordClusterApply(
  p: Extract<Prepared, { ok: true }>,
  body: z.infer<typeof ClusterApplyBody>,
  result: ApplyResult,
  before: DraftDoc | undefined,
  overwrote: string[],
): Promise<number | undefined> {
  const history = getConsoleContext()?.applies;
  if (!history) return undefined;
  const from = before ?? { files: {}, layout: {} };
  const after = p.draft;
  try {
    const record = await history.record({
      target: 'cluster',
      at: new Date().toISOString(),
      user: p.user.user,
      draft: p.draftId,
      revision: p.revision,
      applied: Object.keys(after.files).filter((f) => from.files[f] !== after.files[f]),
      deleted: Object.keys(from.files).filter((f) => !(f in after.files)),
      objects: result.objects.map((o) => ({
        key: o.ref.key,
        action: o.action,
        done: o.done,
        ...(o.error ? { error: `${o.error.reason}: ${o.error.message}` } : {}),
      })),
      ...(body.force ? { force: true } : {}),
      ...(body.prune ? { prune: true } : {}),
      ...(overwrote.length ? { overwrote } : {}),
      ...(before ? {} : { error: "the cluster's objects before the apply could not be read" }),
      before: from,
      after,
    });
    return record.id;
  } catch (e) {
    console.warn(
      `meshdeck console: the cluster apply was not recorded in the history: ${(e as Error).message}`,
    );
    return undefined;
  }
}
