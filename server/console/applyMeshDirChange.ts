/**
 * A change to the mesh directory the local mesh runs, made by a writer that is not a draft (sync from
 * Git: server/gitops/localMeshSyncTarget.ts; a progressive rollout's step: server/rollout/
 * localMeshRolloutTarget.ts), the way Apply makes one (applyDraft.ts): the files written, the control
 * plane reloaded and waited for, and the apply history's record with the directory before and after, so
 * it can be read as a diff and rolled back like any apply. The caller holds the apply lock.
 */
import path from 'node:path';
import { realpath } from 'node:fs/promises';
import type { ApplyRecord } from '@/lib/console/applyRecord';
import { LAYOUT_FILE } from '@/lib/console/draftDoc';
import type { ApplyHistory } from './ApplyHistory';
import { type ApplyControlPlane, appliedProxies, reloadAndWait, writeMeshDirFiles } from './applyDraft';
import {
  type MeshDirContent,
  meshDirDoc,
  parseLayout,
  readMeshDirContent,
  writeFileAtomic,
} from './meshDirFiles';

/** What to write: the manifests, which of the other files stay, and the layout file's text. */
export interface MeshDirChange {
  /** Manifests to write (mesh-directory-relative path -> text); a file that is the same is left alone. */
  files: Record<string, string>;
  /** Whether a file of the directory that `files` lacks stays (default: it is deleted). */
  keep?: (rel: string) => boolean;
  /** The layout file's text, written when given and different from the directory's. */
  layout?: string;
}

export interface ApplyMeshDirChangeOptions {
  meshDir: string;
  controlPlane: ApplyControlPlane;
  history?: Pick<ApplyHistory, 'record'>;
  /** How long to wait for the proxies after the reload. */
  idleTimeoutMs: number;
  logger?: Pick<Console, 'warn'>;
  /** The change, from what the directory holds now (read under the lock), or why there is none. */
  change(disk: MeshDirContent): MeshDirChange | { error: string };
  /** Who made the change and why, as the history records it. */
  record: Pick<ApplyRecord, 'user' | 'draft' | 'revision' | 'git' | 'rollout'>;
  /** What the change is, for the warning when the history cannot be written ("the sync from Git"). */
  what: string;
}

/** How a change went: the files written and deleted (also when it failed partway), and its record. */
export interface MeshDirChangeResult {
  applied: string[];
  deleted: string[];
  error?: string;
  historyId?: number;
}

/** See the module comment. Throws only when the directory cannot be read before anything is written. */
export async function applyMeshDirChange(o: ApplyMeshDirChangeOptions): Promise<MeshDirChangeResult> {
  const disk = await readMeshDirContent(o.meshDir);
  const done = { applied: [] as string[], deleted: [] as string[] };
  const change = o.change(disk);
  if ('error' in change) return { ...done, error: change.error };
  const record = async (extra: Pick<ApplyRecord, 'error' | 'writeFailed' | 'proxies' | 'timedOut'>) => {
    if (!o.history || done.applied.length + done.deleted.length === 0) return undefined;
    try {
      // Read back: "after" is what the directory holds, also when a write failed partway.
      const now = await readMeshDirContent(o.meshDir);
      const r = await o.history.record({
        target: 'local-mesh',
        at: new Date().toISOString(),
        ...o.record,
        applied: done.applied,
        deleted: done.deleted,
        ...extra,
        before: { files: disk.files, layout: parseLayout(disk.layoutText).layout },
        after: meshDirDoc(now),
      });
      return r.id;
    } catch (e) {
      // What was written stays written: a history that cannot be kept does not make it a failure.
      (o.logger ?? console).warn(
        `meshdeck: ${o.what} was not recorded in the history: ${(e as Error).message}`,
      );
      return undefined;
    }
  };
  const withId = (historyId: number | undefined) => (historyId !== undefined ? { historyId } : {});
  try {
    await writeMeshDirFiles(o.meshDir, disk.files, change.files, done, change.keep);
    if (change.layout !== undefined && change.layout !== disk.layoutText) {
      await writeFileAtomic(path.join(await realpath(o.meshDir), LAYOUT_FILE), change.layout);
      done.applied.push(LAYOUT_FILE);
    }
  } catch (e) {
    const error = `writing the mesh directory failed: ${(e as Error).message}; the files listed were changed`;
    return { ...done, error, ...withId(await record({ error, writeFailed: true })) };
  }
  if (done.applied.length + done.deleted.length === 0) return done;
  const pushed = await reloadAndWait(o.controlPlane, o.idleTimeoutMs);
  if ('error' in pushed)
    return { ...done, error: pushed.error, ...withId(await record({ error: pushed.error })) };
  const historyId = await record({
    proxies: appliedProxies(pushed.proxies),
    ...(pushed.timedOut ? { timedOut: true } : {}),
  });
  return { ...done, ...withId(historyId) };
}
