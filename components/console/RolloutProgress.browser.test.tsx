/**
 * A rollout's progress in Chromium, drawn from fixed rollouts in every phase (the data GET /api/rollouts
 * answers, lib/rollout/rolloutFixtures.testutil.ts) with a fixed clock: the steps' states and analyses,
 * the buttons each phase allows, and Abort and Promote asking before they are sent.
 */
import '@/app/globals.css';
import { describe, expect, it } from 'vitest';
import { render } from 'vitest-browser-react';
import type { RolloutPhase } from '@/lib/rollout/rollout';
import type { RolloutAction } from '@/lib/rollout/rolloutApi';
import { grpcFailed, NOW, rolloutIn } from '@/lib/rollout/rolloutFixtures.testutil';
import { ApiError } from './api';
import { RolloutProgress } from './RolloutProgress';

function show(
  phase: RolloutPhase,
  opts: { compact?: boolean; onAction?(a: RolloutAction): Promise<void> } = {},
) {
  const asked: RolloutAction[] = [];
  const screen = render(
    <RolloutProgress
      rollout={rolloutIn(phase)}
      now={NOW}
      compact={opts.compact}
      onAction={
        opts.onAction ??
        (async (a) => {
          asked.push(a);
        })
      }
    />,
  );
  return { screen, asked };
}

/** Each step row's state, in order. */
function statuses(): (string | null)[] {
  return [...document.querySelectorAll('.rollout-steps > li')].map((e) => e.getAttribute('data-status'));
}

const BUTTONS = ['pause', 'resume', 'abort', 'promote'] as const;

async function buttons(screen: Awaited<ReturnType<typeof show>['screen']>): Promise<string[]> {
  await expect.element(screen.getByTestId('rollout-progress')).toBeVisible();
  return BUTTONS.filter((b) => screen.getByTestId(`rollout-${b}`).query() !== null);
}

describe('RolloutProgress', () => {
  it('progressing: the passed step with its analysis, the running one counting down, the pending ones; Pause, Abort, Promote', async () => {
    const { screen, asked } = show('progressing');
    const s = await screen;
    await expect.element(s.getByTestId('rollout-phase')).toHaveTextContent(/^Progressing$/);
    expect(statuses()).toEqual(['passed', 'running', 'pending', 'pending']);
    await expect.element(s.getByTestId('rollout-step-0')).toHaveTextContent('Step 1 of 4: 10%passed');
    await expect
      .element(s.getByTestId('rollout-step-0'))
      .toHaveTextContent(
        '20 of 20 probes answered (100%) · p50 2 ms, p99 7 ms · answers: echo-v1 18, echo-v2 2',
      );
    await expect.element(s.getByTestId('rollout-step-1')).toHaveTextContent('waiting, analysis in 12 s');
    await expect
      .element(s.getByTestId('rollout-weights'))
      .toHaveTextContent('weights now: echo-v1 75 (was 100), echo-v2 25 (was 0)');
    expect(await buttons(s)).toEqual(['pause', 'abort', 'promote']);
    await s.getByTestId('rollout-pause').click();
    await expect.poll(() => asked).toEqual(['pause']);
  });

  it('paused after a failed analysis: the reasons, the message, Resume instead of Pause', async () => {
    const s = await show('paused').screen;
    await expect.element(s.getByTestId('rollout-phase')).toHaveTextContent(/^Paused$/);
    await expect.element(s.getByTestId('rollout-step-1')).toHaveAttribute('data-status', 'failed');
    await expect
      .element(s.getByTestId('rollout-step-1').getByTestId('rollout-step-reasons'))
      .toHaveTextContent('12 of 20 probes answered (60%, at least 95% needed): no answer in 1000 ms');
    await expect.element(s.getByTestId('rollout-step-1')).toHaveTextContent('answers: echo-v1 9, echo-v2 3');
    await expect
      .element(s.getByTestId('rollout-message'))
      .toHaveTextContent('paused: resume to run it again, or abort');
    expect(await buttons(s)).toEqual(['resume', 'abort', 'promote']);
  });

  it('ended phases show what happened and offer nothing', async () => {
    const expected: Record<string, { phase: string; statuses: string[] }> = {
      succeeded: { phase: 'Succeeded', statuses: ['passed', 'passed', 'passed', 'passed'] },
      'rolled-back': { phase: 'Rolled back', statuses: ['passed', 'failed', 'skipped', 'skipped'] },
      aborted: { phase: 'Aborted', statuses: ['passed', 'stopped', 'skipped', 'skipped'] },
      failed: { phase: 'Failed', statuses: ['passed', 'failed', 'skipped', 'skipped'] },
    };
    for (const [phase, want] of Object.entries(expected)) {
      const s = await show(phase as RolloutPhase).screen;
      await expect.element(s.getByTestId('rollout-phase')).toHaveTextContent(new RegExp(`^${want.phase}$`));
      expect(statuses(), phase).toEqual(want.statuses);
      expect(await buttons(s), phase).toEqual([]);
      await s.unmount();
    }
    const back = await show('rolled-back').screen;
    await expect
      .element(back.getByTestId('rollout-message'))
      .toHaveTextContent('rolled back to echo-v1 100, echo-v2 0');
    await expect
      .element(back.getByTestId('rollout-weights'))
      .toHaveTextContent('echo-v1 100 (was 100), echo-v2 0 (was 0)');
  });

  it('Abort and Promote ask first; Cancel sends nothing, the confirmation sends the action', async () => {
    const { screen, asked } = show('progressing');
    const s = await screen;
    await s.getByTestId('rollout-abort').click();
    const box = s.getByTestId('rollout-confirm-box');
    await expect
      .element(box)
      .toHaveTextContent('goes back to its weights before the rollout (echo-v1 100, echo-v2 0)');
    await expect.element(s.getByTestId('rollout-abort')).toHaveAttribute('aria-expanded', 'true');
    await s.getByTestId('rollout-confirm-cancel').click();
    expect(box.query()).toBeNull();
    expect(asked).toEqual([]);

    await s.getByTestId('rollout-promote').click();
    await expect.element(box).toHaveTextContent('Promote echo-v2 to 100% now?');
    await s.getByTestId('rollout-confirm').click();
    await expect.poll(() => asked).toEqual(['promote']);
    await expect.poll(() => box.query()).toBeNull();

    await s.getByTestId('rollout-abort').click();
    await s.getByTestId('rollout-confirm').click();
    await expect.poll(() => asked).toEqual(['promote', 'abort']);
  });

  it('a refused action says why, in the server’s words', async () => {
    const s = await show('paused', {
      onAction: () =>
        Promise.reject(
          new ApiError(409, 'POST /api/rollouts/x answered 409: …', '/api/rollouts/x', {
            error: 'the rollout ended meanwhile (rolled-back)',
          }),
        ),
    }).screen;
    await s.getByTestId('rollout-resume').click();
    await expect
      .element(s.getByTestId('rollout-action-error'))
      .toHaveTextContent(/^the rollout ended meanwhile \(rolled-back\)$/);
  });

  it('compact (the Inspector): the current step in a line, the weights, the buttons and a way to the details', async () => {
    const s = await show('progressing', { compact: true }).screen;
    await expect
      .element(s.getByTestId('rollout-current'))
      .toHaveTextContent('step 2 of 4 (25%): waiting, analysis in 12 s');
    expect(s.getByTestId('rollout-steps').query()).toBeNull();
    await expect
      .element(s.getByTestId('rollout-weights'))
      .toHaveTextContent(/^weights now: echo-v1 75, echo-v2 25$/);
    expect(await buttons(s)).toEqual(['pause', 'abort', 'promote']);
    const paused = await show('paused', { compact: true }).screen;
    await expect.element(paused.getByTestId('rollout-current').first()).toBeVisible();
    expect(
      paused
        .getByTestId('rollout-current')
        .elements()
        .map((e) => e.textContent),
    ).toContain('step 2 of 4 (25%): failed its analysis');
  });

  it('a step judged by the gRPC clients: the canary’s success rate over its hold, every backend’s RPCs, why it failed', async () => {
    const base = rolloutIn('rolled-back');
    const analysis = grpcFailed(46, 76);
    const rollout = {
      ...base,
      spec: { ...base.spec, analysis: { grpc: { minSuccessPercent: 99, minRequests: 20 } } },
      steps: [base.steps[0]!, { ...base.steps[1]!, analysis }],
      message: `step 2 of 4 (25%) failed: ${analysis.reasons[0]}; rolled back to echo-v1 100, echo-v2 0`,
    };
    const s = await render(<RolloutProgress rollout={rollout} now={NOW} onAction={async () => {}} />);
    const row = s.getByTestId('rollout-step-1');
    await expect.element(row).toHaveAttribute('data-status', 'failed');
    await expect
      .element(row)
      .toHaveTextContent(
        'gRPC RPCs to the canary: 0 of 50 succeeded (0%) in 30 s · RPCs: echo-v1 250, echo-v2 50 (50 failed)',
      );
    await expect
      .element(row.getByTestId('rollout-step-reasons'))
      .toHaveTextContent("the canary's success rate was 0% (0 of 50 RPCs succeeded, at least 99% needed)");
    await expect.element(s.getByTestId('rollout-message')).toHaveTextContent('success rate was 0%');
  });
});
