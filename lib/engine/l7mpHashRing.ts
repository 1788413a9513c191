/**
 * l7mp 0.5.7's ConsistentHash load balancer, reproduced exactly so that canary weights can be chosen
 * for the split they really give. l7mp builds `new HashRing({<address>: {weight}}, 'md5', {replicas: 1})`
 * (hashring 3.x: 40 vnodes per endpoint, scaled by weight) and, without a `key`, hashes
 * `String(Math.floor(Math.random() * 1000))` for each new session: only 1,000 keys exist, so the split a
 * set of weights gives is fixed by the ring's geometry and can be off by several points (measured: weights
 * 250/250/500 give 44.5/55.5, not 50/50). Pure: md5 is implemented here (no Node crypto in lib/).
 */

const S = [
  7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9,
  14, 20, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15,
  21, 6, 10, 15, 21,
];
const K = Array.from({ length: 64 }, (_, i) => Math.floor(Math.abs(Math.sin(i + 1)) * 2 ** 32) >>> 0);

/** The MD5 digest of a string's UTF-8 bytes (RFC 1321). */
export function md5(input: string): Uint8Array {
  const msg = new TextEncoder().encode(input);
  const len = msg.length;
  const blocks = ((len + 8) >> 6) + 1;
  const w = new Uint32Array(blocks * 16);
  for (let i = 0; i < len; i++) w[i >> 2]! |= msg[i]! << ((i % 4) * 8);
  w[len >> 2]! |= 0x80 << ((len % 4) * 8);
  w[blocks * 16 - 2] = (len * 8) >>> 0;
  w[blocks * 16 - 1] = Math.floor((len * 8) / 2 ** 32);
  let a0 = 0x67452301;
  let b0 = 0xefcdab89;
  let c0 = 0x98badcfe;
  let d0 = 0x10325476;
  for (let blk = 0; blk < blocks; blk++) {
    let a = a0;
    let b = b0;
    let c = c0;
    let d = d0;
    for (let i = 0; i < 64; i++) {
      let f: number;
      let g: number;
      if (i < 16) {
        f = (b & c) | (~b & d);
        g = i;
      } else if (i < 32) {
        f = (d & b) | (~d & c);
        g = (5 * i + 1) % 16;
      } else if (i < 48) {
        f = b ^ c ^ d;
        g = (3 * i + 5) % 16;
      } else {
        f = c ^ (b | ~d);
        g = (7 * i) % 16;
      }
      f = (f + a + K[i]! + w[blk * 16 + g]!) >>> 0;
      a = d;
      d = c;
      c = b;
      b = (b + ((f << S[i]!) | (f >>> (32 - S[i]!)))) >>> 0;
    }
    a0 = (a0 + a) >>> 0;
    b0 = (b0 + b) >>> 0;
    c0 = (c0 + c) >>> 0;
    d0 = (d0 + d) >>> 0;
  }
  const out = new Uint8Array(16);
  [a0, b0, c0, d0].forEach((v, i) => {
    out[i * 4] = v & 255;
    out[i * 4 + 1] = (v >>> 8) & 255;
    out[i * 4 + 2] = (v >>> 16) & 255;
    out[i * 4 + 3] = (v >>> 24) & 255;
  });
  return out;
}

function hashValue(key: string): number {
  const x = md5(key);
  return ((x[3]! << 24) | (x[2]! << 16) | (x[1]! << 8) | x[0]!) >>> 0;
}

const VNODES = 40;
/** Step sizes of the weight search: bigger steps get it out of the ring's local minima. */
const STEPS = [1, 2, 3, 5, 8];
const pointCache = new Map<string, number[]>();

/** The ring points of one endpoint, `md5("<address>-<i>")`, memoized (they never change). */
function pointsOf(address: string, count: number): number[] {
  let pts = pointCache.get(address);
  if (!pts || pts.length < count) {
    pts = Array.from({ length: Math.max(count, pts?.length ?? 0) }, (_, i) => hashValue(`${address}-${i}`));
    if (pointCache.size > 10000) pointCache.clear();
    pointCache.set(address, pts);
  }
  return pts;
}

/** Endpoint indexes sit below each ring point's value in one float: values are 32-bit, so 2^52 fits. */
const INDEX_SPAN = 2 ** 20;
/** The hashes of l7mp's 1,000 keys `String(0..999)`, ascending. */
let sortedKeys: Float64Array | undefined;

/**
 * How many of the 1,000 keys land on each endpoint (by index) for these weights. The ring is built
 * as hashring 3.x builds it and each key goes to the first point at or after its hash (the first
 * point if none), which is what hashring's `find` returns; ties between endpoints go to the one
 * added first, as its stable sort leaves them. Typed arrays and one merge pass instead of objects
 * and 1,000 binary searches: canary calibration evaluates thousands of rings.
 */
function ringCounts(addresses: readonly string[], weights: ArrayLike<number>): Int32Array {
  const n = addresses.length;
  const counts = new Int32Array(n);
  let total = 0;
  for (let i = 0; i < n; i++) total += weights[i]!;
  if (n === 0 || total <= 0 || n > INDEX_SPAN) return counts;
  const lengths = new Int32Array(n);
  let size = 0;
  for (let i = 0; i < n; i++) {
    const percentage = weights[i]! / total;
    // hashring 3.x: Math.floor(percentage * vnodes * servers.length), evaluated in this order.
    lengths[i] = Math.floor(percentage * VNODES * n);
    size += lengths[i]!;
  }
  if (size === 0) return counts;
  const ring = new Float64Array(size);
  let k = 0;
  for (let i = 0; i < n; i++) {
    const pts = pointsOf(addresses[i]!, lengths[i]!);
    for (let j = 0; j < lengths[i]!; j++) ring[k++] = pts[j]! * INDEX_SPAN + i;
  }
  ring.sort();
  sortedKeys ??= Float64Array.from({ length: 1000 }, (_, i) => hashValue(String(i))).sort();
  let j = 0;
  for (let q = 0; q < sortedKeys.length; q++) {
    const h = sortedKeys[q]!;
    while (j < size && Math.floor(ring[j]! / INDEX_SPAN) < h) j++;
    counts[(j === size ? ring[0]! : ring[j]!) % INDEX_SPAN]!++;
  }
  return counts;
}

/** How many of l7mp's 1,000 random keys land on each endpoint (by address) for these weights. */
export function l7mpRingCounts(
  endpoints: readonly { address: string; weight: number }[],
): Map<string, number> {
  const counts = ringCounts(
    endpoints.map((e) => e.address),
    endpoints.map((e) => e.weight),
  );
  const out = new Map<string, number>(endpoints.map((e) => [e.address, 0]));
  endpoints.forEach((e, i) => out.set(e.address, out.get(e.address)! + counts[i]!));
  return out;
}

export interface SplitGroup {
  /** The share of new flows this group should get (any positive scale). */
  share: number;
  addresses: readonly string[];
}

/**
 * Integer endpoint weights for which l7mp's ring gives each group its share as closely as the 1,000
 * keys allow: start from weights proportional to share / endpoints, then move ring points between
 * endpoints while that lowers the error. Returns the weights and the shares the ring will give (0-1).
 */
export function calibrateL7mpWeights(groups: readonly SplitGroup[]): {
  weights: Map<string, number>;
  shares: number[];
} {
  // Every compile of a mesh calibrates each split again (the console on every edit): remember the answers.
  const key = JSON.stringify(groups.map((g) => [g.share, g.addresses]));
  let hit = calibrated.get(key);
  if (hit) {
    calibrated.delete(key);
  } else {
    hit = calibrate(groups);
    if (calibrated.size >= CALIBRATED_MAX) calibrated.delete(calibrated.keys().next().value!);
  }
  calibrated.set(key, hit);
  return { weights: new Map(hit.weights), shares: [...hit.shares] };
}

const CALIBRATED_MAX = 256;
/** The last calibrations, least recently used first. */
const calibrated = new Map<string, { weights: Map<string, number>; shares: number[] }>();

function calibrate(groups: readonly SplitGroup[]): { weights: Map<string, number>; shares: number[] } {
  const eps = groups.flatMap((g, gi) => g.addresses.map((address) => ({ address, group: gi })));
  const total = groups.reduce((s, g) => s + (g.addresses.length > 0 ? g.share : 0), 0);
  const target = groups.map((g) => (g.addresses.length > 0 && total > 0 ? (1000 * g.share) / total : 0));
  const budget = VNODES * eps.length;
  const weights = eps.map((e) =>
    Math.max(1, Math.round((budget * target[e.group]!) / 1000 / groups[e.group]!.addresses.length)),
  );
  const addresses = eps.map((e) => e.address);
  const evaluate = (ws: number[]) => {
    const counts = ringCounts(addresses, ws);
    const byGroup = groups.map(() => 0);
    eps.forEach((e, i) => (byGroup[e.group]! += counts[i]!));
    return { byGroup, error: byGroup.reduce((s, c, gi) => s + Math.abs(c - target[gi]!), 0) };
  };
  let best = evaluate(weights);
  // Hill-climb: move one weight unit between two endpoints, or add/remove one, while the error drops.
  // Small splits (the usual canary) try every pair; large ones only from over- to under-served groups.
  const exhaustive = eps.length <= 24;
  for (let iter = 0; iter < 400 && best.error > 0 && eps.length > 1; iter++) {
    let move: { delta: [number, number][]; result: ReturnType<typeof evaluate> } | undefined;
    const tryDelta = (delta: [number, number][]) => {
      if (delta.some(([i, d]) => weights[i]! + d < 1)) return;
      for (const [i, d] of delta) weights[i]! += d;
      const result = evaluate(weights);
      for (const [i, d] of delta) weights[i]! -= d;
      if (result.error < (move?.result.error ?? best.error)) move = { delta, result };
    };
    for (let from = 0; from < eps.length; from++) {
      const fromGroup = eps[from]!.group;
      const fromOver = best.byGroup[fromGroup]! > target[fromGroup]!;
      if (exhaustive) {
        for (const k of STEPS) {
          tryDelta([[from, k]]);
          tryDelta([[from, -k]]);
        }
      }
      if (!exhaustive && !fromOver) continue;
      for (let to = 0; to < eps.length; to++) {
        const toGroup = eps[to]!.group;
        if (to === from || (!exhaustive && best.byGroup[toGroup]! >= target[toGroup]!)) continue;
        for (const k of exhaustive ? STEPS : [1]) {
          tryDelta([
            [from, -k],
            [to, k],
          ]);
        }
      }
    }
    if (!move) break;
    for (const [i, d] of (move as { delta: [number, number][] }).delta) weights[i]! += d;
    best = (move as { result: ReturnType<typeof evaluate> }).result;
  }
  return {
    weights: new Map(eps.map((e, i) => [e.address, weights[i]!])),
    shares: best.byGroup.map((c) => c / 1000),
  };
}
