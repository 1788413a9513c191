/**
 * Where a progressive rollout (RolloutRunner.ts) moves a split: the local mesh's directory
 * (localMeshRolloutTarget.ts) or a cluster (clusterRolloutTarget.ts). The runner reads the split, sets its
 * weights step by step as the user who started the rollout, and sends its probes through the target.
 */
import type { ApplySummary } from '@/lib/console/applyRecord';
import type { ProbeResult } from '@/lib/console/probeResult';
import type { ObjectRef } from '@/lib/rollout/rollout';
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
  /** Which split entry of Target `ref` a pod (its name) belongs to; undefined for none. */
  backendOf?(ref: ObjectRef): Promise<(pod: string) => string | undefined>;
  /**
   * Why rollouts cannot run on this target now (the local mesh is not running; this replica does not
   * hold the Lease), or undefined.
   */
  unavailable?(): string | undefined;
}
