/** The bodies of the rollout API's mutations besides the spec (POST /api/rollouts takes RolloutSpecInput). */
import { z } from 'zod';

/** What a user may ask of a rollout. */
export const RolloutAction = z.enum(['pause', 'resume', 'abort', 'promote']);
export type RolloutAction = z.infer<typeof RolloutAction>;

/** POST /api/rollouts/<id>. */
export const RolloutActionBody = z.strictObject({ action: RolloutAction });
export type RolloutActionBody = z.infer<typeof RolloutActionBody>;
