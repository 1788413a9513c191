/**
 * Commit / PR on the real server (scripts/e2e-server.sh: seed Example 1, its own state directory, so
 * the local default GitOps repository is created on first start): a port edited in the Inspector is
 * the one changed object in the panel, committed and pushed to a branch of the local repository; an
 * unsaved-then-saved edit survives a reload and is still the panel's change.
 */
import { expect, type Page, test } from '@playwright/test';
import { commitOnMain, guardPage, openConsole, SHOTS } from './consoleHelpers';

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

test('an edit committed from the Commit / PR panel lands on a branch of the local repository', async ({
  page,
}) => {
  await openConsole(page, GATEWAY_VS);
  await setPort(page, '9003');

  await page.getByTestId('gitops-open').click();
  const panel = page.getByTestId('gitops-panel');
  await expect(panel).toBeVisible();
  await expect(panel.getByTestId('gitops-repo')).toContainText('no forge (local)');
  const changes = panel.getByTestId('gitops-changes');
  await expect(changes).toContainText('VirtualService default/gateway-vsvc');
  await expect(changes.locator('li')).toHaveCount(1);
  await expect(panel.getByTestId('gitops-branch')).toHaveValue(
    /^meshdeck\/\d{8}-\d{4}-edit-virtualservice-gateway-vsvc/,
  );
  await expect(panel.getByTestId('gitops-message')).toHaveValue(/gateway-vsvc/);
  await expect(panel.getByTestId('gitops-pr-body')).toContainText('gateway-vsvc', { useInnerText: false });
  await expect(panel.getByTestId('gitops-proxies')).toContainText('default/gateway-0');

  const branch = `meshdeck/e2e-${Date.now()}`;
  await panel.getByTestId('gitops-branch').fill(branch);
  await panel.getByTestId('gitops-message').fill('Move the gateway to UDP 9003\n\nFrom the e2e test.');
  await page.screenshot({ path: `${SHOTS}/console-gitops-panel.png` });
  await panel.getByTestId('gitops-commit').click();
  const result = panel.getByTestId('gitops-result');
  await expect(result).toBeVisible({ timeout: 30_000 });
  await expect(result.getByTestId('gitops-pushed-branch')).toHaveText(branch);
  await expect(result).toContainText('No forge');
  await expect(panel.getByTestId('gitops-error')).toHaveCount(0);
  await page.screenshot({ path: `${SHOTS}/console-gitops-pushed.png` });
  // The draft is kept after the commit: the panel still shows the change.
  await expect(changes.locator('li')).toHaveCount(1);
});

test('a reload mid-edit finds the draft, and the panel shows its change', async ({ page }) => {
  await openConsole(page, GATEWAY_VS);
  await setPort(page, '9004');
  await page.reload();
  await expect(page.getByTestId('save-status')).toContainText('Saved');
  await expect(page.getByTestId(`node-${GATEWAY_VS}`)).toContainText('udp :9004');
  await page.getByTestId('gitops-open').click();
  const changes = page.getByTestId('gitops-panel').getByTestId('gitops-changes');
  await expect(changes).toContainText('VirtualService default/gateway-vsvc');
  await expect(changes.locator('li')).toHaveCount(1);
});

/** Someone else's commit on the local repository's main branch: the gateway's port set to `port`. */
function pushElsewhere(remoteGit: string, port: string): void {
  commitOnMain(remoteGit, `gateway on ${port}`, (text) => {
    expect(text.match(/port: 9001/g)).toHaveLength(1);
    return text.replace('port: 9001', `port: ${port}`);
  });
}

test('the base moved while editing: rebase shows the conflict side by side; theirs loads in place, undoable', async ({
  page,
}) => {
  await openConsole(page, GATEWAY_VS);
  await setPort(page, '9005');
  await page.getByTestId('gitops-open').click();
  const panel = page.getByTestId('gitops-panel');
  const repo = await panel.getByTestId('gitops-repo').innerText();
  const remoteGit = /(\/\S+\/remote\.git)/.exec(repo)?.[1];
  expect(remoteGit).toBeTruthy();
  pushElsewhere(remoteGit!, '9006');

  // Reopened, the panel fetches and says the base moved.
  await panel.getByRole('button', { name: 'Close' }).click();
  await page.getByTestId('gitops-open').click();
  await expect(panel.getByTestId('gitops-base-moved')).toBeVisible();
  await panel.getByTestId('gitops-rebase').click();
  const conflict = panel.getByTestId('gitops-conflict');
  await expect(conflict).toHaveCount(1);
  await expect(conflict).toContainText('VirtualService/default/gateway-vsvc');
  await expect(conflict.locator('pre').nth(0)).toContainText('port: 9005');
  await expect(conflict.locator('pre').nth(1)).toContainText('port: 9006');
  await expect(panel.getByTestId('gitops-commit')).toBeDisabled();
  await conflict.scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${SHOTS}/console-gitops-conflict.png` });

  // The page is not reloaded: a marker set now is still there after the rebase.
  await page.evaluate(() => ((window as unknown as { rebaseMarker: number }).rebaseMarker = 1));
  await conflict.getByRole('button', { name: 'Keep theirs' }).click();
  await expect(panel.getByTestId('gitops-rebased')).toBeVisible();
  await expect(panel.getByTestId('gitops-conflict')).toHaveCount(0);
  await expect(panel.getByTestId('gitops-base-moved')).toHaveCount(0);
  await panel.getByRole('button', { name: 'Close' }).click();
  // The editor shows the rebased draft (their port) at once.
  await expect(page.getByTestId(`node-${GATEWAY_VS}`)).toContainText('udp :9006');
  await expect(page.getByTestId('save-status')).toContainText('Saved');
  expect(await page.evaluate(() => (window as unknown as { rebaseMarker?: number }).rebaseMarker)).toBe(1);
  // Undo brings back the draft as it was before the rebase (and saves it).
  await page.getByTestId('undo').click();
  await expect(page.getByTestId(`node-${GATEWAY_VS}`)).toContainText('udp :9005');
  await expect(page.getByTestId('save-status')).toContainText('Saved');
});
