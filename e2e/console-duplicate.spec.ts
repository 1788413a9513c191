/**
 * Duplicate on seed Example 1 (real server): the Inspector's "Duplicate" and Ctrl+D on the canvas copy
 * the selected object under the next free name, in its own file, a VirtualService on a free port, and
 * select the copy; the mesh stays free of errors; Ctrl+Z takes the copy back.
 */
import { expect, test } from '@playwright/test';
import { draftFile, guardPage, openConsole, resetDraft, SHOTS } from './consoleHelpers';

guardPage();
test.setTimeout(120_000);

const GATEWAY_VS = 'VirtualService/default/gateway-vsvc';
const TRANSCODER_VS = 'VirtualService/default/transcoder-vsvc';

test('Duplicate: a copy on a free port, selected and valid; Ctrl+D on the canvas; Ctrl+Z takes it back', async ({
  page,
}) => {
  await openConsole(page, GATEWAY_VS);
  const errors = page.locator('[data-testid="diagnostic"].diag--error');
  await expect(errors).toHaveCount(0);
  await page.getByTestId(`node-${GATEWAY_VS}`).click();
  await page.getByTestId('tab-inspector').click();
  const port = page.locator('[data-field-path="spec.udp.port"] input');
  await expect(port).toHaveValue('9001');

  await page.getByTestId('duplicate-object').click();
  const copy = page.getByTestId(`node-${GATEWAY_VS}-copy`);
  await expect(copy).toBeVisible();
  await expect(page.getByTestId('inspector-title')).toHaveText('VirtualService default/gateway-vsvc-copy');
  // 9001 is the original's; the copy takes the next port nothing uses, and keeps the rules.
  await expect(port).toHaveValue('9002');
  await expect(copy).toContainText(':9002');
  await expect.poll(() => draftFile(page, 'mesh.yaml')).toContain('name: gateway-vsvc-copy');
  const mesh = await draftFile(page, 'mesh.yaml');
  expect(mesh.match(/src_addr/g)).toHaveLength(2);
  await expect(errors).toHaveCount(0);
  await page.screenshot({ path: `${SHOTS}/console-duplicate.png` });

  // Ctrl+Z (focus on the button, not a text field) takes it back; the original stays selected-able.
  await page.keyboard.press('Control+z');
  await expect(copy).toHaveCount(0);
  // The server's draft follows (saved a moment later).
  await expect.poll(() => draftFile(page, 'mesh.yaml')).not.toContain('gateway-vsvc-copy');

  // Ctrl+D with a node selected on the canvas.
  await page.getByTestId(`node-${TRANSCODER_VS}`).click();
  await expect(page.getByTestId('inspector-title')).toHaveText('VirtualService default/transcoder-vsvc');
  await page.keyboard.press('Control+d');
  await expect(page.getByTestId(`node-${TRANSCODER_VS}-copy`)).toBeVisible();
  await expect(page.getByTestId('inspector-title')).toHaveText('VirtualService default/transcoder-vsvc-copy');
  await expect(page.locator('[data-field-path="spec.websocket.port"] input')).not.toHaveValue('8888');
  await expect(errors).toHaveCount(0);
  await resetDraft(page);
});
