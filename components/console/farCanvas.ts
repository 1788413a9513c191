'use client';

import { type Edge, type InternalNode, type ReactFlowState, useStoreApi } from '@xyflow/react';
import { type RefObject, useEffect, useMemo, useRef } from 'react';
import type { GraphNode } from '@/lib/console/meshGraph';
import { removeEarlyPicture } from './earlyPicture';
import { KIND_VAR, type Palette, paletteOf } from './kindColors';
import { FAR_ZOOM } from './MeshNode';

/**
 * Below this many nodes a far-zoom pan of the DOM nodes keeps up on its own (about 30 fps for 500
 * nodes in software rendering, bench/uiProfile.ts --pan).
 */
export const FAR_CANVAS_MIN_NODES = 300;

/** Edge colours by class: the far-zoom strokes of app/globals.css. */
const EDGE_VAR: Record<string, string> = {
  'edge-rule': '--kind-vs',
  'edge-destination': '--kind-target',
  'edge-split': '--kind-target',
  'edge-ingress': '--accent-2',
  'edge-egress': '--warn',
  'edge-endpoints': '--text-muted',
  'edge-selects': '--text-muted',
  'edge-aggregate': '--text-muted',
};

interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

function boxOf(n: InternalNode, withHidden: boolean): Box | undefined {
  // A node still waiting to be mounted (staged, see useFarCanvas) is hidden but has its place.
  if (n.hidden && !(withHidden && (n.data as { staged?: boolean }).staged)) return undefined;
  const w = n.measured.width ?? n.width;
  const h = n.measured.height ?? n.height;
  if (!w || !h) return undefined;
  return { x: n.internals.positionAbsolute.x, y: n.internals.positionAbsolute.y, w, h };
}

/**
 * One frame of the graph as the far-zoom DOM draws it (square boxes with the kind's stripe, an error
 * ring, the selection outline, plain edges from the source's right side to the target's left), on a 2D canvas the size of
 * the pane. One path per colour: a 1,000-node frame is a few dozen draw calls.
 */
export function drawFarGraph(
  ctx: CanvasRenderingContext2D,
  state: Pick<ReactFlowState, 'nodeLookup' | 'edges' | 'transform' | 'width' | 'height'>,
  color: Palette,
  dpr: number,
  withStaged = false,
): void {
  const [tx, ty, k] = state.transform;
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.clearRect(0, 0, ctx.canvas.width, ctx.canvas.height);
  ctx.setTransform(dpr * k, 0, 0, dpr * k, dpr * tx, dpr * ty);
  // What lies outside the pane is not drawn (a pan shows part of a large graph).
  const view = { x0: -tx / k, y0: -ty / k, x1: (state.width - tx) / k, y1: (state.height - ty) / k };
  const inView = (b: Box) => b.x + b.w >= view.x0 && b.x <= view.x1 && b.y + b.h >= view.y0 && b.y <= view.y1;

  const edgePaths = new Map<string, Path2D>();
  for (const e of state.edges as Edge[]) {
    if (e.hidden) continue;
    const s = state.nodeLookup.get(e.source);
    const t = state.nodeLookup.get(e.target);
    const a = s && boxOf(s, withStaged);
    const b = t && boxOf(t, withStaged);
    if (!a || !b) continue;
    const x0 = a.x + a.w;
    const y0 = a.y + a.h / 2;
    const x1 = b.x;
    const y1 = b.y + b.h / 2;
    if (Math.max(x0, x1) < view.x0 || Math.min(x0, x1) > view.x1) continue;
    if (Math.max(y0, y1) < view.y0 || Math.min(y0, y1) > view.y1) continue;
    const key = EDGE_VAR[e.className ?? ''] ?? '--text-muted';
    let p = edgePaths.get(key);
    if (!p) edgePaths.set(key, (p = new Path2D()));
    p.moveTo(x0, y0);
    p.lineTo(x1, y1);
  }
  // Edges keep about one screen pixel whatever the zoom.
  ctx.lineWidth = 1 / k;
  for (const [key, p] of edgePaths) {
    ctx.strokeStyle = color(key);
    ctx.stroke(p);
  }

  const fills = new Map<string, Path2D>();
  const add = (key: string, x: number, y: number, w: number, h: number) => {
    let p = fills.get(key);
    if (!p) fills.set(key, (p = new Path2D()));
    p.rect(x, y, w, h);
  };
  const errors = new Path2D();
  const selected = new Path2D();
  const frames = new Path2D();
  for (const n of state.nodeLookup.values()) {
    const b = boxOf(n, withStaged);
    if (!b || !inView(b)) continue;
    if (n.type === 'groupFrame' || n.type === 'meshGroup') {
      frames.rect(b.x, b.y, b.w, b.h);
      continue;
    }
    const node = (n.data as { node?: GraphNode }).node;
    if (!node) continue;
    add(node.kind === 'Missing' ? '' : node.generated ? '--bg-sunken' : '--bg-raised', b.x, b.y, b.w, b.h);
    add(KIND_VAR[node.kind], b.x, b.y, 5, b.h);
    if (node.invalid || node.counts.error > 0) errors.rect(b.x - 2, b.y - 2, b.w + 4, b.h + 4);
    if (n.selected) selected.rect(b.x - 3, b.y - 3, b.w + 6, b.h + 6);
  }
  ctx.lineWidth = Math.max(1 / k, 2);
  ctx.strokeStyle = color('--border');
  ctx.stroke(frames);
  for (const [key, p] of fills) {
    if (!key) continue;
    ctx.fillStyle = color(key);
    ctx.fill(p);
  }
  ctx.lineWidth = 2;
  ctx.strokeStyle = color('--bad');
  ctx.stroke(errors);
  ctx.strokeStyle = color('--accent-2');
  ctx.stroke(selected);
}

/**
 * While a far-zoom viewport of a large graph moves, the graph is drawn on one canvas and the DOM
 * nodes and edges are hidden (the wrapper gets `data-far-canvas="moving"`); when it stops they come
 * back. In software rendering every pan frame repainted each DOM node and SVG edge: 1,000 nodes panned
 * at 11 fps (bench/uiProfile.ts --pan). The same trade Cytoscape.js makes with `textureOnViewport`.
 * A click on the pane starts and ends a move without a transform change: nothing is swapped then.
 *
 * While `staging` (a large graph's first view: its nodes are mounted a chunk per task, the rest
 * hidden with `data.staged`), the whole graph is drawn on the canvas at any zoom, staged nodes
 * included, and the DOM is hidden (`data-far-canvas="staging"`) until every node is mounted: the
 * graph shows as soon as it has its places instead of after seconds of mounting 1,000 nodes and edges.
 */
export function useFarCanvas(
  wrapper: RefObject<HTMLDivElement | null>,
  staging: boolean,
): {
  canvas: RefObject<HTMLCanvasElement | null>;
  onMoveStart: () => void;
  onMoveEnd: () => void;
} {
  const store = useStoreApi();
  const canvas = useRef<HTMLCanvasElement | null>(null);
  const state = useRef<{
    moving: boolean;
    staging: boolean;
    /** What the canvas shows now: nothing, a moving far view, or the staged graph. */
    shown: '' | 'moving' | 'staging';
    palette?: Palette;
    frame?: number;
  }>({ moving: false, staging: false, shown: '' });

  const api = useMemo(() => {
    // An attribute, not a class: React rewrites the wrapper's className when the zoom crosses FAR_ZOOM
    // (a fit does, mid-staging), and would drop a class added here.
    const show = (mode: '' | 'moving' | 'staging') => {
      const m = state.current;
      if (m.shown === mode) return;
      if (mode) wrapper.current?.setAttribute('data-far-canvas', mode);
      else wrapper.current?.removeAttribute('data-far-canvas');
      m.shown = mode;
      const c = canvas.current;
      if (!mode && c) {
        // Hidden (app/globals.css) and its bitmap given back; the next frame sizes it again.
        c.width = 0;
        c.height = 0;
        m.palette = undefined;
      }
    };
    const draw = () => {
      const m = state.current;
      m.frame = undefined;
      const s = store.getState();
      const c = canvas.current;
      const far = s.transform[2] < FAR_ZOOM && s.nodeLookup.size >= FAR_CANVAS_MIN_NODES;
      if (!c || !(m.staging || (m.moving && far))) {
        show('');
        return;
      }
      const dpr = window.devicePixelRatio || 1;
      const w = Math.round(s.width * dpr);
      const h = Math.round(s.height * dpr);
      if (c.width !== w || c.height !== h) {
        c.width = w;
        c.height = h;
      }
      const ctx = c.getContext('2d');
      if (!ctx) return;
      m.palette ??= paletteOf(c);
      drawFarGraph(ctx, s, m.palette, dpr, m.staging);
      show(m.staging ? 'staging' : 'moving');
      // The page's early picture of this first view (earlyPicture.ts) has been replaced.
      if (m.staging) removeEarlyPicture();
    };
    const request = () => {
      const m = state.current;
      if (m.frame === undefined) m.frame = requestAnimationFrame(draw);
    };
    return {
      onMoveStart: () => {
        state.current.moving = true;
      },
      onMoveEnd: () => {
        const m = state.current;
        if (!m.moving) return;
        m.moving = false;
        if (m.frame !== undefined) cancelAnimationFrame(m.frame);
        draw();
      },
      setStaging: (on: boolean) => {
        const m = state.current;
        if (m.staging === on) return;
        m.staging = on;
        if (on) request();
        else {
          if (m.frame !== undefined) cancelAnimationFrame(m.frame);
          draw();
        }
      },
      onChange: (transformChanged: boolean) => {
        const m = state.current;
        if (m.staging || (m.moving && transformChanged)) request();
      },
      stop: () => {
        const m = state.current;
        if (m.frame !== undefined) cancelAnimationFrame(m.frame);
        m.moving = false;
        m.staging = false;
        show('');
      },
    };
  }, [store, wrapper]);

  useEffect(
    () =>
      store.subscribe((s, prev) => {
        if (s.transform !== prev.transform) api.onChange(true);
        else if (s.nodes !== prev.nodes || s.edges !== prev.edges || s.width !== prev.width)
          api.onChange(false);
      }),
    [store, api],
  );
  useEffect(() => api.setStaging(staging), [api, staging]);
  useEffect(() => api.stop, [api]);
  return { canvas, onMoveStart: api.onMoveStart, onMoveEnd: api.onMoveEnd };
}
