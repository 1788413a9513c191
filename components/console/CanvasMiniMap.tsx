'use client';

import { Panel, type ReactFlowState, useReactFlow, useStoreApi } from '@xyflow/react';
import { type CSSProperties, type PointerEvent, useEffect, useMemo, useRef } from 'react';
import { KIND_VAR, type Palette, paletteOf } from './kindColors';

/** One flow node as the minimap draws it, in absolute flow coordinates. */
export interface MiniMapBox {
  id: string;
  x: number;
  y: number;
  width: number;
  height: number;
  /** A GraphNode kind (VirtualService, Route, Target, Service, Proxy, Missing), or 'group'. */
  kind: string;
  error?: boolean;
  selected?: boolean;
}

/** Defaults: 150 x 96 CSS pixels, as the console's React Flow minimap was. */
export interface CanvasMiniMapProps {
  /** A new array only when nodes change: the nodes layer is cached by its identity. */
  boxes: readonly MiniMapBox[];
  width?: number;
  height?: number;
  ariaLabel?: string;
  /** Only a redraw key: the colours are read from the theme's CSS variables when it changes. */
  theme?: string;
}

interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** Flow to minimap pixels: `ox + (x - bounds.x) * scale`, likewise for y. */
interface Mapping {
  bounds: Rect;
  scale: number;
  ox: number;
  oy: number;
}

/** Room around the drawn bounds, in CSS pixels (React Flow's minimap leaves about as much). */
const PAD = 5;
/** The layer is this much larger than the nodes' bounds on each side: outlines reach outside a box. */
const LAYER_MARGIN = 3;
/** A node never shrinks below this (CSS pixels): on a 1,000-node mesh most would vanish otherwise. */
const MIN_BOX = 1;
/** A press that moves less than this is a click (centre there), not a drag. */
const DRAG_SLOP = 3;
const MASK_ALPHA = 0.6;

const PANEL_STYLE: CSSProperties = {
  background: 'var(--bg-raised)',
  border: '1px solid var(--border)',
  borderRadius: 4,
  overflow: 'hidden',
  lineHeight: 0,
  boxShadow: '0 1px 3px rgb(0 0 0 / 0.25)',
};

function boundsOf(boxes: readonly MiniMapBox[]): Rect | undefined {
  if (boxes.length === 0) return undefined;
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  for (const b of boxes) {
    x0 = Math.min(x0, b.x);
    y0 = Math.min(y0, b.y);
    x1 = Math.max(x1, b.x + b.width);
    y1 = Math.max(y1, b.y + b.height);
  }
  return { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
}

function union(a: Rect, b: Rect): Rect {
  const x = Math.min(a.x, b.x);
  const y = Math.min(a.y, b.y);
  return {
    x,
    y,
    width: Math.max(a.x + a.width, b.x + b.width) - x,
    height: Math.max(a.y + a.height, b.y + b.height) - y,
  };
}

/** `bounds` scaled to fit `width` x `height` less the padding, aspect ratio kept, centred. */
function fit(bounds: Rect, width: number, height: number): Mapping | undefined {
  const scale = Math.min(
    bounds.width > 0 ? (width - 2 * PAD) / bounds.width : Infinity,
    bounds.height > 0 ? (height - 2 * PAD) / bounds.height : Infinity,
  );
  if (!Number.isFinite(scale) || scale <= 0) return undefined;
  return {
    bounds,
    scale,
    ox: (width - bounds.width * scale) / 2,
    oy: (height - bounds.height * scale) / 2,
  };
}

/** The nodes drawn at one scale, kept while only the viewport's position changes. */
interface Layer {
  canvas: HTMLCanvasElement;
  boxes: readonly MiniMapBox[];
  scale: number;
  dpr: number;
  themeRev: number;
}

interface Content {
  boxes: readonly MiniMapBox[];
  nodes: Rect | undefined;
  width: number;
  height: number;
}

/**
 * Draws the minimap outside React: a viewport change only blits the cached nodes layer and draws the
 * mask, at most once per animation frame, without rendering the component.
 */
class MiniMapPainter {
  canvas: HTMLCanvasElement | null = null;
  /** What the minimap shows now; pointer input maps through it. */
  mapping: Mapping | undefined;
  private content: Content | undefined;
  private readonly getState: () => ReactFlowState;
  private palette: Palette | undefined;
  private theme: string | undefined;
  private themeRev = 0;
  private layer: Layer | undefined;
  private frame: number | undefined;

  constructor(getState: () => ReactFlowState) {
    this.getState = getState;
  }

  attach(canvas: HTMLCanvasElement | null): void {
    this.canvas = canvas;
    this.request();
  }

  detach(): void {
    if (this.frame !== undefined) cancelAnimationFrame(this.frame);
    this.frame = undefined;
    this.canvas = null;
  }

  setContent(content: Content): void {
    // The colours stay until the theme changes (restyle): reading them is a getComputedStyle, which
    // forces the style of every node an edit just changed in the middle of the frame.
    this.content = content;
    this.request();
  }

  setTheme(theme: string | undefined): void {
    if (theme === this.theme) return;
    this.theme = theme;
    this.restyle();
  }

  /** The theme's variables changed: read them again and redraw the nodes. */
  restyle(): void {
    this.palette = undefined;
    this.themeRev++;
    this.request();
  }

  request(): void {
    if (this.frame === undefined && this.canvas) this.frame = requestAnimationFrame(this.draw);
  }

  private readonly draw = () => {
    this.frame = undefined;
    const c = this.canvas;
    const content = this.content;
    const ctx = c?.getContext('2d');
    if (!c || !content || !ctx) return;
    const { width, height, boxes, nodes } = content;
    const dpr = window.devicePixelRatio || 1;
    const cw = Math.round(width * dpr);
    const ch = Math.round(height * dpr);
    if (c.width !== cw || c.height !== ch) {
      c.width = cw;
      c.height = ch;
    }
    const color = (this.palette ??= paletteOf(c));
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.globalAlpha = 1;
    // The background is on the canvas, not only the panel, so the mask dims it like React Flow's.
    ctx.fillStyle = color('--bg-raised');
    ctx.fillRect(0, 0, cw, ch);

    const s = this.getState();
    const [tx, ty, k] = s.transform;
    const view: Rect = { x: -tx / k, y: -ty / k, width: s.width / k, height: s.height / k };
    // A pane not measured yet is no rectangle: it would stretch the bounds to reach it.
    const hasView = view.width > 0 && view.height > 0;
    const bounds = nodes ? (hasView ? union(nodes, view) : nodes) : view;
    const m = fit(bounds, width, height);
    this.mapping = m;
    if (!m) return;

    if (nodes) {
      const layer = this.layerFor(boxes, nodes, m.scale, dpr, color);
      // Whole device pixels: a fractional offset would resample the layer and blur every box.
      ctx.drawImage(
        layer,
        Math.round((m.ox + (nodes.x - m.bounds.x) * m.scale - LAYER_MARGIN) * dpr),
        Math.round((m.oy + (nodes.y - m.bounds.y) * m.scale - LAYER_MARGIN) * dpr),
      );
    }
    if (!hasView) return;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    const vx = m.ox + (view.x - m.bounds.x) * m.scale;
    const vy = m.oy + (view.y - m.bounds.y) * m.scale;
    const vw = view.width * m.scale;
    const vh = view.height * m.scale;
    const mask = new Path2D();
    mask.rect(0, 0, width, height);
    mask.rect(vx, vy, vw, vh);
    ctx.globalAlpha = MASK_ALPHA;
    ctx.fillStyle = color('--bg-sunken');
    ctx.fill(mask, 'evenodd');
    ctx.globalAlpha = 1;
    ctx.lineWidth = 1;
    ctx.strokeStyle = color('--text-muted');
    ctx.strokeRect(vx, vy, vw, vh);
  };

  /** The nodes at `scale`, drawn again only when the nodes, the scale, the pixel ratio or the theme change. */
  private layerFor(
    boxes: readonly MiniMapBox[],
    nodes: Rect,
    scale: number,
    dpr: number,
    color: Palette,
  ): HTMLCanvasElement {
    const old = this.layer;
    if (
      old &&
      old.boxes === boxes &&
      old.scale === scale &&
      old.dpr === dpr &&
      old.themeRev === this.themeRev
    )
      return old.canvas;
    const canvas = old?.canvas ?? document.createElement('canvas');
    // Setting the size clears the canvas and its state, even when it stays the same.
    canvas.width = Math.ceil((nodes.width * scale + 2 * LAYER_MARGIN) * dpr);
    canvas.height = Math.ceil((nodes.height * scale + 2 * LAYER_MARGIN) * dpr);
    const ctx = canvas.getContext('2d');
    if (ctx) {
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      paintBoxes(ctx, boxes, nodes, scale, color);
    }
    this.layer = { canvas, boxes, scale, dpr, themeRev: this.themeRev };
    return canvas;
  }
}

/** Every box as a rect filled by kind: one path per colour, so 1,000 nodes are a handful of draw calls. */
function paintBoxes(
  ctx: CanvasRenderingContext2D,
  boxes: readonly MiniMapBox[],
  nodes: Rect,
  scale: number,
  color: Palette,
): void {
  const groups = new Path2D();
  const fills = new Map<string, Path2D>();
  const errors = new Path2D();
  const selected = new Path2D();
  for (const b of boxes) {
    const x = LAYER_MARGIN + (b.x - nodes.x) * scale;
    const y = LAYER_MARGIN + (b.y - nodes.y) * scale;
    const w = Math.max(MIN_BOX, b.width * scale);
    const h = Math.max(MIN_BOX, b.height * scale);
    if (b.kind === 'group') groups.rect(x, y, w, h);
    else {
      const key = (KIND_VAR as Record<string, string | undefined>)[b.kind] ?? '--text-muted';
      let p = fills.get(key);
      if (!p) fills.set(key, (p = new Path2D()));
      p.rect(x, y, w, h);
    }
    if (b.error) errors.rect(x - 0.5, y - 0.5, w + 1, h + 1);
    if (b.selected) selected.rect(x - 1.5, y - 1.5, w + 3, h + 3);
  }
  // Groups first: an expanded group's frame lies under its members.
  ctx.fillStyle = color('--border');
  ctx.fill(groups);
  for (const [key, p] of fills) {
    ctx.fillStyle = color(key);
    ctx.fill(p);
  }
  ctx.lineWidth = 1;
  ctx.strokeStyle = color('--bad');
  ctx.stroke(errors);
  // Not --accent-2 as on the far canvas: that is also the VirtualService colour, and a selected VS
  // would not stand out at a few pixels.
  ctx.lineWidth = 1.5;
  ctx.strokeStyle = color('--text');
  ctx.stroke(selected);
}

interface Gesture {
  pointerId: number;
  startX: number;
  startY: number;
  lastX: number;
  lastY: number;
  dragging: boolean;
  /** The mapping the press was made on: a drag that moves the bounds keeps a steady speed. */
  mapping: Mapping;
}

// The stock <MiniMap> mounts a store-subscribed component per node; this one has one subscription.
/** React Flow's `<MiniMap pannable zoomable>` drawn on one canvas; render it as a child of `<ReactFlow>`. */
export function CanvasMiniMap({ boxes, width = 150, height = 96, ariaLabel, theme }: CanvasMiniMapProps) {
  const store = useStoreApi();
  const rf = useReactFlow();
  const canvas = useRef<HTMLCanvasElement | null>(null);
  const gesture = useRef<Gesture | undefined>(undefined);
  const painter = useMemo(() => new MiniMapPainter(store.getState), [store]);
  const nodes = useMemo(() => boundsOf(boxes), [boxes]);

  useEffect(() => {
    painter.attach(canvas.current);
    return () => painter.detach();
  }, [painter]);
  useEffect(
    () => painter.setContent({ boxes, nodes, width, height }),
    [painter, boxes, nodes, width, height],
  );
  useEffect(() => painter.setTheme(theme), [painter, theme]);
  // The one store subscription: not `useStore`, so a pan frame draws without rendering this component.
  useEffect(
    () =>
      store.subscribe((s, prev) => {
        if (s.transform !== prev.transform || s.width !== prev.width || s.height !== prev.height)
          painter.request();
      }),
    [store, painter],
  );
  // The theme can flip without the caller passing `theme`; the variables are then stale.
  useEffect(() => {
    const observer = new MutationObserver(() => painter.restyle());
    observer.observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme'] });
    return () => observer.disconnect();
  }, [painter]);

  // Not React's onWheel: it is passive, and the page would scroll under the minimap.
  useEffect(() => {
    const c = canvas.current;
    if (!c) return;
    const onWheel = (e: WheelEvent) => {
      e.preventDefault();
      const s = store.getState();
      const [tx, ty, k] = s.transform;
      // React Flow's wheel step: lines and pages are much larger than pixels.
      const step = e.deltaMode === 1 ? 0.05 : e.deltaMode === 2 ? 1 : 0.002;
      const zoom = Math.min(s.maxZoom, Math.max(s.minZoom, k * 2 ** (-e.deltaY * step)));
      if (zoom === k) return;
      const cx = s.width / 2;
      const cy = s.height / 2;
      void rf.setViewport({ x: cx - ((cx - tx) * zoom) / k, y: cy - ((cy - ty) * zoom) / k, zoom });
    };
    c.addEventListener('wheel', onWheel, { passive: false });
    return () => c.removeEventListener('wheel', onWheel);
  }, [store, rf]);

  const onPointerDown = (e: PointerEvent<HTMLCanvasElement>) => {
    const mapping = painter.mapping;
    if (e.button !== 0 || !mapping) return;
    e.preventDefault();
    e.currentTarget.setPointerCapture(e.pointerId);
    gesture.current = {
      pointerId: e.pointerId,
      startX: e.clientX,
      startY: e.clientY,
      lastX: e.clientX,
      lastY: e.clientY,
      dragging: false,
      mapping,
    };
  };
  const onPointerMove = (e: PointerEvent<HTMLCanvasElement>) => {
    const g = gesture.current;
    if (!g || g.pointerId !== e.pointerId) return;
    if (!g.dragging) {
      if (Math.hypot(e.clientX - g.startX, e.clientY - g.startY) < DRAG_SLOP) return;
      g.dragging = true;
      e.currentTarget.style.cursor = 'grabbing';
    }
    const dx = (e.clientX - g.lastX) / g.mapping.scale;
    const dy = (e.clientY - g.lastY) / g.mapping.scale;
    g.lastX = e.clientX;
    g.lastY = e.clientY;
    const { x, y, zoom } = rf.getViewport();
    // The viewport rectangle follows the pointer: the flow moves the other way.
    void rf.setViewport({ x: x - dx * zoom, y: y - dy * zoom, zoom });
  };
  const onPointerUp = (e: PointerEvent<HTMLCanvasElement>) => {
    const g = gesture.current;
    if (!g || g.pointerId !== e.pointerId) return;
    gesture.current = undefined;
    e.currentTarget.style.cursor = '';
    if (g.dragging) return;
    const rect = e.currentTarget.getBoundingClientRect();
    const m = g.mapping;
    const fx = m.bounds.x + ((e.clientX - rect.left) * (width / rect.width) - m.ox) / m.scale;
    const fy = m.bounds.y + ((e.clientY - rect.top) * (height / rect.height) - m.oy) / m.scale;
    const s = store.getState();
    const zoom = s.transform[2];
    void rf.setViewport({ x: s.width / 2 - fx * zoom, y: s.height / 2 - fy * zoom, zoom });
  };
  const onPointerCancel = (e: PointerEvent<HTMLCanvasElement>) => {
    if (gesture.current?.pointerId !== e.pointerId) return;
    gesture.current = undefined;
    e.currentTarget.style.cursor = '';
  };

  return (
    <Panel position="bottom-right" className="canvas-minimap" style={PANEL_STYLE}>
      <canvas
        ref={canvas}
        role="img"
        aria-label={ariaLabel ?? `Minimap: ${boxes.length} nodes; drag to pan, scroll to zoom`}
        data-testid="canvas-minimap"
        style={{ width, height, display: 'block', touchAction: 'none', cursor: 'grab' }}
        onPointerDown={onPointerDown}
        onPointerMove={onPointerMove}
        onPointerUp={onPointerUp}
        onPointerCancel={onPointerCancel}
        onLostPointerCapture={onPointerCancel}
      />
    </Panel>
  );
}
