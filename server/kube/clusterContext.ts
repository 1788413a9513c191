/**
 * The cluster the console applies to (issue 7 §4): Meshdeck's own kubeconfig, set by
 * `meshdeck serve --kubeconfig PATH`. Route handlers are bundled apart from the server that sets it, so
 * they meet on globalThis, as with the console context.
 */
import type { ClusterClient } from './clusterClient';
import { processSlot } from '../processSlot';

export interface ClusterContext {
  /** Requests as Meshdeck's identity; each carries the console user's impersonation headers. */
  client: ClusterClient;
  /** Where the kubeconfig came from, for messages. */
  kubeconfigPath?: string;
  /**
   * The kinds the console applies (default DEFAULT_APPLY_KINDS). Kubernetes mode applies the mesh kinds
   * only: its drafts hold the cluster's own Services read back, which Meshdeck must not take over. Set
   * only there, where the mesh directory mirrors the cluster, so these kinds also say which objects
   * count as "changed in the cluster since the draft started" (lib/console/clusterDrift.ts).
   */
  applyKinds?: readonly string[];
}

const slot = processSlot<ClusterContext>('cluster');

/** The cluster connection of this process, if one is configured. */
export function getClusterContext(): ClusterContext | undefined {
  return slot.get();
}

/** Installs (or removes) the cluster connection of this process. */
export function setClusterContext(ctx: ClusterContext | undefined): void {
  slot.set(ctx);
}
