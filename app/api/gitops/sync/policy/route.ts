import { isAutoSyncOn, SyncPolicyChange } from '@/lib/gitops/autoSync';
import { rolloutEnded } from '@/lib/rollout/rolloutView';
import { getConsoleContext } from '@/server/console/consoleContext';
import { zodFieldErrors } from '@/server/console/DraftStore';
import { gitopsMutation } from '@/server/gitops/gitopsRoutes';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/**
 * Turns sync from Git on or off (Argo CD's "Enable Auto-Sync", "Prune resources", "Self heal"):
 * `{autoSync: {prune, selfHeal} | null}` (null: off, the settings kept), written to the repository config
 * and used from the next comparison without a restart; turned on, what runs is compared at once. Answers
 * `{sync}` (the panel's SyncView). 400 for a bad body; 409 where the config is not the console's to change
 * (a mounted ConfigMap or Secret, a read-only file, a Kubernetes replica without the Lease; the message
 * says where it is configured) and for self-heal while a progressive rollout runs; 503 without GitOps.
 */
export async function PUT(req: Request): Promise<Response> {
  return gitopsMutation(req, async (_s, body, _draftId, actor) => {
    const parsed = SyncPolicyChange.safeParse(body);
    if (!parsed.success)
      return {
        ok: false,
        status: 400,
        body: { error: 'invalid request', fields: zodFieldErrors(parsed.error) },
      };
    const ctx = getConsoleContext();
    if (!ctx?.gitAutoSync)
      return { ok: false, status: 503, body: { error: 'no sync from Git in this process' } };
    const next = parsed.data.autoSync;
    const now = (await ctx.gitAutoSync.view()).policy;
    // The other side of the rollouts' refusal (SELF_HEAL_CONFLICT): self-heal would take each step back.
    const rollout = ctx.rollouts?.list().find((r) => !rolloutEnded(r));
    if (next?.selfHeal && !(isAutoSyncOn(now) && now.selfHeal) && rollout)
      return {
        ok: false,
        status: 409,
        body: {
          error: `a progressive rollout of Target ${rollout.spec.target.namespace}/${rollout.spec.target.name} is under way: self-heal would take each of its steps back as drift. Turn self-heal on once it has ended`,
        },
      };
    const r = await ctx.gitAutoSync.setPolicy(actor, next);
    if ('status' in r) return { ok: false, status: r.status, body: { error: r.error } };
    // As Argo CD refreshes an application whose automated sync is turned on: a commit waiting is synced
    // now, not at the next poll. After any comparison in progress (it may have read the old policy); not
    // awaited: a fetch and a sync can take a while, and the panel reads the result like any comparison.
    if (r.changed && isAutoSyncOn(r.policy)) void ctx.gitSync?.compareAfter();
    return { ok: true, body: { changed: r.changed, sync: await ctx.gitAutoSync.view() } };
  });
}
