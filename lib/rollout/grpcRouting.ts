/**
 * Where proxyless gRPC clients report a Target's split, for a rollout judged by their load reports
 * (LRS): each split entry is an xDS cluster of its own (`splitClusterName`), and only clients whose
 * rendered routes lead to the Target report them. Pure: read from the resolved mesh and renderXds.
 */
import type { ResolvedMesh } from '../engine/resolvedMesh';
import { renderXdsProxy, splitClusterName } from '../xds/renderXds';
import type { GrpcRouting, ObjectRef } from './rollout';

/**
 * The xDS cluster of each entry of Target `ref`'s split (`entries`, its serviceNames in order) and the
 * proxyless gRPC clients (`role: grpc`) that carry one of them, or why a gRPC analysis cannot judge it.
 */
export function grpcRouting(mesh: ResolvedMesh, ref: ObjectRef, entries: readonly string[]): GrpcRouting {
  const name = `Target ${ref.namespace}/${ref.name}`;
  const target = Object.values(mesh.targets).find(
    (t) =>
      t.origin === 'named' && t.ref.name === ref.name && (t.ref.namespace ?? 'default') === ref.namespace,
  );
  if (!target?.split)
    return { error: `${name} has no split the proxyless gRPC clients see, so none of them report it` };
  // The resolver keeps the split's order: entry i is share i.
  const clusters = entries.map((_, i) => {
    const share = target.split![i];
    return share ? splitClusterName(target.id, share.virtualService) : '';
  });
  const wanted = new Set(clusters.filter(Boolean));
  const clients: string[] = [];
  for (const [id, proxy] of Object.entries(mesh.proxies)) {
    if (proxy.role !== 'grpc') continue;
    // An entry at weight 0 is not rendered: any of the split's clusters shows the client routes here.
    const { snapshot } = renderXdsProxy(mesh, id);
    if (snapshot.clusters.some((c) => wanted.has(c.name))) clients.push(id);
  }
  if (clients.length === 0)
    return {
      error: `no proxyless gRPC client (a pod labelled msm.l7mp.io/proxy: grpc) routes to ${name}: its xDS clusters are rendered for none, so no load reports can judge the canary`,
    };
  return { clusters, clients: clients.sort() };
}
