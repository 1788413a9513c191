import type { DraftDoc } from '@/lib/console/draftDoc';
import { buildDraftParsePack } from '@/lib/console/draftParsePack';
import { requireSession } from '@/server/console/consoleAuth';
import { getConsoleContext } from '@/server/console/consoleContext';
import { MAX_DRAFT_BYTES } from '@/server/console/meshDirFiles';
import { draftOf, jsonResponse, notServing, readJsonBody, refuseForeign } from '@/server/console/routeUtil';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/**
 * A draft (DraftState; `?draft=<id>`, the main draft without it): the mesh directory's files as the
 * user is editing them. With `?parsed=1` also `parsed`, the files already read (DraftParsePack), so
 * the console's first compile reads no YAML.
 */
export async function GET(req: Request): Promise<Response> {
  const refused = refuseForeign(req);
  if (refused) return refused;
  const ctx = getConsoleContext();
  if (!ctx) return notServing('no console draft in this process');
  try {
    const d = await draftOf(req, ctx);
    if (!d.ok) return d.response;
    const state = await d.store.get();
    // In a header too: the console page's inline script matches a picture this browser kept against it
    // before the body has arrived (components/console/earlyPicture.ts).
    const headers = { 'X-Draft-Revision': String(state.revision) };
    if (new URL(req.url).searchParams.get('parsed') !== '1') return jsonResponse(state, 200, headers);
    const body = jsonResponse({ ...state, parsed: buildDraftParsePack(state.draft.files) }, 200, headers);
    // Not for this console (its own ELK costs the same, and a job now would compete with it): for the
    // next browser that opens the draft, once it has stayed the same a while (DraftLayouts).
    ctx.layouts?.prepareLater(state.draft);
    return body;
  } catch (e) {
    return jsonResponse({ error: `cannot read the draft: ${(e as Error).message}` }, 500);
  }
}

/** Saves a draft: `{draft, baseRevision}` -> `{revision, updatedAt}`; 409 if someone saved in between. */
export async function PUT(req: Request): Promise<Response> {
  const guard = requireSession(req);
  if (!guard.ok) return guard.response;
  const ctx = getConsoleContext();
  if (!ctx) return notServing('no console draft in this process');
  const d = await draftOf(req, ctx);
  if (!d.ok) return d.response;
  // JSON escapes can double the text's size; anything beyond that cannot be a valid draft.
  const body = await readJsonBody(req, 2 * MAX_DRAFT_BYTES + 1_000_000);
  if (!body.ok) return body.response;
  const outcome = await d.store.save(body.value);
  if (!outcome.ok) return jsonResponse(outcome.body, outcome.status);
  // Read the saved files while the console is idle, so the next `?parsed=1` answers from the memo.
  const draft = (body.value as { draft: DraftDoc }).draft;
  setTimeout(() => {
    try {
      buildDraftParsePack(draft.files);
    } catch {
      // Never throws on input; if it did, the next GET reads the files itself.
    }
    // Once edits pause: the browser that saves places new nodes itself; the layout serves the next one.
    ctx.layouts?.prepareLater(draft);
  }, 0);
  return jsonResponse({ revision: outcome.revision, updatedAt: outcome.updatedAt });
}
