import { describe, expect, it } from 'vitest';
import { type ClusterLoadReport, LOAD_KEEP_MS, LOAD_WINDOW_MS } from '@/lib/xds/loadReports';
import { LOAD_MAX_NODES, LoadReportStore } from './LoadReportStore';

function report(cluster: string, issued: number, failed = 0): ClusterLoadReport {
  return { cluster, issued, succeeded: issued - failed, failed, inProgress: 0, dropped: 0, intervalMs: 1000 };
}

describe('LoadReportStore', () => {
  it('keeps a history per node and a view of each', () => {
    const store = new LoadReportStore();
    store.record('ns/a', [report('c1', 10, 1)], 1000);
    store.record('ns/a', [report('c1', 10)], 2000);
    store.record('ns/b', [report('c2', 4)], 2000);
    expect(store.history('ns/a')!.clusters.c1!.samples).toHaveLength(2);
    expect(store.history('ns/missing')).toBeUndefined();
    const v = store.view('ns/a', 2000)!;
    expect(v.clusters.map((c) => [c.cluster, c.issued, c.failed])).toEqual([['c1', 20, 1]]);
    expect(v.successPercent).toBe(95);
    expect(store.view('ns/a', 2000 + LOAD_WINDOW_MS)).toBeUndefined();
    expect(store.nodeIds()).toEqual(['ns/a', 'ns/b']);
  });

  it('a report with no clusters changes nothing (an idle client is silent)', () => {
    const store = new LoadReportStore();
    store.record('ns/a', [], 1000);
    expect(store.history('ns/a')).toBeUndefined();
    store.record('ns/a', [report('c', 1)], 1000);
    store.record('ns/a', [], 5000);
    expect(store.history('ns/a')!.lastAt).toBe(1000);
  });

  it('between sums every node, those gone quiet too, over (from, to]', () => {
    const store = new LoadReportStore();
    store.record('ns/a', [report('c1', 8), report('c2', 2, 1)], 1000);
    store.record('ns/b', [report('c1', 5, 5)], 1500);
    store.record('ns/a', [report('c1', 1)], 3000);
    expect(store.between(0, 2000)).toEqual({
      c1: { issued: 13, succeeded: 8, failed: 5, dropped: 0 },
      c2: { issued: 2, succeeded: 1, failed: 1, dropped: 0 },
    });
    expect(store.between(1000, 3000)).toEqual({
      c1: { issued: 6, succeeded: 1, failed: 5, dropped: 0 },
    });
    expect(store.between(3000, 4000)).toEqual({});
  });

  it(`drops nodes with no report in keepMs, and the least recent past maxNodes (default ${LOAD_MAX_NODES})`, () => {
    const store = new LoadReportStore({ keepMs: 1000, maxNodes: 3 });
    store.record('a', [report('c', 1)], 0);
    store.record('b', [report('c', 1)], 500);
    store.record('a', [report('c', 1)], 900);
    store.record('c', [report('c', 1)], 1600);
    // b (last at 500) is older than keepMs at 1600; a reported again at 900 and stays.
    expect(store.nodeIds()).toEqual(['a', 'c']);
    store.record('d', [report('c', 1)], 1700);
    store.record('e', [report('c', 1)], 1800);
    expect(store.nodeIds()).toEqual(['c', 'd', 'e']);
    store.prune(1700 + 1000);
    expect(store.nodeIds()).toEqual(['e']);
    expect(new LoadReportStore().between(0, LOAD_KEEP_MS)).toEqual({});
  });
});
