/**
 * The canvas's finder on seed Example 1 (real server, real l7mp proxies): `/` focuses it, words list
 * the matching objects best first, the arrows and Enter (or a click) select one, centre it and show it
 * in the Inspector; `kind:`, `is:` narrow the list, and a word nothing matches says so. The 2,000-node
 * case (a member of a collapsed group) is in console-large.spec.ts.
 */
import { expect, test } from '@playwright/test';
import { guardPage, openConsole, SHOTS } from './consoleHelpers';

guardPage();
test.setTimeout(120_000);

const GATEWAY_VS = 'VirtualService/default/gateway-vsvc';

test('find an object: / focuses the finder, Enter selects the match and centres it, filters narrow the list', async ({
  page,
}) => {
  await openConsole(page, GATEWAY_VS);
  const input = page.getByTestId('finder-input');
  await page.locator('.react-flow__pane').click();
  await page.keyboard.press('/');
  await expect(input).toBeFocused();
  await expect(input).toHaveValue('');

  await page.keyboard.type('worker');
  const list = page.getByTestId('finder-list');
  await expect(list).toBeVisible();
  const options = list.getByRole('option');
  // Whole names first (the Service, the Target and the VirtualService the engine made, all "worker-svc"),
  // every one of them a "worker" object.
  await expect(options.first()).toContainText('worker-svc');
  const names = await options.allTextContents();
  expect(names.length).toBeGreaterThanOrEqual(3);
  for (const n of names) expect(n).toContain('worker');
  await expect(page.getByTestId('finder-status')).toHaveText(`${names.length} matches`);
  await page.screenshot({ path: `${SHOTS}/console-find.png` });

  // The second match by the keyboard: selected, in the Inspector, on screen.
  await page.keyboard.press('ArrowDown');
  await expect(options.nth(1)).toHaveAttribute('aria-selected', 'true');
  const second = (await options.nth(1).getAttribute('data-testid'))!.replace('finder-option-', '');
  await page.keyboard.press('Enter');
  await expect(list).toBeHidden();
  const [kind, ns, name] = second.split('/');
  await expect(page.getByTestId('inspector-title')).toHaveText(`${kind} ${ns}/${name}`);
  await expect(page.getByTestId(`node-${second}`)).toBeInViewport();
  await expect(page).toHaveURL(new RegExp(`#node=${encodeURIComponent(second).replace(/%2F/g, '(%2F|/)')}`));

  // Filters: the two proxies; the VirtualServices with warnings (the seed's dialect).
  await input.fill('kind:proxy');
  await expect(options).toHaveCount(2);
  await expect(list.getByTestId('finder-option-Pod/default/gateway-0')).toBeVisible();
  await expect(list.getByTestId('finder-option-Pod/default/transcoder-0')).toBeVisible();
  await input.fill('kind:vs is:warning');
  await expect(list.getByTestId(`finder-option-${GATEWAY_VS}`)).toBeVisible();
  for (const text of await options.allTextContents()) expect(text).toMatch(/vsvc/);
  // A click picks too.
  await list.getByTestId(`finder-option-${GATEWAY_VS}`).click();
  await expect(page.getByTestId('inspector-title')).toHaveText('VirtualService default/gateway-vsvc');

  await input.fill('no-such-object');
  await expect(page.getByTestId('finder-status')).toHaveText(
    'No object matches. Try kind:route, ns:default or is:error.',
  );
  await expect(options).toHaveCount(0);
  // Escape closes the list, then clears the words; the selection stays.
  await page.keyboard.press('Escape');
  await expect(list).toBeHidden();
  await page.keyboard.press('Escape');
  await expect(input).toHaveValue('');
  await expect(input).not.toBeFocused();
  await expect(page.getByTestId('inspector-title')).toHaveText('VirtualService default/gateway-vsvc');
});

test('a selected node keeps the paths through it bright and dims the rest; no selection, nothing dimmed', async ({
  page,
}) => {
  await openConsole(page, GATEWAY_VS);
  const borderOf = (id: string) =>
    page
      .getByTestId(`node-${id}`)
      .evaluate((el) => getComputedStyle(el.closest('.mesh-node') ?? el).borderLeftColor);
  const colour = (name: string) =>
    page.evaluate((n) => {
      // The theme's colour as computed style reports it (rgb()).
      const probe = document.createElement('div');
      probe.style.color = `var(${n})`;
      document.body.append(probe);
      const c = getComputedStyle(probe).color;
      probe.remove();
      return c;
    }, name);
  const vs = await colour('--kind-vs');
  const dim = await colour('--border');
  expect(await borderOf(GATEWAY_VS)).toBe(vs);

  // The transcoder proxy runs transcoder-vsvc: that stays bright, the gateway's VirtualService dims.
  await page.getByTestId('finder-input').fill('transcoder-0');
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('inspector-title')).toHaveText('Proxy default/transcoder-0');
  await expect(page.getByTestId('trace-style')).toBeAttached();
  await expect.poll(() => borderOf(GATEWAY_VS)).toBe(dim);
  expect(await borderOf('VirtualService/default/transcoder-vsvc')).toBe(vs);
  await page.screenshot({ path: `${SHOTS}/console-trace.png` });

  // The gateway's VirtualService: its proxy and the whole chain behind it, so nothing is dimmed but the
  // transcoder's own proxy.
  await page.getByTestId('finder-input').fill('gateway-vsvc');
  await page.keyboard.press('Enter');
  await expect.poll(() => borderOf(GATEWAY_VS)).toBe(vs);
  await expect.poll(() => borderOf('Pod/default/transcoder-0')).toBe(dim);

  await page.keyboard.press('Escape');
  await page.locator('.react-flow__pane').click({ position: { x: 5, y: 300 } });
  await expect(page.getByTestId('trace-style')).toHaveCount(0);
  await expect.poll(() => borderOf('Pod/default/transcoder-0')).not.toBe(dim);
});

test('with nothing selected the Inspector sums the draft up and links to what needs attention', async ({
  page,
}) => {
  await openConsole(page, GATEWAY_VS);
  const summary = page.getByTestId('mesh-summary');
  await expect(summary).toBeVisible();
  await expect(page.getByTestId('summary-kind-Proxy')).toHaveText('2 proxies');
  await expect(page.getByTestId('summary-diagnostics')).toHaveText('0 errors · 5 warnings · 0 infos');
  await expect(page.getByTestId('summary-proxies')).toHaveText('Running: 2 proxies (2 in sync)');
  await page.screenshot({ path: `${SHOTS}/console-summary.png` });
  // The seed's dialect warnings sit on the two VirtualServices it writes.
  await page.getByTestId(`summary-go-${GATEWAY_VS}`).click();
  await expect(page.getByTestId('inspector-title')).toHaveText('VirtualService default/gateway-vsvc');
  await expect(summary).toHaveCount(0);
});
