import { describe, expect, it } from 'vitest';
import {
  addLoadTotals,
  type ClusterLoadReport,
  LOAD_KEEP_MS,
  LOAD_WINDOW_MS,
  loadBetween,
  loadView,
  MAX_CLUSTERS_PER_REPORT,
  MAX_SAMPLES_PER_CLUSTER,
  readLoadStatsRequest,
  recordLoad,
  successPercent,
} from './loadReports';

/** A ClusterStats as proto-loader decodes it (keepCase, longs as strings, defaults false). */
function clusterStats(
  name: string,
  localities: Record<string, unknown>[],
  extra: Record<string, unknown> = {},
) {
  return {
    cluster_name: name,
    cluster_service_name: `${name}-eds`,
    upstream_locality_stats: localities.map((l) => ({ locality: { region: 'local', zone: 'a' }, ...l })),
    total_dropped_requests: '0',
    dropped_requests: [],
    load_report_interval: { seconds: '2', nanos: 5_000_000 },
    ...extra,
  };
}

function report(cluster: string, issued: number, succeeded = issued, failed = 0): ClusterLoadReport {
  return { cluster, issued, succeeded, failed, inProgress: 0, dropped: 0, intervalMs: 1000 };
}

describe('readLoadStatsRequest', () => {
  it('reads proto-loader output: longs as strings, localities summed, the interval in ms', () => {
    const out = readLoadStatsRequest({
      node: { id: 'default/client' },
      cluster_stats: [
        clusterStats(
          'a',
          [
            {
              total_issued_requests: '7',
              total_successful_requests: '5',
              total_error_requests: '1',
              total_requests_in_progress: '1',
            },
            { total_issued_requests: '3', total_successful_requests: '3' },
          ],
          { total_dropped_requests: '2' },
        ),
        clusterStats('b', [{ total_issued_requests: 4, total_successful_requests: 4 }]),
      ],
    });
    expect(out).toEqual([
      { cluster: 'a', issued: 10, succeeded: 8, failed: 1, inProgress: 1, dropped: 2, intervalMs: 2005 },
      { cluster: 'b', issued: 4, succeeded: 4, failed: 0, inProgress: 0, dropped: 0, intervalMs: 2005 },
    ]);
  });

  it('never throws: what is not a ClusterStats is skipped, bad counts count as 0', () => {
    for (const bad of [undefined, null, 7, 'x', [], {}, { cluster_stats: 'no' }, { cluster_stats: null }])
      expect(readLoadStatsRequest(bad)).toEqual([]);
    const out = readLoadStatsRequest({
      cluster_stats: [
        null,
        42,
        { cluster_name: '' },
        { cluster_name: 7 },
        { cluster_name: 'ok', upstream_locality_stats: 'no', load_report_interval: 'soon' },
        clusterStats('neg', [
          {
            total_issued_requests: '-3',
            total_successful_requests: 1.5,
            total_error_requests: '99999999999999999999',
            total_requests_in_progress: { low: 1 },
          },
          null as unknown as Record<string, unknown>,
        ]),
      ],
    });
    expect(out).toEqual([
      { cluster: 'ok', issued: 0, succeeded: 0, failed: 0, inProgress: 0, dropped: 0, intervalMs: 0 },
      { cluster: 'neg', issued: 0, succeeded: 0, failed: 0, inProgress: 0, dropped: 0, intervalMs: 2005 },
    ]);
  });

  it(`cuts a report at ${MAX_CLUSTERS_PER_REPORT} clusters`, () => {
    const many = Array.from({ length: MAX_CLUSTERS_PER_REPORT + 10 }, (_, i) => clusterStats(`c${i}`, []));
    const out = readLoadStatsRequest({ cluster_stats: many });
    expect(out).toHaveLength(MAX_CLUSTERS_PER_REPORT);
    expect(out.at(-1)!.cluster).toBe(`c${MAX_CLUSTERS_PER_REPORT - 1}`);
  });
});

describe('recordLoad', () => {
  it('adds a sample per cluster without changing the history it was given', () => {
    const h1 = recordLoad(undefined, [report('a', 5), report('b', 2)], 1000);
    const frozen = structuredClone(h1);
    const h2 = recordLoad(h1, [report('a', 3, 2, 1)], 2000);
    expect(h1).toEqual(frozen);
    expect(h2).not.toBe(h1);
    expect(h2.since).toBe(1000);
    expect(h2.lastAt).toBe(2000);
    expect(h2.firstIntervalMs).toBe(1000);
    expect(h2.clusters.a!.samples).toEqual([
      { at: 1000, issued: 5, succeeded: 5, failed: 0, dropped: 0 },
      { at: 2000, issued: 3, succeeded: 2, failed: 1, dropped: 0 },
    ]);
    // b was left out of the second report: its sample stays, nothing is in progress any more.
    expect(h2.clusters.b).toEqual({
      samples: [{ at: 1000, issued: 2, succeeded: 2, failed: 0, dropped: 0 }],
      inProgress: 0,
    });
  });

  it('keeps the in-progress gauge of the latest report, summed over a cluster named twice', () => {
    const r = (n: number): ClusterLoadReport => ({ ...report('a', 1), inProgress: n });
    const h = recordLoad(recordLoad(undefined, [r(4)], 1), [r(2), r(3)], 2);
    expect(h.clusters.a!.inProgress).toBe(5);
  });

  it('drops samples older than keepMs and caps samples per cluster', () => {
    let h = recordLoad(undefined, [report('old', 1)], 0, 1000);
    h = recordLoad(h, [report('new', 1)], 1000, 1000);
    expect(Object.keys(h.clusters)).toEqual(['new']);
    expect(LOAD_KEEP_MS).toBeGreaterThan(LOAD_WINDOW_MS);
    let big = recordLoad(undefined, [report('a', 1)], 1);
    for (let t = 2; t <= MAX_SAMPLES_PER_CLUSTER + 5; t++) big = recordLoad(big, [report('a', 1)], t);
    expect(big.clusters.a!.samples).toHaveLength(MAX_SAMPLES_PER_CLUSTER);
    expect(big.clusters.a!.samples[0]!.at).toBe(6);
  });
});

describe('loadBetween and addLoadTotals', () => {
  const h = [1000, 2000, 3000].reduce(
    (acc, t) => recordLoad(acc, [report('a', t / 1000, t / 1000 - 1, 1), report('b', 10)], t),
    recordLoad(undefined, [], 0),
  );

  it('sums the reports that arrived in (from, to]', () => {
    expect(loadBetween(h, 1000, 3000)).toEqual({
      a: { issued: 5, succeeded: 3, failed: 2, dropped: 0 },
      b: { issued: 20, succeeded: 20, failed: 0, dropped: 0 },
    });
    expect(loadBetween(h, 0, 1000)).toEqual({
      a: { issued: 1, succeeded: 0, failed: 1, dropped: 0 },
      b: { issued: 10, succeeded: 10, failed: 0, dropped: 0 },
    });
    expect(loadBetween(h, 3000, 9000)).toEqual({});
    expect(loadBetween(undefined, 0, 9000)).toEqual({});
  });

  it('adds per-cluster totals into a new object', () => {
    const a = { x: { issued: 1, succeeded: 1, failed: 0, dropped: 0 } };
    const b = {
      x: { issued: 2, succeeded: 1, failed: 1, dropped: 3 },
      y: { issued: 5, succeeded: 5, failed: 0, dropped: 0 },
    };
    const sum = addLoadTotals(a, b);
    expect(sum).toEqual({
      x: { issued: 3, succeeded: 2, failed: 1, dropped: 3 },
      y: { issued: 5, succeeded: 5, failed: 0, dropped: 0 },
    });
    expect(a.x.issued).toBe(1);
    expect(sum.y).not.toBe(b.y);
  });
});

describe('successPercent', () => {
  it('is succeeded over finished, null when nothing finished', () => {
    expect(successPercent({ succeeded: 3, failed: 1 })).toBe(75);
    expect(successPercent({ succeeded: 0, failed: 2 })).toBe(0);
    expect(successPercent({ succeeded: 0, failed: 0 })).toBeNull();
  });
});

describe('loadView', () => {
  const T = 1_000_000;

  it('rates over the window, per cluster and in all, rounded to one decimal', () => {
    let h = recordLoad(undefined, [report('a', 20)], T - 60_000);
    for (let t = T - 9000; t <= T; t += 1000) h = recordLoad(h, [report('a', 8, 7, 1), report('b', 2)], t);
    const v = loadView(h, T)!;
    expect(v.windowMs).toBe(LOAD_WINDOW_MS);
    expect(v.at).toBe(new Date(T).toISOString());
    expect(v.clusters).toEqual([
      {
        cluster: 'a',
        issued: 80,
        succeeded: 70,
        failed: 10,
        dropped: 0,
        rps: 8,
        successPercent: 87.5,
        inProgress: 0,
      },
      {
        cluster: 'b',
        issued: 20,
        succeeded: 20,
        failed: 0,
        dropped: 0,
        rps: 2,
        successPercent: 100,
        inProgress: 0,
      },
    ]);
    expect(v.rps).toBe(10);
    expect(v.successPercent).toBe(90);
  });

  it('a history younger than the window: rates over the time its reports cover (first interval included)', () => {
    const interval = 200;
    const first = recordLoad(undefined, [{ ...report('a', 2), intervalMs: interval }], T);
    // Two calls in the 200 ms the first report covers: 10 per second, at once and 1 s later.
    expect(loadView(first, T)!.rps).toBe(10);
    let h = first;
    for (let t = T + interval; t <= T + 1000; t += interval)
      h = recordLoad(h, [{ ...report('a', 2), intervalMs: interval }], t);
    expect(loadView(h, T + 1000)!.rps).toBe(10);
    // Without a known interval a young history counts as one second, never as milliseconds.
    const unknown = recordLoad(undefined, [{ ...report('a', 3), intervalMs: 0 }], T);
    expect(unknown.firstIntervalMs).toBeUndefined();
    expect(loadView(unknown, T + 1)!.rps).toBe(3);
  });

  it('silence is undefined: no history, or nothing reported in the window', () => {
    const h = recordLoad(undefined, [report('a', 5)], T);
    expect(loadView(undefined, T)).toBeUndefined();
    expect(loadView(h, T + LOAD_WINDOW_MS - 1)).toBeDefined();
    expect(loadView(h, T + LOAD_WINDOW_MS)).toBeUndefined();
  });

  it('leaves out clusters with nothing in the window, keeps one with RPCs in progress', () => {
    let h = recordLoad(undefined, [report('gone', 5)], T - 20_000);
    h = recordLoad(h, [{ ...report('slow', 0, 0), inProgress: 2 }, report('busy', 4)], T);
    const v = loadView(h, T)!;
    expect(v.clusters.map((c) => [c.cluster, c.inProgress])).toEqual([
      ['busy', 0],
      ['slow', 2],
    ]);
    expect(v.clusters[1]!.successPercent).toBeNull();
  });
});
