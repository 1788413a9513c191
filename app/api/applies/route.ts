import { getConsoleContext } from '@/server/console/consoleContext';
import { jsonResponse, notServing, refuseForeign } from '@/server/console/routeUtil';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/** The local mesh's apply history, newest first: `{applies: ApplySummary[]}` (lib/console/applyRecord.ts). */
export async function GET(req: Request): Promise<Response> {
  const refused = refuseForeign(req);
  if (refused) return refused;
  const applies = getConsoleContext()?.applies;
  if (!applies) return notServing('no apply history in this process');
  try {
    return jsonResponse({ applies: await applies.list() });
  } catch (e) {
    return jsonResponse({ error: `cannot read the apply history: ${(e as Error).message}` }, 500);
  }
}
