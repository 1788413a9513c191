/**
 * "What runs vs. Git" on the real server (scripts/e2e-server.sh: seed Example 1 on real l7mp proxies, the
 * local default GitOps repository): someone changes the transcoder's port on the repository's main
 * branch; the toolbar's chip, compared again, says what runs is out of sync, and the dialog names the
 * object and the field with both values; "Open Git's version as a draft" opens a new draft holding Git's
 * port. Other specs share this server and its repository, so everything here is relative to what they
 * left, and main is put back at the end.
 */
import { expect, test } from '@playwright/test';
import { commitOnMain, guardPage, openConsole, SHOTS } from './consoleHelpers';

const TRANSCODER_VS = 'VirtualService/default/transcoder-vsvc';

guardPage();
test.setTimeout(120_000);

test("the chip says what runs is no longer Git's, the dialog names the field, and Git's version opens as a draft", async ({
  page,
}) => {
  await openConsole(page, TRANSCODER_VS);
  const status = await page.evaluate(async () => (await fetch('/api/gitops/status')).json());
  const remoteGit = (status as { repository: { source: { path?: string } } }).repository.source.path;
  expect(remoteGit).toMatch(/remote\.git$/);
  // A comparison made now (the server otherwise answers one up to a minute old), then a reload so the
  // chip starts from it.
  const running = await page.evaluate(async () => (await fetch('/api/gitops/sync?refresh=1')).json());
  await page.reload();
  await expect(page.getByTestId('save-status')).toContainText('Saved');
  const counts = (running as { counts: { modified: number; missing: number; extra: number } }).counts;
  const before = counts.modified;
  const outBefore = counts.modified + counts.missing + counts.extra;
  // The chip shows only when something is out of sync (other specs may have moved main already).
  const chip = page.getByTestId('live-sync');
  await expect(chip).toHaveCount(outBefore > 0 ? 1 : 0);

  commitOnMain(remoteGit!, 'transcoder on 8899', (t) => {
    expect(t.match(/port: 8888/g)).toHaveLength(1);
    return t.replace('port: 8888', 'port: 8899');
  });
  try {
    // The Commit / PR panel says where what runs stands, and leads to the detail.
    await page.getByTestId('gitops-open').click();
    const line = page.getByTestId('gitops-live-sync');
    await expect(line).toContainText(/^What runs: (in sync with main|\d+ objects? out of sync with main)/);
    await line.getByRole('button', { name: 'What runs vs. Git' }).click();
    await expect(page.getByTestId('gitops-panel')).not.toBeVisible();
    const dialog = page.getByTestId('live-sync-dialog');
    await expect(dialog).toBeVisible();
    await dialog.getByTestId('live-sync-refresh').click();
    await expect(dialog.getByTestId('live-sync-counts')).toContainText(`${before + 1} differ`);
    const row = dialog
      .getByTestId('live-sync-row')
      .filter({ hasText: 'VirtualService default/transcoder-vsvc' });
    await expect(row).toContainText('differs from Git');
    await expect(row).toContainText('spec.websocket.port: 8899 (Git) → 8888 (running)');
    // Paths are relative to the repository's mesh directory (the dialog's head names it).
    await expect(row).toContainText(/Git: mesh.yaml:\d+ · running: mesh.yaml:\d+/);
    await expect(dialog).toContainText('directory examples/seed-example-1');
    // And what runs: the mesh directory the console's control plane serves.
    await expect(dialog.getByTestId('live-sync-running')).toContainText(/^the mesh directory \//);
    await page.screenshot({ path: `${SHOTS}/console-live-sync.png` });

    // The chip agrees once the dialog closes.
    await dialog.getByRole('button', { name: 'Close' }).click();
    await expect(chip).toHaveText(`Git: ${outBefore + 1} out of sync`);
    await expect(chip).toHaveClass(/sync-chip--drift/);
    await page.screenshot({ path: `${SHOTS}/console-live-sync-chip.png` });

    // Git's version, as a new draft: the transcoder on 8899 there, the running mesh untouched.
    await chip.click();
    await dialog.getByTestId('live-sync-open-git').click();
    await expect(page).toHaveURL(/[?&]draft=/);
    await expect(page.getByTestId(`node-${TRANSCODER_VS}`)).toContainText(':8899');
    const draftId = new URL(page.url()).searchParams.get('draft')!;
    const drafts = await page.evaluate(async () => (await fetch('/api/drafts')).json());
    expect(JSON.stringify(drafts)).toMatch(/"name":"Git main @ [0-9a-f]{7}"/);
    // Clean up: the draft, then main as it was.
    const deleted = await page.evaluate(async (id) => {
      const s = (await (await fetch('/api/session')).json()) as { csrfToken: string };
      const r = await fetch(`/api/drafts/${encodeURIComponent(id)}`, {
        method: 'DELETE',
        headers: { 'x-csrf-token': s.csrfToken },
      });
      return r.status;
    }, draftId);
    expect(deleted).toBe(200);
  } finally {
    commitOnMain(remoteGit!, 'transcoder back on 8888', (t) => t.replace('port: 8899', 'port: 8888'));
  }
});
