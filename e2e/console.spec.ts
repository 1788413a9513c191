/**
 * The console against the real server: `meshdeck serve` on a copy of seed Example 1 with real l7mp
 * proxies (scripts/e2e-server.sh), signed in with the token URL. Each test starts from the mesh
 * directory's files (draft reset). Screenshots of the main views go to test-results/.
 */
import { createSocket } from 'node:dgram';
import { expect, type Page, test } from '@playwright/test';
import { sample } from '../server/metrics/testing/promText';
import { draftFile, guardPage, recordDraftRequests, replaceInYaml } from './consoleHelpers';

const SHOTS = 'test-results';

const GATEWAY_VS = 'VirtualService/default/gateway-vsvc';
const GATEWAY_ROUTE = `${GATEWAY_VS}#spec.rules[0].action.route`;

guardPage();

/**
 * `n` UDP flows from 127.0.0.100 to `host:port`, one datagram each, each from its own socket: all stay
 * bound until the last reply, so no two share a source port (nor an l7mp session). The replies in
 * order; each waits at most 3 s.
 */
async function udpFlows(host: string, port: number, n: number): Promise<string[]> {
  const sockets = Array.from({ length: n }, () => createSocket('udp4'));
  try {
    const replies: string[] = [];
    for (const [i, socket] of sockets.entries()) {
      replies.push(
        await new Promise<string>((resolve, reject) => {
          const timer = setTimeout(
            () => reject(new Error(`flow ${i}: no reply from ${host}:${port} in 3 s`)),
            3000,
          );
          socket.once('error', reject);
          socket.once('message', (m) => {
            clearTimeout(timer);
            resolve(m.toString());
          });
          socket.bind({ address: '127.0.0.100', port: 0 }, () => socket.send(`flow-${i}`, port, host));
        }),
      );
    }
    return replies;
  } finally {
    for (const s of sockets) s.close();
  }
}

/** Signs in with the token URL, resets the draft to the mesh directory's files and reloads. */
async function openConsole(page: Page): Promise<void> {
  await page.goto('/?token=e2e-token');
  await expect(page.getByTestId('session-status')).toHaveText('signed in');
  // The token never stays in the address bar.
  expect(page.url()).not.toContain('token');
  const reset = await page.evaluate(async () => {
    const s = (await (await fetch('/api/session')).json()) as { csrfToken: string };
    const r = await fetch('/api/draft/reset', { method: 'POST', headers: { 'x-csrf-token': s.csrfToken } });
    return r.status;
  });
  expect(reset).toBe(200);
  await page.reload();
  await expect(page.getByTestId('save-status')).toContainText('Saved');
  await expect(page.getByTestId(`node-${GATEWAY_VS}`)).toBeVisible();
  // The ELK worker has placed the nodes.
  await expect(page.locator('.canvas__status')).toHaveText('');
}

/**
 * Edits a file in the YAML tab the way a user does: Monaco's find/replace (Ctrl+H), "Replace All"
 * for each pair (typing multi-line text would go through Monaco's auto-indent).
 */
test('the graph shows seed Example 1: objects, generated ones, proxies in sync', async ({ page }) => {
  await openConsole(page);
  for (const id of [
    GATEWAY_VS,
    GATEWAY_ROUTE,
    'VirtualService/default/transcoder-vsvc',
    'VirtualService/default/transcoder-vsvc#spec.rules[0].action.route.destination',
    'Target/default/worker-svc',
    'Target/default/transcoder-vsvc',
    'VirtualService/default/worker-svc',
    'Service/default/gateway-svc',
    'Service/default/worker-svc',
    'Pod/default/gateway-0',
    'Pod/default/transcoder-0',
  ])
    await expect(page.getByTestId(`node-${id}`)).toBeVisible();
  await expect(page.locator('.react-flow__node')).toHaveCount(12);
  // Auto-generated objects are drawn distinctly.
  await expect(page.getByTestId('node-Target/default/worker-svc')).toHaveClass(/mesh-node--generated/);
  await expect(page.getByTestId(`node-${GATEWAY_VS}`)).not.toHaveClass(/mesh-node--generated/);
  await expect(page.getByTestId('node-Target/default/worker-svc')).toContainText('2 endpoints');
  // Live state over SSE: the proxies are in sync with Example 1.
  await expect(page.getByTestId('live-status')).toHaveText('live');
  await expect(page.getByTestId('node-Pod/default/gateway-0')).toContainText('in sync');
  await expect(page.getByTestId('count-error')).toHaveText('0');
  await page.screenshot({ path: `${SHOTS}/console-graph.png` });

  // The Preview of the gateway: nothing to do, the proxy runs exactly the draft (local mesh).
  await page.getByTestId(`node-Pod/default/gateway-0`).click();
  await page.getByTestId('tab-preview').click();
  await expect(page.getByTestId('preview-proxy')).toHaveValue('default/gateway-0');
  await expect(page.getByTestId('preview-in-sync')).toBeVisible();
  await page.getByRole('tab', { name: 'xDS' }).click();
  await expect(page.getByTestId('preview-xds')).toContainText('envoy.admin.v3.ListenersConfigDump');
  await page.getByRole('tab', { name: 'l7mp config' }).click();
  await expect(page.getByTestId('preview-l7mp')).toContainText(
    'gateway-vsvc.default.virtualservice.cluster.local',
  );
  await page.screenshot({ path: `${SHOTS}/console-preview.png` });
});

test('an edit in YAML shows in the graph and the inspector, and a form edit shows in YAML', async ({
  page,
}) => {
  await openConsole(page);
  await replaceInYaml(page, 'mesh.yaml', [
    ['name: gateway-vsvc', 'name: gateway-main'],
    ['port: 9001', 'port: 9002'],
  ]);
  const node = page.getByTestId('node-VirtualService/default/gateway-main');
  await expect(node).toBeVisible();
  await expect(node).toContainText('udp :9002');
  await expect(page.getByTestId(`node-${GATEWAY_VS}`)).toHaveCount(0);
  await page.screenshot({ path: `${SHOTS}/console-yaml.png` });

  await node.click();
  await page.getByTestId('tab-inspector').click();
  await expect(page.getByTestId('inspector-title')).toHaveText('VirtualService default/gateway-main');
  const port = page.locator('[data-field-path="spec.udp.port"] input');
  await expect(port).toHaveValue('9002');
  // A form edit is a command on the same draft: the graph and the YAML follow.
  await port.fill('9003');
  await expect(node).toContainText('udp :9003');
  await expect.poll(() => draftFile(page, 'mesh.yaml')).toContain('port: 9003');
  // A number that is not one is kept in the field with an error, not applied.
  await port.fill('90x');
  await expect(page.locator('[data-field-path="spec.udp.port"]')).toContainText(
    '"90x" is not a number (not applied)',
  );
  await expect(node).toContainText('udp :9003');
  await page.screenshot({ path: `${SHOTS}/console-inspector.png` });
});

test('a dangling reference is marked on the node and in YAML, and the marks go when it is fixed', async ({
  page,
}) => {
  await openConsole(page);
  const mesh = await draftFile(page, 'mesh.yaml');
  await replaceInYaml(page, 'mesh.yaml', [['- transcoder-vsvc', '- transcoder-nope']]);
  const route = page.getByTestId(`node-${GATEWAY_ROUTE}`);
  await expect(route).toHaveAttribute('data-errors', /[1-9]/);
  await expect(route.getByTestId('node-error-badge')).toBeVisible();
  await expect(page.getByTestId('node-Missing/default/transcoder-nope')).toBeVisible();
  // In YAML: a marker on the line that names it (the list under the editor, and Monaco's squiggle).
  const marker = page.getByTestId('yaml-markers').locator('.marker--error').first();
  await expect(marker).toContainText(
    '"transcoder-nope" is neither a VirtualService nor a Kubernetes Service',
  );
  const line = Number(await marker.getAttribute('data-line'));
  expect(mesh.split('\n')[line - 1]).toContain('- transcoder-vsvc');
  await expect(page.getByTestId('yaml-editor').locator('.squiggly-error').first()).toBeVisible();
  await expect(page.getByTestId('count-error')).not.toHaveText('0');
  await page.screenshot({ path: `${SHOTS}/console-dangling.png` });

  // Picking the diagnostic focuses the node and the form field, where it is fixed.
  await page.getByTestId('tab-inspector').click();
  await page.locator('[data-testid="diagnostic"][data-code="unresolved-reference"]').first().click();
  const field = page
    .locator('[data-field-path="spec.rules[0].action.route.ingress[0]"] input[type="text"]')
    .first();
  await expect(field).toBeFocused();
  await expect(field).toHaveValue('transcoder-nope');
  await field.fill('transcoder-vsvc');
  await expect(route).toHaveAttribute('data-errors', '0');
  await expect(page.getByTestId('node-Missing/default/transcoder-nope')).toHaveCount(0);
  await expect(page.getByTestId('count-error')).toHaveText('0');
  await page.getByTestId('tab-yaml').click();
  await expect(page.getByTestId('yaml-markers').locator('.marker--error')).toHaveCount(0);
});

test('the YAML editor validates and completes from the generated JSON Schemas, offline', async ({ page }) => {
  await openConsole(page);
  await page.getByTestId('add-Route').click();
  await replaceInYaml(page, 'route-route-1.yaml', [['destination:', 'destinaton:']]);
  const editor = page.getByTestId('yaml-editor').locator('.monaco-editor');
  const line = editor.locator('.view-line', { hasText: 'destinaton' });
  // monaco-yaml's schema check (its own worker, bundled) ...
  await expect(async () => {
    // Away first: a hover where the mouse already is moves nothing, and Monaco shows a hover on a move
    // (the first try can come before monaco-yaml's check has marked the line).
    await page.mouse.move(0, 0);
    await line.hover({ position: { x: 30, y: 5 } });
    await expect(page.locator('.monaco-hover').first()).toContainText('Property destinaton is not allowed', {
      timeout: 2000,
    });
  }).toPass({ timeout: 20_000 });
  // ... and the engine's, on the node and in the list.
  await expect(page.getByTestId('node-Route/default/route-1')).toHaveAttribute('data-errors', /[1-9]/);
  await expect(page.getByTestId('yaml-markers')).toContainText('unknown field "destinaton"');
  // Completion offers the schema's fields.
  await line.click();
  await page.keyboard.press('End');
  await page.keyboard.press('Enter');
  await page.keyboard.press('Control+Space');
  await expect(page.locator('.suggest-widget')).toContainText('destination');
  await page.screenshot({ path: `${SHOTS}/console-yaml-schema.png` });
});

test('undo and redo round-trip across palette, form and YAML edits', async ({ page }) => {
  await openConsole(page);
  const before = await draftFile(page, 'mesh.yaml');
  // 1. palette
  await page.getByTestId('add-Route').click();
  await expect(page.getByTestId('node-Route/default/route-1')).toBeVisible();
  // 2. form (the new Route is selected)
  const dest = page.locator('[data-field-path="spec.destination"] input[type="text"]').first();
  await dest.fill('worker-svc');
  await expect(page.getByTestId('node-Route/default/route-1')).not.toHaveAttribute('data-errors', /[1-9]/);
  // 3. YAML
  await replaceInYaml(page, 'mesh.yaml', [['port: 9001', 'port: 9011']]);
  await expect(page.getByTestId(`node-${GATEWAY_VS}`)).toContainText('udp :9011');

  await page.getByTestId('canvas').click({ position: { x: 5, y: 5 } });
  await page.keyboard.press('Control+z');
  await expect(page.getByTestId(`node-${GATEWAY_VS}`)).toContainText('udp :9001');
  await page.keyboard.press('Control+z');
  await page.getByTestId('node-Route/default/route-1').click();
  await page.getByTestId('tab-inspector').click();
  await expect(
    page.locator('[data-field-path="spec.destination"] input[type="text"]').first(),
  ).not.toHaveValue('worker-svc');
  await page.keyboard.press('Control+z');
  await expect(page.getByTestId('node-Route/default/route-1')).toHaveCount(0);
  await expect.poll(() => draftFile(page, 'mesh.yaml')).toBe(before);
  await page.getByTestId('canvas').click({ position: { x: 5, y: 5 } });

  await page.keyboard.press('Control+Shift+z');
  await expect(page.getByTestId('node-Route/default/route-1')).toBeVisible();
  await page.keyboard.press('Control+Shift+z');
  await page.keyboard.press('Control+Shift+z');
  await expect(page.getByTestId(`node-${GATEWAY_VS}`)).toContainText('udp :9011');
  await page.getByTestId('node-Route/default/route-1').click();
  await expect(page.locator('[data-field-path="spec.destination"] input[type="text"]').first()).toHaveValue(
    'worker-svc',
  );
  await expect(page.getByTestId('undo')).toBeEnabled();
  await expect(page.getByTestId('redo')).toBeDisabled();
});

test('the draft survives a reload (saved on the server), and the layout with it', async ({ page }) => {
  await openConsole(page);
  await page.getByTestId('add-Target').click();
  const target = page.getByTestId('node-Target/default/target-1');
  await expect(target).toBeVisible();
  // Drag it somewhere: the position goes into the draft's layout.
  const box = (await target.boundingBox())!;
  await page.mouse.move(box.x + 40, box.y + 20);
  await page.mouse.down();
  await page.mouse.move(box.x + 140, box.y + 160, { steps: 8 });
  await page.mouse.up();
  await expect(page.getByTestId('save-status')).toContainText('Saved (revision', { timeout: 10_000 });
  await expect(page.getByTestId('save-status')).not.toContainText('revision 0');
  const moved = (await target.boundingBox())!;
  // The draft compiles in a worker and ELK lays out in another: measure once the layout has settled
  // (no layout running and the same offset twice in a row).
  const settledOffset = async (): Promise<number> => {
    await expect(page.getByTestId('node-Target/default/target-1')).toBeVisible();
    await expect(page.getByTestId(`node-${GATEWAY_VS}`)).toBeVisible();
    const offset = async () => {
      const t = (await page.getByTestId('node-Target/default/target-1').boundingBox())!;
      const g = (await page.getByTestId(`node-${GATEWAY_VS}`).boundingBox())!;
      return Math.round(t.x - g.x);
    };
    let last = NaN;
    await expect
      .poll(
        async () => {
          const status = await page.locator('.canvas__status').textContent();
          const now = await offset();
          const stable = status === '' && now === last;
          last = now;
          return stable;
        },
        { intervals: [300], timeout: 15_000 },
      )
      .toBe(true);
    return last;
  };
  // The draft is asked for once per load, while the app's scripts load.
  const draftRequests = recordDraftRequests(page);
  await page.reload();
  const first = await settledOffset();
  expect(draftRequests.stop()).toEqual(['?parsed=1']);
  // The draft's first compile waited for the mesh's mode (the local mesh here) instead of compiling
  // for a cluster first and again once the live state came.
  const compiles = await page.evaluate(() =>
    performance
      .getEntriesByName('meshdeck:compile')
      .map((m) => ((m as PerformanceMeasure).detail as { localMesh: boolean }).localMesh),
  );
  expect(compiles[0]).toBe(true);
  // Same place relative to another node as before the reload (the viewport may differ).
  await page.reload();
  expect(await settledOffset()).toBe(first);
  expect(moved.width).toBeGreaterThan(0);
});

test('light theme and the shortcut cheat sheet', async ({ page }) => {
  await openConsole(page);
  await page.getByTestId('theme').click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'light');
  await page.keyboard.press('?');
  await expect(page.getByTestId('shortcuts')).toBeVisible();
  await expect(page.getByTestId('shortcuts')).toContainText('Ctrl+Shift+Z');
  await page.screenshot({ path: `${SHOTS}/console-light.png` });
  await page.keyboard.press('Escape');
  await page.reload();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'light');
  await page.getByTestId('theme').click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
});

// Last: it applies the canary to the mesh directory, so the tests above would no longer find Example 1.
test('canary: sliders keep 100, the preview follows, apply pushes the weights, the proxy is in sync and live flows show', async ({
  page,
  request,
}) => {
  test.setTimeout(120_000);
  await openConsole(page);
  await page.getByTestId('import').click();
  await page.getByTestId('example-canary').click();
  const canary = page.getByTestId('node-Target/default/echo-canary');
  await expect(canary).toBeVisible();
  await canary.click();
  await page.getByTestId('tab-inspector').click();
  const slider = page.getByTestId('split-slider-0');
  await expect(slider).toHaveValue('80');
  await slider.fill('70');
  await expect(page.getByTestId('split-weight-0')).toContainText('70');
  await expect(page.getByTestId('split-weight-1')).toContainText('30');
  await expect(page.getByTestId('split-sum')).toHaveText('weights add up to 100');
  await expect(canary).toContainText('split 70/30');
  await page.screenshot({ path: `${SHOTS}/console-canary.png` });

  // What the preview says the gateway gets: its canary cluster's endpoint weights.
  await page.getByTestId('tab-preview').click();
  await page.getByTestId('preview-proxy').selectOption('default/gateway-0');
  await page.getByRole('tab', { name: 'l7mp config' }).click();
  const previewed = JSON.parse((await page.getByTestId('preview-l7mp').textContent())!) as {
    clusters: { name: string; endpoints?: { weight?: number }[] }[];
  };
  const expected = previewed.clusters
    .find((c) => c.name.startsWith('echo-canary'))!
    .endpoints!.map((e) => e.weight ?? 1);

  // GET /metrics counts the apply (Prometheus reads it without a session).
  const applies = async () =>
    sample(await (await request.get('/metrics')).text(), 'meshdeck_console_applies_total', {
      target: 'local-mesh',
      result: 'applied',
    }) ?? 0;
  const appliesBefore = await applies();
  await page.getByTestId('apply').click();
  await expect(page.getByTestId('apply-result')).toBeVisible({ timeout: 60_000 });
  expect(await applies()).toBe(appliesBefore + 1);
  await expect(page.getByTestId('apply-result')).toContainText('default/gateway-0');
  await expect(page.getByTestId('apply-result')).toContainText('in sync');
  await page.screenshot({ path: `${SHOTS}/console-apply.png` });
  // The live state shows the gateway in sync with exactly the previewed weights.
  await expect
    .poll(async () =>
      page.evaluate(async () => {
        const s = (await (await fetch('/api/state')).json()) as {
          proxies: Record<
            string,
            { inSync: boolean; clusters: { name: string; endpoints: { weight?: number }[] }[] }
          >;
        };
        const gw = s.proxies['default/gateway-0']!;
        const c = gw.clusters.find((x) => x.name.startsWith('echo-canary'));
        return gw.inSync && c ? c.endpoints.map((e) => e.weight ?? 1) : null;
      }),
    )
    .toEqual(expected);

  // Live traffic: 20 real UDP flows through the gateway show on the graph and in the Inspector, each
  // on the backend that answered it (l7mp's session list, read every 2 s).
  const replies = await udpFlows('127.0.0.10', 9100, 20);
  for (const r of replies) expect(r).toMatch(/^echo-v[12]-[ab]\(flow-\d+\)$/);
  const v1 = replies.filter((r) => r.startsWith('echo-v1')).length;
  const v2 = replies.length - v1;
  const toggle = page.getByTestId('traffic-toggle');
  await expect(toggle).toHaveText('⇄ 20 sessions', { timeout: 15_000 });
  await expect(toggle).toHaveAttribute('aria-pressed', 'true');
  await expect(canary).toHaveAttribute('data-sessions', '20');
  await expect(canary).toContainText('⇄ 20 sessions');
  await expect(page.getByTestId('node-VirtualService/default/gateway')).toHaveAttribute(
    'data-sessions',
    '20',
  );
  await page.getByRole('button', { name: 'Close the apply panel' }).click();
  await page.getByTestId('tab-inspector').click();
  await expect(page.getByTestId('split-live-0')).toContainText(`⇄ ${v1} (${Math.round((v1 / 20) * 100)}%)`);
  await expect(page.getByTestId('split-live-1')).toContainText(`⇄ ${v2} (${Math.round((v2 / 20) * 100)}%)`);
  const sessions = page.getByTestId('traffic-sessions');
  await expect(sessions.getByTestId('traffic-count')).toHaveText('20');
  await expect(sessions).toContainText('on default/gateway-0');
  await expect(sessions.getByTestId('traffic-session')).toHaveCount(20);
  // Lit edges: gateway -> its proxy, -> echo-route, -> echo-canary, and per backend that took flows the
  // split edge and its VirtualService -> Service edge.
  const lit = page.locator('.react-flow__edge.edge-traffic');
  await expect(lit).toHaveCount(3 + (v1 > 0 ? 2 : 0) + (v2 > 0 ? 2 : 0));
  await page.screenshot({ path: `${SHOTS}/console-traffic.png` });
  // Off: no counts on nodes or edges, and it stays off after a reload.
  await toggle.click();
  await expect(toggle).toHaveText('⇄ Traffic');
  await expect(lit).toHaveCount(0);
  await expect(canary).not.toHaveAttribute('data-sessions', /.*/);
  await expect(page.getByTestId('traffic-sessions')).toHaveCount(0);
  await page.reload();
  await expect(page.getByTestId('traffic-toggle')).toHaveAttribute('aria-pressed', 'false');
  // T turns it on again; with nothing selected (Esc), the Inspector names the busiest listener.
  await page.keyboard.press('t');
  await expect(page.getByTestId('traffic-toggle')).toHaveText('⇄ 20 sessions');
  await page.keyboard.press('Escape');
  const summary = page.getByTestId('summary-traffic');
  await expect(summary).toContainText('20 sessions');
  await expect(summary.getByTestId('summary-traffic-VirtualService/default/gateway')).toBeVisible();
  await expect(summary).toContainText('VS default/gateway ⇄ 20');
  await page.screenshot({ path: `${SHOTS}/console-traffic-summary.png` });
  // Grouped by namespace, the default namespace's group stands in for every session through it.
  await page.getByTestId('group-toggle').click();
  const group = page.getByTestId('group-Group:ns/default');
  await expect(group).toHaveAttribute('data-sessions', '20');
  await expect(group).toContainText('⇄ 20');
  await page.getByTestId('group-toggle').click();
  await expect(canary).toHaveAttribute('data-sessions', '20');

  await page.goto('/proxies');
  await expect(page.getByTestId('proxy-row-default/gateway-0')).toContainText('SYNCED');
  await page.screenshot({ path: `${SHOTS}/console-proxies.png` });
});
