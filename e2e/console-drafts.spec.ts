/**
 * Several drafts on the real server (scripts/e2e-server.sh): a named draft made as a copy keeps its
 * own edits apart from the main draft, survives a reload (the address names it), shows its own
 * changes in Commit / PR, is renamed and deleted, and a refused name says why and keeps the dialog.
 */
import { expect, type Page, test } from '@playwright/test';
import { guardPage, openConsole, recordDraftRequests, SHOTS } from './consoleHelpers';

const GATEWAY_VS = 'VirtualService/default/gateway-vsvc';

guardPage();
test.setTimeout(120_000);

async function setPort(page: Page, port: string): Promise<void> {
  await page.getByTestId(`node-${GATEWAY_VS}`).click();
  await page.getByTestId('tab-inspector').click();
  await page.locator('[data-field-path="spec.udp.port"] input').fill(port);
  await expect(page.getByTestId(`node-${GATEWAY_VS}`)).toContainText(`udp :${port}`);
  await expect(page.getByTestId('save-status')).toContainText('Saved');
}

async function switchTo(page: Page, name: string): Promise<void> {
  await page.getByTestId('draft-select').selectOption({ label: name });
  await expect(page.getByTestId('draft-select').locator('option:checked')).toHaveText(name);
  await expect(page.getByTestId('save-status')).toContainText('Saved');
  await expect(page.locator('.canvas__status')).toHaveText('');
}

test('a named draft keeps its edits apart, survives a reload, shows its own changes, and is renamed and deleted', async ({
  page,
}) => {
  await openConsole(page, GATEWAY_VS);
  const name = `Canary ${Date.now()}`;

  // A copy of the main draft, edited on its own.
  await page.getByTestId('draft-new').click();
  const dialog = page.getByTestId('draft-dialog');
  await dialog.getByTestId('draft-name').fill(name);
  await dialog.getByTestId('draft-copy').check();
  await page.screenshot({ path: `${SHOTS}/console-drafts-new.png` });
  await dialog.getByTestId('draft-submit').click();
  await expect(page).toHaveURL(/[?&]draft=canary-\d+/);
  await expect(page.getByTestId('draft-select').locator('option:checked')).toHaveText(name);
  await expect(page.getByTestId(`node-${GATEWAY_VS}`)).toBeVisible();
  await setPort(page, '9011');

  // The main draft does not have that edit.
  await switchTo(page, 'Main draft');
  await expect(page).not.toHaveURL(/draft=/);
  await expect(page.getByTestId(`node-${GATEWAY_VS}`)).not.toContainText('udp :9011');

  // Back on the named draft, and after a reload (the address names the draft): the edit is there.
  await switchTo(page, name);
  await expect(page.getByTestId(`node-${GATEWAY_VS}`)).toContainText('udp :9011');
  // The draft is asked for once per load, while the app's scripts load (not the main one first).
  const draftRequests = recordDraftRequests(page);
  await page.reload();
  await expect(page.getByTestId('save-status')).toContainText('Saved');
  await expect(page.getByTestId('draft-select').locator('option:checked')).toHaveText(name);
  await expect(page.getByTestId(`node-${GATEWAY_VS}`)).toContainText('udp :9011');
  const asked = draftRequests.stop();
  expect(asked).toHaveLength(1);
  expect(asked[0]).toMatch(/^\?draft=[a-z0-9-]+&parsed=1$/);

  // To the proxies page and back: still this draft, not the main one.
  await page.getByTestId('proxies-link').click();
  await expect(page).toHaveURL(/\/proxies\?draft=canary-\d+/);
  await page.getByTestId('back-to-console').click();
  await expect(page).toHaveURL(/\/\?draft=canary-\d+/);
  await expect(page.getByTestId('draft-select').locator('option:checked')).toHaveText(name);
  await expect(page.getByTestId(`node-${GATEWAY_VS}`)).toContainText('udp :9011');

  // Its Commit / PR panel shows its own change against its base commit.
  await page.getByTestId('gitops-open').click();
  const panel = page.getByTestId('gitops-panel');
  const changes = panel.getByTestId('gitops-changes');
  await expect(changes).toContainText('VirtualService default/gateway-vsvc');
  await expect(changes.locator('li')).toHaveCount(1);
  await page.screenshot({ path: `${SHOTS}/console-drafts-gitops.png` });
  await panel.getByRole('button', { name: 'Close' }).click();

  // A name another draft has is refused with the reason; the dialog stays with what was typed.
  await page.getByTestId('draft-new').click();
  await dialog.getByTestId('draft-name').fill(name.toLowerCase());
  await dialog.getByTestId('draft-submit').click();
  await expect(dialog.getByTestId('draft-error')).toContainText('exists already');
  await expect(dialog.getByTestId('draft-name')).toHaveValue(name.toLowerCase());
  await dialog.getByRole('button', { name: 'Cancel' }).click();

  // Rename, then delete: the console goes back to the main draft.
  await page.getByTestId('draft-rename').click();
  await dialog.getByTestId('draft-name').fill(`${name} renamed`);
  await dialog.getByTestId('draft-submit').click();
  await expect(page.getByTestId('draft-select').locator('option:checked')).toHaveText(`${name} renamed`);
  await page.getByTestId('draft-delete').click();
  await expect(dialog).toContainText('kept aside');
  await dialog.getByTestId('draft-submit').click();
  await expect(page.getByTestId('draft-select').locator('option:checked')).toHaveText('Main draft');
  await expect(page).not.toHaveURL(/draft=/);
  await expect(
    page.getByTestId('draft-select').locator('option', { hasText: `${name} renamed` }),
  ).toHaveCount(0);
});
