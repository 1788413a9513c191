/**
 * Quick fixes on the real server (seed Example 1 on real l7mp proxies): the seed-dialect warnings
 * converted with one click (the proxies' config unchanged, one undo away); a typo in a reference fixed
 * from the diagnostics list, and another from Monaco's light bulb (Ctrl+.); a dangling name turned
 * into a new object, selected in the Inspector.
 */
import { expect, type Locator, type Page, test } from '@playwright/test';
import { draftFile, guardPage, openConsole, replaceInYaml, SHOTS } from './consoleHelpers';

const GATEWAY_VS = 'VirtualService/default/gateway-vsvc';
const GATEWAY_ROUTE = `${GATEWAY_VS}#spec.rules[0].action.route`;

guardPage();
test.setTimeout(120_000);

/** The row of the first diagnostic whose code matches. */
function row(page: Page, code: string): Locator {
  return page
    .locator('.diag-row')
    .filter({ has: page.locator(`[data-testid="diagnostic"][data-code^="${code}"]`) })
    .first();
}

/** Waits until the server holds the draft the console shows. */
async function saved(page: Page): Promise<void> {
  await expect(page.getByTestId('save-status')).toContainText('Saved');
}

/** Every proxy's Preview says the live proxy already runs the draft. */
async function proxiesRunTheDraft(page: Page): Promise<void> {
  await page.getByTestId('tab-preview').click();
  for (const proxy of ['default/gateway-0', 'default/transcoder-0']) {
    await page.getByTestId('preview-proxy').selectOption(proxy);
    await page.getByTestId('preview-view-ops').click();
    await expect(page.getByTestId('preview-in-sync')).toContainText('the proxy already runs the draft');
  }
}

test('the seed-dialect warnings are converted with one click, and the proxies config stays the same', async ({
  page,
}) => {
  await openConsole(page, GATEWAY_VS);
  await expect(page.getByTestId('count-warning')).not.toHaveText('0');
  const warnings = await page.getByTestId('count-warning').textContent();
  const dialect = row(page, 'seed-dialect');
  await dialect.getByTestId('diagnostic-fix').click();
  const fixes = dialect.getByTestId('quick-fix');
  await expect(fixes).toHaveText(['Convert to msm.l7mp.io/v1', 'Convert all 2 seed-dialect objects']);
  await page.screenshot({ path: `${SHOTS}/console-quickfix-menu.png` });
  await fixes.nth(1).click();
  await expect(page.getByTestId('count-warning')).toHaveText('0');
  await saved(page);
  const mesh = await draftFile(page, 'mesh.yaml');
  expect(mesh).not.toMatch(/apiVersion: l7mp\.io\/MSM\/v1/);
  expect(mesh).toContain('# Seed Example 1');
  await proxiesRunTheDraft(page);

  // One command: one undo brings the dialect back, one redo converts again.
  await page.getByTestId('undo').click();
  await expect(page.getByTestId('count-warning')).toHaveText(warnings!);
  await page.getByTestId('redo').click();
  await expect(page.getByTestId('count-warning')).toHaveText('0');
});

test('a typo in a reference is fixed from the diagnostics list and from the YAML light bulb', async ({
  page,
}) => {
  await openConsole(page, GATEWAY_VS);
  // The list: "Change to" the closest name, and the l7mp config is the one the typo broke.
  await replaceInYaml(page, 'mesh.yaml', [['- transcoder-vsvc', '- transcoder-vsv']]);
  const route = page.getByTestId(`node-${GATEWAY_ROUTE}`);
  await expect(route).toHaveAttribute('data-errors', /[1-9]/);
  const dangling = row(page, 'unresolved-reference');
  await dangling.getByTestId('diagnostic-fix').click();
  await expect(dangling.getByTestId('quick-fix')).toHaveText([
    'Change to "transcoder-vsvc" (VirtualService)',
    'Create Target "transcoder-vsv"',
  ]);
  await dangling.getByTestId('quick-fix').first().click();
  await expect(page.getByTestId('count-error')).toHaveText('0');
  await expect(route).toHaveAttribute('data-errors', '0');
  await saved(page);
  await proxiesRunTheDraft(page);

  // Monaco: the cursor on the marked line, Ctrl+. lists the same fixes as code actions.
  await replaceInYaml(page, 'mesh.yaml', [['- transcoder-vsvc', '- transcoder-vsv']]);
  const marker = page.getByTestId('yaml-markers').locator('.marker--error').first();
  await expect(marker).toContainText('"transcoder-vsv" is neither');
  await saved(page);
  await marker.getByRole('button').click();
  const editor = page.getByTestId('yaml-editor').locator('.monaco-editor');
  await editor.locator('textarea').first().focus();
  await page.keyboard.press('Control+.');
  const action = page.locator('.action-widget').getByText('Change to "transcoder-vsvc" (VirtualService)');
  await expect(action).toBeVisible();
  await page.screenshot({ path: `${SHOTS}/console-quickfix-yaml.png` });
  await action.click();
  await expect(page.getByTestId('count-error')).toHaveText('0');
  await expect(page.getByTestId('yaml-markers').locator('.marker--error')).toHaveCount(0);
  await saved(page);
  expect(await draftFile(page, 'mesh.yaml')).toContain('- transcoder-vsvc');
});

test('a dangling name becomes a new object, selected in the Inspector', async ({ page }) => {
  await openConsole(page, GATEWAY_VS);
  await replaceInYaml(page, 'mesh.yaml', [['- transcoder-vsvc', '- audit-target']]);
  const dangling = row(page, 'unresolved-reference');
  await dangling.getByTestId('diagnostic-fix').click();
  await expect(dangling.getByTestId('quick-fix')).toHaveText(['Create Target "audit-target"']);
  await dangling.getByTestId('quick-fix').click();
  const created = page.getByTestId('node-Target/default/audit-target');
  await expect(created).toBeVisible();
  await expect(created).toHaveClass(/selected/);
  await expect(page.getByTestId('tab-inspector')).toHaveAttribute('aria-selected', 'true');
  await expect(page.locator('.diag-row [data-code="unresolved-reference"]')).toHaveCount(0);
  await saved(page);
  const files = await page.evaluate(async () => {
    const d = (await (await fetch('/api/draft')).json()) as { draft: { files: Record<string, string> } };
    return Object.values(d.draft.files).join('\n---\n');
  });
  expect(files).toMatch(/kind: Target\nmetadata:\n {2}name: audit-target/);
});

test('the Inspector offers the fixes beside the field the problem is about', async ({ page }) => {
  await openConsole(page, GATEWAY_VS);
  await replaceInYaml(page, 'mesh.yaml', [['destination: worker-svc', 'destination: worker-sv']]);
  await page.getByTestId('tab-inspector').click();
  await row(page, 'unresolved-reference').getByTestId('diagnostic').click();
  const field = page.locator('[data-field-path="spec.rules[0].action.route.destination"]');
  await expect(field.locator('input[type="text"]').first()).toHaveValue('worker-sv');
  // The draft names worker-svc as a Service (its VirtualService is generated by the engine).
  const fixes = field.getByTestId('field-quick-fix');
  await expect(fixes.first()).toHaveText('Change to "worker-svc" (Service)');
  await page.screenshot({ path: `${SHOTS}/console-quickfix-inspector.png` });
  await fixes.first().click();
  await expect(page.getByTestId('count-error')).toHaveText('0');
  await expect(field.locator('input[type="text"]').first()).toHaveValue('worker-svc');
  await saved(page);
  await proxiesRunTheDraft(page);
});
