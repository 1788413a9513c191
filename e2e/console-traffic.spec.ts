/**
 * A traffic test from the console on the real server and local mesh (scripts/e2e-server.sh): the canary
 * example is applied (Example 1, which that server runs, has no split), and 100 probes through the
 * gateway's listener come back summed up, with the split of echo-canary configured (80/20) against
 * observed. Other specs share this server: what ran before is put back at the end by the console's own
 * Apply, as console-rollout.spec.ts does.
 */
import { expect, test } from '@playwright/test';
import type { DraftDoc } from '../lib/console/draftDoc';
import {
  applyCanaryExample,
  applyDraftNow,
  gatewayProbeSessions,
  guardPage,
  openConsole,
  putDraft,
  SHOTS,
} from './consoleHelpers';

const GATEWAY = 'VirtualService/default/gateway';

guardPage();
test.setTimeout(120_000);

test("100 probes through the canary's gateway: all answered, the split's backends configured against observed", async ({
  page,
}) => {
  await openConsole(page, 'VirtualService/default/gateway-vsvc');
  const running = (await page.evaluate(async () => (await fetch('/api/draft')).json())) as {
    draft: DraftDoc;
  };
  try {
    await applyCanaryExample(page);

    // The gateway's Inspector: one probe by default; 100 make a traffic test.
    await page.getByTestId(`node-${GATEWAY}`).click();
    await page.getByTestId('tab-inspector').click();
    const probe = page.getByTestId('probe');
    await expect(probe).toContainText('default/gateway-0');
    await expect(probe.getByTestId('probe-send')).toHaveText('Probe');
    const count = probe.getByLabel('Probes to send');
    await count.fill('0');
    await expect(probe.getByTestId('probe-count-error')).toHaveText('at least 1 probe');
    await expect(probe.getByTestId('traffic-send')).toBeDisabled();
    await count.fill('100');
    await expect(probe.getByTestId('probe-count-error')).toHaveCount(0);
    const send = probe.getByTestId('traffic-send');
    await expect(send).toHaveText('Send 100 probes');
    const area = probe.getByTestId('traffic-test');
    await expect(area).toHaveAttribute('aria-live', 'polite');
    const reserved = (await area.boundingBox())!.height;
    await send.click();

    await expect(area).toHaveAttribute('data-state', 'done', { timeout: 60_000 });
    const summary = probe.getByTestId('traffic-summary');
    await expect(summary).toHaveText(/^\d+ of 100 answered \([\d.]+%\) in \d+ ms$/);
    const all = Number(/^(\d+) of/.exec((await summary.textContent())!)![1]);
    await expect(summary).toContainText(`${all} of 100 answered (${all}%)`);
    // A loaded host can lose a datagram or two (l7mp's UDP listener and a new peer's first datagram,
    // server/controlPlane/probeBatch.ts): each is a failure the test counts, not a broken split.
    expect(all).toBeGreaterThanOrEqual(95);
    await expect(probe.getByTestId('traffic-latency')).toHaveText(
      /^p50 [\d.]+ · p90 [\d.]+ · p99 [\d.]+ · max [\d.]+ ms$/,
    );
    if (all === 100) {
      await expect(probe.getByTestId('traffic-errors')).toHaveCount(0);
      // The answer took the room kept for it: nothing below moved.
      expect((await area.boundingBox())!.height).toBe(reserved);
    } else {
      const failed = await probe.getByTestId('traffic-errors').locator('li').allTextContents();
      expect(failed.reduce((sum, line) => sum + Number(/^(\d+) ×/.exec(line)![1]), 0)).toBe(100 - all);
    }

    const split = probe.getByRole('table', { name: /^Split of default\/echo-canary/ });
    await expect(split).toBeVisible();
    const rows = split.locator('tbody tr[data-testid^="traffic-backend-"]');
    await expect(rows).toHaveCount(2);
    const answered: number[] = [];
    for (const [name, configured] of [
      ['echo-v1', '80%'],
      ['echo-v2', '20%'],
    ] as const) {
      const row = split.getByTestId(`traffic-backend-${name}`);
      await expect(row.getByRole('rowheader')).toHaveText(name);
      await expect(row.getByTestId('traffic-configured')).toHaveText(configured);
      const n = Number(await row.getByTestId('traffic-answered').textContent());
      // Every flow picks a backend by weight: at 20%, none of 100 for one is a chance of 2e-10.
      expect(n).toBeGreaterThan(0);
      // The observed share is of the answered probes, one decimal.
      const observed = parseFloat((await row.getByTestId('traffic-observed').textContent())!);
      expect(Math.abs(observed - (n / all) * 100)).toBeLessThanOrEqual(0.05 + 1e-9);
      answered.push(n);
    }
    expect(answered[0]! + answered[1]!).toBe(all);
    await expect(probe.getByTestId('traffic-other')).toHaveCount(0);

    await area.scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${SHOTS}/console-traffic.png` });
    await page.getByTestId('theme').click();
    await expect(page.locator('html')).toHaveAttribute('data-theme', 'light');
    await page.screenshot({ path: `${SHOTS}/console-traffic-light.png` });
  } finally {
    // What ran before, through the console's own Apply.
    expect(await putDraft(page, running.draft)).toBe(200);
    expect(await applyDraftNow(page)).toBe(200);
    // And no session of the probes is left on the gateway proxy (read every 2 s).
    await expect.poll(() => gatewayProbeSessions(page), { timeout: 20_000 }).toBe(0);
  }
});
