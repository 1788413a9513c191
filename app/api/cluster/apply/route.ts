import { postClusterApply } from '@/server/kube/clusterApplyRoutes';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/** Server-side apply of the draft (`?draft=<id>`) to the cluster, as the signed-in user. */
export function POST(req: Request): Promise<Response> {
  return postClusterApply(req);
}
