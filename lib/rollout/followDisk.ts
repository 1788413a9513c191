/**
 * A rollout writes each step's weights into the mesh directory, so a draft opened before it sees
 * "Changed on disk" after every step. When the draft has no edits of its own and the disk differs from
 * the draft's base only in the weights of a rolled-out Target's split, the console takes the disk
 * without asking (a rebase that cannot conflict); any other change on disk still asks, as before.
 */
import type { DraftDoc } from '../console/draftDoc';
import { changedPaths } from '../console/filesDiff';
import { ENDED_PHASES, type ObjectRef, type RolloutState } from './rollout';
import { setSplitWeights, splitInFiles } from './splitInFiles';

/**
 * Whether `disk` is `base` with only Target `target`'s split weights changed: one file differs, and
 * writing the disk's weights into the base's file gives the disk's text byte for byte.
 */
export function onlySplitWeightsMoved(base: DraftDoc, disk: DraftDoc, target: ObjectRef): boolean {
  const changed = changedPaths(base, disk);
  if (changed.length !== 1) return false;
  const found = splitInFiles(disk.files, target);
  if ('error' in found || found.file !== changed[0]) return false;
  const rewritten = setSplitWeights(
    base.files,
    target,
    found.entries.map((e) => e.weight),
  );
  return (
    !('error' in rewritten) && rewritten.file === found.file && rewritten.text === disk.files[found.file]
  );
}

/**
 * Whether a draft may follow the disk without asking: the draft is its base (no edits of its own) and
 * the disk moved from that base only in the split weights of one of the rolled-out `targets`.
 */
export function mayFollowDisk(
  draft: DraftDoc,
  state: { base?: DraftDoc; disk: DraftDoc },
  targets: readonly ObjectRef[],
): boolean {
  const { base, disk } = state;
  if (!base || changedPaths(base, draft).length > 0) return false;
  return targets.some((t) => onlySplitWeightsMoved(base, disk, t));
}

/**
 * Whether no rollout writes the mesh directory for at least `marginMs` from `now`: each has ended or is
 * paused, or waits out a step's pause that ends later than that. A step's apply holds the apply lock a
 * rebase needs, and an analysis may end in the next step's apply at any moment, so only these are quiet.
 */
export function rolloutsQuiet(
  rollouts: readonly Pick<RolloutState, 'phase' | 'activity' | 'nextAt'>[],
  now: number,
  marginMs: number,
): boolean {
  return rollouts.every((r) => {
    if (ENDED_PHASES.has(r.phase) || r.phase === 'paused') return true;
    const next = r.nextAt ? Date.parse(r.nextAt) : NaN;
    return r.activity === 'waiting' && next - now >= marginMs;
  });
}
