/**
 * The toolbar's rollout chip in Chromium. FAKE route: window.fetch answers GET /api/rollouts with the
 * fixed rollouts the test holds (lib/rollout/rolloutFixtures.testutil.ts); the chip's words and colour
 * per phase, and a rollback's chip going once the dialog has shown it (this browser's localStorage).
 */
import '@/app/globals.css';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { useState } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { page } from 'vitest/browser';
import { render } from 'vitest-browser-react';
import type { DraftCompilation } from '@/lib/console/compileDraft';
import type { RolloutState } from '@/lib/rollout/rollout';
import { rolloutIn } from '@/lib/rollout/rolloutFixtures.testutil';
import { rolloutsKey } from './queries';
import { RolloutChip } from './RolloutChip';
import { RolloutDialog } from './RolloutDialog';
import { toolbarFit } from './toolbarFit.testutil';

// next/link (in the Toolbar) reads process.env as Next's browser bundle defines it; Vite's has no process.
(globalThis as { process?: unknown }).process ??= { env: {} };
const { Toolbar } = await import('./Toolbar');

let rollouts: RolloutState[] = [];

function fakeFetch(input: RequestInfo | URL): Promise<Response> {
  const url = String(input);
  const body = url.endsWith('/api/rollouts') ? { available: true, rollouts } : { error: 'not in this test' };
  return Promise.resolve(
    new Response(JSON.stringify(body), {
      status: url.endsWith('/api/rollouts') ? 200 : 404,
      headers: { 'content-type': 'application/json' },
    }),
  );
}

afterEach(() => {
  vi.unstubAllGlobals();
  localStorage.removeItem('meshdeck:rollouts-seen');
});

/** The chip, and the dialog it opens (as the console wires them). */
function Toolbarish() {
  const [open, setOpen] = useState<string>();
  return (
    <>
      <RolloutChip onOpen={setOpen} />
      <RolloutDialog
        open={open !== undefined}
        onClose={() => setOpen(undefined)}
        rolloutId={open}
        compilation={
          {
            graph: { nodes: [], edges: [], listeners: {} },
            model: { byKey: new Map() },
          } as unknown as DraftCompilation
        }
        draftId="main"
        where="the mesh directory /srv/mesh"
      />
    </>
  );
}

let client = new QueryClient();

function show(list: RolloutState[]) {
  rollouts = list;
  vi.stubGlobal('fetch', fakeFetch);
  client = new QueryClient();
  return render(
    <QueryClientProvider client={client}>
      <Toolbarish />
    </QueryClientProvider>,
  );
}

/** Once the list has been read and rendered: a chip that is not there by then is not coming. */
async function listRead(): Promise<void> {
  await expect.poll(() => client.getQueryState(rolloutsKey)?.status).toBe('success');
  await new Promise((r) => setTimeout(r, 0));
  await new Promise((r) => requestAnimationFrame(r));
}

describe('RolloutChip', () => {
  it('says the step while progressing and that it is paused, in the busy and the warning colour', async () => {
    const screen = await show([rolloutIn('progressing'), rolloutIn('succeeded')]);
    const chip = screen.getByTestId('rollout-chip');
    await expect.element(chip).toHaveTextContent(/^Rollout: 25% \(step 2 of 4\)$/);
    await expect.element(chip).toHaveClass('rollout-chip--busy');
    await screen.unmount();
    const paused = await show([rolloutIn('paused')]);
    await expect.element(paused.getByTestId('rollout-chip')).toHaveTextContent(/^Rollout paused$/);
    await expect.element(paused.getByTestId('rollout-chip')).toHaveClass('rollout-chip--warn');
    await expect
      .element(paused.getByTestId('rollout-chip'))
      .toHaveStyle({ color: getComputedStyle(document.documentElement).getPropertyValue('--warn').trim() });
  });

  it('says a rollback in the error colour until the dialog has shown it, then goes', async () => {
    const screen = await show([rolloutIn('rolled-back')]);
    const chip = screen.getByTestId('rollout-chip');
    await expect.element(chip).toHaveTextContent(/^Rollout rolled back$/);
    await expect.element(chip).toHaveClass('rollout-chip--bad');
    await chip.click();
    const dialog = screen.getByTestId('rollout-dialog');
    await expect.element(dialog.getByTestId('rollout-phase')).toHaveTextContent(/^Rolled back$/);
    await expect.poll(() => chip.query()).toBeNull();
    expect(JSON.parse(localStorage.getItem('meshdeck:rollouts-seen')!)).toEqual([
      rolloutIn('rolled-back').id,
    ]);
    await dialog.getByRole('button', { name: 'Close' }).click();
    await screen.unmount();
    // Another render of the console in this browser: still seen.
    const again = await show([rolloutIn('rolled-back')]);
    await listRead();
    expect(again.getByTestId('rollout-chip').query()).toBeNull();
  });

  it('a failed rollout says failed; a success or an abort shows no chip', async () => {
    const failed = await show([rolloutIn('failed')]);
    await expect.element(failed.getByTestId('rollout-chip')).toHaveTextContent(/^Rollout failed$/);
    await failed.unmount();
    for (const phase of ['succeeded', 'aborted'] as const) {
      const screen = await show([rolloutIn(phase)]);
      await listRead();
      expect(screen.getByTestId('rollout-chip').query(), phase).toBeNull();
      await screen.unmount();
    }
  });
});

/** The console's header as ConsoleApp draws it: the brand, then the toolbar with every control. */
function Header() {
  const none = () => {};
  return (
    <div className="console">
      <header className="console__header">
        <div className="brand">
          <h1>Meshdeck</h1>
        </div>
        <Toolbar
          canUndo
          canRedo={false}
          save={{ state: 'saved', revision: 12 }}
          session={{ status: 'signed-in', user: 'local-admin', groups: [] }}
          connection="open"
          apply={{ phase: 'idle' }}
          errors={0}
          theme="dark"
          onUndo={none}
          onRedo={none}
          onImport={none}
          onExport={none}
          onApply={none}
          onTheme={none}
          onHelp={none}
          onHistory={none}
          onLiveSync={none}
          onRollout={none}
          onResolveConflict={none}
          onSignOut={none}
          draftId="main"
          onSwitchDraft={none}
          onDraftReplaced={none}
        />
      </header>
    </div>
  );
}

describe('the chip in the toolbar at 1280 px', () => {
  it('keeps the toolbar on one row with every control on screen, whichever chip shows', async () => {
    await page.viewport(1280, 720);
    for (const list of [
      [rolloutIn('progressing')],
      [rolloutIn('paused')],
      [rolloutIn('rolled-back')],
      [rolloutIn('failed')],
    ]) {
      rollouts = list;
      vi.stubGlobal('fetch', fakeFetch);
      const screen = await render(
        <QueryClientProvider client={new QueryClient()}>
          <Header />
        </QueryClientProvider>,
      );
      await expect.element(screen.getByTestId('rollout-chip')).toBeVisible();
      expect(toolbarFit(), list[0]!.phase).toEqual({ off: [], rows: 1 });
      await screen.unmount();
    }
    // The step is in the chip's name and title when the toolbar has no room for it.
    rollouts = [rolloutIn('progressing')];
    const screen = await render(
      <QueryClientProvider client={new QueryClient()}>
        <Header />
      </QueryClientProvider>,
    );
    const chip = screen.getByTestId('rollout-chip');
    await expect.element(chip).toHaveAccessibleName('Rollout: 25% (step 2 of 4)');
    await expect
      .element(chip)
      .toHaveAttribute('title', expect.stringContaining('Rollout: 25% (step 2 of 4)'));
    await expect
      .element(screen.getByTestId('sign-out'))
      .toHaveAttribute('title', expect.stringContaining('local-admin'));
  });
});
