import type { Severity } from '../model/diagnostic';
import { calibrateL7mpWeights } from './l7mpHashRing';
import type { LoadBalancer } from '../model/common';
import type { ResolvedEndpoint, SplitShare } from './resolvedMesh';

/** One `split` entry with its VirtualService resolved. */
export interface SplitEntryInput {
  /** The VirtualService's long name, short name and current endpoints. */
  longName: string;
  name: string;
  endpoints: ResolvedEndpoint[];
  weight: number;
}

/** A diagnostic of the split, on the Target, at a path relative to the Target's spec (`split[1]`). */
export interface SplitNote {
  severity: Severity;
  code: string;
  message: string;
  path: string;
}

/** Diagnostic codes `splitEndpoints` may give: an endpoint change replaces exactly these. */
export const SPLIT_NOTE_CODES: ReadonlySet<string> = new Set([
  'split-entry-empty',
  'split-duplicate-address',
  'canary-split',
  'split-trivial-lb',
]);

/**
 * The endpoints, shares and notes of Meshdeck's canary extension from its entries' current endpoints:
 * shared by the resolver and the engine's fast path for an endpoint change, so both give the same.
 * The caller has checked that some entry with endpoints has a positive weight.
 */
export function splitEndpoints(
  entries: readonly SplitEntryInput[],
  loadbalancer: LoadBalancer | undefined,
  /** Whether the mesh has an l7mp proxy (sidecar or gateway): without one, no hash ring reads the weights. */
  { l7mp = true }: { l7mp?: boolean } = {},
): { endpoints: ResolvedEndpoint[]; shares: SplitShare[]; notes: SplitNote[] } {
  const notes: SplitNote[] = [];
  const total = entries.reduce((s, r) => s + (r.endpoints.length > 0 ? r.weight : 0), 0);
  const endpoints: ResolvedEndpoint[] = [];
  const shares: SplitShare[] = [];
  const seen = new Set<string>();
  const groups: { index: number; share: number; endpoints: ResolvedEndpoint[] }[] = [];
  for (const [i, r] of entries.entries()) {
    const n = r.endpoints.length;
    const percent = n > 0 ? (100 * r.weight) / total : 0;
    shares.push({
      virtualService: r.longName,
      weight: r.weight,
      endpoints: n,
      percent: Math.round(percent * 10) / 10,
      members: r.endpoints,
    });
    if (n === 0 && r.weight > 0) {
      notes.push({
        severity: 'warning',
        code: 'split-entry-empty',
        message: `split entry ${r.name} has weight ${r.weight} but no endpoints; its share goes to the other entries`,
        path: `split[${i}]`,
      });
    }
    if (r.weight === 0) continue; // l7mp reads weight 0 as 1 (`e.weight || 1`): leave such endpoints out.
    const own: ResolvedEndpoint[] = [];
    for (const e of r.endpoints) {
      if (seen.has(e.address)) {
        notes.push({
          severity: 'warning',
          code: 'split-duplicate-address',
          message: `endpoint ${e.address} appears in more than one split entry; counted once`,
          path: `split[${i}]`,
        });
        continue;
      }
      seen.add(e.address);
      own.push(e);
    }
    groups.push({ index: shares.length - 1, share: r.weight, endpoints: own });
  }
  // Without a hash key l7mp hashes one of only 1,000 random keys per flow, so the ring's geometry decides
  // the split: choose the weights for which that ring gives the asked shares (l7mpHashRing.ts).
  // Only for l7mp: xDS clients get the entries' weights as they are (weighted_clusters), and calibrating
  // cost about 5 ms of every endpoint change of a proxyless-gRPC-only mesh (bench/xdsEndToEnd.ts).
  const calibrate = l7mp && !loadbalancer?.key && loadbalancer?.policy !== 'Trivial';
  let how: string;
  if (calibrate) {
    const { weights, shares: predicted } = calibrateL7mpWeights(
      groups.map((g) => ({ share: g.share, addresses: g.endpoints.map((e) => e.address) })),
    );
    groups.forEach((g, i) => {
      shares[g.index]!.predictedPercent = Math.round(predicted[i]! * 1000) / 10;
      for (const e of g.endpoints) endpoints.push({ ...e, weight: weights.get(e.address)! });
    });
    how = `per-endpoint weights are chosen so that l7mp 0.5.7's hash ring gives ${groups
      .map((g) => `${shares[g.index]!.predictedPercent}%`)
      .join(' / ')} of new flows`;
  } else {
    for (const g of groups) {
      // Per-endpoint weight in thousandths of the traffic, so each entry's share is kept whatever its pod count.
      const w = Math.max(1, Math.round((1000 * g.share) / (total * Math.max(g.endpoints.length, 1))));
      for (const e of g.endpoints) endpoints.push({ ...e, weight: w });
    }
    how = 'per-endpoint weights are the share of each entry divided by its endpoints, in thousandths';
  }
  const explanation = shares
    .map(
      (s) =>
        `${s.virtualService.split('.')[0]} ${s.percent}% (weight ${s.weight}, ${s.endpoints} endpoint${s.endpoints === 1 ? '' : 's'})`,
    )
    .join(', ');
  notes.push({
    severity: 'info',
    code: 'canary-split',
    message: `split ${explanation}: ${how}`,
    path: 'split',
  });
  if (loadbalancer?.policy === 'Trivial') {
    notes.push({
      severity: 'warning',
      code: 'split-trivial-lb',
      message: 'loadbalancer Trivial always picks the first endpoint: the split weights have no effect',
      path: 'loadbalancer',
    });
  }
  return { endpoints, shares, notes };
}
