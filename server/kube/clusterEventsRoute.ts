/**
 * GET /api/cluster/events?kind=&namespace=&name=: the Kubernetes Events about one object (lib/console/
 * clusterEvents.ts), read with Meshdeck's own identity as the console's other reads of the cluster are
 * (the informers, the mirror), through the core/v1 API whose field selectors find an object's events
 * as `kubectl describe` does. An open read: counts, reasons and messages, no secrets.
 */
import { ClusterEvents, eventOf, newestEvents } from '@/lib/console/clusterEvents';
import { jsonResponse, notServing, refuseForeign } from '@/server/console/routeUtil';
import { getClusterContext } from './clusterContext';

/** A Kubernetes name or kind: what a field selector may carry (no `,` or `=` to widen it). */
const NAME = /^[A-Za-z0-9][-A-Za-z0-9_.]{0,252}$/;

export async function getClusterEvents(req: Request): Promise<Response> {
  const refused = refuseForeign(req);
  if (refused) return refused;
  const cluster = getClusterContext();
  if (!cluster) return notServing('no cluster is configured: Events exist in Kubernetes mode only');
  const q = new URL(req.url).searchParams;
  const want = { kind: q.get('kind') ?? '', namespace: q.get('namespace') ?? '', name: q.get('name') ?? '' };
  const bad = Object.entries(want).filter(([, v]) => !NAME.test(v));
  if (bad.length > 0)
    return jsonResponse(
      {
        error: 'invalid request',
        fields: bad.map(([k]) => ({ path: k, message: 'expected a Kubernetes kind or name' })),
      },
      400,
    );
  const res = await cluster.client.request({
    method: 'GET',
    path: `/api/v1/namespaces/${want.namespace}/events`,
    query: {
      fieldSelector: `involvedObject.kind=${want.kind},involvedObject.name=${want.name}`,
      limit: '500',
    },
    timeoutMs: 10_000,
  });
  if (res.status !== 200) {
    const message = typeof res.body.message === 'string' ? res.body.message : `HTTP ${res.status}`;
    return jsonResponse(
      {
        error: `the API server did not list the events of ${want.kind} ${want.namespace}/${want.name}: ${message}`,
      },
      502,
    );
  }
  const items = Array.isArray(res.body.items) ? res.body.items : [];
  const events = newestEvents(items.map(eventOf).filter((e) => e !== undefined));
  return jsonResponse(ClusterEvents.parse({ events }));
}
