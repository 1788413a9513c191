/** CanvasMiniMap inside a real React Flow canvas in Chromium: what it draws, and panning and zooming with it. */
import '@xyflow/react/dist/style.css';
import '@/app/globals.css';
import { type Node, ReactFlow, type ReactFlowInstance, ReactFlowProvider, useReactFlow } from '@xyflow/react';
import { type CSSProperties, useEffect } from 'react';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { page, userEvent } from 'vitest/browser';
import { render } from 'vitest-browser-react';
import { CanvasMiniMap, type MiniMapBox } from './CanvasMiniMap';

const BOXES: MiniMapBox[] = [
  { id: 'vs', x: 40, y: 40, width: 200, height: 120, kind: 'VirtualService' },
  { id: 'r1', x: 400, y: 40, width: 200, height: 120, kind: 'Route', error: true },
  { id: 'r2', x: 400, y: 250, width: 200, height: 120, kind: 'Route' },
  { id: 't1', x: 60, y: 420, width: 160, height: 80, kind: 'Target', selected: true },
  { id: 't2', x: 300, y: 420, width: 160, height: 80, kind: 'Target' },
];
const NODES: Node[] = BOXES.map((b) => ({
  id: b.id,
  position: { x: b.x, y: b.y },
  data: { label: b.id },
  width: b.width,
  height: b.height,
}));
const byId = (id: string) => BOXES.find((b) => b.id === id)!;

// The pane is 800 x 600 at zoom 1 from the origin, so the viewport (0, 0, 800, 600) holds every box and
// is the minimap's bounds: fitted into 150 x 96 less 5 pixels each side, centred.
const SCALE = Math.min(140 / 800, 86 / 600);
const OX = (150 - 800 * SCALE) / 2;
const OY = (96 - 600 * SCALE) / 2;
const toPx = (fx: number, fy: number) => ({ x: OX + fx * SCALE, y: OY + fy * SCALE });
const centreOf = (b: MiniMapBox) => toPx(b.x + b.width / 2, b.y + b.height / 2);

type RGB = [number, number, number];

let flow: ReactFlowInstance | undefined;
/** Hands the test React Flow's instance, to read and set the viewport. */
function Grab() {
  const rf = useReactFlow();
  useEffect(() => {
    flow = rf;
  }, [rf]);
  return null;
}

function Harness({ theme, style }: { theme?: string; style?: CSSProperties }) {
  return (
    <div style={{ width: 800, height: 600, ...style }}>
      <ReactFlowProvider>
        <ReactFlow nodes={NODES} defaultViewport={{ x: 0, y: 0, zoom: 1 }} minZoom={0.5} maxZoom={2}>
          <CanvasMiniMap boxes={BOXES} theme={theme} />
          <Grab />
        </ReactFlow>
      </ReactFlowProvider>
    </div>
  );
}

function hex(name: string): RGB {
  const v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(v);
  if (!m) throw new Error(`${name} is not a #rrggbb colour: ${v}`);
  return [parseInt(m[1]!, 16), parseInt(m[2]!, 16), parseInt(m[3]!, 16)];
}

function canvasEl(): HTMLCanvasElement {
  const c = document.querySelector<HTMLCanvasElement>('[data-testid="canvas-minimap"]');
  if (!c) throw new Error('no minimap canvas');
  return c;
}

/** The colour at a point of the minimap, in CSS pixels. */
function pixel(x: number, y: number): RGB {
  const c = canvasEl();
  const dpr = c.width / 150;
  const d = c.getContext('2d')!.getImageData(Math.floor(x * dpr), Math.floor(y * dpr), 1, 1).data;
  return [d[0]!, d[1]!, d[2]!];
}

const near = (a: RGB, b: RGB, tolerance = 3) => a.every((v, i) => Math.abs(v - b[i]!) <= tolerance);

/** The largest `metric` over the pixels within 3 CSS pixels around a box's edge (outline territory). */
function ringMax(b: MiniMapBox, metric: (p: RGB) => number): number {
  const c = canvasEl();
  const dpr = c.width / 150;
  const a = toPx(b.x, b.y);
  const z = toPx(b.x + b.width, b.y + b.height);
  const x0 = Math.floor((a.x - 3) * dpr);
  const y0 = Math.floor((a.y - 3) * dpr);
  const x1 = Math.ceil((z.x + 3) * dpr);
  const y1 = Math.ceil((z.y + 3) * dpr);
  const d = c.getContext('2d')!.getImageData(x0, y0, x1 - x0, y1 - y0).data;
  let best = -Infinity;
  for (let y = y0; y < y1; y++)
    for (let x = x0; x < x1; x++) {
      // The inside of the box is its fill, not its outline.
      if (x > (a.x + 1.5) * dpr && x < (z.x - 1.5) * dpr && y > (a.y + 1.5) * dpr && y < (z.y - 1.5) * dpr)
        continue;
      const i = ((y - y0) * (x1 - x0) + (x - x0)) * 4;
      best = Math.max(best, metric([d[i]!, d[i + 1]!, d[i + 2]!]));
    }
  return best;
}

async function drawn(): Promise<void> {
  const vs = hex('--kind-vs');
  const at = centreOf(byId('vs'));
  await expect.poll(() => near(pixel(at.x, at.y), vs)).toBe(true);
}

/** Resolves after the next frame has been drawn. */
const frames = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));

function viewport() {
  if (!flow) throw new Error('React Flow is not ready');
  return flow.getViewport();
}

beforeAll(async () => {
  // Room for the 800 x 600 pane: the minimap at its bottom right must be on screen for real input.
  await page.viewport(1100, 900);
});

afterEach(() => {
  flow = undefined;
  document.documentElement.removeAttribute('data-theme');
});

describe('CanvasMiniMap', () => {
  it('draws each box in its kind colour on the background, and masks what is outside the viewport', async () => {
    await render(<Harness />);
    await expect
      .element(page.getByRole('img', { name: 'Minimap: 5 nodes; drag to pan, scroll to zoom' }))
      .toBeVisible();
    await drawn();
    const c = canvasEl();
    expect(c.width).toBe(Math.round(150 * devicePixelRatio));
    expect(c.height).toBe(Math.round(96 * devicePixelRatio));

    const r2 = centreOf(byId('r2'));
    expect(pixel(r2.x, r2.y)).toEqual(hex('--kind-route'));
    const t2 = centreOf(byId('t2'));
    expect(pixel(t2.x, t2.y)).toEqual(hex('--kind-target'));
    // Inside the viewport, away from every box: the background, undimmed.
    const bg = hex('--bg-raised');
    const empty = toPx(700, 300);
    expect(pixel(empty.x, empty.y)).toEqual(bg);
    // Left of the viewport (the bounds are centred with room on both sides): the background under the mask.
    expect(OX).toBeGreaterThan(8);
    const sunken = hex('--bg-sunken');
    const masked = pixel(OX / 2, 48);
    expect(near(masked, bg)).toBe(false);
    expect(near(masked, [0, 1, 2].map((i) => bg[i]! * 0.4 + sunken[i]! * 0.6) as RGB)).toBe(true);
  });

  it('draws at the device pixel ratio, for a crisp picture on a high-density screen', async () => {
    const own = Object.getOwnPropertyDescriptor(window, 'devicePixelRatio');
    Object.defineProperty(window, 'devicePixelRatio', { value: 2, configurable: true });
    try {
      await render(<Harness />);
      await drawn();
      const c = canvasEl();
      expect([c.width, c.height]).toEqual([300, 192]);
      expect(c.getBoundingClientRect().width).toBe(150);
      const t2 = centreOf(byId('t2'));
      expect(pixel(t2.x, t2.y)).toEqual(hex('--kind-target'));
      const empty = toPx(700, 300);
      expect(pixel(empty.x, empty.y)).toEqual(hex('--bg-raised'));
    } finally {
      if (own) Object.defineProperty(window, 'devicePixelRatio', own);
      else Reflect.deleteProperty(window, 'devicePixelRatio');
    }
  });

  it('outlines a box with errors in --bad and the selected box in --text', async () => {
    await render(<Harness />);
    await drawn();
    // How red: --bad is far redder than any kind colour or the background of the dark theme.
    const redness = ([r, g, b]: RGB) => r - (g + b) / 2;
    expect(ringMax(byId('r1'), redness)).toBeGreaterThan(40);
    expect(ringMax(byId('r2'), redness)).toBeLessThan(10);
    // How light in every channel: --text is near white, a Target box and the background are not.
    const light = ([r, g, b]: RGB) => Math.min(r, g, b);
    expect(ringMax(byId('t1'), light)).toBeGreaterThan(110);
    expect(ringMax(byId('t2'), light)).toBeLessThan(80);
  });

  it('moves the viewport with a drag on the minimap, and centres it where it is clicked', async () => {
    await render(<Harness />);
    await drawn();
    const canvas = page.getByTestId('canvas-minimap');
    await userEvent.dragAndDrop(canvas, canvas, {
      sourcePosition: { x: 75, y: 48 },
      targetPosition: { x: 95, y: 58 },
    });
    // The viewport rectangle follows the pointer: 20 and 10 minimap pixels to the right and down.
    await expect.poll(() => viewport().x).toBeCloseTo(-20 / SCALE, 0);
    expect(viewport().y).toBeCloseTo(-10 / SCALE, 0);
    expect(viewport().zoom).toBe(1);

    await flow!.setViewport({ x: 0, y: 0, zoom: 1 });
    await frames();
    // A click (no drag) brings that point of the flow to the middle of the pane.
    await userEvent.click(canvas, { position: { x: 38, y: 20 } });
    const fx = (38 - OX) / SCALE;
    const fy = (20 - OY) / SCALE;
    await expect.poll(() => viewport().x).toBeCloseTo(400 - fx, 0);
    expect(viewport().y).toBeCloseTo(300 - fy, 0);
    expect(viewport().zoom).toBe(1);
  });

  it('keeps panning while a drag leaves the minimap (pointer capture)', async () => {
    await render(<Harness />);
    await drawn();
    const pane = document.querySelector<HTMLElement>('.react-flow__pane')!;
    const c = canvasEl().getBoundingClientRect();
    const p = pane.getBoundingClientRect();
    // From inside the minimap to 25 pixels left of it, over the pane.
    await userEvent.dragAndDrop(page.getByTestId('canvas-minimap'), page.elementLocator(pane), {
      sourcePosition: { x: 75, y: 48 },
      targetPosition: { x: c.left - p.left - 25, y: c.top - p.top + 48 },
    });
    await expect.poll(() => viewport().x).toBeCloseTo(100 / SCALE, 0);
    expect(viewport().y).toBeCloseTo(0, 5);
  });

  it('zooms around the middle of the pane with the wheel, within min and max zoom, without scrolling the page', async () => {
    await render(<Harness />);
    await drawn();
    // A page that can scroll, below the canvas.
    const spacer = document.createElement('div');
    spacer.style.height = '4000px';
    document.body.append(spacer);
    try {
      const canvas = page.getByTestId('canvas-minimap');
      await userEvent.hover(canvas);
      const scrolled = window.scrollY;
      await userEvent.wheel(canvas, { delta: { y: -100 } });
      await expect.poll(() => viewport().zoom).toBeCloseTo(2 ** 0.2, 5);
      // The flow point at the middle of the pane stays there.
      const { x, y, zoom } = viewport();
      expect((400 - x) / zoom).toBeCloseTo(400, 3);
      expect((300 - y) / zoom).toBeCloseTo(300, 3);
      expect(window.scrollY).toBe(scrolled);

      await userEvent.wheel(canvas, { delta: { y: 2000 } });
      await expect.poll(() => viewport().zoom).toBe(0.5);
      await userEvent.wheel(canvas, { delta: { y: -2000 } });
      await expect.poll(() => viewport().zoom).toBe(2);
      expect(window.scrollY).toBe(scrolled);
      // The page cannot scroll under the minimap: the wheel's default is prevented.
      const wheel = new WheelEvent('wheel', { deltaY: 100, bubbles: true, cancelable: true });
      canvasEl().dispatchEvent(wheel);
      expect(wheel.defaultPrevented).toBe(true);
    } finally {
      spacer.remove();
    }
  });

  it('moves the viewport rectangle over the same nodes when the viewport moves inside their bounds', async () => {
    await render(<Harness />);
    await drawn();
    // Zoomed in, the viewport lies inside the nodes' bounds, which are then the minimap's bounds.
    await flow!.setViewport({ x: -200, y: -200, zoom: 2 });
    const nodes = { x: 40, y: 40, width: 560, height: 460 };
    const scale = Math.min(140 / nodes.width, 86 / nodes.height);
    const at = (fx: number, fy: number) => ({
      x: (150 - nodes.width * scale) / 2 + (fx - nodes.x) * scale,
      y: (96 - nodes.height * scale) / 2 + (fy - nodes.y) * scale,
    });
    const vs = at(140, 100);
    const bg = hex('--bg-raised');
    // In the viewport (100, 100, 400, 300), away from every box.
    const spot = at(120, 300);
    await expect.poll(() => near(pixel(vs.x, vs.y), hex('--kind-vs'))).toBe(true);
    await expect.poll(() => pixel(spot.x, spot.y)).toEqual(bg);
    // The viewport moves to (180, 180, 400, 300): the spot is now left of it, under the mask.
    await flow!.setViewport({ x: -360, y: -360, zoom: 2 });
    await expect.poll(() => near(pixel(spot.x, spot.y), bg)).toBe(false);
    // The nodes stay where they were; the VS box is now outside the viewport, dimmed by the mask.
    expect(near(pixel(vs.x, vs.y), hex('--kind-vs'))).toBe(false);
    const r2 = at(500, 310);
    expect(pixel(r2.x, r2.y)).toEqual(hex('--kind-route'));
  });

  it('reads the colours again when the theme prop changes, and when the page theme flips', async () => {
    const screen = await render(<Harness theme="a" />);
    await drawn();
    const vs = centreOf(byId('vs'));
    await screen.rerender(<Harness theme="b" style={{ ['--kind-vs' as string]: '#ff00ff' }} />);
    await expect.poll(() => pixel(vs.x, vs.y)).toEqual([255, 0, 255]);

    await screen.rerender(<Harness theme="b" />);
    document.documentElement.setAttribute('data-theme', 'light');
    const light = hex('--kind-vs');
    expect(light).toEqual([0x2a, 0x6f, 0xb8]);
    await expect.poll(() => pixel(vs.x, vs.y)).toEqual(light);
  });
});
