import { getClusterEvents } from '@/server/kube/clusterEventsRoute';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/** The Kubernetes Events about one object (`?kind=&namespace=&name=`), newest first. */
export function GET(req: Request): Promise<Response> {
  return getClusterEvents(req);
}
