/**
 * The apply history on the real server and local mesh (scripts/e2e-server.sh): an apply is listed with
 * who made it and how the proxies took it, reads as a diff of the files it wrote, is deep-linkable,
 * and "Load the version before it" then Apply rolls the mesh back (the real gateway proxy listens on
 * its old port again); H and the toolbar open it. The test ends with the mesh directory as it found it, for the specs after it.
 */
import { expect, type Page, test } from '@playwright/test';
import { gatewayPort, guardPage, openConsole, setPort, SHOTS } from './consoleHelpers';

const GATEWAY_VS = 'VirtualService/default/gateway-vsvc';
const NODE = `node-${GATEWAY_VS}`;

guardPage();
test.setTimeout(180_000);

async function applyAndOpenHistory(page: Page): Promise<number> {
  await page.getByTestId('apply').click();
  await expect(page.getByTestId('apply-result')).toBeVisible({ timeout: 60_000 });
  await expect(page.getByTestId('apply-result')).toContainText('in sync');
  const link = page.getByTestId('apply-history-link');
  const id = Number(/#(\d+)/.exec((await link.textContent()) ?? '')?.[1]);
  expect(id).toBeGreaterThan(0);
  await link.click();
  await expect(page.getByTestId('apply-panel')).toHaveCount(0);
  await expect(page.getByTestId('history-dialog')).toBeVisible();
  await expect(page.getByTestId(`history-item-${id}`)).toHaveAttribute('aria-current', 'true');
  return id;
}

test('an apply is listed with its diff, deep-linked, and its previous version loaded and applied rolls the mesh back', async ({
  page,
}) => {
  await openConsole(page, GATEWAY_VS);
  await expect(page.getByTestId(NODE)).toContainText('udp :9001');
  expect(await gatewayPort(page)).toBe(9001);
  // H and the toolbar's button open it (empty or not: other specs may have applied before).
  await page.keyboard.press('h');
  await expect(page.getByTestId('history-dialog')).toBeVisible();
  await page.getByTestId('history-dialog').getByRole('button', { name: 'Close' }).click();
  await expect(page.getByTestId('history-dialog')).toBeHidden();
  await page.getByTestId('history-open').click();
  await expect(page.getByTestId('history-dialog')).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('history-dialog')).toBeHidden();

  // Edit and apply: the apply panel links to the apply's record.
  await setPort(page, GATEWAY_VS, 'spec.udp.port', '9031');
  const first = await applyAndOpenHistory(page);
  await expect.poll(() => gatewayPort(page), { timeout: 30_000 }).toBe(9031);

  // The record: who, how the proxies took it, and the file's diff (the old port out, the new one in).
  const dialog = page.getByTestId('history-dialog');
  await expect(page.getByTestId(`history-item-${first}`)).toContainText('local-admin');
  await expect(page.getByTestId(`history-item-${first}`)).toContainText('1 file written');
  await expect(page.getByTestId(`history-item-${first}`)).toContainText('2 in sync');
  const detail = page.getByTestId('history-detail');
  await expect(detail).toContainText(`Apply #${first} by local-admin`);
  const section = detail.getByTestId('diff-section-mesh.yaml');
  await expect(section).toContainText('modified');
  // (The edited document is written in the current dialect, so more lines than the port's change.)
  await expect(section.locator('[data-kind="del"]', { hasText: 'port: 9001' })).toHaveCount(1);
  await expect(section.locator('[data-kind="add"]', { hasText: 'port: 9031' })).toHaveCount(1);
  await expect(section.locator('[data-kind="add"]', { hasText: 'port: 9001' })).toHaveCount(0);
  // The draft is what was applied.
  await dialog.getByTestId('history-compare-draft').click();
  await expect(detail.getByTestId('history-files-none')).toHaveText(
    'Your draft has exactly the files of this apply.',
  );
  await dialog.getByTestId('history-compare-apply').click();
  await page.screenshot({ path: `${SHOTS}/console-history.png` });

  // A deep link: the address names the apply, and a reload opens the history on it.
  await expect(page).toHaveURL(new RegExp(`#.*history=${first}`));
  await page.reload();
  await expect(page.getByTestId('history-dialog')).toBeVisible();
  await expect(page.getByTestId(`history-item-${first}`)).toHaveAttribute('aria-current', 'true');
  await expect(page.getByTestId('history-detail')).toContainText(`Apply #${first}`);

  // Roll back: load the files as they were before the apply into the draft (undoable), then apply.
  await page.getByTestId('history-load-before').click();
  await expect(page.getByTestId('history-dialog')).toBeHidden();
  await expect(page.getByTestId('toast')).toContainText(`before apply #${first}`);
  await expect(page.getByTestId(NODE)).toContainText('udp :9001');
  await page.keyboard.press('Control+z');
  await expect(page.getByTestId(NODE)).toContainText('udp :9031');
  await page.keyboard.press('Control+Shift+z');
  await expect(page.getByTestId(NODE)).toContainText('udp :9001');
  await expect(page.getByTestId('save-status')).toContainText('Saved');
  const second = await applyAndOpenHistory(page);
  expect(second).toBe(first + 1);
  await expect.poll(() => gatewayPort(page), { timeout: 30_000 }).toBe(9001);
  const back = page.getByTestId('history-detail').getByTestId('diff-section-mesh.yaml');
  await expect(back.locator('[data-kind="del"]', { hasText: 'port: 9031' })).toHaveCount(1);
  await expect(back.locator('[data-kind="add"]', { hasText: 'port: 9001' })).toHaveCount(1);
  // Newest first.
  const items = page.getByTestId('history-list').locator('[data-testid^="history-item-"]');
  await expect(items.nth(0)).toHaveAttribute('data-testid', `history-item-${second}`);
  await expect(items.nth(1)).toHaveAttribute('data-testid', `history-item-${first}`);

  // Closing the dialog takes it out of the address.
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('history-dialog')).toBeHidden();
  await expect(page).not.toHaveURL(/history=/);
  // A link to an apply followed in this tab (only the hash changes) opens it too.
  await page.evaluate((id) => {
    window.location.hash = `history=${id}`;
  }, first);
  await expect(page.getByTestId('history-dialog')).toBeVisible();
  await expect(page.getByTestId(`history-item-${first}`)).toHaveAttribute('aria-current', 'true');
});
