/**
 * Edges and large meshes on the canvas (issue 5): deleting a selected edge removes the reference it
 * stands for (one undoable command; a required reference is refused with a toast), and a generated
 * mesh of about 2,000 nodes opens grouped by service, where a click expands a group into its members.
 * Both leave the server's draft as the mesh directory has it.
 */
import { expect, type Locator, type Page, test } from '@playwright/test';
import { parseAllDocuments } from 'yaml';
import { syntheticDraft } from '../bench/syntheticMesh';
import type { DraftDoc } from '../lib/console/draftDoc';
import { draftFirstView } from '../lib/console/draftFirstView';
import type { FirstViewPicture } from '../lib/console/firstViewPicture';
import { centring, guardPage, openConsole, putDraft, resetDraft, SHOTS } from './consoleHelpers';

const GATEWAY = 'VirtualService/default/gateway-vsvc';
const GATEWAY_ROUTE = `${GATEWAY}#spec.rules[0].action.route`;
const INGRESS_EDGE = `${GATEWAY_ROUTE}->Target/default/transcoder-vsvc:ingress:0`;
const DESTINATION_EDGE = `${GATEWAY_ROUTE}->Target/default/worker-svc:destination`;

guardPage();

/** The server's saved draft, once the console says it saved. */
async function savedDraft(page: Page): Promise<DraftDoc> {
  await expect(page.getByTestId('save-status')).toContainText('Saved');
  return page.evaluate(async () => ((await (await fetch('/api/draft')).json()) as { draft: DraftDoc }).draft);
}

/** The gateway VirtualService's first route, as saved. */
function gatewayRoute(draft: DraftDoc): Record<string, unknown> {
  for (const doc of parseAllDocuments(draft.files['mesh.yaml']!)) {
    const o = doc.toJS() as { metadata?: { name?: string }; spec?: { rules?: unknown } };
    if (o?.metadata?.name !== 'gateway-vsvc') continue;
    const rules = o.spec!.rules;
    const rule = (Array.isArray(rules) ? rules[0] : rules) as { action: { route: Record<string, unknown> } };
    return rule.action.route;
  }
  throw new Error('no gateway-vsvc in mesh.yaml');
}

/** Clicks an edge where its path is (its middle), as a user picks it. */
async function clickEdge(page: Page, edge: Locator): Promise<void> {
  const at = await edge.evaluate((g) => {
    const path = g.querySelector<SVGPathElement>('path.react-flow__edge-path')!;
    const p = path.getPointAtLength(path.getTotalLength() / 2);
    const m = path.getScreenCTM()!;
    return { x: p.x * m.a + p.y * m.c + m.e, y: p.x * m.b + p.y * m.d + m.f };
  });
  await page.mouse.click(at.x, at.y);
}

test('deleting an ingress-chain edge removes the entry from the YAML; Ctrl+Z restores it; a destination is refused', async ({
  page,
}) => {
  await openConsole(page, GATEWAY);
  const before = await savedDraft(page);
  expect(gatewayRoute(before)).toMatchObject({ destination: 'worker-svc', ingress: ['transcoder-vsvc'] });

  const ingress = page.locator(`.react-flow__edge[data-id="${INGRESS_EDGE}"]`);
  await expect(ingress).toHaveCount(1);
  await clickEdge(page, ingress);
  await expect(ingress).toHaveClass(/selected/);
  await page.screenshot({ path: `${SHOTS}/console-large-edge-selected.png` });
  await page.keyboard.press('Delete');
  await expect(ingress).toHaveCount(0);
  const after = await savedDraft(page);
  const route = gatewayRoute(after);
  expect(route.ingress).toBeUndefined();
  expect(route.destination).toBe('worker-svc');
  expect(after.files['mesh.yaml']).not.toContain('transcoder-vsvc\n        ]');
  // Nothing but that entry changed in meaning: the other file is byte for byte the same.
  expect(after.files['cluster.yaml']).toBe(before.files['cluster.yaml']);

  await page.keyboard.press('Control+z');
  await expect(ingress).toHaveCount(1);
  await expect(page.getByTestId('save-status')).not.toContainText('Unsaved');
  const undone = await savedDraft(page);
  expect(undone.files).toEqual(before.files);
  expect(gatewayRoute(undone)).toMatchObject({ ingress: ['transcoder-vsvc'] });

  // A route's destination is required: Delete says so and changes nothing.
  const destination = page.locator(`.react-flow__edge[data-id="${DESTINATION_EDGE}"]`);
  await clickEdge(page, destination);
  await expect(destination).toHaveClass(/selected/);
  await page.keyboard.press('Backspace');
  await expect(page.getByTestId('toast')).toContainText('is required');
  await expect(destination).toHaveCount(1);
  expect((await savedDraft(page)).files).toEqual(before.files);
  await page.screenshot({ path: `${SHOTS}/console-large-required.png` });

  // The grouping toggle works on a small mesh too: one namespace group beside the two proxies.
  await page.getByTestId('group-toggle').click();
  const group = page.getByTestId('group-Group:ns/default');
  await expect(group).toHaveAttribute('data-worst', 'warning');
  await expect(group).toHaveAttribute('data-members', '10');
  await expect(page.getByTestId(`node-${GATEWAY}`)).toHaveCount(0);
  await expect(page.getByTestId('node-Pod/default/gateway-0')).toBeVisible();
  await group.click();
  await expect(page.getByTestId('group-frame-Group:ns/default')).toBeVisible();
  await expect(page.getByTestId(`node-${GATEWAY}`)).toBeVisible();
  await page.getByTestId('group-toggle').click();
  await expect(page.getByTestId('group-toggle')).toHaveText('Group by namespace');
  await expect(page.getByTestId('group-frame-Group:ns/default')).toHaveCount(0);
  await resetDraft(page);
});

test('a 2,000-node draft opens grouped by service; a click expands a group into its members', async ({
  page,
}) => {
  test.setTimeout(180_000);
  await openConsole(page, GATEWAY);
  // 400 synthetic services: about 2,010 graph nodes, over the 1,500 at which the canvas groups.
  const draft = syntheticDraft(400);
  expect(await putDraft(page, draft)).toBe(200);
  try {
    await waitForServerLayout(page, draft);
    await page.reload();
    await expect(page.getByTestId('group-summary')).toHaveText('2,010 nodes in 400 groups', {
      timeout: 60_000,
    });
    await expect(page.locator('.canvas__status')).toHaveText('', { timeout: 60_000 });
    // The overview (400 groups and the proxies) was laid out by the layered layout, not ELK, in the
    // compile worker with the draft's first compile (firstViewLayout.ts); the server's picture came from
    // the same places (DraftLayouts.test.ts).
    expect(await layoutSources(page)).toEqual([{ nodes: 410, source: 'compile', algorithm: 'layered' }]);
    await expect(page.getByTestId('group-toggle')).toHaveText('Show all nodes');
    // 400 service groups and the 10 proxies, no single mesh object but the proxies.
    await expect(page.locator('.react-flow__node-meshGroup')).toHaveCount(400);
    await expect(page.locator('.react-flow__node-mesh')).toHaveCount(10);
    await page.screenshot({ path: `${SHOTS}/console-large-grouped.png` });

    const id = 'Group:VirtualService/default/vs-7';
    const group = page.getByTestId(`group-${id}`);
    await expect(group).toHaveAttribute('data-members', '5');
    await group.click();
    await expect(page.getByTestId(`group-frame-${id}`)).toBeVisible();
    await expect(page.locator('.canvas__status')).toHaveText('');
    for (const member of [
      'VirtualService/default/vs-7',
      'Route/default/route-7',
      'Target/default/target-7',
      'VirtualService/default/backend-7',
      'Service/default/backend-7',
    ])
      await expect(page.getByTestId(`node-${member}`)).toBeVisible();
    await expect(page.locator('.react-flow__node-mesh')).toHaveCount(15);
    await page.screenshot({ path: `${SHOTS}/console-large-expanded.png` });

    await page.getByTestId(`group-frame-${id}`).getByTestId('group-collapse').click();
    await expect(page.getByTestId(`group-frame-${id}`)).toHaveCount(0);
    await expect(group).toBeAttached();

    // The finder reaches a member of a collapsed group: its group opens, the member is selected and
    // centred on screen.
    await page.keyboard.press('Control+k');
    await expect(page.getByTestId('finder-input')).toBeFocused();
    await page.keyboard.type('route-321');
    await expect(page.getByTestId('finder-list').getByRole('option').first()).toHaveAttribute(
      'data-testid',
      'finder-option-Route/default/route-321',
    );
    await page.keyboard.press('Enter');
    await expect(page.getByTestId('group-frame-Group:VirtualService/default/vs-321')).toBeVisible();
    await expect(page.getByTestId('inspector-title')).toHaveText('Route default/route-321');
    // Centred and readable (the pane's middle half, a node's width at zoom 0.9), not only somewhere in
    // a view of the whole graph.
    await expect
      .poll(() => centring(page, page.getByTestId('node-Route/default/route-321')), { timeout: 10_000 })
      .toBe('centred');
    await page.screenshot({ path: `${SHOTS}/console-large-found.png` });
  } finally {
    await resetDraft(page);
  }
});

test('a 1,000-node graph is first drawn on one canvas while its nodes mount; panning it at far zoom draws it there too, and the nodes come back when it stops', async ({
  page,
}) => {
  test.setTimeout(180_000);
  await openConsole(page, GATEWAY);
  // 200 synthetic services: about 1,010 graph nodes, flat (under the 1,500 at which the canvas groups).
  const draft = syntheticDraft(200);
  expect(await putDraft(page, draft)).toBe(200);
  try {
    await waitForServerLayout(page, draft);
    // What the first view looked like when the canvas started drawing it (staging).
    await page.addInitScript(() => {
      const w = window as unknown as { __staged?: { nodes: number; pixels: number } };
      new MutationObserver(() => {
        const el = document.querySelector<HTMLElement>('[data-testid="canvas"]');
        if (w.__staged || el?.dataset.farCanvas !== 'staging') return;
        const c = document.querySelector<HTMLCanvasElement>('canvas.canvas__far')!;
        const px = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
        let pixels = 0;
        for (let i = 3; i < px.length; i += 4) if (px[i]! > 0) pixels++;
        w.__staged = { nodes: document.querySelectorAll('.react-flow__node').length, pixels };
      }).observe(document, { subtree: true, attributes: true, attributeFilter: ['data-far-canvas'] });
    });
    await page.reload();
    await expect(page.getByTestId('group-summary')).toHaveText('1,010 nodes', { timeout: 60_000 });
    await expect(page.locator('.canvas__status')).toHaveText('', { timeout: 60_000 });
    const canvas = page.getByTestId('canvas');
    // Every node mounted: the canvas hands over to the DOM.
    await expect(canvas).not.toHaveAttribute('data-far-canvas', { timeout: 60_000 });
    await expect(page.locator('.react-flow__node')).toHaveCount(1010);
    // Laid out by the layered layout, not ELK, in the compile worker with the draft's first compile.
    expect(await layoutSources(page)).toEqual([{ nodes: 1010, source: 'compile', algorithm: 'layered' }]);
    const staged = await page.evaluate(
      () => (window as unknown as { __staged?: { nodes: number; pixels: number } }).__staged,
    );
    // The whole graph was on the canvas before most of its nodes were in the DOM.
    expect(staged).toBeDefined();
    expect(staged!.nodes).toBeLessThan(1010);
    expect(staged!.pixels).toBeGreaterThan(20_000);
    // Fitted to the pane, 1,010 nodes are far below readable zoom.
    await expect(canvas).toHaveClass(/canvas--far/);
    // No dot grid at far zoom (a haze every pan frame repainted).
    await expect(page.locator('.react-flow__background')).toHaveCount(0);
    const node = page.getByTestId('node-Route/default/route-7');
    const drawn = () =>
      page.evaluate(() => {
        const c = document.querySelector<HTMLCanvasElement>('canvas.canvas__far')!;
        if (c.width === 0 || c.height === 0) return 0;
        const px = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
        let n = 0;
        for (let i = 3; i < px.length; i += 4) if (px[i]! > 0) n++;
        return n;
      });
    const start = await page.evaluate(() => {
      const pane = document.querySelector('.react-flow__pane')!.getBoundingClientRect();
      for (let y = pane.top + 10; y < pane.bottom - 10; y += 12)
        for (let x = pane.left + 10; x < pane.right - 10; x += 12)
          if (document.elementFromPoint(x, y)?.classList.contains('react-flow__pane')) return { x, y };
      return null;
    });
    expect(start).not.toBeNull();

    // A press without a move swaps nothing.
    await page.mouse.move(start!.x, start!.y);
    await page.mouse.down();
    await page.waitForTimeout(100);
    await expect(canvas).not.toHaveAttribute('data-far-canvas');
    expect(await drawn()).toBe(0);

    for (let i = 1; i <= 10; i++) await page.mouse.move(start!.x + i * 8, start!.y + i * 4);
    await expect(canvas).toHaveAttribute('data-far-canvas', 'moving');
    await expect(node).toHaveCSS('visibility', 'hidden');
    // Every node and edge in view, as boxes and lines: tens of thousands of pixels, not a few.
    expect(await drawn()).toBeGreaterThan(20_000);
    await page.screenshot({ path: `${SHOTS}/console-large-panning.png` });

    await page.mouse.up();
    await expect(canvas).not.toHaveAttribute('data-far-canvas');
    await expect(node).toHaveCSS('visibility', 'visible');
    expect(await drawn()).toBe(0);
    // Gone from the page, bitmap and all: left there cleared, it made every later frame's
    // layerization cost about 90 ms (bench/uiProfile.ts --edits --after-pan).
    await expect(page.locator('canvas.canvas__far')).toHaveCSS('display', 'none');
    expect(
      await page.locator('canvas.canvas__far').evaluate((c: HTMLCanvasElement) => c.width * c.height),
    ).toBe(0);
  } finally {
    await resetDraft(page);
  }
});

test("a fresh page draws the server's picture of a 1,000-node first view before its app has loaded; the app's canvas replaces it", async ({
  page,
}) => {
  test.setTimeout(180_000);
  await openConsole(page, GATEWAY);
  const draft = syntheticDraft(200);
  expect(await putDraft(page, draft)).toBe(200);
  try {
    await waitForServerLayout(page, draft);
    const picture = (await (await page.request.get('/api/draft/picture')).json()) as FirstViewPicture;
    // Every node of the first view (6 numbers each) and its edges (3 each), under the layout's hash.
    expect(picture.hash).toBe(draftFirstView(draft, { localMesh: true })!.hash);
    expect(picture.nodes.length).toBe(1010 * 6);
    expect(picture.edges.length).toBeGreaterThan(900 * 3);
    // What the page looked like when the picture came, and when it went.
    await recordEarlyPicture(page);
    await page.reload();
    await page
      .locator('#meshdeck-early-picture')
      .waitFor({ state: 'attached', timeout: 10_000 })
      .then(() => page.screenshot({ path: `${SHOTS}/console-large-early-picture.png` }))
      .catch(() => undefined);
    await expect(page.getByTestId('group-summary')).toHaveText('1,010 nodes', { timeout: 60_000 });
    await expect(page.getByTestId('canvas')).not.toHaveAttribute('data-far-canvas', { timeout: 60_000 });
    await expect(page.locator('.react-flow__node')).toHaveCount(1010);
    const early = await earlyPictureSeen(page);
    // Drawn before the app had drawn anything: the whole graph, as boxes and lines.
    expect(early).toBeDefined();
    expect(early!.appDrawn).toBe(false);
    expect(early!.pixels).toBeGreaterThan(20_000);
    // Meanwhile the diagnostics say the draft is being checked, not that it has no problems.
    expect(early!.diagnostics).toBe('Checking the draft…');
    // Taken away when the app's canvas drew the graph (its first staged frame), not before.
    expect(early!.goneAt).toBeGreaterThan(early!.at);
    expect(early!.farWhenGone).toBe('staging');
    await expect(page.locator('#meshdeck-early-picture')).toHaveCount(0);
  } finally {
    await resetDraft(page);
  }
});

test('a page opening a 1,000-node draft the server has compiled shows that compile before its own, and edits on from it', async ({
  page,
}) => {
  test.setTimeout(180_000);
  await openConsole(page, GATEWAY);
  const base = syntheticDraft(200);
  // One dangling destination: a diagnostic, a marker on its node and a count to watch.
  expect(base.files['mesh-7.yaml']).toContain('destination: target-7\n');
  const draft = {
    ...base,
    files: {
      ...base.files,
      'mesh-7.yaml': base.files['mesh-7.yaml']!.replace(
        'destination: target-7\n',
        'destination: target-nope\n',
      ),
    },
  };
  expect(await putDraft(page, draft)).toBe(200);
  try {
    await waitForServerLayout(page, draft);
    const compiled = await page.request.get('/api/draft/compiled');
    expect(compiled.status()).toBe(200);
    // The live state late (past the console's one-second wait for it): the server's compile says the
    // mesh's mode meanwhile, so nothing is compiled for a cluster in between.
    await page.route('**/api/state', async (route) => {
      await new Promise((r) => setTimeout(r, 2500));
      await route.continue();
    });
    await page.reload();
    const route = page.getByTestId('node-Route/default/route-7');
    await expect(route).toHaveAttribute('data-errors', /[1-9]/, { timeout: 60_000 });
    await expect(page.getByTestId('count-error')).not.toHaveText('0');
    // The server's compile was shown first, the worker's own compile of the draft came after it.
    const order = await page.evaluate(() => {
      const early = performance.getEntriesByName('meshdeck:early-compile')[0] as PerformanceMark | undefined;
      const first = performance.getEntriesByName('meshdeck:compile')[0];
      return {
        early: early?.startTime,
        nodes: (early?.detail as { nodes?: number } | undefined)?.nodes,
        compiled: first ? first.startTime + first.duration : undefined,
      };
    });
    expect(order.nodes).toBeGreaterThan(1000);
    expect(order.early).toBeDefined();
    await expect
      .poll(() => page.evaluate(() => performance.getEntriesByName('meshdeck:compile').length), {
        timeout: 60_000,
      })
      .toBeGreaterThan(0);
    if (order.compiled !== undefined) expect(order.early!).toBeLessThan(order.compiled);
    // Edits go on from it: the worker's results are read against the compile the page was given.
    await page.locator('[data-testid="diagnostic"][data-code="unresolved-reference"]').first().click();
    const field = page.locator('[data-field-path="spec.destination"] input[type="text"]').first();
    await expect(field).toBeFocused();
    await expect(field).toHaveValue('target-nope');
    await field.fill('target-7');
    await expect(route).toHaveAttribute('data-errors', '0');
    await expect(page.getByTestId('count-error')).toHaveText('0');
    await expect(page.getByTestId('live-status')).toHaveText('live');
    // Every compile the page ran was for the local mesh, as the server's was.
    const modes = await page.evaluate(() =>
      performance
        .getEntriesByName('meshdeck:compile')
        .map((m) => ((m as PerformanceMeasure).detail as { localMesh?: boolean }).localMesh),
    );
    expect(modes.length).toBeGreaterThan(1);
    expect(modes.every((m) => m === true)).toBe(true);
  } finally {
    await page.unroute('**/api/state');
    await resetDraft(page);
  }
});

test('a reload after an edit draws the picture this browser kept of a 1,000-node draft before its app has loaded, and lays nothing out', async ({
  page,
}) => {
  test.setTimeout(180_000);
  await openConsole(page, GATEWAY);
  const draft = syntheticDraft(200);
  expect(await putDraft(page, draft)).toBe(200);
  try {
    await page.reload();
    await expect(page.getByTestId('group-summary')).toHaveText('1,010 nodes', { timeout: 60_000 });
    await expect(page.getByTestId('canvas')).not.toHaveAttribute('data-far-canvas', { timeout: 60_000 });
    await expect(page.locator('.canvas__status')).toHaveText('', { timeout: 60_000 });
    // An edit: a new node, placed next to the others, saved as a new revision.
    await page.getByTestId('add-VirtualService').click();
    await expect(page.getByTestId('group-summary')).toHaveText('1,011 nodes');
    await expect(page.getByTestId('save-status')).toContainText('Saved (revision', { timeout: 10_000 });
    const revision = Number(
      /revision (\d+)/.exec((await page.getByTestId('save-status').textContent()) ?? '')?.[1],
    );
    // Kept once the page is idle (MeshCanvas).
    await expect
      .poll(() =>
        page.evaluate(() => {
          const kept = JSON.parse(localStorage.getItem('meshdeck:picture:v2:main') ?? 'null') as {
            revision: number;
            picture: { nodes: number[] };
          } | null;
          return kept && { revision: kept.revision, nodes: kept.picture.nodes.length / 6 };
        }),
      )
      .toEqual({ revision, nodes: 1011 });

    await recordEarlyPicture(page);
    await page.reload();
    await page
      .locator('#meshdeck-early-picture')
      .waitFor({ state: 'attached', timeout: 10_000 })
      .then(() => page.screenshot({ path: `${SHOTS}/console-large-kept-picture.png` }))
      .catch(() => undefined);
    await expect(page.getByTestId('group-summary')).toHaveText('1,011 nodes', { timeout: 60_000 });
    await expect(page.getByTestId('canvas')).not.toHaveAttribute('data-far-canvas', { timeout: 60_000 });
    await expect(page.locator('.react-flow__node')).toHaveCount(1011);
    const early = await earlyPictureSeen(page);
    expect(early).toBeDefined();
    // This browser's picture (the server may have one of its own by now), drawn before the app drew.
    expect(early!.source).toBe('browser');
    expect(early!.appDrawn).toBe(false);
    expect(early!.pixels).toBeGreaterThan(20_000);
    // The places came from this browser's storage too: no layout ran.
    expect(await layoutSources(page)).toEqual([]);
  } finally {
    await resetDraft(page);
  }
});

/** What the page's early picture (components/console/earlyPicture.ts) looked like when it came and went. */
interface EarlyPictureSeen {
  /** When it came (ms since navigation), its `data-source`, and its painted pixels. */
  at: number;
  source: string;
  pixels: number;
  /** Whether the app's canvas had drawn anything by then, and what the diagnostics list said. */
  appDrawn: boolean;
  diagnostics: string;
  /** When it went, and the app canvas's `data-far-canvas` then. */
  goneAt?: number;
  farWhenGone?: string;
}

/** Records the early picture of the pages loaded from now on; read it with earlyPictureSeen. */
async function recordEarlyPicture(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const w = window as unknown as { __early?: EarlyPictureSeen };
    new MutationObserver(() => {
      const c = document.getElementById('meshdeck-early-picture') as HTMLCanvasElement | null;
      if (c && !w.__early) {
        const px = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
        let pixels = 0;
        for (let i = 3; i < px.length; i += 4) if (px[i]! > 0) pixels++;
        const far = document.querySelector<HTMLElement>('[data-testid="canvas"]')?.dataset.farCanvas;
        w.__early = {
          at: performance.now(),
          source: c.dataset.source ?? '',
          pixels,
          appDrawn: far !== undefined || document.querySelector('.react-flow__node') !== null,
          diagnostics: document.querySelector('.diagnostics__none')?.textContent ?? '',
        };
      }
      if (!c && w.__early && w.__early.goneAt === undefined) {
        w.__early.goneAt = performance.now();
        w.__early.farWhenGone =
          document.querySelector<HTMLElement>('[data-testid="canvas"]')?.dataset.farCanvas ?? '';
      }
    }).observe(document, { subtree: true, childList: true });
  });
}

/** The early picture recordEarlyPicture saw on this page, if one came. */
function earlyPictureSeen(page: Page): Promise<EarlyPictureSeen | undefined> {
  return page.evaluate(() => (window as unknown as { __early?: EarlyPictureSeen }).__early);
}

/** Where each layout of the page came from: the `meshdeck:layout` entries of components/console/layoutGraph.ts. */
function layoutSources(page: Page): Promise<{ nodes: number; source: string; algorithm?: string }[]> {
  return page.evaluate(() =>
    performance.getEntriesByName('meshdeck:layout').map((m) => {
      const d = (m as PerformanceMeasure).detail as { nodes: number; source: string; algorithm?: string };
      return { nodes: d.nodes, source: d.source, ...(d.algorithm ? { algorithm: d.algorithm } : {}) };
    }),
  );
}

/**
 * Waits until the server has laid out the draft's first view (server/console/DraftLayouts.ts: a while
 * after the draft settles; scripts/e2e-server.sh makes it a second), so the page opened next finds it.
 */
async function waitForServerLayout(page: Page, draft: DraftDoc): Promise<void> {
  const view = draftFirstView(draft, { localMesh: true });
  expect(view).toBeDefined();
  const { hash } = view!;
  await expect
    .poll(async () => (await page.request.get(`/api/layouts/${hash}`)).status(), { timeout: 60_000 })
    .toBe(200);
}
