/**
 * Draws seed Example 1 from an empty mesh with the palette, connections on the canvas and the
 * Inspector only, on Example 1's cluster (its Services and Pods), and compares the l7mp config the
 * Preview shows for each proxy with the Example 1 golden file. Nothing is applied: the draft is reset
 * at the end, so the local mesh and the other tests never see it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, type Locator, type Page, test } from '@playwright/test';
import { parse, parseAllDocuments } from 'yaml';
import { guardPage, openConsole, resetDraft, SHOTS } from './consoleHelpers';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const GATEWAY = 'VirtualService/default/gateway-vsvc';
const TRANSCODER = 'VirtualService/default/transcoder-vsvc';

guardPage();

/** Pod name -> podIP of the Pods in a manifest file. */
function podIps(file: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const doc of parseAllDocuments(readFileSync(path.join(ROOT, file), 'utf8'))) {
    const o = doc.toJS() as { kind?: string; metadata?: { name: string }; status?: { podIP?: string } };
    if (o?.kind === 'Pod' && o.status?.podIP) out.set(o.metadata!.name, o.status.podIP);
  }
  return out;
}

/**
 * The golden file's per-proxy l7mp config, on Example 1's cluster. The golden input and
 * examples/seed-example-1/cluster.yaml have the same pods at other addresses (10.0.x.y there,
 * 127.0.0.x here), so each pod's address is replaced by the same pod's address here; nothing else
 * changes (the rule's 10.0.0.1 is the client the seed names, not a pod, and is drawn as such).
 */
function expectedConfigs(): Record<string, unknown> {
  const golden = parse(
    readFileSync(path.join(ROOT, 'lib/engine/testdata/seed-example-1.out.yaml'), 'utf8'),
  ) as {
    proxies: Record<string, { config: unknown }>;
  };
  const from = podIps('lib/engine/testdata/seed-example-1.in.yaml');
  const to = podIps('examples/seed-example-1/cluster.yaml');
  const ips = new Map<string, string>();
  for (const [pod, ip] of from) ips.set(ip, to.get(pod)!);
  expect(ips.size).toBe(4);
  const map = (v: unknown): unknown =>
    typeof v === 'string'
      ? v.replace(/\b\d+\.\d+\.\d+\.\d+\b/g, (ip) => ips.get(ip) ?? ip)
      : Array.isArray(v)
        ? v.map(map)
        : v && typeof v === 'object'
          ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, map(x)]))
          : v;
  return Object.fromEntries(Object.entries(golden.proxies).map(([id, p]) => [id, map(p.config)]));
}

/** Waits until the layout is done and `node` stopped moving (the viewport animates to new nodes). */
async function settled(
  page: Page,
  node: Locator,
): Promise<{ x: number; y: number; width: number; height: number }> {
  await expect(page.locator('.canvas__status')).toHaveText('');
  let last = await node.boundingBox();
  for (let i = 0; i < 50; i++) {
    await page.waitForTimeout(100);
    const now = await node.boundingBox();
    if (last && now && now.x === last.x && now.y === last.y) return now;
    last = now;
  }
  throw new Error('the node kept moving');
}

/** Drags from one node's source handle to another node's target handle, as a user connects them. */
async function connect(page: Page, from: string, to: string, chain?: 'Shift'): Promise<void> {
  const src = page.getByTestId(`node-${from}`).locator('.react-flow__handle.source');
  const dst = page.getByTestId(`node-${to}`).locator('.react-flow__handle.target');
  /** The handle's centre, if it is what the pointer would hit there. */
  const hit = async (handle: Locator) => {
    await settled(page, handle);
    const b = (await handle.boundingBox())!;
    const at = { x: b.x + b.width / 2, y: b.y + b.height / 2 };
    const onTop = await handle.evaluate((h, p) => document.elementFromPoint(p.x, p.y) === h, at);
    if (!onTop) throw new Error(`the handle of ${from} or ${to} is covered or out of view`);
    return at;
  };
  // Each attempt first brings both ends into view, away from the pane's edges: the viewport may be
  // centred on the last node added or re-fitted to a new layout, and React Flow pans the canvas
  // under a connection dragged within 40 px of an edge (fitted nodes touch it, so one step out).
  // The drag is released only once React Flow has snapped it to the handle under the pointer; an
  // attempt that did not is let go unconnected and made again.
  await expect(async () => {
    await page.locator('.react-flow__controls-fitview').click();
    await page.locator('.react-flow__controls-zoomout').click();
    const a = await hit(src);
    const b = await hit(dst);
    await page.mouse.move(a.x, a.y);
    await page.mouse.down();
    if (chain) await page.keyboard.down(chain);
    try {
      await page.mouse.move(b.x, b.y, { steps: 12 });
      await expect(page.locator('.react-flow__connection')).toHaveClass(/\bvalid\b/, { timeout: 1000 });
    } catch (e) {
      await page.mouse.up();
      if (chain) await page.keyboard.up(chain);
      throw e;
    }
  }).toPass({ timeout: 20_000 });
  await page.mouse.up();
  if (chain) await page.keyboard.up(chain);
}

function field(page: Page, p: string, input = 'input[type="text"]'): Locator {
  return page.locator(`[data-field-path="${p}"] ${input}`).first();
}

async function addField(page: Page, to: string, name: string): Promise<void> {
  await page.getByRole('combobox', { name: `Add a field to ${to}`, exact: true }).selectOption(name);
}

async function rename(page: Page, name: string): Promise<void> {
  await field(page, 'metadata.name').fill(name);
  await field(page, 'metadata.name').press('Enter');
}

test('draw seed Example 1 from an empty mesh: each proxy gets exactly the golden l7mp config', async ({
  page,
}) => {
  test.setTimeout(120_000);
  const expected = expectedConfigs();
  await openConsole(page, GATEWAY);

  // An empty mesh on Example 1's cluster.
  await page.getByTestId('import').click();
  await page.getByTestId('clear-mesh').click();
  await expect(page.getByTestId(`node-${GATEWAY}`)).toHaveCount(0);
  await expect(page.getByTestId(`node-${TRANSCODER}`)).toHaveCount(0);
  await expect(page.getByTestId('node-Pod/default/gateway-0')).toBeVisible();
  await expect(page.getByTestId('node-Service/default/worker-svc')).toBeVisible();
  // Saved on the server (debounced): Example 1's mesh.yaml held only mesh objects, so it is gone.
  await expect
    .poll(() =>
      page.evaluate(async () => {
        const d = (await (await fetch('/api/draft')).json()) as { draft: { files: Record<string, string> } };
        return Object.keys(d.draft.files);
      }),
    )
    .toEqual(['cluster.yaml']);

  // transcoder-vsvc: a WebSocket listener on the transcoder's sidecar, to the UNIX socket.
  await page.getByTestId('add-VirtualService').click();
  await expect(page.getByTestId('inspector-title')).toHaveText('VirtualService default/vsvc-1');
  await rename(page, 'transcoder-vsvc');
  await expect(page.getByTestId('inspector-title')).toHaveText('VirtualService default/transcoder-vsvc');
  await field(page, 'spec.selector.matchLabels.app').fill('transcoder');
  await page.getByRole('button', { name: 'Remove spec.udp', exact: true }).click();
  await addField(page, 'spec', 'websocket');
  await field(page, 'spec.websocket.port').fill('8888');
  await page.getByRole('button', { name: '+ add to rules', exact: true }).click();
  await page
    .getByRole('combobox', { name: 'Kind of spec.rules[0].action.route', exact: true })
    .selectOption({ label: 'inline object' });
  await page
    .getByRole('combobox', { name: 'Kind of spec.rules[0].action.route.destination', exact: true })
    .selectOption({ label: 'inline object' });
  await addField(page, 'spec.rules[0].action.route.destination', 'unixdomainsocket');
  await field(page, 'spec.rules[0].action.route.destination.unixdomainsocket.filename').fill(
    '/var/run/sock/uds-echo.sock',
  );
  await expect(page.getByTestId(`node-${TRANSCODER}`)).toContainText('websocket :8888');

  // gateway-vsvc: UDP 9001 on the gateway-svc pods; a rule to worker-svc through the transcoder.
  await page.getByTestId('add-VirtualService').click();
  await expect(page.getByTestId('inspector-title')).toHaveText('VirtualService default/vsvc-1');
  await rename(page, 'gateway-vsvc');
  await page.getByRole('button', { name: 'Remove spec.selector.matchLabels', exact: true }).click();
  await addField(page, 'spec.selector', 'serviceName');
  await field(page, 'spec.selector.serviceName').fill('gateway-svc');
  await field(page, 'spec.udp.port').fill('9001');
  await expect(page.getByTestId(`node-${GATEWAY}`)).toContainText('udp :9001');
  // VirtualService -> Service: a rule whose inline route goes to the Service's (generated) Target.
  await connect(page, GATEWAY, 'Service/default/worker-svc');
  const route = `${GATEWAY}#spec.rules[0].action.route`;
  await expect(page.getByTestId(`node-${route}`)).toBeVisible();
  // Route -> VirtualService with Shift: the ingress chain.
  await connect(page, route, TRANSCODER, 'Shift');
  await expect(page.locator(`.react-flow__edge.edge-ingress`)).toHaveCount(1);
  // The rule's match, in the Inspector of the gateway.
  await page.getByTestId(`node-${GATEWAY}`).click();
  await page.getByTestId('tab-inspector').click();
  await addField(page, 'spec.rules[0]', 'match');
  const match = field(page, 'spec.rules[0].match', 'textarea');
  await match.fill(
    JSON.stringify({
      op: 'and',
      apply: [
        { op: 'test', path: '/IP/src_addr', value: '10.0.0.1' },
        { op: 'more', path: '/UDP/src_port', value: 8999 },
        { op: 'less', path: '/UDP/src_port', value: 9100 },
      ],
    }),
  );
  await match.blur();
  await expect(page.locator('[data-field-path="spec.rules[0].match"]').getByRole('alert')).toHaveCount(0);
  await expect(page.getByTestId('count-error')).toHaveText('0');
  await page.screenshot({ path: `${SHOTS}/console-draw.png` });

  // The cluster objects are Example 1's, untouched.
  const cluster = await page.evaluate(async () => {
    const d = (await (await fetch('/api/draft')).json()) as { draft: { files: Record<string, string> } };
    return d.draft.files['cluster.yaml'];
  });
  expect(cluster).toBe(readFileSync(path.join(ROOT, 'examples/seed-example-1/cluster.yaml'), 'utf8'));

  // What each proxy would get, as a cluster renders it (the golden file is cluster output).
  await page.getByTestId('tab-preview').click();
  await page.getByTestId('preview-render-for').selectOption('cluster');
  const proxies = await page
    .getByTestId('preview-proxy')
    .locator('option')
    .evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
  expect(proxies.sort()).toEqual(Object.keys(expected).sort());
  await page.getByRole('tab', { name: 'l7mp config' }).click();
  for (const id of proxies) {
    await page.getByTestId('preview-proxy').selectOption(id);
    // The cluster render is compiled in a Web Worker: wait for its result before reading it.
    await expect(page.getByTestId('preview-l7mp')).toHaveText(/^\s*\{/);
    const shown = JSON.parse((await page.getByTestId('preview-l7mp').textContent())!) as unknown;
    expect(shown, id).toEqual(expected[id]);
  }
  await page.screenshot({ path: `${SHOTS}/console-draw-preview.png` });

  await resetDraft(page);
});
