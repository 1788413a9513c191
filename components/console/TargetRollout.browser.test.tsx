/**
 * A canary Target's rollout in the Inspector, in Chromium. FAKE route: window.fetch answers
 * GET /api/rollouts with the fixed rollouts the test holds, changed as the server's would change.
 */
import '@/app/globals.css';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { render } from 'vitest-browser-react';
import type { RolloutState } from '@/lib/rollout/rollout';
import { rolloutIn } from '@/lib/rollout/rolloutFixtures.testutil';
import { rolloutsKey } from './queries';
import { TargetRollout } from './TargetRollout';

let answer: { available: boolean; reason?: string; rollouts: RolloutState[] } = {
  available: true,
  rollouts: [],
};

function fakeFetch(): Promise<Response> {
  return Promise.resolve(
    new Response(JSON.stringify(answer), { headers: { 'content-type': 'application/json' } }),
  );
}

afterEach(() => vi.unstubAllGlobals());

function show(opened: (string | undefined)[] = []) {
  vi.stubGlobal('fetch', fakeFetch);
  const client = new QueryClient();
  const screen = render(
    <QueryClientProvider client={client}>
      <div style={{ width: 360 }}>
        <TargetRollout
          target={{ namespace: 'default', name: 'echo-canary' }}
          onOpen={(id) => opened.push(id)}
        />
      </div>
    </QueryClientProvider>,
  );
  return { screen, client };
}

describe('TargetRollout', () => {
  it('offers a rollout; shows one while it runs; keeps it, at the same height, once it ended', async () => {
    answer = { available: true, rollouts: [rolloutIn('succeeded')] };
    const opened: (string | undefined)[] = [];
    const { screen: pending, client } = show(opened);
    const screen = await pending;
    // An old rollout of the Target, not seen running here: just the button.
    await screen.getByTestId('rollout-open-dialog').click();
    expect(opened).toEqual([undefined]);
    expect(screen.getByTestId('rollout-progress').query()).toBeNull();

    answer = { available: true, rollouts: [rolloutIn('progressing'), rolloutIn('succeeded')] };
    await client.invalidateQueries({ queryKey: rolloutsKey });
    const progress = screen.getByTestId('rollout-progress');
    await expect.element(progress).toHaveAttribute('data-phase', 'progressing');
    expect(screen.getByTestId('rollout-open-dialog').query()).toBeNull();
    const running = progress.element().getBoundingClientRect().height;

    // It ends (as a rollback): still shown, with how it ended and the button back in its row.
    const ended = rolloutIn('rolled-back', { id: rolloutIn('progressing').id });
    answer = { available: true, rollouts: [ended, rolloutIn('succeeded')] };
    await client.invalidateQueries({ queryKey: rolloutsKey });
    await expect.element(progress).toHaveAttribute('data-phase', 'rolled-back');
    await expect
      .element(screen.getByTestId('rollout-message'))
      .toHaveTextContent('rolled back to echo-v1 100');
    await expect.element(screen.getByTestId('rollout-open-dialog')).toBeVisible();
    expect(progress.element().getBoundingClientRect().height).toBe(running);
    await screen.getByTestId('rollout-open').click();
    expect(opened).toEqual([undefined, ended.id]);
  });

  it('says why where the server runs no rollouts', async () => {
    answer = {
      available: false,
      reason: 'progressive rollouts run on the local mesh only for now',
      rollouts: [],
    };
    const screen = await show().screen;
    await expect.element(screen.getByTestId('rollout-open-dialog')).toBeDisabled();
    await expect
      .element(screen.getByTestId('target-rollout'))
      .toHaveTextContent('No rollouts here: progressive rollouts run on the local mesh only for now');
  });
});
