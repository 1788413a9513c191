/**
 * Places the nodes a structural edit added, without moving any node that already has a place (issue 5,
 * P7/P8: a full ELK layout of 1,000 nodes costs seconds, and moving every node on each edit loses the
 * reader's bearings). A new node goes right of a placed upstream neighbour (or left of a placed
 * downstream one), at the nearest free spot below or further right, so siblings stack below each other;
 * a node with no placed neighbour starts a row under the drawing. Pure: the canvas calls it and a test pins it.
 */

/** A node's top-left corner on the canvas. */
export interface Point {
  x: number;
  y: number;
}

export interface PlaceInput {
  /** Every node of the graph now, with its size unless the default. */
  nodes: readonly { id: string; width?: number; height?: number }[];
  edges: readonly { source: string; target: string }[];
  /** Positions nodes already have; ids no longer in `nodes` are ignored. */
  known: Readonly<Record<string, Point>>;
  /** The size of a node that names none. */
  size: { width: number; height: number };
  /** Space between layers (left to right) and between stacked nodes; ELK's spacing by default. */
  gapX?: number;
  gapY?: number;
}

/** Whether enough nodes keep a place to add the rest around them rather than lay out everything anew. */
export function canPlaceIncrementally(
  nodes: readonly { id: string }[],
  known: Readonly<Record<string, Point>>,
) {
  if (nodes.length === 0) return false;
  let placed = 0;
  for (const n of nodes) if (known[n.id]) placed++;
  return placed > 0 && placed * 2 >= nodes.length;
}

/** Positions for the nodes of `nodes` that `known` lacks (and only for those). */
export function placeNewNodes(input: PlaceInput): Record<string, Point> {
  const gapX = input.gapX ?? 56;
  const gapY = input.gapY ?? 20;
  const sizeOf = new Map<string, { width: number; height: number }>();
  for (const n of input.nodes)
    sizeOf.set(n.id, { width: n.width ?? input.size.width, height: n.height ?? input.size.height });
  const boxes = new Grid(Math.max(input.size.width, 40), Math.max(input.size.height, 20));
  const at = new Map<string, Point>();
  const fresh: string[] = [];
  for (const n of input.nodes) {
    const p = input.known[n.id];
    if (p) {
      at.set(n.id, p);
      boxes.add(p, sizeOf.get(n.id)!);
    } else fresh.push(n.id);
  }
  if (fresh.length === 0) return {};

  const ups = new Map<string, string[]>();
  const downs = new Map<string, string[]>();
  for (const e of input.edges) {
    if (!sizeOf.has(e.source) || !sizeOf.has(e.target) || e.source === e.target) continue;
    push(ups, e.target, e.source);
    push(downs, e.source, e.target);
  }

  // Under everything placed, from its left edge: where nodes without a placed neighbour go.
  let minX = Infinity;
  let maxY = -Infinity;
  for (const [id, p] of at) {
    minX = Math.min(minX, p.x);
    maxY = Math.max(maxY, p.y + sizeOf.get(id)!.height);
  }
  const row = { x: Number.isFinite(minX) ? minX : 0, y: Number.isFinite(maxY) ? maxY + 2 * gapY : 0 };

  const out: Record<string, Point> = {};
  const place = (id: string, want: Point) => {
    const size = sizeOf.get(id)!;
    const p = free(want, size);
    at.set(id, p);
    boxes.add(p, size);
    out[id] = p;
  };
  // The nearest free spot from `want`: a row further down costs 1, a column further right 2, so a
  // sibling placed before stacks this one below it, and a crowded column (a layered layout's) is
  // passed on its right rather than at its far end.
  const free = (want: Point, size: { width: number; height: number }): Point => {
    const dx = size.width + gapX;
    const dy = size.height + gapY;
    for (let cost = 0; cost < 4000; cost++)
      for (let col = 0; 2 * col <= cost; col++) {
        const p = { x: want.x + col * dx, y: want.y + (cost - 2 * col) * dy };
        if (!boxes.hits(p, size, gapY)) return p;
      }
    return want;
  };
  const anchor = (id: string): Point | undefined => {
    const size = sizeOf.get(id)!;
    const up = (ups.get(id) ?? []).find((u) => at.has(u));
    if (up) {
      const p = at.get(up)!;
      return { x: p.x + sizeOf.get(up)!.width + gapX, y: p.y };
    }
    const down = (downs.get(id) ?? []).find((d) => at.has(d));
    if (down) {
      const p = at.get(down)!;
      return { x: p.x - size.width - gapX, y: p.y };
    }
    return undefined;
  };

  // Nodes next to placed ones first, so a chain of new nodes grows from what is there; a node that
  // touches nothing placed starts the row below, and its own new neighbours then grow from it.
  const left = new Set(fresh);
  while (left.size > 0) {
    let progressed = false;
    for (const id of left) {
      const want = anchor(id);
      if (!want) continue;
      place(id, want);
      left.delete(id);
      progressed = true;
    }
    if (progressed) continue;
    const id = left.values().next().value!;
    place(id, { x: row.x, y: row.y });
    row.x += sizeOf.get(id)!.width + gapX;
    left.delete(id);
  }
  return out;
}

function push(m: Map<string, string[]>, k: string, v: string) {
  const l = m.get(k);
  if (l) l.push(v);
  else m.set(k, [v]);
}

interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** Boxes in grid cells, so an overlap test looks at a few neighbours rather than every node. */
class Grid {
  // Cell keys may collide (i * K + j); a collision only costs an extra overlap test.
  private readonly cells = new Map<number, Box[]>();
  constructor(
    private readonly cw: number,
    private readonly ch: number,
  ) {}

  private each(b: Box, f: (key: number) => boolean | void): boolean {
    const i1 = Math.floor((b.x + b.w) / this.cw);
    const j1 = Math.floor((b.y + b.h) / this.ch);
    for (let i = Math.floor(b.x / this.cw); i <= i1; i++)
      for (let j = Math.floor(b.y / this.ch); j <= j1; j++) if (f(i * 1_000_003 + j)) return true;
    return false;
  }

  add(p: Point, s: { width: number; height: number }) {
    const b = { x: p.x, y: p.y, w: s.width, h: s.height };
    this.each(b, (k) => {
      const l = this.cells.get(k);
      if (l) l.push(b);
      else this.cells.set(k, [b]);
    });
  }

  /** Whether a box at `p` would overlap (or come within `gap` of) a box already added. */
  hits(p: Point, s: { width: number; height: number }, gap: number): boolean {
    const a = { x: p.x - gap, y: p.y - gap, w: s.width + 2 * gap, h: s.height + 2 * gap };
    return this.each(a, (k) =>
      (this.cells.get(k) ?? []).some(
        (b) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h,
      ),
    );
  }
}
