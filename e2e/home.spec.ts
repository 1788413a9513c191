import { expect, test } from '@playwright/test';
import { sample, samples } from '../server/metrics/testing/promText';

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

test('/metrics: the local mesh in Prometheus text, without a session, and no secret in it', async ({
  request,
}) => {
  const state = (await (await request.get('/api/state')).json()) as {
    proxies: Record<string, { role: string }>;
  };
  const l7mp = Object.values(state.proxies).filter((p) => p.role !== 'grpc').length;
  expect(l7mp).toBeGreaterThan(0);
  // Every proxy synced (the server was started before the tests, and pushes within seconds).
  await expect
    .poll(async () =>
      sample(await (await request.get('/metrics')).text(), 'meshdeck_l7mp_proxies', { phase: 'synced' }),
    )
    .toBe(l7mp);
  const res = await request.get('/metrics');
  expect(res.status()).toBe(200);
  expect(res.headers()['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  expect(sample(text, 'meshdeck_build_info', { mode: 'local' })).toBe(1);
  expect(samples(text, 'meshdeck_l7mp_proxies').reduce((a, s) => a + s.value, 0)).toBe(l7mp);
  expect(
    sample(text, 'meshdeck_l7mp_pushes_total', { result: 'ok', trigger: 'change' }),
  ).toBeGreaterThanOrEqual(l7mp);
  expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  // The e2e server runs with --no-xds: no ADS server, so no stream gauge.
  expect(samples(text, 'meshdeck_xds_streams')).toEqual([]);
  expect(text).not.toContain('e2e-token');
  expect((await request.post('/metrics', { data: 'x' })).status()).toBe(405);
  // What runs against the local GitOps repository, compared 10 s after the start and then periodically
  // (other specs may have moved main: the counts are theirs to say, the series must be there).
  await expect
    .poll(async () => sample(await (await request.get('/metrics')).text(), 'meshdeck_gitops_compare_ok'), {
      timeout: 30_000,
    })
    .toBe(1);
  const git = samples(await (await request.get('/metrics')).text(), 'meshdeck_gitops_objects');
  expect(git.map((s) => s.labels.state).sort()).toEqual(['extra', 'missing', 'modified', 'synced']);
  expect(git.find((s) => s.labels.state === 'synced')!.value).toBeGreaterThan(0);
});
