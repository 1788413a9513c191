/**
 * Which split entry a pod belongs to, as the engine resolved the split (its entries' VirtualServices,
 * user-written or made for a naked Kubernetes Service, and their selected pods), so a probe's echo
 * `<pod>(<payload>)` is counted for its backend. Pure.
 */
import type { ResolvedMesh, ResolvedTarget } from '../engine/resolvedMesh';
import type { ObjectRef } from './rollout';

/**
 * A lookup from a pod's name (or `namespace/name`) to the `serviceName` of the split entry of Target
 * `ref` whose endpoints it serves; `entries` are the split's serviceNames in order (the resolver keeps
 * it). Undefined for a pod of no entry, or when the Target has no resolved split.
 */
export function splitBackends(
  mesh: Pick<ResolvedMesh, 'targets'>,
  ref: ObjectRef,
  entries: readonly string[],
): (pod: string) => string | undefined {
  const target = Object.values(mesh.targets).find(
    (t) =>
      t.origin === 'named' && t.ref.name === ref.name && (t.ref.namespace ?? 'default') === ref.namespace,
  );
  return target ? targetBackends(target, entries, ref.namespace) : () => undefined;
}

/**
 * The same lookup for a resolved Target (named or written inline) in `namespace`, its split's entries
 * named `entries` in order.
 */
export function targetBackends(
  target: Pick<ResolvedTarget, 'split'>,
  entries: readonly string[],
  namespace: string,
): (pod: string) => string | undefined {
  const byPod = new Map<string, string>();
  target.split?.forEach((share, i) => {
    const entry = entries[i];
    if (entry === undefined) return;
    for (const m of share.members) {
      if (!m.pod) continue;
      byPod.set(m.pod, entry);
      // The demo apps answer with the pod's name alone: the Target's own namespace first.
      const name = m.pod.slice(m.pod.indexOf('/') + 1);
      if (!byPod.has(name) || m.pod.startsWith(`${namespace}/`)) byPod.set(name, entry);
    }
  });
  return (pod) => byPod.get(pod);
}
