/**
 * Commit / PR on the real server (scripts/e2e-server.sh: seed Example 1, its own state directory, so
 * the local default GitOps repository is created on first start): a port edited in the Inspector is
 * the one changed object in the panel, committed and pushed to a branch of the local repository; an
 * unsaved-then-saved edit survives a reload and is still the panel's change.
 */
import { expect, type Page, test } from '@playwright/test';
import { guardPage, openConsole, SHOTS } from './consoleHelpers';

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
