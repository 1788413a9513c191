/**
 * The console's probe and sign-out on the real local mesh of seed Example 1 (scripts/e2e-server.sh):
 * a datagram through the gateway's listener comes back through the transcoder and a worker.
 */
import { expect, test } from '@playwright/test';
import { guardPage, openConsole, SHOTS } from './consoleHelpers';

const GATEWAY_VS = 'VirtualService/default/gateway-vsvc';

guardPage();

test("probe the gateway's listener: the echo names a worker, with the path and the latency", async ({
  page,
}) => {
  await openConsole(page, GATEWAY_VS);
  await page.getByTestId(`node-${GATEWAY_VS}`).click();
  await page.getByTestId('tab-inspector').click();
  const probe = page.getByTestId('probe');
  await expect(probe).toContainText('default/gateway-0');
  // Example 1's rule lets only 127.0.0.100 with a source port in (8999, 9100) through.
  await probe.getByTestId('probe-from').fill('127.0.0.100:9050');
  await probe.getByTestId('probe-payload').fill('hello');
  await probe.getByTestId('probe-send').click();
  await expect(probe.getByTestId('probe-result')).toHaveAttribute('data-ok', 'true', { timeout: 15_000 });
  await expect(probe.getByTestId('probe-reply')).toHaveText(/^worker-[01]\(tc\(hello\)\)$/);
  await expect(probe.getByTestId('probe-latency')).toHaveText(/^\d+(\.\d+)? ms$/);
  const path = probe.getByTestId('probe-path');
  await expect(path).toContainText('listener gateway-vsvc.default.virtualservice.cluster.local (UDP)');
  await expect(path).toContainText('rule 0 (match holds)');
  await expect(path).toContainText('ingress transcoder-vsvc.default.target.cluster.local');
  await expect(path).toContainText('destination worker-svc.default.target.cluster.local');
  await page.screenshot({ path: `${SHOTS}/console-probe.png` });

  // A client the probe must not use: the error says what and where, nothing is sent.
  await probe.getByTestId('probe-from').fill('10.0.0.1:9050');
  await probe.getByTestId('probe-send').click();
  await expect(probe.getByTestId('probe-result')).toHaveAttribute('data-ok', 'false');
  await expect(probe.getByTestId('probe-failed')).toHaveText(
    '10.0.0.1 is not a loopback address: the probe only sends on this host',
  );
  await expect(probe.getByTestId('probe-result')).toContainText('10.0.0.1:9050 → 127.0.0.10:9001');
  // A malformed client address is refused in the form.
  await probe.getByTestId('probe-from').fill('127.0.0.100:99999');
  await expect(probe.getByTestId('probe-from-error')).toHaveText('port 99999 is beyond 65535');
  await expect(probe.getByTestId('probe-send')).toBeDisabled();
});

test('sign out ends the session: the console is read-only and cannot probe', async ({ page }) => {
  await openConsole(page, GATEWAY_VS);
  await page.getByTestId('sign-out').click();
  await expect(page.getByTestId('session-status')).toHaveText('read-only');
  await expect(page.getByTestId('sign-out')).toHaveCount(0);
  const session = await page.evaluate(async () => (await (await fetch('/api/session')).json()) as unknown);
  // Signed out: no session, and the sign-in methods this server offers (token only here: no OIDC configured).
  expect(session).toEqual({ authenticated: false, signIn: { token: true } });
  await expect(page.getByTestId('apply')).toBeDisabled();
  await page.getByTestId(`node-${GATEWAY_VS}`).click();
  await page.getByTestId('tab-inspector').click();
  await expect(page.getByTestId('probe-send')).toBeDisabled();
  await expect(page.getByTestId('probe')).toContainText('probing needs a session (signed out');
  // The server refuses a probe with this browser's cookies now (page.request shares them; a failed
  // fetch in the page would log an error).
  const r = await page.request.post('/api/probe', { data: { listener: 'gateway-vsvc', payload: 'x' } });
  expect(r.status()).toBe(401);
});
