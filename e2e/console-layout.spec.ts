/**
 * Stable positions on the canvas (issue 5, P7/P8): a structural edit places only the new node and
 * leaves every other node where it was; Tidy up (keyboard too) lays the whole graph out again, the
 * draft's own positions go with it, and undo brings them back. Real server, real Chromium.
 */
import { expect, type Page, test } from '@playwright/test';
import { guardPage, openConsole, SHOTS } from './consoleHelpers';

const GATEWAY_VS = 'VirtualService/default/gateway-vsvc';
const NEW_TARGET = 'Target/default/target-1';

guardPage();

/** Every node's place on the canvas (React Flow's transform: flow coordinates, not the viewport's). */
async function positions(page: Page): Promise<Record<string, { x: number; y: number }>> {
  return page.evaluate(() => {
    const out: Record<string, { x: number; y: number }> = {};
    for (const el of document.querySelectorAll<HTMLElement>('.react-flow__node-mesh')) {
      const m = /translate\(([-\d.]+)px,\s*([-\d.]+)px\)/.exec(el.style.transform);
      if (m) out[el.dataset.id!] = { x: Number(m[1]), y: Number(m[2]) };
    }
    return out;
  });
}

test('an added node leaves the others in place; Tidy up lays out again and undo restores a moved node', async ({
  page,
}) => {
  await openConsole(page, GATEWAY_VS);
  const before = await positions(page);
  expect(Object.keys(before).length).toBeGreaterThan(5);

  await page.getByTestId('add-Target').click();
  await expect(page.getByTestId(`node-${NEW_TARGET}`)).toBeVisible();
  await expect(page.locator('.canvas__status')).toHaveText('');
  const after = await positions(page);
  for (const [id, p] of Object.entries(before)) expect(after[id], id).toEqual(p);
  // The new node has a place of its own, clear of every other node (184 x 60 each).
  const added = after[NEW_TARGET]!;
  for (const [id, p] of Object.entries(after))
    if (id !== NEW_TARGET)
      expect(Math.abs(p.x - added.x) >= 184 || Math.abs(p.y - added.y) >= 60, `${id} overlaps`).toBe(true);

  // Move the gateway: its position goes into the draft.
  const gw = page.getByTestId(`node-${GATEWAY_VS}`);
  await page.locator('.react-flow__controls-fitview').click();
  const box = (await gw.boundingBox())!;
  await page.mouse.move(box.x + 40, box.y + 20);
  await page.mouse.down();
  await page.mouse.move(box.x + 90, box.y + 120, { steps: 8 });
  await page.mouse.up();
  await expect.poll(async () => (await positions(page))[GATEWAY_VS]).not.toEqual(after[GATEWAY_VS]);
  const dragged = (await positions(page))[GATEWAY_VS]!;
  await expect(page.getByTestId('save-status')).toContainText('Saved (revision', { timeout: 10_000 });

  // Tidy up from the keyboard: a full layout, the moved node back in line with the rest.
  await page.getByTestId('relayout').focus();
  await page.keyboard.press('Enter');
  await expect(page.locator('.canvas__status')).toHaveText('');
  await expect.poll(async () => (await positions(page))[GATEWAY_VS]).not.toEqual(dragged);
  const tidied = await positions(page);
  expect(Object.keys(tidied).sort()).toEqual(Object.keys(after).sort());
  await page.screenshot({ path: `${SHOTS}/console-layout-tidied.png` });

  // Undo brings the moved node's own position back.
  await page.keyboard.press('Control+z');
  await expect.poll(async () => (await positions(page))[GATEWAY_VS]).toEqual(dragged);
});

test('a reload shows the graph where ELK put it without running ELK again', async ({ page }) => {
  await openConsole(page, GATEWAY_VS);
  // openConsole loads the page twice; start from a browser that has never laid this graph out.
  // Cleared as the next load starts: the page kept its view (MeshCanvas, when idle) and could write it
  // again after a clear made from here.
  await page.addInitScript(() => {
    if (sessionStorage.getItem('e2e-cleared')) return;
    localStorage.clear();
    sessionStorage.setItem('e2e-cleared', '1');
  });
  await page.reload();
  await expect(page.getByTestId(`node-${GATEWAY_VS}`)).toBeVisible();
  await expect(page.locator('.canvas__status')).toHaveText('');
  const laidOut = await positions(page);
  expect(Object.keys(laidOut).length).toBeGreaterThan(5);
  const layoutRuns = () => page.evaluate(() => performance.getEntriesByName('meshdeck:layout').length);
  expect(await layoutRuns()).toBeGreaterThan(0);

  await page.reload();
  await expect(page.getByTestId(`node-${GATEWAY_VS}`)).toBeVisible();
  await expect(page.locator('.canvas__status')).toHaveText('');
  await expect.poll(async () => positions(page)).toEqual(laidOut);
  expect(await layoutRuns()).toBe(0);
});

test('after an added node, a reload shows every node where it was, without laying the graph out again', async ({
  page,
}) => {
  await openConsole(page, GATEWAY_VS);
  await page.getByTestId('add-Target').click();
  await expect(page.getByTestId(`node-${NEW_TARGET}`)).toBeVisible();
  await expect(page.locator('.canvas__status')).toHaveText('');
  await expect(page.getByTestId('save-status')).toContainText('Saved (revision', { timeout: 10_000 });
  const shown = await positions(page);
  expect(shown[NEW_TARGET]).toBeDefined();
  // The flat view is kept when the page is idle (MeshCanvas).
  await page.waitForTimeout(1000);

  await page.reload();
  await expect(page.getByTestId(`node-${NEW_TARGET}`)).toBeVisible();
  await expect(page.locator('.canvas__status')).toHaveText('');
  await expect.poll(async () => positions(page)).toEqual(shown);
  // Neither ELK here nor the server's layout: the places come from this browser's storage.
  expect(await page.evaluate(() => performance.getEntriesByName('meshdeck:layout').length)).toBe(0);
});
