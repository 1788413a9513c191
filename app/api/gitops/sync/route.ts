import { getConsoleContext } from '@/server/console/consoleContext';
import { readMeshDirContent } from '@/server/console/meshDirFiles';
import { errorOutcome } from '@/server/gitops/GitOpsService';
import { gitopsRead } from '@/server/gitops/gitopsRoutes';
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
    const watcher = getConsoleContext()?.gitSync;
    const cached = refresh ? undefined : watcher?.fresh(FRESH_MS);
    if (cached) return { ok: true as const, body: cached };
    const meshDir = getConsoleContext()?.drafts.meshDir;
    if (!meshDir) return errorOutcome(new Error('no mesh directory in this process'));
    let files: Record<string, string>;
    try {
      files = (await readMeshDirContent(meshDir)).files;
    } catch (e) {
      return errorOutcome(e);
    }
    const answer = await s.liveSync(files, getClusterContext()?.applyKinds);
    if (answer.ok) watcher?.record(answer.body);
    return answer;
  });
}
