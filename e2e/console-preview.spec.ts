/**
 * The Preview's diff of the draft against what a proxy runs, on the real server (seed Example 1, real
 * l7mp proxies): a listener port edited in the Inspector shows on the gateway's diff as the live line
 * removed and the draft's added, only there; the edit reverted, the diff says there is no difference.
 */
import { expect, type Page, test } from '@playwright/test';
import { guardPage, openConsole, SHOTS } from './consoleHelpers';

const GATEWAY_VS = 'VirtualService/default/gateway-vsvc';
const GATEWAY = 'default/gateway-0';
const TRANSCODER = 'default/transcoder-0';

guardPage();
// Three edits, each followed through the Inspector, the canvas and the Preview on a busy 2-core VM.
test.setTimeout(120_000);

/** Sets the gateway VirtualService's UDP port in the Inspector. */
async function setPort(page: Page, port: string): Promise<void> {
  await page.getByTestId(`node-${GATEWAY_VS}`).click();
  await page.getByTestId('tab-inspector').click();
  const input = page.locator('[data-field-path="spec.udp.port"] input');
  await input.fill(port);
  await expect(page.getByTestId(`node-${GATEWAY_VS}`)).toContainText(`udp :${port}`);
}

/** Opens the Preview's diff of one proxy. */
async function openDiff(page: Page, proxy: string): Promise<void> {
  await page.getByTestId('tab-preview').click();
  await page.getByTestId('preview-proxy').selectOption(proxy);
  await page.getByTestId('preview-view-diff').click();
  await expect(page.getByTestId('preview-diff')).toBeVisible();
}

test('a port edit shows on its proxy as live removed and draft added; reverted, no differences', async ({
  page,
}) => {
  await openConsole(page, GATEWAY_VS);
  await expect(page.getByTestId('node-Pod/default/gateway-0')).toContainText('in sync');

  // Before any edit: the gateway runs the draft.
  await openDiff(page, GATEWAY);
  await expect(page.getByTestId('diff-none')).toHaveText(
    `No differences: ${GATEWAY} runs exactly the draft's config.`,
  );

  await setPort(page, '9002');
  await openDiff(page, GATEWAY);
  const listeners = page.getByTestId('diff-section-listeners');
  await expect(listeners).toBeVisible();
  await expect(page.getByTestId('diff-none')).toHaveCount(0);
  // Side by side (the default): one changed row, the live port on the left, the draft's on the right.
  const changed = listeners.locator('[data-testid="diff-line"][data-kind="change"]');
  await expect(changed).toHaveCount(1);
  await expect(changed.locator('[data-side="del"]')).toHaveText(/^\s*port: 9001$/);
  await expect(changed.locator('[data-side="add"]')).toHaveText(/^\s*port: 9002$/);
  await expect(listeners.locator('thead')).toContainText(`live (${GATEWAY})`);
  // Only the listener changed: rules, routes and clusters are named as equal.
  await expect(page.getByTestId('diff-equal')).toHaveText('No differences in rules, routes, clusters.');
  await page.screenshot({ path: `${SHOTS}/console-preview-diff-split.png` });

  await page.getByTestId('diff-mode-unified').click();
  await expect(page.getByTestId('diff-mode-unified')).toHaveAttribute('aria-pressed', 'true');
  await expect(listeners.locator('[data-kind="del"] .diff-text')).toHaveText([/^\s*port: 9001$/]);
  await expect(listeners.locator('[data-kind="add"] .diff-text')).toHaveText([/^\s*port: 9002$/]);
  await expect(listeners.locator('[data-kind="change"]')).toHaveCount(0);
  await page.screenshot({ path: `${SHOTS}/console-preview-diff-unified.png` });

  // The edit concerns the gateway only.
  await page.getByTestId('preview-proxy').selectOption(TRANSCODER);
  await expect(page.getByTestId('diff-none')).toHaveText(
    `No differences: ${TRANSCODER} runs exactly the draft's config.`,
  );

  // Reverted, the gateway's diff is empty again.
  await setPort(page, '9001');
  await openDiff(page, GATEWAY);
  await expect(page.getByTestId('diff-none')).toHaveText(
    `No differences: ${GATEWAY} runs exactly the draft's config.`,
  );
  await expect(page.getByTestId('diff-section-listeners')).toHaveCount(0);
  await page.screenshot({ path: `${SHOTS}/console-preview-diff-none.png` });
});
