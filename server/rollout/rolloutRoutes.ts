/** What the /api/rollouts route handlers share: the runner of this process and its outcomes as answers. */
import { requireSession } from '../console/consoleAuth';
import { getConsoleContext } from '../console/consoleContext';
import { jsonResponse, notServing } from '../console/routeUtil';
import type { RolloutActor, RolloutOutcome, RolloutRunner } from './RolloutRunner';

/**
 * Why this process runs no rollouts: `meshdeck serve` runs them, on the local mesh and in Kubernetes mode;
 * a console without its control plane in the process has none.
 */
export const NO_ROLLOUTS =
  'progressive rollouts run under meshdeck serve (the local mesh, or Kubernetes mode), not in this process';

/** A mutation's guard: a session with its CSRF token, then the runner; the actor, or the answer. */
export function rolloutMutation(
  req: Request,
): { ok: true; runner: RolloutRunner; actor: RolloutActor } | { ok: false; response: Response } {
  const guard = requireSession(req);
  if (!guard.ok) return guard;
  const ctx = getConsoleContext();
  if (!ctx) return { ok: false, response: notServing('no console in this process') };
  if (!ctx.rollouts) return { ok: false, response: jsonResponse({ error: NO_ROLLOUTS }, 503) };
  const { identity } = guard.session;
  return { ok: true, runner: ctx.rollouts, actor: { user: identity.user, groups: [...identity.groups] } };
}

/** A runner's outcome as the answer: `{rollout}` with `okStatus`, or the refusal with its status. */
export function rolloutAnswer(outcome: RolloutOutcome, okStatus: number): Response {
  if ('rollout' in outcome) return jsonResponse({ rollout: outcome.rollout }, okStatus);
  const { status, ...body } = outcome;
  return jsonResponse(body, status);
}
