import { requireSession } from '@/server/console/consoleAuth';
import { getConsoleContext } from '@/server/console/consoleContext';
import { rebaseOnDisk } from '@/server/console/diskDrift';
import { MAX_DRAFT_BYTES } from '@/server/console/meshDirFiles';
import { draftOf, jsonResponse, notServing, readJsonBody } from '@/server/console/routeUtil';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/**
 * Rebases a draft (`?draft=<id>`) onto the mesh directory's files now, `{revision, choices?}` ->
 * `{state, rebased, merged, notes}`; 409 with `conflicts` until each has a choice, or with `current`
 * for a stale revision.
 */
export async function POST(req: Request): Promise<Response> {
  const guard = requireSession(req);
  if (!guard.ok) return guard.response;
  const ctx = getConsoleContext();
  if (!ctx) return notServing('no console draft in this process');
  const d = await draftOf(req, ctx);
  if (!d.ok) return d.response;
  // Choices may carry whole objects' texts; as for PUT /api/draft, JSON escapes can double their size.
  const body = await readJsonBody(req, 2 * MAX_DRAFT_BYTES + 1_000_000);
  if (!body.ok) return body.response;
  const outcome = await rebaseOnDisk({ store: d.store, body: body.value });
  return jsonResponse(outcome.body, outcome.ok ? 200 : outcome.status);
}
