/**
 * The ADS server in its own process (note pitfall 9), driven over IPC by tests and benches.
 * Start with `fork(thisFile, [], {execArgv: ['--import', 'tsx']})` (see `forkAdsServer`).
 *
 * Requests {id, op, ...} get {id, ok, result | error}:
 * - listen {options: ListenOptions, metrics?} -> port (re-listens on the same port after `stop`); with
 *   `metrics: true` the server reports to a MeshMetrics sink, as `meshdeck serve`'s does (benches: its cost)
 * - set {nodeId, snapshot} -> per-type versions (or the refusal's message)
 * - setMany {nodeIds, snapshot} -> count (the same snapshot for many nodes; benches)
 * - flush -> null
 * - status -> ProxyStatus[]
 * - stop -> null (closes streams and the server, keeps the cache)
 * - rss -> process.memoryUsage().rss
 * - meshInit {clients} -> {nodeIds, subscriptions}: examples/grpc-canary with `clients` proxyless
 *   client replicas (grpcCanaryReplicas.ts) in a MeshEngine, published into the cache by the control
 *   plane's MeshXdsPublisher; what each client subscribes to, from its snapshot
 * - meshMove {round} -> null: an endpoint change (the v2 backend's EndpointSlice, its Pod moved) through
 *   MeshEngine.setServiceEndpointSlices and the publisher: the control plane's path to the push
 * - track -> null: follows the server's stream statuses with the XdsStreamTracker the console and
 *   Kubernetes mode use (benches: live sync state's cost on the push path)
 * Status changes are also pushed as {event: 'status', status} when `watch` was requested.
 */
import { AdsServer, type ListenOptions } from '../AdsServer';
import { MeshMetrics } from '../../metrics/MeshMetrics';
import { deepFreeze, SnapshotCache, type SnapshotInput } from '../SnapshotCache';
import { adsServiceDefinition, envoyRoot } from '../envoyProtos';
import { XdsStreamTracker } from '../../controlPlane/xdsStreamTracker';
import { MeshEngine } from '@/lib/engine/meshEngine';
import { parseManifests } from '@/lib/parse/parseManifests';
import { MeshXdsPublisher } from '../meshXds';
import { TypeUrls } from '../envoyProtos';
import {
  grpcCanaryReplicaFiles,
  movedBackendSlice,
  MOVED_SERVICE,
  replicaNodeIds,
} from './grpcCanaryReplicas';

type Req =
  | {
      id: number;
      op: 'listen';
      options: ListenOptions & { tls?: { key: string; cert: string; ca: string } };
      metrics?: boolean;
    }
  | { id: number; op: 'set'; nodeId: string; snapshot: SnapshotInput }
  | { id: number; op: 'setMany'; nodeIds: string[]; snapshot: SnapshotInput }
  | { id: number; op: 'meshInit'; clients: number }
  | { id: number; op: 'meshMove'; round: number }
  | { id: number; op: 'flush' | 'status' | 'stop' | 'rss' | 'watch' | 'track' };

const cache = new SnapshotCache();
let server: AdsServer | undefined;
let lastPort = 0;
let watching = false;
let mesh: { engine: MeshEngine; publisher: MeshXdsPublisher } | undefined;

function send(msg: unknown) {
  process.send?.(msg);
}

async function handle(req: Req): Promise<unknown> {
  switch (req.op) {
    case 'listen': {
      server = new AdsServer({
        cache,
        logger: { warn: () => {} },
        ...(req.metrics ? { metrics: new MeshMetrics({ version: 'bench', mode: 'local' }).ads } : {}),
      });
      // Only listen when asked: computing a status for every send/ACK costs CPU at thousands of streams.
      if (watching) server.on('status', (status) => send({ event: 'status', status }));
      lastPort = await server.listen({
        ...req.options,
        port: req.options.port ?? (lastPort || 0),
      } as ListenOptions);
      return lastPort;
    }
    case 'set':
      return cache.setSnapshot(req.nodeId, req.snapshot);
    case 'setMany': {
      // One shared, frozen input: content hashes are computed once, not once per node.
      const snapshot = deepFreeze(req.snapshot);
      for (const n of req.nodeIds) cache.setSnapshot(n, snapshot);
      return req.nodeIds.length;
    }
    case 'meshInit': {
      const engine = new MeshEngine(parseManifests(grpcCanaryReplicaFiles(req.clients)));
      mesh = { engine, publisher: new MeshXdsPublisher(cache) };
      mesh.publisher.publish(engine.current.mesh);
      cache.flush();
      const nodeIds = replicaNodeIds(req.clients);
      const snap = mesh.publisher.last!.snapshots[nodeIds[0]!]!;
      const rds = (l: unknown) => JSON.stringify(l).match(/"route_config_name":"([^"]+)"/)?.[1] ?? '';
      return {
        nodeIds,
        subscriptions: [
          [TypeUrls.listener, snap.listeners.map((l) => l.name)],
          [TypeUrls.route, snap.listeners.map(rds).filter(Boolean)],
          [TypeUrls.cluster, []],
          [TypeUrls.endpoint, snap.endpoints.map((e) => e.cluster_name)],
        ],
      };
    }
    case 'meshMove':
      if (!mesh) throw new Error('meshMove: meshInit first');
      // As ControlPlane does on an EndpointSlice event: the engine's update, then the xDS publish.
      mesh.engine.setServiceEndpointSlices('default', MOVED_SERVICE, [movedBackendSlice(req.round)]);
      mesh.publisher.publish(mesh.engine.current.mesh, (p) => p.role === 'grpc');
      return null;
    case 'flush':
      cache.flush();
      return null;
    case 'status':
      return server?.proxyStatus() ?? [];
    case 'watch':
      watching = true;
      return null;
    case 'track':
      if (!server) throw new Error('track: listen first');
      new XdsStreamTracker(
        () => {},
        () => true,
      ).attach(server);
      return null;
    case 'stop':
      await server?.stop();
      server = undefined;
      return null;
    case 'rss':
      return process.memoryUsage().rss;
  }
}

process.on('message', (req: Req) => {
  handle(req).then(
    (result) => send({ id: req.id, ok: true, result }),
    (e: Error) => send({ id: req.id, ok: false, error: e.message }),
  );
});
process.on('disconnect', () => process.exit(0));
process.on('SIGTERM', () => process.exit(0));

// Load the protos before announcing readiness.
adsServiceDefinition();
envoyRoot();
send({ event: 'ready' });
