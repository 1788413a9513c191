import { z } from 'zod';
import { getControlPlane } from '@/server/controlPlane/registry';
import { requireSession } from '@/server/console/consoleAuth';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

const ProbeBody = z.strictObject({
  listener: z.string().min(1),
  proxy: z.string().min(1).optional(),
  payload: z.string().max(65000),
  from: z
    .strictObject({ address: z.string().min(1), port: z.number().int().min(0).max(65535).optional() })
    .optional(),
  labels: z.record(z.string(), z.string()).optional(),
  timeoutMs: z.number().int().min(10).max(30000).optional(),
});

/**
 * Sends one message through a listener of the local mesh and returns the echo, the path and the
 * latency. It sends traffic, so it needs a console session, its CSRF token and a same-origin request.
 */
export async function POST(req: Request): Promise<Response> {
  const guard = requireSession(req);
  if (!guard.ok) return guard.response;
  const cp = getControlPlane();
  if (!cp) return Response.json({ error: 'no control plane is running in this process' }, { status: 503 });
  let body: unknown;
  try {
    body = await req.json();
  } catch {
    return Response.json({ error: 'the body is not JSON' }, { status: 400 });
  }
  const parsed = ProbeBody.safeParse(body);
  if (!parsed.success) {
    return Response.json(
      {
        error: 'invalid probe request',
        fields: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
      },
      { status: 400 },
    );
  }
  try {
    const result = await cp.probe(parsed.data);
    return Response.json(result, { status: 200 });
  } catch (e) {
    // Compared by name: this handler is bundled apart from the server that threw it.
    if ((e as Error).name === 'ProbeTargetError')
      return Response.json({ error: (e as Error).message }, { status: 404 });
    return Response.json({ error: `probe failed: ${(e as Error).message}` }, { status: 500 });
  }
}
