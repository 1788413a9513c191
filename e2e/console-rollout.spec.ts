/**
 * A progressive rollout on the real server and local mesh (scripts/e2e-server.sh): the canary example is
 * applied, then echo-v2 is rolled out 50% -> 100% from the canary Target's Inspector, each step held 1 s
 * and judged by 20 real probes through the gateway. The Inspector and the toolbar's chip follow it while
 * it runs, the dialog shows it succeed with each step's answers per backend, the apply history names both
 * steps, and the draft (no edits of its own) follows the disk to 0/100 without a "Changed on disk".
 * Other specs share this server: it starts from what runs (Example 1 unless one left something else) and
 * puts that back at the end by the console's own Apply, so the specs after it find Example 1.
 */
import { expect, type Page, test } from '@playwright/test';
import type { DraftDoc } from '../lib/console/draftDoc';
import { toolbarFit } from '../components/console/toolbarFit.testutil';
import {
  applyCanaryExample,
  applyDraftNow,
  gatewayProbeSessions,
  guardPage,
  openConsole,
  putDraft,
  SHOTS,
} from './consoleHelpers';

const CANARY = 'Target/default/echo-canary';

guardPage();
test.setTimeout(180_000);

/**
 * The toolbar's promise at this width: every control on screen, on one row, unless a Git or "Changed on
 * disk" chip shows (they take a second row by design, app/globals.css). Earlier specs leave GitOps set up,
 * and the rollout makes what runs differ from Git: then the Git chip is there.
 */
async function expectToolbarFits(page: Page): Promise<void> {
  const secondRow = await page.locator('.toolbar .sync-chip, .toolbar .drift-chip').count();
  expect(await page.evaluate(toolbarFit)).toEqual({ off: [], rows: secondRow > 0 ? 2 : 1 });
}

/** Asks every rollout that has not ended to abort; how many had not ended. */
async function abortRollouts(page: Page): Promise<number> {
  return page.evaluate(async () => {
    const s = (await (await fetch('/api/session')).json()) as { csrfToken: string };
    const { rollouts } = (await (await fetch('/api/rollouts')).json()) as {
      rollouts: { id: string; phase: string; activity?: string }[];
    };
    const open = rollouts.filter((r) => !['succeeded', 'rolled-back', 'aborted', 'failed'].includes(r.phase));
    for (const r of open)
      if (r.activity !== 'rolling back')
        await fetch(`/api/rollouts/${encodeURIComponent(r.id)}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-csrf-token': s.csrfToken },
          body: JSON.stringify({ action: 'abort' }),
        });
    return open.length;
  });
}

test('a rollout of echo-v2 to 50% then 100%, judged by probes through the gateway, succeeds and the draft follows it', async ({
  page,
}) => {
  await openConsole(page, 'VirtualService/default/gateway-vsvc');
  // What runs now (openConsole reset the draft to it), put back at the end.
  const running = (await page.evaluate(async () => (await fetch('/api/draft')).json())) as {
    draft: DraftDoc;
  };
  try {
    // The canary example runs: loaded into the draft and applied.
    await applyCanaryExample(page);
    const canary = page.getByTestId(`node-${CANARY}`);

    // The Target's Inspector offers the rollout under its split.
    await canary.click();
    await page.getByTestId('tab-inspector').click();
    await expect(page.getByTestId('split-editor')).toBeVisible();
    await page.getByTestId('rollout-open-dialog').click();
    const dialog = page.getByTestId('rollout-dialog');
    await expect(dialog).toBeVisible();
    await expect(dialog.getByTestId('rollout-running')).toHaveText('echo-v1 80, echo-v2 20');
    await expect(dialog.getByTestId('rollout-what-runs')).toContainText('(the mesh directory /');
    await expect(dialog.getByTestId('rollout-draft-differs')).toHaveCount(0);
    await expect(dialog.getByTestId('rollout-canary')).toHaveValue('echo-v2');
    await expect(dialog.getByTestId('rollout-listener')).toHaveValue('gateway');
    await dialog.getByTestId('rollout-steps-input').fill('50, 100');
    await dialog.getByTestId('rollout-pause-s').fill('1');
    await expect(dialog.getByTestId('rollout-start')).toBeEnabled();
    await page.screenshot({ path: `${SHOTS}/console-rollout-form.png` });
    // Whether "Changed on disk" shows at any moment of the rollout, even for one render.
    await page.evaluate(() => {
      const w = window as unknown as { driftSeen: boolean };
      w.driftSeen = false;
      new MutationObserver(() => {
        if (document.querySelector('[data-testid="disk-drift"]')) w.driftSeen = true;
      }).observe(document.body, { subtree: true, childList: true });
    });
    await dialog.getByTestId('rollout-start').click();
    await expect(dialog.getByTestId('rollout-progress')).toBeVisible();
    await expect(dialog.getByTestId('rollout-form')).toHaveCount(0);

    // While it runs: the Inspector shows it in short, and the toolbar's chip says the step, with every
    // toolbar control on screen on one row at 1280 px.
    await dialog.getByRole('button', { name: 'Close' }).click();
    const compact = page.getByTestId('target-rollout').getByTestId('rollout-progress');
    await expect(compact).toHaveAttribute('data-phase', 'progressing');
    await expect(compact.getByTestId('rollout-current')).toHaveText(/^step [12] of 2 \((50|100)%\): /);
    const chip = page.getByTestId('rollout-chip');
    await expect(chip).toHaveText(/^Rollout: (50% \(step 1 of 2\)|100% \(step 2 of 2\))$/);
    expect(page.viewportSize()?.width).toBe(1280);
    await expectToolbarFits(page);
    await page.screenshot({ path: `${SHOTS}/console-rollout-chip.png` });

    // Pause from the Inspector holds it (the chip says so), Resume carries on.
    await compact.getByTestId('rollout-pause').click();
    await expect(chip).toHaveText('Rollout paused', { timeout: 30_000 });
    await expect(compact).toHaveAttribute('data-phase', 'paused');
    await expect(compact.getByTestId('rollout-message')).toHaveText('paused by local-admin');
    await expectToolbarFits(page);
    await compact.getByTestId('rollout-resume').click();
    await expect(chip).toHaveText(/^Rollout: \d+% \(step [12] of 2\)$/);

    // The chip opens the rollout; it succeeds with each step's probes answered.
    await chip.click();
    await expect(dialog.getByTestId('rollout-progress')).toBeVisible();
    await page.screenshot({ path: `${SHOTS}/console-rollout-progress.png` });
    await expect(dialog.getByTestId('rollout-phase')).toHaveText('Succeeded', { timeout: 60_000 });
    await expect(dialog.getByTestId('rollout-step-0')).toHaveAttribute('data-status', 'passed');
    await expect(dialog.getByTestId('rollout-step-1')).toHaveAttribute('data-status', 'passed');
    await expect(dialog.getByTestId('rollout-step-0')).toContainText('20 of 20 probes answered (100%)');
    await expect(dialog.getByTestId('rollout-step-0')).toContainText(/answers: echo-v1 \d+, echo-v2 \d+/);
    await expect(dialog.getByTestId('rollout-step-1')).toContainText('answers: echo-v2 20');
    await expect(dialog.getByTestId('rollout-weights')).toHaveText(
      'weights now: echo-v1 0 (was 80), echo-v2 100 (was 20)',
    );
    await expect(dialog.getByTestId('rollout-message')).toContainText('echo-v2 runs at 100% after 2 steps');
    await expect(dialog.getByTestId('rollout-pause')).toHaveCount(0);
    await page.screenshot({ path: `${SHOTS}/console-rollout.png` });
    // A success leaves no chip behind.
    await expect(chip).toHaveCount(0);
    await dialog.getByRole('button', { name: 'Close' }).click();

    // The draft had no edits of its own: it follows the disk, and the Inspector shows what runs.
    await expect(canary).toContainText('split 0/100', { timeout: 20_000 });
    await expect(page.getByTestId('split-weight-0')).toHaveText('0 (0%)');
    await expect(page.getByTestId('split-weight-1')).toHaveText('100 (100%)');
    await expect(page.getByTestId('disk-drift')).toHaveCount(0);
    expect(await page.evaluate(() => (window as unknown as { driftSeen: boolean }).driftSeen)).toBe(false);
    // The Inspector keeps the rollout it showed running, ended, with the way to another one.
    await expect(compact).toHaveAttribute('data-phase', 'succeeded');
    await expect(compact.getByTestId('rollout-message')).toHaveText('echo-v2 runs at 100% after 2 steps');
    await expect(page.getByTestId('target-rollout').getByTestId('rollout-open-dialog')).toBeVisible();
    await page.screenshot({ path: `${SHOTS}/console-rollout-inspector.png` });

    // The history names both steps, newest first.
    await page.keyboard.press('Escape');
    await page.keyboard.press('h');
    const history = page.getByTestId('history-dialog');
    const items = history.getByTestId('history-list').locator('li');
    await expect(items.nth(0)).toContainText('rollout step 2 of 2 (100%)');
    await expect(items.nth(1)).toContainText('rollout step 1 of 2 (50%)');
    await items.nth(0).getByRole('button').click();
    await expect(history.getByTestId('history-rollout')).toHaveText('rollout step 2 of 2 (100%)');
    const section = history.getByTestId('history-detail').getByTestId('diff-section-mesh.yaml');
    await expect(
      section.locator('[data-kind="add"]', { hasText: 'serviceName: echo-v2, weight: 100' }),
    ).toHaveCount(1);
    await page.screenshot({ path: `${SHOTS}/console-rollout-history.png` });
    await history.getByRole('button', { name: 'Close' }).click();
  } finally {
    // A rollout left running (this test failed) would go on writing the directory: aborted first.
    await expect
      .poll(() => abortRollouts(page), { timeout: 60_000, message: 'every rollout has ended' })
      .toBe(0);
    // What ran before, through the console's own Apply.
    expect(await putDraft(page, running.draft)).toBe(200);
    expect(await applyDraftNow(page)).toBe(200);
    // And no session of the probes is left on the gateway proxy (read every 2 s).
    await expect.poll(() => gatewayProbeSessions(page), { timeout: 20_000 }).toBe(0);
  }
});
