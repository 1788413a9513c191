'use client';

import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import type { ObjectRef } from '@/lib/rollout/rollout';
import { activeRolloutOf } from '@/lib/rollout/rolloutView';
import { rolloutsQuery } from './queries';
import { RolloutProgress, useRolloutAction } from './RolloutProgress';
import './rollout.css';

/**
 * A canary Target's rollout in the Inspector, under its split: "Progressive rollout…", or while one of
 * this Target has not ended, its progress in short with its buttons. A rollout seen running here stays
 * shown once it ended (its outcome, and "Progressive rollout…" in its button row) until another node
 * is selected: the Inspector below does not jump when it ends, and the user sees how it ended.
 */
export function TargetRollout(p: {
  target: ObjectRef;
  /** Opens the rollout dialog: on this Target's form, or on its rollout. */
  onOpen(rolloutId?: string): void;
  /** Why the rollout's buttons are off (no session), if they are. */
  disabledReason?: string;
}) {
  const q = useQuery(rolloutsQuery);
  const act = useRolloutAction();
  const rollouts = q.data?.rollouts ?? [];
  const active = activeRolloutOf(rollouts, p.target);
  const [watched, setWatched] = useState<string>();
  // Set during render (React's "adjusting state when a prop changes"): the rollout last seen running.
  if (active && active.id !== watched) setWatched(active.id);
  const shown = active ?? rollouts.find((r) => r.id === watched);
  const unavailable =
    q.data && !q.data.available ? (q.data.reason ?? 'this server runs no rollouts') : undefined;
  const start = (
    <button
      type="button"
      onClick={() => p.onOpen()}
      disabled={unavailable !== undefined}
      title={
        unavailable ??
        'Move the canary’s weight step by step on what runs, each step judged by probes or a webhook'
      }
      data-testid="rollout-open-dialog"
    >
      Progressive rollout…
    </button>
  );
  return (
    <section className="target-rollout" aria-label="Progressive rollout" data-testid="target-rollout">
      {shown ? (
        <RolloutProgress
          compact
          rollout={shown}
          disabledReason={p.disabledReason}
          onAction={(a) => act(shown.id, a)}
          onOpen={() => p.onOpen(shown.id)}
          extra={shown === active ? undefined : start}
        />
      ) : (
        <>
          {start}
          {unavailable ? <p className="hint">No rollouts here: {unavailable}</p> : null}
        </>
      )}
    </section>
  );
}
