/**
 * Progressive rollouts in Kubernetes mode: the split is read from the cluster mirror (what the informers
 * hold, as files: server/kube/clusterMirror.ts), and each step is a server-side apply of the Target's
 * `spec.split` alone, as the user who started the rollout (impersonated, so Kubernetes RBAC decides:
 * `patch` on targets.msm.l7mp.io), under a field manager of its own. Each write is an apply history record
 * and waits (boundedly) until the mirror shows it, so the next read and the console see it. Probes are
 * sent on the console's host only, so this target has none (RolloutRunner refuses a spec with probes):
 * steps are judged by a webhook, or by the load reports of proxyless gRPC clients. Those are the reports
 * of the clients connected to this replica's ADS server only: a client reports to the replica it streams
 * ADS from, so with several replicas behind one Service the analysis sees the leader's share of the
 * clients (no aggregation across replicas). Rollouts run on the replica that holds the Lease.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { stringify } from 'yaml';
import type { DraftDoc } from '@/lib/console/draftDoc';
import type { ResolvedMesh } from '@/lib/engine/resolvedMesh';
import { MESH_FILE } from '@/lib/kube/clusterDraftFiles';
import { ROLLOUT_FIELD_MANAGER } from '@/lib/kube/rolloutSplit';
import { MSM_API_VERSION } from '@/lib/model/common';
import { grpcRouting } from '@/lib/rollout/grpcRouting';
import type { ObjectRef } from '@/lib/rollout/rollout';
import type { LoadTotalsSource } from '@/lib/xds/loadReports';
import { setSplitWeights, splitInFiles } from '@/lib/rollout/splitInFiles';
import type { ApplyHistory } from '../console/ApplyHistory';
import { meshDirDoc, readMeshDirContent } from '../console/meshDirFiles';
import { ClusterApply } from '../kube/clusterApply';
import type { ClusterClient } from '../kube/clusterClient';
import type { RolloutTarget } from './RolloutTarget';

/**
 * The field manager of a rollout's writes (`meshdeck-rollout`, not the console's `meshdeck`; see
 * lib/kube/rolloutSplit.ts). A later console apply of a draft that changes the split meets a conflict it
 * shows, and may force, once the rollout has ended; while it runs the apply is refused, and a draft
 * without a split has the rollout's ownership released (server/kube/clusterApply.ts).
 */
export { ROLLOUT_FIELD_MANAGER };

/** Why a replica that does not hold the Lease runs no rollout. */
export const NOT_LEADER = 'rollouts run on the replica that holds the Lease (leader election)';

/** A Kubernetes namespace name (an RFC 1123 label): it becomes a directory of the mirror. */
const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
/** How often the mirror is read while a write settles. */
const SETTLE_POLL_MS = 100;

export interface ClusterRolloutTargetOptions {
  client: ClusterClient;
  /** The cluster mirror's directory (what runs, as files). */
  mirrorDir: string;
  /** Whether this replica holds the Lease now. */
  leading: () => boolean;
  history?: Pick<ApplyHistory, 'record'>;
  /**
   * The load reports this replica's ADS server receives from proxyless gRPC clients (only those connected
   * to it); absent: a spec with a gRPC analysis is refused.
   */
  loadReports?: LoadTotalsSource;
  /** The mesh the controller resolved from the cluster (which gRPC clients route to a Target). */
  mesh?: () => ResolvedMesh | undefined;
  /** How long a write waits for the mirror to show it (default 10 s). */
  settleMs?: number;
  logger?: Pick<Console, 'warn'>;
}

/** See the module comment. */
export function clusterRolloutTarget(o: ClusterRolloutTargetOptions): RolloutTarget {
  const settleMs = o.settleMs ?? 10_000;
  return {
    kind: 'cluster',
    unavailable: () => (o.leading() ? undefined : NOT_LEADER),
    async split(ref) {
      const file = mirrorFile(ref);
      if ('error' in file) return file;
      const found = splitInFiles(await readMirrorFile(o.mirrorDir, file.rel), ref);
      return 'error' in found ? found : found.entries;
    },
    async setWeights(ref, weights, { actor, rollout }) {
      // The runner checks too; a step already under way when the Lease is lost must not write either.
      if (!o.leading()) return { error: NOT_LEADER };
      const file = mirrorFile(ref);
      if ('error' in file) return file;
      const name = `Target ${ref.namespace}/${ref.name}`;
      const before: DraftDoc = await readMeshDirContent(o.mirrorDir).then(meshDirDoc, async () => ({
        files: await readMirrorFile(o.mirrorDir, file.rel),
        layout: {},
      }));
      const edited = setSplitWeights(before.files, ref, weights);
      if ('error' in edited) return edited;
      const found = splitInFiles(before.files, ref);
      if ('error' in found) return found;
      const partial = {
        apiVersion: MSM_API_VERSION,
        kind: 'Target',
        metadata: { name: ref.name, namespace: ref.namespace },
        spec: { split: found.entries.map((e, i) => ({ serviceName: e.serviceName, weight: weights[i]! })) },
      };
      const result = await new ClusterApply(o.client, actor).apply(
        { [`rollout-${ref.namespace}-${ref.name}.yaml`]: stringify(partial) },
        { force: true, kinds: ['Target'], partial: { fieldManager: ROLLOUT_FIELD_MANAGER } },
      );
      const target = result.objects.find((x) => x.ref.kind === 'Target');
      if (!result.ok || !target?.done) {
        const why = target?.error
          ? `${target.error.reason}: ${target.error.message}`
          : (target?.action ?? 'nothing was sent');
        return { error: `the API server refused the split of ${name}: ${why}` };
      }
      if (!(await mirrorShows(o.mirrorDir, file.rel, ref, weights, settleMs)))
        (o.logger ?? console).warn(
          `meshdeck: the cluster mirror did not show the new weights of ${name} within ${settleMs} ms`,
        );
      // Resuming a step whose weights run already writes nothing new: no record, as on the local mesh.
      if (target.action !== 'update' || !o.history) return {};
      try {
        const rec = await o.history.record({
          target: 'cluster',
          at: new Date().toISOString(),
          user: actor.user,
          draft: 'rollout',
          revision: 0,
          applied: [edited.file],
          deleted: [],
          objects: [{ key: target.ref.key, action: target.action, done: true }],
          force: true,
          rollout,
          before,
          // What this write changed, not a second read of the mirror: another writer's change arriving
          // meanwhile is not this step's, and the step's record is a one-line diff as on the local mesh.
          after: { files: { ...before.files, [edited.file]: edited.text }, layout: before.layout },
        });
        return { historyId: rec.id };
      } catch (e) {
        (o.logger ?? console).warn(
          `meshdeck: the rollout ${rollout.id} was not recorded in the history: ${(e as Error).message}`,
        );
        return {};
      }
    },
    // No probe and no backendOf: probes are sent on the console's host only (the local mesh's loopback).
    ...(o.loadReports && o.mesh
      ? {
          loadReports: o.loadReports,
          grpcRouting: async (ref: ObjectRef, entries: readonly string[]) => {
            const mesh = o.mesh?.();
            return mesh
              ? grpcRouting(mesh, ref, entries)
              : { error: "the controller has not resolved the cluster's mesh yet; try again shortly" };
          },
        }
      : {}),
  };
}

/** The mirror file holding `ref`'s namespace's mesh resources, or why `ref` names none. */
function mirrorFile(ref: ObjectRef): { rel: string } | { error: string } {
  if (!NAMESPACE.test(ref.namespace))
    return { error: `${JSON.stringify(ref.namespace)} is not a Kubernetes namespace name` };
  return { rel: `${ref.namespace}/${MESH_FILE}` };
}

/** One mirror file as a file map (empty when the namespace has no mesh resources). */
async function readMirrorFile(mirrorDir: string, rel: string): Promise<Record<string, string>> {
  try {
    return { [rel]: await readFile(path.join(mirrorDir, rel), 'utf8') };
  } catch {
    return {};
  }
}

/** Waits until the mirror has `ref`'s split at `weights`; false when it has not within `ms`. */
async function mirrorShows(
  mirrorDir: string,
  rel: string,
  ref: ObjectRef,
  weights: readonly number[],
  ms: number,
): Promise<boolean> {
  const end = Date.now() + ms;
  for (let i = 0; i <= Math.ceil(ms / SETTLE_POLL_MS); i++) {
    const found = splitInFiles(await readMirrorFile(mirrorDir, rel), ref);
    if (
      !('error' in found) &&
      found.entries.length === weights.length &&
      found.entries.every((e, j) => e.weight === weights[j])
    )
      return true;
    if (Date.now() >= end) return false;
    await new Promise((r) => setTimeout(r, SETTLE_POLL_MS));
  }
  return false;
}
