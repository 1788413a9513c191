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
      .toHaveTextContent(/^Automated sync: off\. Set autoSync/);
    await expect.element(off.getByTestId('git-sync-now')).toBeDisabled();
    await expect
      .element(off.getByTestId('git-sync-webhook'))
      .toHaveTextContent(/^Compared with Git every few minutes/);
    await expect.element(off.getByTestId('git-sync-prune')).not.toBeChecked();
    off.unmount();
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
});
