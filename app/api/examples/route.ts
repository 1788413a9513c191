import path from 'node:path';
import { getConsoleContext } from '@/server/console/consoleContext';
import { listExamples } from '@/server/console/examples';
import { jsonResponse, refuseForeign } from '@/server/console/routeUtil';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/** The shipped example meshes, `[{name, description, files}]`, for "load an example". */
export async function GET(req: Request): Promise<Response> {
  const refused = refuseForeign(req);
  if (refused) return refused;
  // Without `meshdeck serve` (plain `next start`), the examples of the checkout it runs in.
  const dir = getConsoleContext()?.examplesDir ?? path.join(process.cwd(), 'examples');
  try {
    return jsonResponse(await listExamples(dir));
  } catch (e) {
    return jsonResponse({ error: (e as Error).message }, 500);
  }
}
