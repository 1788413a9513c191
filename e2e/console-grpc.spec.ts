/**
 * Proxyless gRPC clients' own load reports in the browser, on the real server of
 * scripts/e2e-grpc-server.sh: examples/grpc-canary with plaintext ADS, so its demo apps run (two real
 * @grpc/grpc-js echo backends and a real @grpc/grpc-js-xds client calling xds:///echo 10 times a second,
 * split 80/20). The client reports its RPCs per cluster over LRS; the proxies page shows its rate and
 * success without moving the row, the canvas draws the calls along client -> echo -> echo-split -> both
 * backends, and the Target's Inspector lists both clusters with their rates and sets each backend's RPCs
 * and share under its slider (marked where the slider's weight is not what they do); grouped by
 * namespace, the group shows the RPCs it stands in for.
 */
import { expect, test } from '@playwright/test';
import { GRPC_E2E_ORIGIN } from '../playwright.config';
import { guardPage, SHOTS } from './consoleHelpers';

test.use({ baseURL: GRPC_E2E_ORIGIN });
guardPage(GRPC_E2E_ORIGIN);
test.setTimeout(120_000);

const CLIENT = 'default/grpc-client';

test("the gRPC client's load reports show on the proxies page, on the canvas and in the Inspector", async ({
  page,
}) => {
  await page.goto('/?token=e2e-token');
  await expect(page.getByTestId('session-status')).toHaveText('signed in');

  await page.goto('/proxies');
  const row = page.getByTestId(`proxy-row-${CLIENT}`);
  await expect(row).toBeVisible();
  const before = (await row.boundingBox())!.height;
  const rps = row.getByTestId('proxy-load-rps');
  // The client starts calling once it is configured; the first report follows within 2 s.
  await expect(rps).toHaveText(/^(\d+(\.\d)?) RPC\/s$/, { timeout: 30_000 });
  const rate = Number((await rps.textContent())!.split(' ')[0]);
  expect(rate).toBeGreaterThan(0);
  await expect(row.getByTestId('proxy-load-success')).toHaveText('100% ok');
  // This server's ADS is plaintext (grpc-js-xds presents no certificate): the xDS column says so.
  await expect(row.locator('.proxies-table__xds')).toContainText('4 SYNCED');
  const transport = row.getByTestId(`proxy-xds-transport-${CLIENT}`);
  await expect(transport).toHaveText('plaintext');
  await expect(transport).toHaveAttribute('title', /not authenticated: the server runs with --xds-insecure/);
  // Shown whole, not cut by an ellipsis.
  for (const part of [rps, row.getByTestId('proxy-load-success')])
    expect(await part.evaluate((e) => e.scrollWidth <= e.clientWidth)).toBe(true);
  // The two lines were there before the first report: the row did not grow.
  expect((await row.boundingBox())!.height).toBe(before);
  await page.screenshot({ path: `${SHOTS}/console-grpc-proxies.png`, fullPage: true });

  await page.goto('/');
  const target = page.getByTestId('node-Target/default/echo-split');
  await expect(target).toBeVisible();
  // The overlay is on by default: the calls run along lit edges, labelled with their rate.
  const lit = page.locator('.react-flow__edge.edge-traffic');
  await expect(lit.first()).toBeVisible({ timeout: 15_000 });
  expect(await lit.count()).toBeGreaterThanOrEqual(4);
  await expect(page.getByTestId('traffic-toggle')).toHaveText(/RPC\/s/);
  await expect(page.locator('.react-flow__edge.edge-traffic--failing')).toHaveCount(0);

  await target.click();
  await page.getByTestId('tab-inspector').click();
  const table = page.getByTestId('grpc-load');
  await expect(table).toBeVisible();
  const rows = table.getByTestId('grpc-load-row');
  // Both backends of the 80/20 split got calls in the last 10 s (at 10 calls/s, 20 % is ~20 calls).
  await expect(rows).toHaveCount(2, { timeout: 15_000 });
  await expect(rows.filter({ hasText: 'echo-v1' })).toHaveCount(1);
  await expect(rows.filter({ hasText: 'echo-v2' })).toHaveCount(1);
  for (const s of await table.getByTestId('grpc-load-success').allTextContents()) expect(s).toBe('100%');
  // Under each slider of the canary split, that backend's RPCs, their share of the split's and their
  // success: the 80 % backend gets the larger share (~80 of ~100 calls in the window), the shares add up.
  const shares = [];
  for (const i of [0, 1]) {
    const line = page.getByTestId(`split-rpc-${i}`);
    await expect(line).toHaveText(/^⇄ \d+(\.\d)? RPC\/s \(\d+%\) · 100% ok$/);
    shares.push(Number(/\((\d+)%\)/.exec((await line.textContent())!)![1]));
  }
  expect(shares[0]).toBeGreaterThan(shares[1]!);
  expect(shares[0]! + shares[1]!).toBeGreaterThanOrEqual(99);
  expect(shares[0]! + shares[1]!).toBeLessThanOrEqual(101);
  // The slider moved to 40/60 in the draft, not applied: the clients still send about 80/20, further
  // from 40/60 than chance allows, and the line says so. Undo puts the draft back.
  const slider = page.getByTestId('split-slider-0');
  await slider.fill('40');
  await expect(page.getByTestId('split-weight-0')).toContainText('40');
  const first = page.getByTestId('split-rpc-0');
  await expect(first).toHaveAttribute('data-off', 'true');
  await expect(first).toHaveText(/\(\d+% ≠ 40%\)/);
  await page.screenshot({ path: `${SHOTS}/console-grpc-split-off.png` });
  await page.getByTestId('undo').click();
  await expect(slider).toHaveValue('80');
  await expect(first).not.toHaveAttribute('data-off', 'true');
  await expect(page.getByTestId('save-status')).toContainText('Saved');
  await page.screenshot({ path: `${SHOTS}/console-grpc-canvas.png` });

  // The client's node: its ADS stream as istioctl proxy-status details it, every type SYNCED.
  await page.getByTestId(`node-Pod/${CLIENT}`).click();
  const xds = page.getByTestId('xds-status');
  await expect(xds.getByTestId('xds-status-stream')).toContainText('(state of the world) from 127.0.0.1:');
  for (const type of ['LDS', 'RDS', 'CDS', 'EDS'])
    await expect(xds.getByTestId(`xds-status-${type}`)).toContainText(`${type}SYNCED`);
  await expect(xds.getByTestId(`proxy-xds-transport-${CLIENT}`)).toHaveText('plaintext');
  await expect(xds.locator('[role="alert"]')).toHaveCount(0);
  await xds.screenshot({ path: `${SHOTS}/console-grpc-xds-status.png` });

  // Grouped by namespace, the collapsed group stands in for the client and the backends: it shows their
  // RPCs (nothing selected: the selected node's group would be open).
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('mesh-summary')).toBeVisible();
  await page.getByTestId('group-toggle').click();
  const group = page.getByTestId('group-Group:ns/default');
  await expect(group).toBeVisible();
  await expect(group.getByTestId('group-load')).toHaveText(/^ · ⇄ \d+(\.\d)? RPC\/s$/);
  expect(Number(await group.getAttribute('data-rps'))).toBeGreaterThan(0);
  await expect(page.getByTestId('group-summary')).toHaveText(/^\d+ nodes in 1 group$/);
  // The lit edge's count is drawn over the nodes, so it reads whole: at both ends of its label is the
  // label (under the nodes, each end was hidden behind one).
  const label = page.locator('.react-flow__edge.edge-traffic .react-flow__edge-textbg').first();
  const box = (await label.boundingBox())!;
  expect(box.width).toBeGreaterThan(60);
  for (const x of [box.x + 3, box.x + box.width - 3])
    expect(
      await page.evaluate(
        ([px, py]) => document.elementFromPoint(px!, py!)?.closest('.react-flow__edge.edge-traffic') !== null,
        [x, box.y + box.height / 2],
      ),
    ).toBe(true);
  await page.screenshot({ path: `${SHOTS}/console-grpc-grouped.png` });
  await page.getByTestId('group-toggle').click();
  await expect(target).toBeVisible();
});
