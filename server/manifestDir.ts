import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { ManifestFile } from '@/lib/parse/parseManifests';

/** File names that hold manifests; everything else in a mesh directory (READMEs, scripts) is skipped. */
const MANIFEST_NAME = /\.(ya?ml|json)$/i;

/** Why a manifest path could not be read: a user error, so it carries a message fit to print as is. */
export class ManifestDirError extends Error {
  override readonly name = 'ManifestDirError';

  constructor(
    message: string,
    /** The path as the user gave it (or the file inside it that failed). */
    readonly path: string,
    readonly reason: 'not-found' | 'unreadable' | 'not-a-manifest',
  ) {
    super(message);
  }
}

/**
 * Reads a mesh directory (recursively: `*.yaml`, `*.yml`, `*.json`, skipping dot-directories and
 * node_modules) or a single file into ManifestFiles sorted by path. Each file's `path` is the given
 * path joined with its name inside the directory, so diagnostics point at files the user can open.
 * An empty directory gives an empty list; a missing or unreadable path throws a ManifestDirError.
 */
export async function readManifestDir(dirOrFile: string): Promise<ManifestFile[]> {
  const info = await stat(dirOrFile).catch((e: unknown) => {
    throw fsError(e, dirOrFile);
  });
  if (info.isFile()) {
    // An explicitly named file is read whatever its extension: the user asked for it.
    return [{ path: dirOrFile, content: await readText(dirOrFile) }];
  }
  if (!info.isDirectory()) {
    throw new ManifestDirError(`${dirOrFile} is neither a file nor a directory`, dirOrFile, 'not-a-manifest');
  }
  const relative: string[] = [];
  await collect(dirOrFile, '', relative);
  // Code-unit order, not locale order: the same tree must give the same list on every machine.
  relative.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const files: ManifestFile[] = [];
  for (const rel of relative) {
    const file = path.join(dirOrFile, rel);
    files.push({ path: file, content: await readText(file) });
  }
  return files;
}

async function collect(root: string, rel: string, out: string[]): Promise<void> {
  const dir = path.join(root, rel);
  const entries = await readdir(dir, { withFileTypes: true }).catch((e: unknown) => {
    throw fsError(e, dir);
  });
  for (const entry of entries) {
    const childRel = rel === '' ? entry.name : `${rel}/${entry.name}`;
    if (entry.isDirectory()) {
      if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
      await collect(root, childRel, out);
    } else if (MANIFEST_NAME.test(entry.name) && !entry.name.startsWith('.')) {
      // Symlinked files are followed (readFile does); symlinked directories are not descended into,
      // which rules out cycles without tracking inodes.
      if (entry.isFile() || (entry.isSymbolicLink() && (await isFile(path.join(root, childRel))))) {
        out.push(childRel);
      }
    }
  }
}

async function isFile(file: string): Promise<boolean> {
  try {
    return (await stat(file)).isFile();
  } catch {
    return false; // a dangling symlink is not a manifest
  }
}

async function readText(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (e) {
    throw fsError(e, file);
  }
}

function fsError(e: unknown, file: string): ManifestDirError {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT' || code === 'ENOTDIR') {
    return new ManifestDirError(`${file}: no such file or directory`, file, 'not-found');
  }
  if (code === 'EACCES' || code === 'EPERM') {
    return new ManifestDirError(`${file}: permission denied`, file, 'unreadable');
  }
  if (code === 'EISDIR') return new ManifestDirError(`${file}: is a directory`, file, 'unreadable');
  return new ManifestDirError(`${file}: cannot read (${(e as Error).message})`, file, 'unreadable');
}
