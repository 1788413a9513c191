/**
 * Keeps a directory holding what the cluster holds, as draft files (lib/kube/clusterDraftFiles.ts): the
 * console's drafts start from it and "Reset" goes back to it, as they do from a mesh directory in the
 * local mode. Written after each informer snapshot (coalesced), only the files whose text changed, each
 * atomically; files of namespaces that are gone are removed. Nothing else in the directory is touched.
 */
import { readdir, rm, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { clusterDraftFiles } from '@/lib/kube/clusterDraftFiles';
import type { KubeObjects } from '@/lib/kube/kubeSnapshot';
import { coalescingRunner } from '@/lib/util/coalescingRunner';
import { readMeshDirContent, writeFileAtomic } from '../console/meshDirFiles';

/** What the mirror reads: the informers' objects, and a signal after each snapshot. */
export interface MirrorSource {
  leanObjects(): KubeObjects;
  on(event: 'snapshot', listener: () => void): unknown;
  off(event: 'snapshot', listener: () => void): unknown;
}

export interface ClusterMirrorOptions {
  /** Quiet period after a snapshot before the files are written; default 1 s. */
  coalesceMs?: number;
  /** Called after a write that changed files, with their paths (written or removed). */
  onWritten?(paths: string[]): void;
  logger?: Pick<Console, 'warn'>;
}

/** See the module comment. */
export class ClusterMirror {
  private written: Map<string, string> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly onSnapshot = () => this.schedule();
  private readonly run = coalescingRunner(() => this.writeOnce());

  constructor(
    readonly dir: string,
    private readonly source: MirrorSource,
    private readonly options: ClusterMirrorOptions = {},
  ) {}

  /** Writes the files now (after any write in progress); resolves when they are on disk. */
  writeNow(): Promise<void> {
    return this.run();
  }

  /** Follows the source's snapshots from now on. */
  start(): void {
    this.source.on('snapshot', this.onSnapshot);
  }

  /** Stops following; a write in progress finishes. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.source.off('snapshot', this.onSnapshot);
    await this.run().catch(() => undefined);
  }

  private schedule(): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.run().catch((e: Error) =>
        (this.options.logger ?? console).warn(
          `meshdeck kube: cannot write the cluster's files to ${this.dir}: ${e.message}`,
        ),
      );
    }, this.options.coalesceMs ?? 1000);
  }

  private async writeOnce(): Promise<void> {
    const files = clusterDraftFiles(this.source.leanObjects());
    // The first write compares with what an earlier run left on disk.
    this.written ??= new Map(
      Object.entries((await readMeshDirContent(this.dir).catch(() => ({ files: {} }))).files),
    );
    const changed: string[] = [];
    for (const [rel, text] of Object.entries(files)) {
      if (this.written.get(rel) === text) continue;
      await writeFileAtomic(path.join(this.dir, ...rel.split('/')), text);
      this.written.set(rel, text);
      changed.push(rel);
    }
    for (const rel of [...this.written.keys()]) {
      if (rel in files) continue;
      await rm(path.join(this.dir, ...rel.split('/')), { force: true });
      this.written.delete(rel);
      changed.push(rel);
      await removeIfEmpty(path.dirname(path.join(this.dir, ...rel.split('/'))), this.dir);
    }
    if (changed.length > 0) this.options.onWritten?.(changed);
  }
}

async function removeIfEmpty(folder: string, root: string): Promise<void> {
  if (folder === root || !folder.startsWith(root + path.sep)) return;
  const left = await readdir(folder).catch(() => ['?']);
  if (left.length === 0) await rmdir(folder).catch(() => undefined);
}
