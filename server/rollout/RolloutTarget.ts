/**
 * Where a progressive rollout (RolloutRunner.ts) moves a split: the local mesh's directory
 * (localMeshRolloutTarget.ts) or a cluster (clusterRolloutTarget.ts). The runner reads the split, sets its
 * weights step by step as the user who started the rollout, sends its probes through the target, and
 * reads what proxyless gRPC clients reported of their RPCs (LRS) to judge a step by them.
 */
import type { ApplySummary } from '@/lib/console/applyRecord';
import type { ProbeResult } from '@/lib/console/probeResult';
import type { GrpcRouting, ObjectRef } from '@/lib/rollout/rollout';
import type { LoadTotalsSource } from '@/lib/xds/loadReports';
import type { ProbeRequest } from '../controlPlane/probe';

/** Who a rollout acts as: the signed-in user who started it (the apply history's `user`). */
export interface RolloutActor {
  user: string;
  groups: string[];
}

/** A split entry as it runs: its backend and its weight. */
export interface RunningSplitEntry {
  serviceName: string;
  weight: number;
}

/** See the module comment. Every method answers errors as values; a throw is a failed call all the same. */
export interface RolloutTarget {
  kind: 'local-mesh' | 'cluster';
  /** The split of Target `ref` as it runs, or why it cannot be read. */
  split(ref: ObjectRef): Promise<RunningSplitEntry[] | { error: string }>;
  /** Sets the split's weights (in its order) as `actor`, recorded in the apply history with `rollout`. */
  setWeights(
    ref: ObjectRef,
    weights: readonly number[],
    o: { actor: RolloutActor; rollout: NonNullable<ApplySummary['rollout']> },
  ): Promise<{ historyId?: number; error?: string }>;
  /** Sends one probe through a listener of the mesh (absent: a spec with probes is refused, 422). */
  probe?(req: ProbeRequest): Promise<ProbeResult>;
  /**
   * The load reports of the proxyless gRPC clients connected to this control plane (absent: a spec with
   * a gRPC analysis is refused, 422). In Kubernetes mode, only the clients connected to this replica.
   */
  loadReports?: LoadTotalsSource;
  /** The xDS cluster of each entry of Target `ref`'s split and the gRPC clients that report it, or why none. */
  grpcRouting?(ref: ObjectRef, entries: readonly string[]): Promise<GrpcRouting>;
  /** Which split entry of Target `ref` a pod (its name) belongs to; undefined for none. */
  backendOf?(ref: ObjectRef): Promise<(pod: string) => string | undefined>;
  /**
   * Why rollouts cannot run on this target now (the local mesh is not running; this replica does not
   * hold the Lease), or undefined.
   */
  unavailable?(): string | undefined;
}
