import { postClusterDryRun } from '@/server/kube/clusterApplyRoutes';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/** Server-side dry-run of the draft (`?draft=<id>`) against the cluster, as the signed-in user. */
export function POST(req: Request): Promise<Response> {
  return postClusterDryRun(req);
}
