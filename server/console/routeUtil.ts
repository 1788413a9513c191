/** Small helpers the console's route handlers share: JSON answers and bounded JSON bodies. */
import { getConsoleAuth, originProblem } from './consoleAuth';
import type { ConsoleContext } from './consoleContext';
import { DraftId, MAIN_DRAFT } from './DraftRegistry';
import type { DraftStore } from './DraftStore';

/** A JSON response that no cache keeps. */
export function jsonResponse(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return Response.json(body, { status, headers: { 'Cache-Control': 'no-store', ...headers } });
}

/** 204, not cached: there is nothing (yet) for what was asked. */
export function noContent(): Response {
  return new Response(null, { status: 204, headers: { 'Cache-Control': 'no-store' } });
}

/** 503: the route needs `meshdeck serve` (a control plane or the console's draft) in this process. */
export function notServing(what = 'no control plane is running in this process'): Response {
  return jsonResponse({ error: `${what} (start it with meshdeck serve)` }, 503);
}

/** Refuses requests under a foreign Host name or from another origin (403), or undefined if fine. */
export function refuseForeign(req: Request): Response | undefined {
  const problem = originProblem(req, getConsoleAuth());
  return problem ? jsonResponse({ error: problem }, 403) : undefined;
}

/**
 * Reads a JSON body of at most `maxBytes` (stopping as soon as it is longer, so a huge body costs
 * no more memory than the limit): the value, or the 400/413 response that says what is wrong.
 */
export async function readJsonBody(
  req: Request,
  maxBytes: number,
): Promise<{ ok: true; value: unknown } | { ok: false; response: Response }> {
  const raw = await readRawBody(req, maxBytes);
  if (!raw.ok) return raw;
  if (raw.bytes.length === 0)
    return { ok: false, response: jsonResponse({ error: 'the body is empty; send JSON' }, 400) };
  try {
    return { ok: true, value: JSON.parse(raw.bytes.toString('utf8')) };
  } catch (e) {
    return {
      ok: false,
      response: jsonResponse({ error: `the body is not JSON: ${(e as Error).message}` }, 400),
    };
  }
}

/** Reads a body of at most `maxBytes` bytes as it came (a webhook's signature covers the exact bytes). */
export async function readRawBody(
  req: Request,
  maxBytes: number,
): Promise<{ ok: true; bytes: Buffer } | { ok: false; response: Response }> {
  const fail = (status: number, error: string) => ({
    ok: false as const,
    response: jsonResponse({ error }, status),
  });
  const declared = Number(req.headers.get('content-length') ?? NaN);
  if (declared > maxBytes) return fail(413, `the body is larger than ${maxBytes} bytes`);
  if (!req.body) return { ok: true, bytes: Buffer.alloc(0) };
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel().catch(() => undefined);
        return fail(413, `the body is larger than ${maxBytes} bytes`);
      }
      chunks.push(value);
    }
  } catch (e) {
    // The client went away or sent a broken body: answered, never thrown into the server.
    return fail(400, `the body could not be read: ${(e as Error).message}`);
  }
  return { ok: true, bytes: Buffer.concat(chunks) };
}

/** The draft a request names with `?draft=<id>` (the main draft without it): its id, or the 400 answer. */
export function draftIdOf(req: Request): { ok: true; id: string } | { ok: false; response: Response } {
  const given = new URL(req.url).searchParams.get('draft');
  if (given === null || given === '') return { ok: true, id: MAIN_DRAFT };
  const parsed = DraftId.safeParse(given);
  if (parsed.success) return { ok: true, id: parsed.data };
  return {
    ok: false,
    response: jsonResponse(
      { error: 'invalid draft id', fields: [{ path: 'draft', message: parsed.error.issues[0]!.message }] },
      400,
    ),
  };
}

/** The store of the draft a request names, or the 400/404 answer (500 when the drafts cannot be read). */
export async function draftOf(
  req: Request,
  ctx: ConsoleContext,
): Promise<{ ok: true; id: string; store: DraftStore } | { ok: false; response: Response }> {
  const id = draftIdOf(req);
  if (!id.ok) return id;
  let store: DraftStore | undefined;
  try {
    store = await ctx.drafts.get(id.id);
  } catch (e) {
    return {
      ok: false,
      response: jsonResponse({ error: `cannot read the draft: ${(e as Error).message}` }, 500),
    };
  }
  if (!store)
    return { ok: false, response: jsonResponse({ error: `no draft with id ${JSON.stringify(id.id)}` }, 404) };
  return { ok: true, id: id.id, store };
}
