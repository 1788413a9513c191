/**
 * The console fits a laptop's window: at 1280x720 and 1024x720 every toolbar control is on screen and
 * its text is whole, and the side panel never needs a horizontal scroll, neither with a canary split in
 * the Inspector (sliders, values, locks, the form's nested fields) nor in the Preview (proxy and target
 * pickers), and the canvas's finder stays clear of its grouping buttons. At 1280 the status texts were
 * cut ("Saved (r…", the user's name) and the split's lock boxes and the Preview's second picker hung
 * past the panel's edge; at 1024 the last toolbar buttons were out of reach.
 */
import { expect, type Page, test } from '@playwright/test';
import { guardPage, openConsole, SHOTS } from './consoleHelpers';

guardPage();
test.setTimeout(120_000);

/** What sticks out: toolbar controls past the window or with cut text, and what the side panel overflows by. */
async function overflow(page: Page): Promise<{ toolbar: string[]; panel: number; panelItems: string[] }> {
  return page.evaluate(() => {
    const toolbar: string[] = [];
    const vw = document.documentElement.clientWidth;
    for (const el of Array.from(document.querySelectorAll<HTMLElement>('.toolbar *'))) {
      if (el.closest('dialog, .visually-hidden')) continue;
      const r = el.getBoundingClientRect();
      if (r.width === 0) continue;
      const name = el.dataset.testid ?? el.textContent?.trim().slice(0, 30) ?? el.tagName;
      if (r.right > vw + 0.5 || r.left < -0.5)
        toolbar.push(`${name}: off screen (${Math.round(r.left)}-${Math.round(r.right)})`);
      if (
        el.children.length === 0 &&
        el.scrollWidth > el.clientWidth + 1 &&
        getComputedStyle(el).overflowX !== 'visible'
      )
        toolbar.push(`${name}: text cut (${el.clientWidth} of ${el.scrollWidth} px)`);
    }
    const panel = document.querySelector<HTMLElement>('.console__panel')!;
    const edge = panel.getBoundingClientRect().right;
    const panelItems = Array.from(
      panel.querySelectorAll<HTMLElement>('label, select, input, button, output, fieldset'),
    )
      .filter((el) => el.getBoundingClientRect().width > 0 && el.getBoundingClientRect().right > edge + 0.5)
      .map((el) => el.dataset.testid ?? el.textContent?.trim().slice(0, 30) ?? el.tagName);
    return { toolbar, panel: panel.scrollWidth - panel.clientWidth, panelItems };
  });
}

for (const [width, height] of [
  [1280, 720],
  [1024, 720],
] as const) {
  test(`at ${width}x${height} the toolbar and the side panel fit: a canary split in the Inspector, the Preview`, async ({
    page,
  }) => {
    await page.setViewportSize({ width, height });
    await openConsole(page, 'VirtualService/default/gateway-vsvc');
    expect(await overflow(page)).toEqual({ toolbar: [], panel: 0, panelItems: [] });
    await expect(page.getByTestId('save-status')).toBeInViewport({ ratio: 1 });
    await expect(page.getByTestId('session-user')).toHaveText('local-admin');
    await expect(page.getByRole('button', { name: 'Keyboard shortcuts' })).toBeInViewport({ ratio: 1 });
    // The finder (top left on the canvas) ends before the node count and grouping buttons (top right).
    const finder = (await page.getByTestId('finder').boundingBox())!;
    const grouping = (await page.getByTestId('grouping-panel').boundingBox())!;
    expect(finder.x + finder.width).toBeLessThanOrEqual(grouping.x);
    // The deepest form of Example 1: a rule's inline route with its ingress chain.
    await page.getByTestId('node-VirtualService/default/gateway-vsvc').click();
    await page.getByTestId('tab-inspector').click();
    await expect(
      page.locator('[data-field-path="spec.rules[0].action.route.ingress[0]"]').first(),
    ).toBeVisible();
    expect(await overflow(page)).toEqual({ toolbar: [], panel: 0, panelItems: [] });

    await page.getByTestId('import').click();
    await page.getByTestId('example-canary').click();
    const canary = page.getByTestId('node-Target/default/echo-canary');
    await canary.click();
    await page.getByTestId('tab-inspector').click();
    await expect(page.getByTestId('split-editor')).toBeVisible();
    const locks = page.getByTestId('split-editor').getByRole('checkbox', { name: 'lock' });
    await expect(locks).toHaveCount(2);
    await expect(page.getByTestId('save-status')).toContainText('Saved');
    expect(await overflow(page)).toEqual({ toolbar: [], panel: 0, panelItems: [] });
    await page.screenshot({ path: `${SHOTS}/console-fit-${width}-canary.png` });

    await page.getByTestId('tab-preview').click();
    await expect(page.getByTestId('preview-render-for')).toBeVisible();
    expect(await overflow(page)).toEqual({ toolbar: [], panel: 0, panelItems: [] });
    await page.screenshot({ path: `${SHOTS}/console-fit-${width}-preview.png` });
  });
}
