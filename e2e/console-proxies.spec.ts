/**
 * The proxies page on the real local mesh of seed Example 1 (scripts/e2e-server.sh): after a probe
 * through the gateway, each l7mp proxy's sessions list shows what l7mp reports.
 */
import { expect, test } from '@playwright/test';
import { centring, guardPage, SHOTS } from './consoleHelpers';

guardPage();

test("a probe's sessions: the transcoder lists its session, the gateway says why l7mp cannot list its own", async ({
  page,
}) => {
  await page.goto('/?token=e2e-token');
  await expect(page.getByTestId('session-status')).toHaveText('signed in');
  // One datagram through the gateway (Example 1 lets 127.0.0.100 with a source port in (8999, 9100)
  // through): the gateway gets a session with an ingress chain, the transcoder a WebSocket session.
  const probe = await page.evaluate(async () => {
    const s = (await (await fetch('/api/session')).json()) as { csrfToken: string };
    const r = await fetch('/api/probe', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-csrf-token': s.csrfToken },
      body: JSON.stringify({
        listener: 'gateway-vsvc',
        payload: 'sessions',
        from: { address: '127.0.0.100', port: 9051 },
      }),
    });
    return { status: r.status, body: (await r.json()) as { ok: boolean; reply?: string } };
  });
  expect(probe.status).toBe(200);
  expect(probe.body.ok).toBe(true);
  expect(probe.body.reply).toMatch(/^worker-[01]\(tc\(sessions\)\)$/);

  await page.goto('/proxies');
  await expect(page.getByTestId('proxies-table')).toBeVisible();
  await expect(page.getByRole('status').filter({ hasText: 'live' })).toBeVisible();

  // The gateway: l7mp 0.5.7 answers 422 to GET /sessions while a session has an ingress chain.
  const gwToggle = page.getByTestId('sessions-toggle-default/gateway-0');
  await expect(gwToggle).toHaveText('n/a ▸', { timeout: 10_000 });
  await gwToggle.click();
  await expect(gwToggle).toHaveAttribute('aria-expanded', 'true');
  await expect(page.getByTestId('sessions-default/gateway-0').getByTestId('sessions-unavailable')).toHaveText(
    'Sessions unavailable: l7mp 0.5.7 cannot list sessions while a session has an ingress or egress chain (422)',
  );

  // The transcoder: the gateway's ingress stage opened a WebSocket session to it.
  const tcToggle = page.getByTestId('sessions-toggle-default/transcoder-0');
  await expect(tcToggle).toHaveText(/^[1-9]\d* ▸$/, { timeout: 10_000 });
  await tcToggle.click();
  const rows = page.getByTestId('sessions-default/transcoder-0').getByTestId('session-row');
  await expect(rows.first()).toBeVisible();
  const row = rows.filter({ hasText: 'CONNECTED' }).first();
  const cells = row.locator('th, td');
  await expect(cells.nth(0)).toHaveText(/^WS:/);
  await expect(cells.nth(2)).toHaveText(
    /^127\.0\.0\.\d+:\d+ → transcoder-vsvc\.default\.virtualservice\.cluster\.local$/,
  );
  await expect(cells.nth(3)).toHaveText('rule 0 (inline)');
  await expect(cells.nth(4)).toContainText(
    'transcoder-vsvc.default.virtualservice.cluster.local/rules/0/destination (',
  );
  await expect(cells.nth(4)).toContainText('/var/run/sock/uds-echo.sock)');
  await expect(cells.nth(5)).toHaveText(/^\d+[smh]$/);
  await page.screenshot({ path: `${SHOTS}/console-proxies-sessions.png`, fullPage: true });

  // Collapsing hides the list again.
  await tcToggle.click();
  await expect(rows).toHaveCount(0);
});

test('the proxies page filters by words and by sync state, and links each proxy to its place on the canvas', async ({
  page,
}) => {
  await page.goto('/?token=e2e-token');
  await expect(page.getByTestId('session-status')).toHaveText('signed in');
  await page.goto('/proxies');
  const gateway = page.getByTestId('proxy-row-default/gateway-0');
  const transcoder = page.getByTestId('proxy-row-default/transcoder-0');
  await expect(gateway).toContainText('SYNCED', { timeout: 30_000 });
  await expect(transcoder).toContainText('SYNCED', { timeout: 30_000 });
  await expect(page.getByTestId('proxies-count')).toHaveText('2 proxies · 2 in sync');

  const filter = page.getByTestId('proxies-filter');
  await filter.fill('TRANSCODER');
  await expect(gateway).toHaveCount(0);
  await expect(transcoder).toBeVisible();
  await expect(page.getByTestId('proxies-count')).toHaveText('1 of 2 proxies · 2 in sync');
  await filter.fill('127.0.0.10 gateway');
  await expect(gateway).toBeVisible();
  await expect(transcoder).toHaveCount(0);
  // Both in sync: "only not in sync" leaves none, and says so.
  await filter.fill('');
  await page.getByTestId('proxies-not-in-sync').check();
  await expect(page.getByTestId('proxies-none-match')).toHaveText('No proxy matches the filter.');
  await expect(page.getByTestId('proxies-table')).toBeHidden();
  await page.getByTestId('proxies-not-in-sync').uncheck();
  await expect(transcoder).toBeVisible();

  // "on the canvas": the console opens with the proxy selected, centred, and the paths it runs bright.
  await page.getByTestId('proxy-canvas-default/transcoder-0').click();
  await expect(page.getByTestId('inspector-title')).toHaveText('Proxy default/transcoder-0', {
    timeout: 30_000,
  });
  await expect(page.getByTestId('trace-style')).toBeAttached();
  await expect
    .poll(() => centring(page, page.getByTestId('node-Pod/default/transcoder-0')), { timeout: 10_000 })
    .toBe('centred');
});
