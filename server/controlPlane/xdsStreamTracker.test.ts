// XdsStreamTracker over two sources, as Kubernetes mode has them: this replica's ADS server and the
// other replicas' streams (ReplicaPeers). Stream ids repeat across servers; the newest stream of a node
// is the one connected last, wherever it is open.
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { ProxyRecord, ProxyStatus } from '../xds/AdsServer';
import type { ProxyXdsLiveState } from './liveState';
import { XdsStreamTracker } from './xdsStreamTracker';

const NODE = 'default/grpc-client';

function status(
  streamId: number,
  connectedSince: string,
  replica?: string,
): ProxyStatus & { replica?: string } {
  return {
    streamId,
    nodeId: NODE,
    identity: NODE,
    peer: `ipv4:127.0.0.1:${40000 + streamId}`,
    protocol: 'sotw',
    connectedSince,
    types: {},
    status: { LDS: 'SYNCED', RDS: 'NOT SENT', CDS: 'NOT SENT', EDS: 'NOT SENT' },
    ...(replica ? { replica } : {}),
  };
}

function setup() {
  const shown: ProxyXdsLiveState[] = [];
  const tracker = new XdsStreamTracker(
    (_, xds) => shown.push(xds),
    () => true,
  );
  const own = new EventEmitter<{ status: [ProxyStatus]; disconnect: [ProxyRecord] }>();
  const peers = new EventEmitter<{ status: [ProxyStatus]; disconnect: [ProxyRecord] }>();
  return { tracker, shown, own, peers };
}

describe('XdsStreamTracker with streams from several replicas', () => {
  it("shows the stream connected last, and a stream's close at one replica leaves the other's shown", () => {
    const { tracker, own, peers } = setup();
    tracker.attach(own);
    tracker.attach(peers, 'peers');
    own.emit('status', status(7, '2026-11-29T10:00:00.000Z'));
    // The same stream id at another replica, connected later: a different stream, and the newer one.
    peers.emit('status', status(7, '2026-11-29T10:00:05.000Z', 'b'));
    expect(tracker.get(NODE)).toMatchObject({ replica: 'b', connected: true });
    // The older stream (here) reports again: still b's is shown.
    own.emit('status', status(7, '2026-11-29T10:00:00.000Z'));
    expect(tracker.get(NODE)?.replica).toBe('b');
    // b's stream closes: this replica's is open, so the node is connected here.
    peers.emit('disconnect', status(7, '2026-11-29T10:00:05.000Z', 'b'));
    expect(tracker.get(NODE)).toMatchObject({ connected: true, connectedSince: '2026-11-29T10:00:00.000Z' });
    expect(tracker.get(NODE)?.replica).toBeUndefined();
    // A close said by the wrong source is not this stream's.
    peers.emit('disconnect', status(7, '2026-11-29T10:00:00.000Z'));
    expect(tracker.get(NODE)?.connected).toBe(true);
    own.emit('disconnect', status(7, '2026-11-29T10:00:00.000Z'));
    expect(tracker.get(NODE)?.connected).toBe(false);
  });

  it('takes the streams a source had open before it was attached, and forgets a detached source', () => {
    const { tracker, shown, peers } = setup();
    tracker.attach(peers, 'peers', [status(3, '2026-11-29T10:00:00.000Z', 'b')]);
    expect(shown.map((x) => x.replica)).toEqual(['b']);
    tracker.detach(peers);
    peers.emit('status', status(4, '2026-11-29T10:01:00.000Z', 'c'));
    expect(tracker.get(NODE)?.replica).toBe('b');
  });
});
