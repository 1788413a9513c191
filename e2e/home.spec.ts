import { expect, test } from '@playwright/test';

const ORIGIN = 'http://127.0.0.1:3100';

test('home page renders offline, without console errors', async ({ page }) => {
  const consoleErrors: string[] = [];
  const offOrigin: string[] = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') consoleErrors.push(msg.text());
  });
  page.on('pageerror', (err) => consoleErrors.push(`pageerror: ${err.message}`));
  page.on('request', (req) => {
    const url = req.url();
    if (url.startsWith('data:') || url.startsWith('blob:')) return;
    if (new URL(url).origin !== ORIGIN) offOrigin.push(url);
  });

  await page.goto('/');
  await expect(page.getByTestId('app-title')).toHaveText('Meshdeck');
  await expect(page).toHaveTitle('Meshdeck');
  // The home page is the console (e2e/console.spec.ts drives it).
  await expect(page.getByTestId('console')).toBeVisible();
  await page.waitForLoadState('networkidle');

  await page.screenshot({ path: 'test-results/home.png', fullPage: true });

  expect(consoleErrors).toEqual([]);
  expect(offOrigin).toEqual([]);
});

test('/api/health reports ok and the version', async ({ request }) => {
  const res = await request.get('/api/health');
  expect(res.status()).toBe(200);
  expect(res.headers()['content-type']).toContain('application/json');
  const body: unknown = await res.json();
  expect(body).toMatchObject({ status: 'ok', version: expect.stringMatching(/^\d+\.\d+\.\d+/) });
});
