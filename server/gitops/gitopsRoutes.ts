/** What the /api/gitops route handlers share: finding the service and answering its outcomes. */
import { requireSession } from '../console/consoleAuth';
import { getConsoleContext } from '../console/consoleContext';
import { draftIdOf, jsonResponse, notServing, readJsonBody, refuseForeign } from '../console/routeUtil';
import { errorOutcome, type GitOpsService, type Outcome } from './GitOpsService';

/** The largest body a GitOps mutation takes (a conflict resolved with edited text). */
const MAX_BODY = 6_000_000;

async function service(): Promise<{ ok: true; gitops: GitOpsService } | { ok: false; response: Response }> {
  const ctx = getConsoleContext();
  if (!ctx?.gitops) return { ok: false, response: notServing('no GitOps service in this process') };
  try {
    return { ok: true, gitops: await ctx.gitops };
  } catch (e) {
    const o = errorOutcome(e);
    return {
      ok: false,
      response: jsonResponse({ ...o.body, error: `GitOps is unavailable: ${o.body.error}` }, 503),
    };
  }
}

function answer<T>(o: Outcome<T>): Response {
  return o.ok ? jsonResponse(o.body) : jsonResponse(o.body, o.status);
}

/** GET: readable like the draft (same-origin requests only); `?draft=<id>` names the draft. */
export async function gitopsRead<T>(
  req: Request,
  op: (s: GitOpsService, draftId: string) => Promise<Outcome<T>>,
): Promise<Response> {
  const refused = refuseForeign(req);
  if (refused) return refused;
  const id = draftIdOf(req);
  if (!id.ok) return id.response;
  const s = await service();
  return s.ok ? answer(await op(s.gitops, id.id)) : s.response;
}

/** POST: a signed-in session with its CSRF token (as /api/apply), then a bounded JSON body; `?draft=<id>` names the draft. */
export async function gitopsMutation<T>(
  req: Request,
  op: (
    s: GitOpsService,
    body: unknown,
    draftId: string,
    actor: { user: string; groups: string[] },
  ) => Promise<Outcome<T>>,
  opts: { body: boolean } = { body: true },
): Promise<Response> {
  const guard = requireSession(req);
  if (!guard.ok) return guard.response;
  const id = draftIdOf(req);
  if (!id.ok) return id.response;
  const s = await service();
  if (!s.ok) return s.response;
  let value: unknown = {};
  if (opts.body) {
    const body = await readJsonBody(req, MAX_BODY);
    if (!body.ok) return body.response;
    value = body.value;
  }
  const { identity } = guard.session;
  return answer(await op(s.gitops, value, id.id, { user: identity.user, groups: [...identity.groups] }));
}
