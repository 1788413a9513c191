/**
 * Sync from Git in Kubernetes mode: the base branch's mesh objects go to the cluster by the console's own
 * server-side apply (server/kube/clusterApply.ts: a dry-run gate, then field manager `meshdeck`), acting as
 * the sync's identity (the policy's `as`, or the signed-in user for Sync now), so Kubernetes RBAC decides.
 * Unlike a console apply it takes over fields other managers own (Git is the source of truth; Argo CD's
 * server-side sync does the same), and prune deletes only what Meshdeck applied. The check before it is
 * the engine's on Git's objects together with what the cluster holds besides (its Services, Pods and
 * EndpointSlices from the cluster mirror). The sync waits (boundedly) until the mirror shows what it
 * wrote, so the comparison that follows sees the result. A Target's split a progressive rollout is moving
 * is not undone by a sync: such a commit fails with the rollout's name (nothing written), and a split a
 * rollout left is removed when Git has none (server/kube/clusterApply.ts, as for a console apply).
 */
import { compileMesh } from '@/lib/engine/compileMesh';
import { type FileMap, parseFiles } from '@/lib/gitops/manifestObjects';
import { liveSync } from '@/lib/gitops/liveSync';
import { type Diagnostic, normalizeDiagnostics } from '@/lib/model/diagnostic';
import { parseManifests } from '@/lib/parse/parseManifests';
import type { ApplyHistory } from '../console/ApplyHistory';
import { meshDirDoc, readMeshDirContent } from '../console/meshDirFiles';
import { ClusterApply } from '../kube/clusterApply';
import type { ClusterClient } from '../kube/clusterClient';
import type { RolloutOnTarget } from '@/lib/kube/rolloutSplit';
import type { SyncTarget } from './GitAutoSync';

export interface ClusterSyncTargetOptions {
  client: ClusterClient;
  /** The kinds applied (the mesh kinds). */
  kinds: readonly string[];
  /** The cluster mirror's directory (what runs, as files). */
  mirrorDir: string;
  history?: Pick<ApplyHistory, 'record'>;
  /** The console's progressive rollouts (RolloutRunner.list()); absent: none. */
  rollouts?: () => readonly RolloutOnTarget[];
  /** How long to wait for the mirror to show the sync (default 10 s). */
  settleMs?: number;
  logger?: Pick<Console, 'warn'>;
}

/** Where the cluster's own objects sit in the check's file set (no Git path looks like it). */
const CLUSTER_PREFIX = '(cluster)/';

/** See the module comment. */
export function clusterSyncTarget(o: ClusterSyncTargetOptions): SyncTarget {
  const kinds = new Set(o.kinds);
  return {
    kind: 'cluster',
    async errors(files) {
      return clusterCheck(files, (await readMeshDirContent(o.mirrorDir)).files, kinds);
    },
    async apply(files, { prune, actor, commit, trigger }) {
      const before = await readMeshDirContent(o.mirrorDir).then(meshDirDoc, () => undefined);
      const result = await new ClusterApply(o.client, actor).apply(files, {
        force: true,
        prune,
        kinds: o.kinds,
        rollouts: o.rollouts?.() ?? [],
      });
      const written = (action: string) =>
        result.objects.filter((x) => x.done && x.action === action).map((x) => x.ref.key);
      const applied = [...written('create'), ...written('update')];
      const deleted = written('delete');
      const refused = result.objects
        .filter((x) => x.error || x.action === 'error' || x.action === 'conflict')
        .map((x) => `${x.ref.key}: ${x.error ? `${x.error.reason}: ${x.error.message}` : x.action}`);
      const error = result.ok
        ? undefined
        : `${result.applied ? 'some writes failed' : 'the dry-run gate refused the apply (nothing was written)'}: ${refused.join('; ')}`;
      let historyId: number | undefined;
      if (result.applied && o.history && applied.length + deleted.length > 0) {
        try {
          const from = before ?? { files: {}, layout: {} };
          historyId = (
            await o.history.record({
              target: 'cluster',
              at: new Date().toISOString(),
              user: actor.user,
              draft: 'git',
              revision: 0,
              applied: Object.keys(files).filter((f) => from.files[f] !== files[f]),
              deleted: [],
              objects: result.objects.map((x) => ({
                key: x.ref.key,
                action: x.action,
                done: x.done,
                ...(x.error ? { error: `${x.error.reason}: ${x.error.message}` } : {}),
              })),
              force: true,
              ...(prune ? { prune: true } : {}),
              git: { commit, trigger },
              ...(error ? { error } : {}),
              before: from,
              after: { files: { ...files }, layout: {} },
            })
          ).id;
        } catch (e) {
          (o.logger ?? console).warn(
            `meshdeck: the sync from Git was not recorded in the history: ${(e as Error).message}`,
          );
        }
      }
      if (result.applied)
        await settled(o.mirrorDir, files, [...applied, ...deleted], o.kinds, o.settleMs ?? 10_000);
      return {
        applied,
        deleted,
        ...(error ? { error } : {}),
        ...(historyId !== undefined ? { historyId } : {}),
      };
    },
  };
}

/**
 * The engine's errors for Git's files run on this cluster: Git's objects, plus the cluster's objects of
 * other kinds that Git does not define itself (its Services, Pods and EndpointSlices, read from the
 * mirror), so a reference to a Service that only the cluster has resolves. Paths are Git's.
 */
export function clusterCheck(
  gitFiles: FileMap,
  mirrorFiles: FileMap,
  applied: ReadonlySet<string>,
): Diagnostic[] {
  const git = parseFiles(gitFiles);
  const inGit = new Set(git.byKey.keys());
  const mirror = parseFiles(mirrorFiles);
  const entries = Object.entries(gitFiles).map(([path, content]) => ({ path, content }));
  for (const f of mirror.files.values()) {
    const kept = f.objects.filter((x) => !applied.has(x.kind) && !inGit.has(x.key));
    if (kept.length)
      entries.push({ path: CLUSTER_PREFIX + f.path, content: kept.map((x) => x.docText).join('\n---\n') });
  }
  return normalizeDiagnostics(compileMesh(parseManifests(entries)).diagnostics);
}

/** Waits until the mirror shows `keys` as Git has them (or `ms` passed: the comparison will tell). */
async function settled(
  mirrorDir: string,
  files: FileMap,
  keys: string[],
  kinds: readonly string[],
  ms: number,
) {
  if (keys.length === 0) return;
  const want = new Set(keys);
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const now = await readMeshDirContent(mirrorDir).catch(() => undefined);
    if (now) {
      const cmp = liveSync(files, now.files, kinds);
      if (!cmp.entries.some((e) => want.has(e.key) && e.state !== 'synced')) return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
