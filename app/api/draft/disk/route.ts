import { meshFilesOnly } from '@/lib/console/clusterDrift';
import { diskSummary } from '@/lib/console/diskDrift';
import { clusterChangesOf, diskState } from '@/server/console/diskDrift';
import { getClusterContext } from '@/server/kube/clusterContext';
import { getConsoleContext } from '@/server/console/consoleContext';
import { draftOf, jsonResponse, notServing, refuseForeign } from '@/server/console/routeUtil';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/**
 * Whether the mesh directory moved away from a draft's base (`?draft=<id>`): DiskState, with the
 * directory's files now and, when kept, the files the draft started from. With `?summary=1` only the
 * hashes and the changed paths (DiskSummary), for the console's check on every reload; in Kubernetes
 * mode also the mesh objects changed in the cluster (`cluster`). An open read.
 */
export async function GET(req: Request): Promise<Response> {
  const refused = refuseForeign(req);
  if (refused) return refused;
  const ctx = getConsoleContext();
  if (!ctx) return notServing('no console draft in this process');
  try {
    const d = await draftOf(req, ctx);
    if (!d.ok) return d.response;
    const state = await diskState(d.store);
    const summary = new URL(req.url).searchParams.get('summary') === '1';
    // Kubernetes mode: the mirror's cluster objects churn; only the mesh objects say the draft is behind,
    // and the dialog shows only the mesh files (the cluster's can be megabytes).
    const kinds = getClusterContext()?.applyKinds;
    if (!summary)
      return jsonResponse(
        kinds
          ? {
              ...state,
              disk: meshFilesOnly(state.disk),
              ...(state.base ? { base: meshFilesOnly(state.base) } : {}),
            }
          : state,
      );
    const cluster = kinds ? await clusterChangesOf(d.store, kinds) : undefined;
    return jsonResponse({ ...diskSummary(state), ...(cluster ? { cluster } : {}) });
  } catch (e) {
    return jsonResponse({ error: `cannot read the mesh directory: ${(e as Error).message}` }, 500);
  }
}
