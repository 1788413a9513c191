import { describe, expect, it } from 'vitest';
import { type ClusterLoadReport, LOAD_WINDOW_MS } from '@/lib/xds/loadReports';
import { AdsServer } from '../xds/AdsServer';
import { SnapshotCache } from '../xds/SnapshotCache';
import { LiveStateStore, type LiveEvent, type ProxyLiveState } from './liveState';
import { LoadLiveFeed } from './loadLiveState';

function entry(id: string, role: string): ProxyLiveState {
  return {
    id,
    pod: id,
    role,
    address: '127.0.0.1',
    reachable: null,
    inSync: false,
    phase: 'not-connected',
    attempts: 0,
    listeners: [],
    routes: [],
    clusters: [],
    sessions: { available: false, reason: 'test' },
    counters: { pushes: 0, pushFailures: 0, operations: 0, restarts: 0, sessions: 0 },
  };
}

const report = (issued: number): ClusterLoadReport[] => [
  { cluster: 'c', issued, succeeded: issued - 1, failed: 1, inProgress: 0, dropped: 0, intervalMs: 1000 },
];

describe('LoadLiveFeed', () => {
  // The AdsServer is real but does not listen: its 'load' event is what a client's report becomes.
  const setup = () => {
    const live = new LiveStateStore('test');
    live.setMesh({
      proxies: { 'ns/grpc': entry('ns/grpc', 'grpc'), 'ns/l7mp': entry('ns/l7mp', 'sidecar') },
      services: {},
      diagnostics: [],
    });
    let now = 100_000;
    const feed = new LoadLiveFeed(live, { now: () => now, flushMs: 60_000 });
    const cache = new SnapshotCache();
    const server = new AdsServer({ cache, logger: { warn: () => {} } });
    feed.attach(server);
    const loadEvents: (ProxyLiveState['load'] | 'absent')[] = [];
    live.on('event', (e: LiveEvent) => {
      if (e.type === 'proxy' && e.proxy.id === 'ns/grpc') loadEvents.push(e.proxy.load ?? 'absent');
    });
    return { live, feed, server, cache, loadEvents, tick: (ms: number) => (now += ms), at: () => now };
  };

  it("patches a gRPC client's load once per flush, and once more when its window goes silent", () => {
    const { live, feed, server, cache, loadEvents, tick, at } = setup();
    try {
      server.emit('load', 'ns/grpc', report(10), at());
      server.emit('load', 'ns/grpc', report(10), at());
      // An l7mp proxy has no load reports to show, whatever arrives in its name.
      server.emit('load', 'ns/l7mp', report(10), at());
      expect(loadEvents).toEqual([]);
      feed.flush();
      const load = live.get().proxies['ns/grpc']!.load!;
      expect(load.clusters).toMatchObject([{ cluster: 'c', issued: 20, succeeded: 18, failed: 2 }]);
      expect(load.successPercent).toBe(90);
      expect(live.get().proxies['ns/l7mp']!.load).toBeUndefined();
      expect(feed.get('ns/grpc')).toEqual(load);
      expect(loadEvents).toHaveLength(1);

      // No new report: the view stands until the window is silent, then goes, once.
      tick(LOAD_WINDOW_MS - 1);
      feed.flush();
      expect(loadEvents).toHaveLength(1);
      tick(1);
      feed.flush();
      feed.flush();
      expect(loadEvents).toEqual([load, 'absent']);
      expect(live.get().proxies['ns/grpc']!.load).toBeUndefined();
      expect(feed.get('ns/grpc')).toBeUndefined();
      // The store keeps the history for windows that ended (a rollout's analysis).
      expect(feed.store.between(0, at())).toEqual({
        c: { issued: 30, succeeded: 27, failed: 3, dropped: 0 },
      });
    } finally {
      feed.stop();
      cache.close();
    }
  });

  it('stop() ends the timer and stops listening', () => {
    const { feed, server, cache, at } = setup();
    feed.stop();
    server.emit('load', 'ns/grpc', report(1), at());
    expect(feed.store.nodeIds()).toEqual([]);
    expect(server.listenerCount('load')).toBe(0);
    cache.close();
  });
});
