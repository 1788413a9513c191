'use client';

import { useQuery } from '@tanstack/react-query';
import { rolloutChip } from '@/lib/rollout/rolloutView';
import { rolloutsQuery } from './queries';
import { useSeenRollouts } from './useSeenRollouts';
import './rollout.css';

/**
 * The toolbar's rollout chip, like "Git: N out of sync": shown only while a rollout progresses or is
 * paused, or after one ended rolled back (or failed) until this browser opened it. A click opens its
 * progress.
 */
export function RolloutChip(p: { onOpen(id: string): void }) {
  const q = useQuery(rolloutsQuery);
  const [seen] = useSeenRollouts();
  const chip = q.data ? rolloutChip(q.data.rollouts, seen) : undefined;
  if (!chip) return null;
  return (
    <button
      type="button"
      className={`rollout-chip rollout-chip--${chip.tone}`}
      onClick={() => p.onOpen(chip.id)}
      title={`${chip.text}: open the steps and analyses of rollout ${chip.id}`}
      aria-label={chip.text}
      data-testid="rollout-chip"
    >
      {chip.short}
      {chip.text !== chip.short ? (
        <span className="rollout-chip__detail">{chip.text.slice(chip.short.length)}</span>
      ) : null}
    </button>
  );
}
