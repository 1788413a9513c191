/**
 * Files changed on disk while a draft is edited (a `git pull`, an editor), on the real server and local
 * mesh (scripts/e2e-server.sh): the console says so as soon as the control plane reloads the
 * directory, shows what changed there and what Apply would overwrite, rebases the draft's own change
 * onto the disk's (applied: the real gateway runs the draft's port, the file keeps both changes), and
 * settles a conflict with the user's choice. The test writes the mesh directory's file itself, as git
 * would, and leaves it and the draft as it found them for the specs after it.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { expect, type Page, test } from '@playwright/test';
import { gatewayPort, guardPage, openConsole, ORIGIN, setPort, SHOTS } from './consoleHelpers';

const GATEWAY_VS = 'VirtualService/default/gateway-vsvc';
const GATEWAY = `node-${GATEWAY_VS}`;
const TRANSCODER = 'node-VirtualService/default/transcoder-vsvc';

// The apply refused for the changed directory and the rebase answering its conflict are 409s.
guardPage(ORIGIN, [/the server responded with a status of 409 \(Conflict\)/]);
test.setTimeout(180_000);

async function meshFile(page: Page): Promise<string> {
  const source = await page.evaluate(async () => {
    const s = (await (await fetch('/api/state')).json()) as { mesh: { source: string } };
    return s.mesh.source;
  });
  return path.join(source, 'mesh.yaml');
}

test('a change on disk is shown, the draft rebased onto it and applied, and a conflict settled by choice', async ({
  page,
}) => {
  await openConsole(page, GATEWAY_VS);
  const file = await meshFile(page);
  const original = await readFile(file, 'utf8');
  expect(original).toContain('port: 8888');
  try {
    await expect(page.getByTestId('disk-drift')).toHaveCount(0);
    await setPort(page, GATEWAY_VS, 'spec.udp.port', '9041');

    // Someone else's change lands in the directory: the transcoder's port.
    await writeFile(file, original.replace('port: 8888', 'port: 8890'));
    const chip = page.getByTestId('disk-drift');
    await expect(chip).toBeVisible({ timeout: 30_000 });
    await expect(chip).toHaveAttribute('title', /mesh\.yaml/);
    // At 1280 px the chip takes the toolbar to a second row rather than push its last buttons away.
    const width = page.viewportSize()!.width;
    for (const id of ['proxies-link', 'theme', 'disk-drift']) {
      const box = (await page.getByTestId(id).boundingBox())!;
      expect(box.x + box.width, id).toBeLessThanOrEqual(width);
    }
    await expect(page.getByRole('button', { name: 'Keyboard shortcuts' })).toBeInViewport({ ratio: 1 });
    // Wider, where the brand's name shows too.
    await page.setViewportSize({ width: 1440, height: 720 });
    await expect(page.getByRole('button', { name: 'Keyboard shortcuts' })).toBeInViewport({ ratio: 1 });
    await expect(page.getByTestId('save-status')).toBeInViewport({ ratio: 1 });
    await page.setViewportSize({ width: 1280, height: 720 });
    // The draft still shows its own files until the user decides.
    await expect(page.getByTestId(TRANSCODER)).toContainText(':8888');
    await chip.click();
    const dialog = page.getByTestId('disk-drift-dialog');
    await expect(dialog).toBeVisible();
    const onDisk = dialog.getByTestId('diff-section-mesh.yaml');
    await expect(onDisk.locator('[data-kind="del"]', { hasText: 'port: 8888' })).toHaveCount(1);
    await expect(onDisk.locator('[data-kind="add"]', { hasText: 'port: 8890' })).toHaveCount(1);
    await expect(onDisk.locator('[data-kind="add"]', { hasText: 'port: 9041' })).toHaveCount(0);
    await dialog.getByTestId('drift-compare-draft').click();
    // What Apply would write over the disk: the draft's port, and the transcoder's old one back.
    const overwrite = dialog.getByTestId('diff-section-mesh.yaml');
    await expect(overwrite.locator('[data-kind="add"]', { hasText: 'port: 9041' })).toHaveCount(1);
    await expect(overwrite.locator('[data-kind="add"]', { hasText: 'port: 8888' })).toHaveCount(1);
    await page.screenshot({ path: `${SHOTS}/console-disk-drift.png` });

    // Rebase: both changes in the draft, loaded here; the chip goes.
    await dialog.getByTestId('drift-rebase').click();
    await expect(dialog).toBeHidden();
    await expect(page.getByTestId('toast')).toContainText(
      'Rebased onto the files on disk; your change to 1 object carried over',
    );
    await expect(page.getByTestId(TRANSCODER)).toContainText(':8890');
    await expect(page.getByTestId(GATEWAY)).toContainText('udp :9041');
    await expect(page.getByTestId('disk-drift')).toHaveCount(0);
    // Ctrl+Z shows the draft as it was before the rebase, Ctrl+Shift+Z the rebased one.
    await page.keyboard.press('Control+z');
    await expect(page.getByTestId(TRANSCODER)).toContainText(':8888');
    await page.keyboard.press('Control+Shift+z');
    await expect(page.getByTestId(TRANSCODER)).toContainText(':8890');
    await expect(page.getByTestId('save-status')).toContainText('Saved');

    // Apply goes through without "overwrite": the file has both changes, the gateway runs the draft's port.
    await page.getByTestId('apply').click();
    await expect(page.getByTestId('apply-result')).toBeVisible({ timeout: 60_000 });
    await expect(page.getByTestId('apply-result')).toContainText('in sync');
    const applied = await readFile(file, 'utf8');
    expect(applied).toContain('port: 8890');
    expect(applied).toContain('port: 9041');
    await expect.poll(() => gatewayPort(page), { timeout: 30_000 }).toBe(9041);
    await page.getByRole('button', { name: 'Close the apply panel' }).click();

    // A conflict: the draft and the disk change the gateway's port differently; Apply says so first.
    await setPort(page, GATEWAY_VS, 'spec.udp.port', '9051');
    await writeFile(file, applied.replace('port: 9041', 'port: 9061'));
    await expect(page.getByTestId('disk-drift')).toBeVisible({ timeout: 30_000 });
    await page.getByTestId('apply').click();
    await expect(page.getByTestId('apply-panel')).toContainText('changed since this draft was started');
    await page.getByTestId('apply-review-disk').click();
    await expect(dialog).toBeVisible();
    await dialog.getByTestId('drift-rebase').click();
    const conflict = dialog.getByTestId('drift-conflict-VirtualService/default/gateway-vsvc');
    await expect(conflict).toBeVisible();
    await expect(dialog.getByTestId('drift-error')).toContainText('conflict');
    await expect(dialog.getByTestId('drift-rebase')).toBeDisabled();
    await expect(conflict).toContainText('port: 9051');
    await expect(conflict).toContainText('port: 9061');
    await page.screenshot({ path: `${SHOTS}/console-disk-conflict.png` });
    await conflict.getByTestId('drift-choose-theirs').check();
    await dialog.getByTestId('drift-rebase').click();
    await expect(dialog).toBeHidden();
    await expect(page.getByTestId(GATEWAY)).toContainText('udp :9061');
    await expect(page.getByTestId('disk-drift')).toHaveCount(0);
  } finally {
    await writeFile(file, original);
  }

  // The directory is as it was: start the draft again from it (the second click confirms).
  await expect(page.getByTestId('disk-drift')).toBeVisible({ timeout: 30_000 });
  await page.getByTestId('disk-drift').click();
  const dialog = page.getByTestId('disk-drift-dialog');
  await dialog.getByTestId('drift-reset').click();
  await expect(dialog.getByTestId('drift-reset')).toHaveText('Drop my edits? Click again');
  await dialog.getByTestId('drift-reset').click();
  await expect(dialog).toBeHidden();
  await expect(page.getByTestId(GATEWAY)).toContainText('udp :9001');
  await expect(page.getByTestId('disk-drift')).toHaveCount(0);
  await expect.poll(() => gatewayPort(page), { timeout: 30_000 }).toBe(9001);
});
