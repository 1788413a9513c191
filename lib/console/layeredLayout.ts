/**
 * A layered (Sugiyama) layout of the canvas's graph, left to right, for large graphs: ELK's layered
 * algorithm took 1.2-1.7 s in the browser for 1,000 nodes even at its cheapest settings, this one takes
 * tens of milliseconds (bench/layout.ts). The phases are ELK's: cycles broken, layers (longest path,
 * then nodes with more edges out than in pulled next to their successors), long edges split by dummy
 * nodes, crossings reduced by barycenter sweeps (the order with the fewest crossings kept), then places
 * in each layer that straighten edges (a weighted isotonic regression per layer: every node as near to
 * its neighbours' median as the spacing allows, long edges weighted most). Connected components are
 * laid out apart and packed in rows, largest first, as ELK does. Pure and deterministic: the same input
 * in the same order gives the same places, in the browser and on the server.
 */
import { LAYOUT_SPACING, type LayoutInput, NODE_HEIGHT, NODE_WIDTH, type Positions } from './elkLayout';

/** Barycenter sweeps (one down, one up each); the best order seen is kept. */
const ORDER_SWEEPS = 6;
/** Placement sweeps (one down, one up each). */
const PLACE_SWEEPS = 6;
/** Space kept around a long edge's dummy node in its layers. */
const DUMMY_SPACE = 10;
/** How much more a long edge's dummy insists on its place than a node: long edges come out straight. */
const DUMMY_WEIGHT = 8;
/** Components are packed in rows about this much wider than tall (ELK's default aspect ratio). */
const ASPECT_RATIO = 1.6;

interface Component {
  /** Node indices in input order. */
  nodes: number[];
  width: number;
  height: number;
  /** Places relative to the component's top left corner, by node index. */
  x: Map<number, number>;
  y: Map<number, number>;
}

/** Node places (top left corners, whole pixels) for `input`; never throws on any well-typed input. */
export function layeredLayout(input: LayoutInput): Positions {
  const n = input.nodes.length;
  const index = new Map<string, number>();
  const widths = new Float64Array(n);
  const heights = new Float64Array(n);
  input.nodes.forEach((node, i) => {
    // A repeated id keeps its first place in the order; ELK would refuse the graph.
    if (!index.has(node.id)) index.set(node.id, i);
    widths[i] = node.width ?? NODE_WIDTH;
    heights[i] = node.height ?? NODE_HEIGHT;
  });
  const succ: number[][] = Array.from({ length: n }, () => []);
  const seenEdge = new Set<number>();
  const parent = Int32Array.from({ length: n }, (_, i) => i);
  const find = (a: number): number => {
    while (parent[a] !== a) {
      parent[a] = parent[parent[a]!]!;
      a = parent[a]!;
    }
    return a;
  };
  for (const e of input.edges) {
    const s = index.get(e.source);
    const t = index.get(e.target);
    if (s === undefined || t === undefined || s === t) continue;
    const key = s * n + t;
    if (seenEdge.has(key)) continue;
    seenEdge.add(key);
    succ[s]!.push(t);
    const a = find(s);
    const b = find(t);
    if (a !== b) parent[Math.max(a, b)] = Math.min(a, b);
  }
  const byRoot = new Map<number, number[]>();
  for (let i = 0; i < n; i++) {
    if (index.get(input.nodes[i]!.id) !== i) continue;
    const r = find(i);
    let list = byRoot.get(r);
    if (!list) byRoot.set(r, (list = []));
    list.push(i);
  }
  const components = [...byRoot.values()].map((nodes) => layoutComponent(nodes, succ, widths, heights));
  return packComponents(components, input, index);
}

function layoutComponent(
  nodes: number[],
  succAll: number[][],
  widths: Float64Array,
  heights: Float64Array,
): Component {
  const local = new Map<number, number>();
  nodes.forEach((v, i) => local.set(v, i));
  const m = nodes.length;
  const succ: number[][] = nodes.map((v) => succAll[v]!.map((t) => local.get(t)!));

  // Cycles: a depth-first search in input order reverses every edge back to a node on its path.
  const dagSucc: number[][] = Array.from({ length: m }, () => []);
  const state = new Uint8Array(m); // 0 new, 1 on the path, 2 done
  for (let root = 0; root < m; root++) {
    if (state[root]) continue;
    const stack: [number, number][] = [[root, 0]];
    state[root] = 1;
    while (stack.length) {
      const top = stack[stack.length - 1]!;
      const [v, k] = top;
      if (k >= succ[v]!.length) {
        state[v] = 2;
        stack.pop();
        continue;
      }
      top[1] = k + 1;
      const t = succ[v]![k]!;
      if (state[t] === 1) dagSucc[t]!.push(v);
      else {
        dagSucc[v]!.push(t);
        if (state[t] === 0) {
          state[t] = 1;
          stack.push([t, 0]);
        }
      }
    }
  }
  const dagPred: number[][] = Array.from({ length: m }, () => []);
  for (let v = 0; v < m; v++) for (const t of dagSucc[v]!) dagPred[t]!.push(v);

  // Layers: longest path from the sources, in a topological order that follows the input order.
  const indeg = Int32Array.from(dagPred, (p) => p.length);
  const topo: number[] = [];
  for (let v = 0; v < m; v++) if (indeg[v] === 0) topo.push(v);
  for (let i = 0; i < topo.length; i++)
    for (const t of dagSucc[topo[i]!]!) if ((indeg[t] = indeg[t]! - 1) === 0) topo.push(t);
  const layer = new Int32Array(m);
  for (const v of topo) for (const t of dagSucc[v]!) layer[t] = Math.max(layer[t]!, layer[v]! + 1);
  // A node with more edges out than in is moved next to its nearest successor: its edges get shorter
  // (a proxy selected by many VirtualServices sits beside them, not in the first layer).
  for (let i = topo.length - 1; i >= 0; i--) {
    const v = topo[i]!;
    const out = dagSucc[v]!;
    if (out.length === 0 || out.length <= dagPred[v]!.length) continue;
    let nearest = Infinity;
    for (const t of out) nearest = Math.min(nearest, layer[t]!);
    layer[v] = nearest - 1;
  }
  let minLayer = Infinity;
  let maxLayer = 0;
  for (let v = 0; v < m; v++) minLayer = Math.min(minLayer, layer[v]!);
  for (let v = 0; v < m; v++) maxLayer = Math.max(maxLayer, (layer[v]! -= minLayer));

  // Long edges become chains of dummy nodes, one per layer crossed. Vertices: 0..m-1 nodes, then dummies.
  const vLayer: number[] = Array.from(layer);
  const up: number[][] = Array.from({ length: m }, () => []); // neighbours one layer left
  const down: number[][] = Array.from({ length: m }, () => []); // neighbours one layer right
  for (let v = 0; v < m; v++)
    for (const t of dagSucc[v]!) {
      let prev = v;
      for (let l = layer[v]! + 1; l < layer[t]!; l++) {
        const d = vLayer.length;
        vLayer.push(l);
        up.push([prev]);
        down.push([]);
        down[prev]!.push(d);
        prev = d;
      }
      down[prev]!.push(t);
      up[t]!.push(prev);
    }
  const total = vLayer.length;
  const isDummy = (v: number) => v >= m;

  // Initial order in each layer: a breadth-first walk from the sources in input order, so that what
  // hangs together starts together.
  const layers: number[][] = Array.from({ length: maxLayer + 1 }, () => []);
  const placed = new Uint8Array(total);
  const queue: number[] = [];
  const visit = (v: number) => {
    if (placed[v]) return;
    placed[v] = 1;
    queue.push(v);
  };
  for (let v = 0; v < m; v++) {
    if (up[v]!.length) continue;
    visit(v);
    for (let i = queue.length - 1; i < queue.length; i++) {
      const w = queue[i]!;
      for (const t of down[w]!) visit(t);
      for (const t of up[w]!) visit(t);
    }
  }
  for (let v = 0; v < total; v++) visit(v);
  for (const v of queue) layers[vLayer[v]!]!.push(v);

  const pos = new Float64Array(total);
  const setPos = () => layers.forEach((l) => l.forEach((v, i) => (pos[v] = i)));
  setPos();
  let best = layers.map((l) => l.slice());
  let bestCrossings = countCrossings(layers, down, pos);
  const bary = new Float64Array(total);
  const reorder = (l: number[], side: number[][]) => {
    for (const v of l) {
      const ns = side[v]!;
      if (ns.length === 0) {
        bary[v] = pos[v]!;
        continue;
      }
      let s = 0;
      for (const u of ns) s += pos[u]!;
      bary[v] = s / ns.length;
    }
    // Array.prototype.sort is stable: ties keep their current order.
    l.sort((a, b) => bary[a]! - bary[b]!);
    l.forEach((v, i) => (pos[v] = i));
  };
  for (let sweep = 0; sweep < ORDER_SWEEPS && bestCrossings > 0; sweep++) {
    for (let i = 1; i < layers.length; i++) reorder(layers[i]!, up);
    for (let i = layers.length - 2; i >= 0; i--) reorder(layers[i]!, down);
    const c = countCrossings(layers, down, pos);
    if (c < bestCrossings) {
      bestCrossings = c;
      best = layers.map((l) => l.slice());
    }
  }
  best.forEach((l, i) => (layers[i] = l));
  setPos();

  // Places across the layer (y, centres): packed, then sweeps that pull each vertex toward the median of
  // its neighbours in the layer just done, as near as the spacing lets it.
  const size = (v: number) => (isDummy(v) ? DUMMY_SPACE : heights[nodes[v]!]!);
  const gap = (a: number, b: number) =>
    size(a) / 2 + size(b) / 2 + (isDummy(a) || isDummy(b) ? DUMMY_SPACE : LAYOUT_SPACING.nodeNode);
  const y = new Float64Array(total);
  for (const l of layers) for (let i = 1; i < l.length; i++) y[l[i]!] = y[l[i - 1]!]! + gap(l[i - 1]!, l[i]!);
  const want = new Float64Array(total);
  const place = (l: number[], side: number[][]) => {
    for (const v of l) {
      const ys = side[v]!.map((u) => y[u]!);
      want[v] = ys.length ? median(ys) : y[v]!;
    }
    settle(l, want, y, gap, (v) => (isDummy(v) ? DUMMY_WEIGHT : 1));
  };
  for (let sweep = 0; sweep < PLACE_SWEEPS; sweep++) {
    for (let i = 1; i < layers.length; i++) place(layers[i]!, up);
    for (let i = layers.length - 2; i >= 0; i--) place(layers[i]!, down);
  }

  // Along the layers (x): each layer as wide as its widest node, ELK's spacing between layers.
  const layerX: number[] = [];
  let x = 0;
  for (const l of layers) {
    layerX.push(x);
    let w = 0;
    for (const v of l) if (!isDummy(v)) w = Math.max(w, widths[nodes[v]!]!);
    x += w + LAYOUT_SPACING.betweenLayers;
  }
  let top = Infinity;
  let bottom = -Infinity;
  for (let v = 0; v < m; v++) {
    top = Math.min(top, y[v]! - heights[nodes[v]!]! / 2);
    bottom = Math.max(bottom, y[v]! + heights[nodes[v]!]! / 2);
  }
  const out: Component = { nodes, width: 0, height: bottom - top, x: new Map(), y: new Map() };
  for (let v = 0; v < m; v++) {
    const id = nodes[v]!;
    out.x.set(id, layerX[layer[v]!]!);
    out.y.set(id, y[v]! - heights[id]! / 2 - top);
    out.width = Math.max(out.width, layerX[layer[v]!]! + widths[id]!);
  }
  return out;
}

/**
 * Places the layer's vertices, in their order, as near their wanted centres as the gaps between them
 * allow (least weighted squares): with offsets taken out, the places must not decrease, which is
 * isotonic regression, solved by pooling adjacent violators.
 */
function settle(
  l: number[],
  want: Float64Array,
  y: Float64Array,
  gap: (a: number, b: number) => number,
  weight: (v: number) => number,
): void {
  const k = l.length;
  if (k === 0) return;
  const offset = new Float64Array(k);
  for (let i = 1; i < k; i++) offset[i] = offset[i - 1]! + gap(l[i - 1]!, l[i]!);
  // Blocks of pooled vertices: start index, weight, weighted sum of (want - offset).
  const start: number[] = [];
  const wsum: number[] = [];
  const sum: number[] = [];
  for (let i = 0; i < k; i++) {
    const w = weight(l[i]!);
    start.push(i);
    wsum.push(w);
    sum.push(w * (want[l[i]!]! - offset[i]!));
    while (start.length > 1) {
      const j = start.length - 1;
      if (sum[j - 1]! / wsum[j - 1]! <= sum[j]! / wsum[j]!) break;
      wsum[j - 1] = wsum[j - 1]! + wsum[j]!;
      sum[j - 1] = sum[j - 1]! + sum[j]!;
      start.pop();
      wsum.pop();
      sum.pop();
    }
  }
  for (let b = 0; b < start.length; b++) {
    const level = sum[b]! / wsum[b]!;
    const end = b + 1 < start.length ? start[b + 1]! : k;
    for (let i = start[b]!; i < end; i++) y[l[i]!] = level + offset[i]!;
  }
}

function median(xs: number[]): number {
  xs.sort((a, b) => a - b);
  const h = xs.length >> 1;
  return xs.length % 2 ? xs[h]! : (xs[h - 1]! + xs[h]!) / 2;
}

/** Edge crossings between adjacent layers, counted with an accumulator tree (Barth, Jünger, Mutzel). */
export function countCrossings(layers: number[][], down: number[][], pos: Float64Array): number {
  let crossings = 0;
  for (let i = 0; i + 1 < layers.length; i++) {
    const south = layers[i + 1]!.length;
    if (south < 2) continue;
    const ends: number[] = [];
    for (const v of layers[i]!) {
      const targets = down[v]!.map((t) => pos[t]!).sort((a, b) => a - b);
      for (const t of targets) ends.push(t);
    }
    let first = 1;
    while (first < south) first <<= 1;
    const tree = new Int32Array(2 * first - 1);
    first -= 1;
    for (const e of ends) {
      let at = e + first;
      tree[at]!++;
      while (at > 0) {
        if (at % 2) crossings += tree[at + 1]!;
        at = (at - 1) >> 1;
        tree[at]!++;
      }
    }
  }
  return crossings;
}

/** Components in rows, largest first (ELK's simple row placement), at their top left corners. */
function packComponents(components: Component[], input: LayoutInput, index: Map<string, number>): Positions {
  const order = components
    .map((c, i) => ({ c, i }))
    .sort((a, b) => b.c.nodes.length - a.c.nodes.length || a.i - b.i)
    .map((e) => e.c);
  const gap = LAYOUT_SPACING.componentComponent;
  let area = 0;
  let widest = 0;
  for (const c of order) {
    area += (c.width + gap) * (c.height + gap);
    widest = Math.max(widest, c.width);
  }
  const rowWidth = Math.max(widest, Math.sqrt(area) * ASPECT_RATIO);
  const xs = new Float64Array(input.nodes.length);
  const ys = new Float64Array(input.nodes.length);
  let x = 0;
  let y = 0;
  let rowHeight = 0;
  for (const c of order) {
    if (x > 0 && x + c.width > rowWidth) {
      x = 0;
      y += rowHeight + gap;
      rowHeight = 0;
    }
    for (const id of c.nodes) {
      xs[id] = x + c.x.get(id)!;
      ys[id] = y + c.y.get(id)!;
    }
    x += c.width + gap;
    rowHeight = Math.max(rowHeight, c.height);
  }
  const out: Positions = {};
  input.nodes.forEach((node, i) => {
    const at = index.get(node.id)!;
    if (at === i) out[node.id] = { x: Math.round(xs[i]!), y: Math.round(ys[i]!) };
  });
  return out;
}
