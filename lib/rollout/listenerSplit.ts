/**
 * The split a listener's traffic reaches, so a traffic test through the listener can be compared with
 * the split's weights: from the listener's VirtualService through its rules' routes (destination,
 * ingress and egress Targets) and on through the listeners of proxy VirtualServices those Targets send
 * to, the one Target with a `split` on the way. None when there is none, or more than one (the answers
 * could not be told apart by split). Pure.
 */
import type { ResolvedMesh, ResolvedTarget, ResolvedVirtualService } from '../engine/resolvedMesh';
import { targetBackends } from './splitBackends';

/** A split a listener reaches: its Target, its entries in order, and which entry a pod serves. */
export interface ListenerSplit {
  /** The Target's name; for a split written inline, its owner's (a VirtualService or a Route). */
  target: { namespace: string; name: string };
  /** The entries' names (the VirtualService's short name in the Target's namespace, else its long name). */
  entries: { name: string; weight: number }[];
  /** The entry (its name) a pod (`name` or `namespace/name`) serves; undefined for none. */
  backendOf: (pod: string) => string | undefined;
}

type Mesh = Pick<ResolvedMesh, 'virtualServices' | 'routes' | 'targets'>;

/**
 * The one split `listener` (a VirtualService's short or long name or its l7mp listener name, as the
 * probe takes it; `proxy` narrows it as the probe's does) leads to, or undefined (see the module comment).
 */
export function splitReachedBy(mesh: Mesh, listener: string, proxy?: string): ListenerSplit | undefined {
  const start = listenerVirtualServices(mesh, listener, proxy);
  // The probe refuses an ambiguous listener; there is nothing to compare with either.
  if (start.length !== 1) return undefined;
  const splits = new Map<string, ResolvedTarget>();
  const seenVs = new Set([start[0]!.longName]);
  const seenTargets = new Set<string>();
  const queue = [start[0]!];
  // Each VirtualService and Target is visited once, so this ends on any mesh, cycles included.
  for (let k = 0; k < queue.length; k++) {
    for (const rule of queue[k]!.rules) {
      const body = 'named' in rule.route ? mesh.routes[rule.route.named]?.body : rule.route.inline;
      if (!body) continue;
      for (const id of [...body.ingress, body.destination, ...body.egress]) {
        if (seenTargets.has(id)) continue;
        seenTargets.add(id);
        const t = mesh.targets[id];
        if (!t) continue;
        // Past a split the answers are already its entries': a split further on is not followed.
        if (t.split) {
          splits.set(t.id, t);
          continue;
        }
        for (const source of t.endpointSources) {
          const next = mesh.virtualServices[source];
          if (next?.listener && !seenVs.has(source)) {
            seenVs.add(source);
            queue.push(next);
          }
        }
      }
    }
  }
  if (splits.size !== 1) return undefined;
  const t = [...splits.values()][0]!;
  const namespace = t.ref.namespace ?? 'default';
  const entries = t.split!.map((share) => {
    const vs = mesh.virtualServices[share.virtualService];
    const name = vs && (vs.ref.namespace ?? 'default') === namespace ? vs.ref.name : share.virtualService;
    return { name, weight: share.weight };
  });
  return {
    target: { namespace, name: t.ref.name },
    entries,
    backendOf: targetBackends(
      t,
      entries.map((e) => e.name),
      namespace,
    ),
  };
}

/** The VirtualServices with a listener that `listener` names, matched as probeListener matches them. */
function listenerVirtualServices(mesh: Mesh, listener: string, proxy?: string): ResolvedVirtualService[] {
  return Object.values(mesh.virtualServices).filter(
    (vs) =>
      vs.listener &&
      (vs.longName === listener || vs.longName.startsWith(`${listener}.`)) &&
      (!proxy || vs.proxies.some((id) => id === proxy || id.slice(id.indexOf('/') + 1) === proxy)),
  );
}
