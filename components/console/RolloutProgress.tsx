'use client';

import { useQueryClient } from '@tanstack/react-query';
import { type ReactNode, useCallback, useState } from 'react';
import type { RolloutState } from '@/lib/rollout/rollout';
import type { RolloutAction } from '@/lib/rollout/rolloutApi';
import {
  PHASE_TEXT,
  phaseTone,
  rolloutActions,
  type StepView,
  stepViews,
  weightsNow,
} from '@/lib/rollout/rolloutView';
import { ApiError, apiFetch, errorMessage } from './api';
import { appliesKey, rolloutsKey } from './queries';
import { useNow } from './useNow';
import './rollout.css';

/** POSTs an action to a rollout and reads the list again (with the history its steps write). */
export function useRolloutAction(): (id: string, action: RolloutAction) => Promise<void> {
  const queryClient = useQueryClient();
  return useCallback(
    async (id: string, action: RolloutAction) => {
      try {
        await apiFetch<{ rollout: RolloutState }>(`/api/rollouts/${encodeURIComponent(id)}`, {
          method: 'POST',
          body: { action },
        });
      } finally {
        // A 409 says the rollout moved on meanwhile: either way the list is read again.
        await Promise.all([
          queryClient.invalidateQueries({ queryKey: rolloutsKey }),
          queryClient.invalidateQueries({ queryKey: appliesKey }),
        ]);
      }
    },
    [queryClient],
  );
}

/** The server's own words for a refusal (409: the rollout moved on), else the whole message. */
export function serverWords(e: unknown): string {
  const said = e instanceof ApiError ? (e.body as { error?: unknown } | undefined)?.error : undefined;
  return typeof said === 'string' ? said : errorMessage(e);
}

const ACTION_TEXT: Record<RolloutAction, string> = {
  pause: 'Pause',
  resume: 'Resume',
  abort: 'Abort…',
  promote: 'Promote…',
};

const ACTION_TITLE: Record<RolloutAction, string> = {
  pause: 'Hold the rollout at this step: no further step until Resume',
  resume: 'Carry on with the steps',
  abort: 'Stop the rollout (asks first)',
  promote: 'Skip the remaining steps and their analyses (asks first)',
};

/** What Abort and Promote ask before they are sent. */
function confirmText(r: RolloutState, action: 'abort' | 'promote'): { question: string; yes: string } {
  const canary = r.spec.canary;
  if (action === 'promote') {
    const last = r.spec.steps[r.spec.steps.length - 1];
    return {
      question: `Promote ${canary} to ${last}% now? The last step is applied at once, without the pauses and analyses of the steps left.`,
      yes: `Promote to ${last}%`,
    };
  }
  const before = r.entries.map((e, i) => `${e} ${r.initial[i] ?? 0}`).join(', ');
  return {
    question: `Abort this rollout? No further step is applied, and the split goes back to its weights before the rollout (${before}).`,
    yes: 'Abort the rollout',
  };
}

export interface RolloutProgressProps {
  rollout: RolloutState;
  /** One line per step, the weights and the buttons: for the Inspector. */
  compact?: boolean;
  /** Why the buttons are off (no session), if they are. */
  disabledReason?: string;
  onAction(action: RolloutAction): Promise<void>;
  /** Opens the full view (compact only). */
  onOpen?(): void;
  /** More buttons at the start of the button row (the Inspector's "Progressive rollout…" once it ended). */
  extra?: ReactNode;
  /** The clock, fixed (tests); otherwise the countdown ticks. */
  now?: number;
}

/**
 * A rollout's progress: its phase and message, every step (passed with its analysis, running with its
 * activity and countdown, failed with the reasons, pending), the split's weights now, and the actions
 * that fit the phase; Abort and Promote ask first. Every step has its row from the start, so the list
 * does not move as the steps go.
 */
export function RolloutProgress(p: RolloutProgressProps) {
  const r = p.rollout;
  const ticking = p.now === undefined && r.phase === 'progressing' && r.activity === 'waiting';
  const clock = useNow(ticking);
  const now = p.now ?? clock;
  const steps = stepViews(r, now);
  const actions = rolloutActions(r);
  const [confirming, setConfirming] = useState<'abort' | 'promote'>();
  const [busy, setBusy] = useState<RolloutAction>();
  const [error, setError] = useState<string>();
  // A confirmation asked in another phase no longer fits.
  const asked = confirming && actions.includes(confirming) ? confirming : undefined;
  const run = async (action: RolloutAction) => {
    if ((action === 'abort' || action === 'promote') && asked !== action) {
      setConfirming(action);
      return;
    }
    setBusy(action);
    setError(undefined);
    try {
      await p.onAction(action);
      setConfirming(undefined);
    } catch (e) {
      setError(serverWords(e));
    } finally {
      setBusy(undefined);
    }
  };
  const current = steps.find((s) => s.status === 'running' || s.status === 'paused') ?? lastDone(steps);
  const currentText = current
    ? `step ${current.index + 1} of ${steps.length} (${current.percent}%): ${current.text}`
    : '';
  // Compact, each line keeps one line (cut, the whole in its title): the Inspector below does not move.
  const line = p.compact ? ' rollout-line' : '';
  return (
    <section
      className={`rollout-progress${p.compact ? ' rollout-progress--compact' : ''}`}
      aria-label="Rollout progress"
      data-testid="rollout-progress"
      data-phase={r.phase}
    >
      <p
        className={`rollout-progress__head${line}`}
        title={p.compact ? `${sentence(PHASE_TEXT[r.phase])} ${currentText}` : undefined}
      >
        <span className={`rollout-phase tone-${phaseTone(r.phase)}`} data-testid="rollout-phase">
          {sentence(PHASE_TEXT[r.phase])}
        </span>{' '}
        {p.compact ? (
          <span data-testid="rollout-current">{currentText}</span>
        ) : (
          <span className="rollout-progress__who">
            {r.spec.canary} of Target {r.spec.target.namespace}/{r.spec.target.name}, started by {r.user} at{' '}
            {new Date(r.startedAt).toLocaleTimeString()}
            {r.endedAt ? `, ended at ${new Date(r.endedAt).toLocaleTimeString()}` : ''}
          </span>
        )}
      </p>
      {p.compact ? null : (
        <ol className="rollout-steps" data-testid="rollout-steps" aria-label="Steps">
          {steps.map((s) => (
            <StepRow key={s.index} step={s} of={steps.length} />
          ))}
        </ol>
      )}
      <p className={`rollout-weights${line}`} data-testid="rollout-weights">
        <span className="rollout-weights__label">weights now:</span>{' '}
        {weightsNow(r).map((w, i) => (
          <span key={w.name}>
            {i > 0 ? ', ' : ''}
            <span className={w.canary ? 'rollout-weights__canary' : undefined}>
              {w.name} {w.weight}
            </span>
            {p.compact ? '' : ` (was ${w.initial})`}
          </span>
        ))}
      </p>
      {/* Always there, a line high when empty: the message arriving moves nothing, and is announced. */}
      <p
        className={`rollout-message tone-${phaseTone(r.phase)}${line}`}
        role="status"
        title={p.compact ? r.message : undefined}
        data-testid="rollout-message"
      >
        {r.message ?? ''}
      </p>
      {actions.length || p.extra || p.compact ? (
        <div className="button-row rollout-actions">
          {p.extra}
          {actions.map((a) => (
            <button
              key={a}
              type="button"
              className={a === 'abort' ? 'rollout-abort' : undefined}
              disabled={p.disabledReason !== undefined || busy !== undefined}
              title={p.disabledReason ?? ACTION_TITLE[a]}
              aria-expanded={a === 'abort' || a === 'promote' ? asked === a : undefined}
              onClick={() => void run(a)}
              data-testid={`rollout-${a}`}
            >
              {busy === a ? `${ACTION_TEXT[a].replace('…', '')}…` : ACTION_TEXT[a]}
            </button>
          ))}
        </div>
      ) : null}
      {p.onOpen ? (
        <p>
          <button type="button" className="link" onClick={p.onOpen} data-testid="rollout-open">
            Steps and analyses
          </button>
        </p>
      ) : null}
      {asked ? (
        <div className="rollout-confirm" role="group" aria-label="Confirm" data-testid="rollout-confirm-box">
          <p>{confirmText(r, asked).question}</p>
          <div className="button-row">
            <button
              type="button"
              className={asked === 'abort' ? 'danger' : 'primary'}
              disabled={busy !== undefined}
              onClick={() => void run(asked)}
              data-testid="rollout-confirm"
            >
              {confirmText(r, asked).yes}
            </button>
            <button
              type="button"
              onClick={() => setConfirming(undefined)}
              data-testid="rollout-confirm-cancel"
            >
              Cancel
            </button>
          </div>
        </div>
      ) : null}
      {error ? (
        <p className="field-error field-error--error" role="alert" data-testid="rollout-action-error">
          {error}
        </p>
      ) : null}
    </section>
  );
}

/** `Rolled back`: the first letter up (CSS's capitalize would give `Rolled Back`). */
function sentence(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function lastDone(steps: StepView[]): StepView | undefined {
  return [...steps].reverse().find((s) => s.status !== 'pending' && s.status !== 'skipped');
}

function StepRow({ step: s, of }: { step: StepView; of: number }) {
  const detail =
    s.analysis.length > 0
      ? s.analysis.join(' · ')
      : s.status === 'pending'
        ? 'analysis after its pause'
        : s.status === 'running' || s.status === 'paused'
          ? 'no analysis yet'
          : s.status === 'skipped'
            ? 'the rollout ended before this step'
            : '';
  return (
    <li
      className={`rollout-step rollout-step--${s.status}`}
      data-testid={`rollout-step-${s.index}`}
      data-status={s.status}
    >
      <span className="rollout-step__head">
        <span className="rollout-step__name">
          Step {s.index + 1} of {of}: {s.percent}%
        </span>
        <span className="rollout-step__status" data-testid="rollout-step-status">
          {s.text}
        </span>
      </span>
      <span className="rollout-step__detail">{detail}</span>
      {s.reasons.length ? (
        <ul className="rollout-step__reasons" data-testid="rollout-step-reasons">
          {s.reasons.map((why) => (
            <li key={why}>{why}</li>
          ))}
        </ul>
      ) : null}
    </li>
  );
}
