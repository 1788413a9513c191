import { getConsoleContext } from '@/server/console/consoleContext';
import { zodFieldErrors } from '@/server/console/DraftStore';
import { readMeshDirContent } from '@/server/console/meshDirFiles';
import { z } from 'zod';
import {
  errorOutcome,
  type GitOpsService,
  type LiveSyncStatus,
  type Outcome,
} from '@/server/gitops/GitOpsService';
import { gitopsMutation, gitopsRead } from '@/server/gitops/gitopsRoutes';
import { getClusterContext } from '@/server/kube/clusterContext';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/** How old a comparison may be and still answer without `?refresh=1`. */
const FRESH_MS = 60_000;

/**
 * What runs against the GitOps base branch's tip (LiveSyncStatus): per object synced, modified (with the
 * fields), missing (in Git, not running) or extra (running, not in Git). What runs is the mesh directory
 * the console serves: the cluster mirror in Kubernetes mode (the mesh kinds only: the cluster's Pods are
 * not in Git), the local mesh's directory otherwise. Read-only, like the status. A comparison up to a
 * minute old answers unless `?refresh=1`.
 */
export async function GET(req: Request): Promise<Response> {
  // The server's periodic comparison answers while it is fresh (one git fetch for every tab and the
  // metrics); `?refresh=1` ("Compare again") compares now.
  const refresh = new URL(req.url).searchParams.get('refresh') === '1';
  return gitopsRead(req, async (s) => {
    const ctx = getConsoleContext();
    const withSync = async (status: LiveSyncStatus) => ({
      ok: true as const,
      body: { ...status, ...(ctx?.gitAutoSync ? { sync: await ctx.gitAutoSync.view() } : {}) },
    });
    const cached = refresh ? undefined : ctx?.gitSync?.fresh(FRESH_MS);
    if (cached) return withSync(cached);
    const answer = await compare(s);
    return answer.ok ? withSync(answer.body) : answer;
  });
}

/** Compares what runs with the base branch now, and keeps it as the watcher's latest. */
async function compare(s: GitOpsService): Promise<Outcome<LiveSyncStatus>> {
  const ctx = getConsoleContext();
  const meshDir = ctx?.drafts.meshDir;
  if (!meshDir) return errorOutcome(new Error('no mesh directory in this process'));
  let files: Record<string, string>;
  try {
    files = (await readMeshDirContent(meshDir)).files;
  } catch (e) {
    return errorOutcome(e);
  }
  const answer = await s.liveSync(files, getClusterContext()?.applyKinds);
  if (answer.ok) ctx?.gitSync?.record(answer.body);
  return answer;
}

const SyncNowBody = z.strictObject({
  /** Also remove what runs but is not in Git (default: the policy's prune, else false). */
  prune: z.boolean().optional(),
});

/**
 * Sync now: writes the base branch's tip to what runs (the local mesh, or the cluster as the signed-in
 * user), whatever the automated sync policy says, after the same checks as Apply: `{attempt, status}`,
 * the attempt `held` with the commit's errors when it has any (nothing written). 400 for a bad body, 409
 * while another apply runs or where this server cannot sync.
 */
export async function POST(req: Request): Promise<Response> {
  return gitopsMutation(req, async (s, body, _draftId, actor) => {
    const parsed = SyncNowBody.safeParse(body);
    if (!parsed.success)
      return {
        ok: false,
        status: 400,
        body: { error: 'invalid request', fields: zodFieldErrors(parsed.error) },
      };
    const ctx = getConsoleContext();
    if (!ctx?.gitAutoSync)
      return { ok: false, status: 503, body: { error: 'no sync from Git in this process' } };
    const attempt = await ctx.gitAutoSync.syncNow(
      actor,
      parsed.data.prune ?? s.config.autoSync?.prune ?? false,
    );
    if ('status' in attempt) return { ok: false, status: attempt.status, body: { error: attempt.error } };
    const status = await compare(s);
    if (status.ok) await ctx.gitAutoSync.consider(status.body);
    return {
      ok: true,
      body: {
        attempt,
        ...(status.ok ? { status: { ...status.body, sync: await ctx.gitAutoSync.view() } } : {}),
      },
    };
  });
}
