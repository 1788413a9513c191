import '@/app/globals.css';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { describe, expect, it } from 'vitest';
import { render } from 'vitest-browser-react';
import type { SyncAttempt } from '@/lib/gitops/autoSync';
import { GitSyncPanel, type LiveSyncAnswer } from './GitSyncPanel';

const COMMIT = '5ca59e4'.padEnd(40, '0');

function status(sync: LiveSyncAnswer['sync']): LiveSyncAnswer {
  return {
    repository: {
      source: { kind: 'path', path: '/srv/mesh.git' },
      baseBranch: 'main',
      meshDir: '.',
      credentials: { kind: 'none' },
    },
    baseBranch: 'main',
    commit: COMMIT,
    at: '2026-11-28T17:00:00.000Z',
    entries: [],
    counts: { synced: 3, modified: 1, missing: 0, extra: 0 },
    unreadable: [],
    duplicates: [],
    ...(sync ? { sync } : {}),
  };
}

const held: SyncAttempt = {
  commit: COMMIT,
  at: '2026-11-28T17:00:00.000Z',
  trigger: 'new-commit',
  user: 'meshdeck:gitops-sync',
  result: 'held',
  error: '5ca59e4 has 1 error: nothing was synced, what runs stays as it is',
  diagnostics: [
    'VirtualService/default/gw spec.rules[0].action.route.destination (mesh.yaml:43): "x" is missing',
  ],
  applied: [],
  deleted: [],
  prune: false,
};

function show(answer: LiveSyncAnswer, canWrite = true) {
  return render(
    <QueryClientProvider client={new QueryClient()}>
      <GitSyncPanel status={answer} outOfSync={1} canWrite={canWrite} onStatus={() => undefined} />
    </QueryClientProvider>,
  );
}

describe('GitSyncPanel', () => {
  it('shows a held commit with its errors and the policy, and offers Sync now with the policy’s prune', async () => {
    const screen = await show(
      status({
        policy: { prune: true, selfHeal: true },
        webhook: true,
        last: held,
        waiting: '1 object out of sync: held',
      }),
    );
    await expect
      .element(screen.getByTestId('git-sync-policy'))
      .toHaveTextContent(/^Automated sync: on \(prune, self-heal\)/);
    await expect
      .element(screen.getByTestId('git-sync-last'))
      .toHaveTextContent(/^Held 5ca59e4 \(a new commit, meshdeck:gitops-sync, /);
    await expect.element(screen.getByRole('alert')).toHaveTextContent('nothing was synced');
    await expect.element(screen.getByTestId('git-sync-diagnostics')).toHaveTextContent('mesh.yaml:43');
    await expect.element(screen.getByTestId('git-sync-waiting')).toHaveTextContent('held');
    await expect.element(screen.getByTestId('git-sync-prune')).toBeChecked();
    await expect
      .element(screen.getByTestId('git-sync-webhook'))
      .toHaveTextContent(/^A push webhook is set up/);
    await expect.element(screen.getByTestId('git-sync-now')).toBeEnabled();
  });

  it('says how to turn the automated sync on, and Sync now needs a session and a target', async () => {
    const off = await show(status({}), false);
    await expect
      .element(off.getByTestId('git-sync-policy'))
      .toHaveTextContent(/^Automated sync: off: what runs changes only by Apply and Sync now/);
    await expect.element(off.getByTestId('git-sync-now')).toBeDisabled();
    await expect
      .element(off.getByTestId('git-sync-webhook'))
      .toHaveTextContent(/^Compared with Git every few minutes/);
    await expect.element(off.getByTestId('git-sync-prune')).not.toBeChecked();
    await off.unmount();
    const stopped = await show(status({ unavailable: 'the local mesh is not running in this process' }));
    await expect
      .element(stopped.getByTestId('git-sync-unavailable'))
      .toHaveTextContent('the local mesh is not running');
    await expect.element(stopped.getByTestId('git-sync-now')).toBeDisabled();
  });

  it('shows nothing when the server has no sync from Git', async () => {
    const screen = await show(status(undefined));
    expect(screen.getByTestId('git-sync').query()).toBeNull();
  });

  it('the policy toggles: on with prune and self-heal, who changed it, and Saving… none of the time', async () => {
    const screen = await show(
      status({
        policy: { prune: true, selfHeal: true },
        policyChangedBy: 'ann',
        policyChangedAt: '2026-11-28T16:00:00.000Z',
      }),
    );
    const on = screen.getByRole('checkbox', { name: 'Sync automatically' });
    await expect.element(on).toBeChecked();
    await expect.element(on).toBeEnabled();
    for (const name of ['Prune', 'Self-heal']) {
      await expect.element(screen.getByRole('checkbox', { name, exact: true })).toBeChecked();
      await expect.element(screen.getByRole('checkbox', { name, exact: true })).toBeEnabled();
    }
    await expect.element(screen.getByTestId('git-sync-auto-state')).toHaveTextContent(/^changed by ann, /);
    await expect
      .element(screen.getByRole('group', { name: 'Automated sync policy' }))
      .toHaveAttribute('aria-busy', 'false');
    expect(screen.getByTestId('git-sync-auto-note').query()).toBeNull();
  });

  it('off keeps prune and self-heal, shown but not changeable until it is on again', async () => {
    const screen = await show(status({ policy: { enabled: false, prune: true, selfHeal: false } }));
    await expect.element(screen.getByTestId('git-sync-policy')).toHaveTextContent(/^Automated sync: off/);
    await expect.element(screen.getByTestId('git-sync-auto-on')).not.toBeChecked();
    await expect.element(screen.getByTestId('git-sync-auto-on')).toBeEnabled();
    await expect.element(screen.getByTestId('git-sync-auto-prune')).toBeChecked();
    await expect.element(screen.getByTestId('git-sync-auto-prune')).toBeDisabled();
    await expect.element(screen.getByTestId('git-sync-auto-self-heal')).not.toBeChecked();
    await expect.element(screen.getByTestId('git-sync-auto-self-heal')).toBeDisabled();
    await expect.element(screen.getByTestId('git-sync-auto-state')).toHaveTextContent('');
  });

  it('read-only: without a session, or where the server says the policy is configured elsewhere, with the reason', async () => {
    const signedOut = await show(status({ policy: { prune: false, selfHeal: false } }), false);
    for (const id of ['git-sync-auto-on', 'git-sync-auto-prune', 'git-sync-auto-self-heal'])
      await expect.element(signedOut.getByTestId(id)).toBeDisabled();
    await expect.element(signedOut.getByTestId('git-sync-auto-on')).toBeChecked();
    const note = signedOut.getByTestId('git-sync-auto-note');
    await expect.element(note).toHaveTextContent('Changing the policy needs a signed-in session');
    await expect
      .element(signedOut.getByRole('group', { name: 'Automated sync policy' }))
      .toHaveAccessibleDescription('Changing the policy needs a signed-in session');
    await signedOut.unmount();

    const mounted =
      'the sync policy is configured in /var/lib/meshdeck/gitops/config.json, a link (a mounted ConfigMap or Secret?), not a file this server owns: change autoSync there';
    const elsewhere = await show(status({ policyReadOnly: mounted }));
    await expect.element(elsewhere.getByTestId('git-sync-auto-on')).toBeDisabled();
    await expect.element(elsewhere.getByTestId('git-sync-auto-on')).not.toBeChecked();
    await expect.element(elsewhere.getByTestId('git-sync-auto-note')).toHaveTextContent(mounted);
    // Sync now is another matter: it still works.
    await expect.element(elsewhere.getByTestId('git-sync-now')).toBeEnabled();
  });

  it('a click shows the asked state at once, before the save starts (no snap back to the saved one)', async () => {
    const screen = await show(status({ policy: { enabled: true, prune: false, selfHeal: true } }));
    const on = screen.getByTestId('git-sync-auto-on').element() as HTMLInputElement;
    expect(on.checked).toBe(true);
    // Synchronously after the click event: what a browser test driver reads back right after clicking.
    on.click();
    expect(on.checked).toBe(false);
    expect(on.disabled).toBe(true);
    // The PUT fails here (no Meshdeck routes), and then the saved state is shown again.
    await expect.element(screen.getByTestId('git-sync-auto-error')).toBeVisible();
    await expect.element(screen.getByTestId('git-sync-auto-on')).toBeChecked();
  });

  it('a change that fails says what and why, inline, and the toggles show what the server has', async () => {
    // This page's server (Vitest's) has no Meshdeck routes: a real failed PUT.
    const screen = await show(status({ policy: { enabled: false, prune: false, selfHeal: true } }));
    await screen.getByRole('checkbox', { name: 'Sync automatically' }).click();
    const error = screen.getByTestId('git-sync-auto-error');
    await expect
      .element(error)
      .toHaveTextContent(
        /^Could not turn automated sync on: PUT \/api\/gitops\/sync\/policy answered \d{3}: /,
      );
    await expect.element(error).toHaveAttribute('role', 'alert');
    await expect.element(screen.getByTestId('git-sync-auto-on')).not.toBeChecked();
    await expect.element(screen.getByTestId('git-sync-auto-on')).toBeEnabled();
    await expect.element(screen.getByTestId('git-sync-auto-self-heal')).toBeChecked();
  });
});
