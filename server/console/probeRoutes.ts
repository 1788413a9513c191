/** What POST /api/probe and POST /api/probe/burst share: the body checked, a probe's throw answered. */
import type { z } from 'zod';

/** The JSON body checked with `schema`: its value, or the 400 answer naming each wrong field's path. */
export async function probeBody<T>(
  req: Request,
  schema: z.ZodType<T>,
  what: string,
): Promise<{ ok: true; value: T } | { ok: false; response: Response }> {
  let body: unknown;
  try {
    body = await req.json();
  } catch {
    return { ok: false, response: Response.json({ error: 'the body is not JSON' }, { status: 400 }) };
  }
  const parsed = schema.safeParse(body);
  if (parsed.success) return { ok: true, value: parsed.data };
  return {
    ok: false,
    response: Response.json(
      {
        error: `invalid ${what}`,
        fields: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
      },
      { status: 400 },
    ),
  };
}

/** A probe's throw as the answer: 404 for a listener that does not exist or is ambiguous, else 500. */
export function probeFailure(e: unknown, what: string): Response {
  const error = e as Error;
  // Compared by name: a route handler is bundled apart from the server that threw it.
  if (error.name === 'ProbeTargetError') return Response.json({ error: error.message }, { status: 404 });
  return Response.json({ error: `${what} failed: ${error.message}` }, { status: 500 });
}
