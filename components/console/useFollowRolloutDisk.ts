'use client';

import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import type { DiskSummary } from '@/lib/console/diskDrift';
import { mayFollowDisk, rolloutsQuiet } from '@/lib/rollout/followDisk';
import { ApiError, apiFetch } from './api';
import { withDraft } from './draftId';
import { diskStateQuery, rolloutsQuery } from './queries';
import type { DraftController } from './useConsoleDraft';

/** How often a rebase is tried for one state of the disk (another apply can hold the lock: a 409). */
const TRIES = 3;
/** How long a rollout must stay away from the apply lock for a rebase to go (the rebase takes tens of ms). */
const QUIET_MS = 400;

/**
 * A rollout writes each step into the mesh directory, and every step would make the draft say "Changed
 * on disk". A draft with no edits of its own whose disk moved only in a rolled-out Target's split
 * weights (lib/rollout/followDisk.ts) follows the disk instead: the same rebase as the dialog's, which
 * cannot conflict then and which the server refuses if the draft was saved meanwhile (its revision),
 * loaded here one Ctrl+Z from the draft as it was. Anything else on disk still asks the user.
 * True while the draft is about to follow (or it is being found out whether it may): the toolbar then
 * keeps "Changed on disk" to itself rather than show it for the few seconds of a step.
 */
export function useFollowRolloutDisk(p: {
  draftId: string;
  /** The disk summary when the draft is behind the disk. */
  drift: DiskSummary | undefined;
  draft: DraftController;
}): boolean {
  const { draftId, drift, draft } = p;
  const queryClient = useQueryClient();
  const rollouts = useQuery(rolloutsQuery).data?.rollouts;
  const saved = draft.save.state === 'saved' ? draft.save.revision : undefined;
  // Kubernetes mode has its own drift (objects changed in the cluster), and no rollouts.
  const candidate =
    drift !== undefined && !drift.cluster && drift.hasBase && saved !== undefined && !!rollouts?.length;
  const disk = useQuery({ ...diskStateQuery(draftId, drift?.diskHash ?? ''), enabled: candidate });
  const tries = useRef(new Map<string, number>());
  const busy = useRef(false);
  // Bumped to try again after a refusal.
  const [attempt, setAttempt] = useState(0);
  // The disk (its hash) this draft gave up following: "Changed on disk" is the user's again.
  const [gaveUp, setGaveUp] = useState<string>();
  // The disk (its hash) this draft has just followed: until the summary is read again it still says the
  // draft is behind that disk, and "Changed on disk" would flash up for that one read.
  const [followed, setFollowed] = useState<string>();
  const present = draft.history.present;
  const { reload } = draft;
  useEffect(() => {
    const state = disk.data;
    if (busy.current || !candidate || !rollouts || saved === undefined) return;
    if (!state || state.diskHash !== drift?.diskHash) return;
    const n = tries.current.get(state.diskHash) ?? 0;
    if (
      n >= TRIES ||
      !mayFollowDisk(
        present,
        state,
        rollouts.map((r) => r.spec.target),
      )
    )
      return;
    // Not while a step may be written: its apply holds the lock the rebase needs. The rollouts are
    // read every second while one progresses, and each read asks again.
    if (!rolloutsQuiet(rollouts, Date.now(), QUIET_MS)) return;
    tries.current.set(state.diskHash, n + 1);
    busy.current = true;
    void (async () => {
      try {
        await apiFetch(withDraft('/api/draft/rebase', draftId), {
          method: 'POST',
          body: { revision: saved },
        });
        setFollowed(state.diskHash);
        await reload();
        await queryClient.invalidateQueries({ queryKey: ['draft-disk', draftId] });
      } catch (e) {
        // Another apply held the lock: again in a second; anything else leaves "Changed on disk" to the user.
        if (e instanceof ApiError && e.status === 409 && n + 1 < TRIES)
          setTimeout(() => setAttempt((a) => a + 1), 1000);
        else {
          tries.current.set(state.diskHash, TRIES);
          setGaveUp(state.diskHash);
        }
      } finally {
        busy.current = false;
      }
    })();
  }, [
    candidate,
    disk.data,
    drift?.diskHash,
    saved,
    present,
    rollouts,
    draftId,
    reload,
    queryClient,
    attempt,
  ]);
  if (drift !== undefined && drift.diskHash === followed) return true;
  if (!candidate || disk.isError || gaveUp === drift.diskHash) return false;
  return (
    disk.data === undefined ||
    mayFollowDisk(
      present,
      disk.data,
      rollouts.map((r) => r.spec.target),
    )
  );
}
