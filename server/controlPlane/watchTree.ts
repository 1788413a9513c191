/**
 * Watches a mesh directory for changes to its files, subdirectories included, the way the manifest
 * reader walks it (dot-directories and node_modules left out).
 *
 * Not `fs.watch(dir, {recursive: true})`: on Linux, Node 20 implements that by watching each file's
 * inode, so once a file is replaced by a rename (an atomic write: our own Apply, git checkout, most
 * editors' saves) later in-place writes to it are never reported, and the control plane silently stops
 * following the directory. A plain watch per directory reports every change of its entries whatever
 * their inode.
 */
import { type FSWatcher, watch } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';

export interface TreeWatcher {
  close(): void;
}

export interface WatchTreeOptions {
  /** At most this many directories are watched (each is one inotify watch); the rest are said once. */
  maxDirs?: number;
  logger?: Pick<Console, 'warn'>;
}

function skipped(name: string): boolean {
  return name.startsWith('.') || name === 'node_modules';
}

/**
 * Calls `onChange(relativePath)` for every change reported under `root` (a file's path relative to
 * root, POSIX separators); new subdirectories are watched as they appear, removed ones let go.
 */
export function watchTree(
  root: string,
  onChange: (file: string) => void,
  options: WatchTreeOptions = {},
): TreeWatcher {
  const maxDirs = options.maxDirs ?? 1000;
  const logger = options.logger ?? console;
  const watchers = new Map<string, FSWatcher>();
  let closed = false;
  let warnedLimit = false;
  let scanning: Promise<void> | undefined;
  let rescan = false;

  const add = (dir: string) => {
    if (closed || watchers.has(dir)) return;
    if (watchers.size >= maxDirs) {
      if (!warnedLimit) logger.warn(`meshdeck: watching only ${maxDirs} directories under ${root}`);
      warnedLimit = true;
      return;
    }
    try {
      const w = watch(dir, (event, name) => {
        const rel = path
          .relative(root, name ? path.join(dir, String(name)) : dir)
          .split(path.sep)
          .join('/');
        // A rename may be a directory coming or going: the set of watched directories follows.
        if (event === 'rename') scheduleScan();
        onChange(rel);
      });
      w.on('error', () => {
        // The directory went away (its parent's rename event rescans) or cannot be watched any more.
        w.close();
        watchers.delete(dir);
      });
      watchers.set(dir, w);
    } catch (e) {
      logger.warn(`meshdeck: cannot watch ${dir}: ${(e as Error).message}`);
    }
  };

  const scan = async () => {
    const seen = new Set<string>();
    const walk = async (dir: string) => {
      if (closed || seen.size >= maxDirs) return;
      seen.add(dir);
      add(dir);
      const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
      for (const e of entries) if (e.isDirectory() && !skipped(e.name)) await walk(path.join(dir, e.name));
    };
    await walk(root);
    for (const [dir, w] of watchers)
      if (!seen.has(dir)) {
        w.close();
        watchers.delete(dir);
      }
  };

  const scheduleScan = () => {
    if (scanning) {
      rescan = true;
      return;
    }
    scanning = scan().finally(() => {
      scanning = undefined;
      if (rescan && !closed) {
        rescan = false;
        scheduleScan();
      }
    });
  };

  add(root);
  scheduleScan();
  return {
    close() {
      closed = true;
      for (const w of watchers.values()) w.close();
      watchers.clear();
    },
  };
}
