/**
 * Sync from Git on the local mesh: Git's mesh directory is written into the directory the local mesh
 * runs, as Apply writes a draft (server/console/applyDraft.ts: the same checks, the same apply lock, the
 * same reload and wait for the proxies, the same apply history), so a sync can be read and rolled back
 * like any apply. Files are the unit: a file Git has is written as Git has it (an object added to it
 * outside Git goes with it), and prune decides only for the files Git does not have (without it they
 * stay, and so do their objects). The layout file is written when Git has one and never deleted.
 */
import { LAYOUT_FILE } from '@/lib/console/draftDoc';
import type { ApplyHistory } from '../console/ApplyHistory';
import { type ApplyControlPlane, draftDiagnostics } from '../console/applyDraft';
import { applyMeshDirChange } from '../console/applyMeshDirChange';
import type { DraftStore } from '../console/DraftStore';
import { BUSY, type SyncTarget } from './GitAutoSync';

export interface LocalMeshSyncTargetOptions {
  /** The main draft's store: its mesh directory and the apply lock every draft shares. */
  drafts: Pick<DraftStore, 'meshDir' | 'tryBeginApply'>;
  controlPlane: () => ApplyControlPlane | undefined;
  history?: Pick<ApplyHistory, 'record'>;
  /** How long to wait for the proxies after the reload (default 20 s, as Apply). */
  idleTimeoutMs?: number;
  logger?: Pick<Console, 'warn'>;
}

/** See the module comment. */
export function localMeshSyncTarget(o: LocalMeshSyncTargetOptions): SyncTarget {
  return {
    kind: 'local-mesh',
    errors: (files) => draftDiagnostics(manifests(files)),
    async apply(files, { prune, actor, commit, trigger }) {
      const release = o.drafts.tryBeginApply();
      if (!release) return { applied: [], deleted: [], error: BUSY };
      try {
        const cp = o.controlPlane();
        if (!cp) return { applied: [], deleted: [], error: 'the local mesh is not running in this process' };
        const layout = files[LAYOUT_FILE];
        return await applyMeshDirChange({
          meshDir: o.drafts.meshDir,
          controlPlane: cp,
          ...(o.history ? { history: o.history } : {}),
          idleTimeoutMs: o.idleTimeoutMs ?? 20_000,
          ...(o.logger ? { logger: o.logger } : {}),
          change: () => ({
            files: manifests(files),
            keep: () => !prune,
            ...(layout !== undefined ? { layout } : {}),
          }),
          record: { user: actor.user, draft: 'git', revision: 0, git: { commit, trigger } },
          what: 'the sync from Git',
        });
      } finally {
        release();
      }
    },
  };
}

/** Git's files without the layout file: the manifests the engine reads. */
function manifests(files: Record<string, string>): Record<string, string> {
  const { [LAYOUT_FILE]: _layout, ...rest } = files;
  return rest;
}
