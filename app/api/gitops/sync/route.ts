import { getConsoleContext } from '@/server/console/consoleContext';
import { readMeshDirContent } from '@/server/console/meshDirFiles';
import { errorOutcome } from '@/server/gitops/GitOpsService';
import { gitopsRead } from '@/server/gitops/gitopsRoutes';
import { getClusterContext } from '@/server/kube/clusterContext';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/**
 * What runs against the GitOps base branch's tip (LiveSyncStatus): per object synced, modified (with the
 * fields), missing (in Git, not running) or extra (running, not in Git). What runs is the mesh directory
 * the console serves: the cluster mirror in Kubernetes mode (the mesh kinds only: the cluster's Pods are
 * not in Git), the local mesh's directory otherwise. Read-only, like the status.
 */
export async function GET(req: Request): Promise<Response> {
  return gitopsRead(req, async (s) => {
    const meshDir = getConsoleContext()?.drafts.meshDir;
    if (!meshDir) return errorOutcome(new Error('no mesh directory in this process'));
    let files: Record<string, string>;
    try {
      files = (await readMeshDirContent(meshDir)).files;
    } catch (e) {
      return errorOutcome(e);
    }
    return s.liveSync(files, getClusterContext()?.applyKinds);
  });
}
