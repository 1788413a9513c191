/**
 * Sync from Git on the local mesh: Git's mesh directory is written into the directory the local mesh
 * runs, as Apply writes a draft (server/console/applyDraft.ts: the same checks, the same apply lock, the
 * same reload and wait for the proxies, the same apply history), so a sync can be read and rolled back
 * like any apply. Files are the unit: a file Git has is written as Git has it (an object added to it
 * outside Git goes with it), and prune decides only for the files Git does not have (without it they
 * stay, and so do their objects). The layout file is written when Git has one and never deleted.
 */
import path from 'node:path';
import { realpath } from 'node:fs/promises';
import type { ApplyRecord } from '@/lib/console/applyRecord';
import { LAYOUT_FILE } from '@/lib/console/draftDoc';
import type { ApplyHistory } from '../console/ApplyHistory';
import {
  type ApplyControlPlane,
  appliedProxies,
  draftDiagnostics,
  reloadAndWait,
  writeMeshDirFiles,
} from '../console/applyDraft';
import type { DraftStore } from '../console/DraftStore';
import { meshDirDoc, parseLayout, readMeshDirContent, writeFileAtomic } from '../console/meshDirFiles';
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
        const meshDir = o.drafts.meshDir;
        const disk = await readMeshDirContent(meshDir);
        const done = { applied: [] as string[], deleted: [] as string[] };
        const record = async (extra: Pick<ApplyRecord, 'error' | 'writeFailed' | 'proxies' | 'timedOut'>) => {
          if (!o.history || done.applied.length + done.deleted.length === 0) return undefined;
          try {
            const now = await readMeshDirContent(meshDir);
            const r = await o.history.record({
              target: 'local-mesh',
              at: new Date().toISOString(),
              user: actor.user,
              draft: 'git',
              revision: 0,
              applied: done.applied,
              deleted: done.deleted,
              git: { commit, trigger },
              ...extra,
              before: { files: disk.files, layout: parseLayout(disk.layoutText).layout },
              after: meshDirDoc(now),
            });
            return r.id;
          } catch (e) {
            (o.logger ?? console).warn(
              `meshdeck: the sync from Git was not recorded in the history: ${(e as Error).message}`,
            );
            return undefined;
          }
        };
        try {
          await writeMeshDirFiles(meshDir, disk.files, manifests(files), done, () => !prune);
          const layout = files[LAYOUT_FILE];
          if (layout !== undefined && layout !== disk.layoutText) {
            await writeFileAtomic(path.join(await realpath(meshDir), LAYOUT_FILE), layout);
            done.applied.push(LAYOUT_FILE);
          }
        } catch (e) {
          const error = `writing the mesh directory failed: ${(e as Error).message}; the files listed were changed`;
          const historyId = await record({ error, writeFailed: true });
          return { ...done, error, ...(historyId !== undefined ? { historyId } : {}) };
        }
        if (done.applied.length + done.deleted.length === 0) return done;
        const pushed = await reloadAndWait(cp, o.idleTimeoutMs ?? 20_000);
        if ('error' in pushed) {
          const historyId = await record({ error: pushed.error });
          return { ...done, error: pushed.error, ...(historyId !== undefined ? { historyId } : {}) };
        }
        const historyId = await record({
          proxies: appliedProxies(pushed.proxies),
          ...(pushed.timedOut ? { timedOut: true } : {}),
        });
        return { ...done, ...(historyId !== undefined ? { historyId } : {}) };
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
