/**
 * The console's view of a mesh directory: the manifest files a draft holds (relative POSIX paths ->
 * text), the layout file beside them, and the content hash that tells whether the directory changed
 * under a draft. Only "managed" paths are ever read into a draft, written or deleted, so files the
 * control plane does not read (dot-directories, node_modules, other extensions) are never touched.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open, readFile, realpath, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { type DraftDoc, DraftPath, LAYOUT_FILE, NodePosition } from '@/lib/console/draftDoc';
import { z } from 'zod';
import { readManifestDir } from '../manifestDir';

/** At most this many manifest files in a draft (a mesh of thousands of objects fits in far fewer). */
export const MAX_DRAFT_FILES = 5000;
/** At most this many bytes of text in a draft, all files together. */
export const MAX_DRAFT_BYTES = 50_000_000;

/** Why a draft file path cannot be a manifest of the mesh directory, or undefined if it can. */
export function managedPathProblem(p: string): string | undefined {
  const parsed = DraftPath.safeParse(p);
  if (!parsed.success) return parsed.error.issues[0]?.message ?? 'not a valid path';
  if (/[\u0000-\u001f]/.test(p)) return 'must not contain control characters';
  for (const segment of p.split('/')) {
    if (segment === '') return 'must not contain empty path segments (//)';
    // The control plane skips these (server/manifestDir.ts): a file there would never take effect.
    if (segment.startsWith('.')) return `"${segment}": names starting with a dot are not read as manifests`;
    if (segment === 'node_modules') return 'node_modules is not read as manifests';
  }
  return undefined;
}

/** What a mesh directory holds for the console. */
export interface MeshDirContent {
  /** Managed manifest files: relative POSIX path -> text. */
  files: Record<string, string>;
  /** The layout file's text, when there is one. */
  layoutText?: string;
}

/** Reads the managed manifest files and the layout file of a mesh directory. */
export async function readMeshDirContent(meshDir: string): Promise<MeshDirContent> {
  const files: Record<string, string> = {};
  for (const f of await readManifestDir(meshDir)) {
    const rel = path.relative(meshDir, f.path).split(path.sep).join('/');
    if (managedPathProblem(rel) === undefined) files[rel] = f.content;
  }
  const layoutText = await readFile(path.join(meshDir, LAYOUT_FILE), 'utf8').catch(
    (e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return undefined;
      throw new Error(`${path.join(meshDir, LAYOUT_FILE)}: cannot read (${e.message})`);
    },
  );
  return layoutText === undefined ? { files } : { files, layoutText };
}

/** sha256 over the sorted (path, content) pairs of the manifests and the layout file. */
export function meshDirHash(content: MeshDirContent): string {
  const entries = Object.entries(content.files);
  if (content.layoutText !== undefined) entries.push([LAYOUT_FILE, content.layoutText]);
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash('sha256').update(JSON.stringify(entries)).digest('hex');
}

const Layout = z.record(z.string(), NodePosition);

/** The positions in a layout file's text; a broken file gives no positions and says why. */
export function parseLayout(text: string | undefined): {
  layout: Record<string, NodePosition>;
  problem?: string;
} {
  if (text === undefined) return { layout: {} };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    return { layout: {}, problem: `${LAYOUT_FILE} is not JSON (${(e as Error).message})` };
  }
  const parsed = Layout.safeParse(raw);
  if (!parsed.success) return { layout: {}, problem: `${LAYOUT_FILE} is not a map of node id -> {x, y}` };
  return { layout: parsed.data };
}

/** A mesh directory's content as a draft holds it: the files, and the layout file's positions. */
export function meshDirDoc(content: MeshDirContent): DraftDoc {
  return { files: content.files, layout: parseLayout(content.layoutText).layout };
}

/** The layout file's text (moved to lib/console/draftDoc.ts: the console diffs it too). */
export { formatLayout } from '@/lib/console/draftDoc';

/**
 * Writes a file atomically: a temp file beside it (written and flushed), then a rename over the
 * target, so a crash leaves either the old or the new content, never half a file.
 */
export async function writeFileAtomic(file: string, content: string, mode = 0o644): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await open(tmp, 'wx', mode);
  try {
    await handle.writeFile(content, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(tmp, file);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
}

/**
 * The absolute path of a managed file inside the mesh directory, after checking that its folder,
 * with symlinks resolved, is still inside the (resolved) mesh directory: a draft can never write or
 * delete anything outside it. Creates missing folders when `create` is set.
 */
export async function resolveInsideMeshDir(meshDir: string, rel: string, create: boolean): Promise<string> {
  const problem = managedPathProblem(rel);
  if (problem) throw new Error(`${rel}: ${problem}`);
  const root = await realpath(meshDir);
  const inside = (p: string) => p === root || p.startsWith(root + path.sep);
  const target = path.join(root, ...rel.split('/'));
  const parent = path.dirname(target);
  // The deepest folder that exists is checked before anything is created below it: mkdir must not
  // follow a symlinked folder out of the mesh directory. The walk is bounded by the path's depth.
  let existing = parent;
  for (let i = 0; i <= rel.split('/').length && !(await exists(existing)); i++)
    existing = path.dirname(existing);
  if (!inside(await realpath(existing)))
    throw new Error(`${rel}: its folder leads outside the mesh directory (through a symlink)`);
  if (create) await mkdir(parent, { recursive: true });
  const realParent = await realpath(parent);
  if (!inside(realParent))
    throw new Error(`${rel}: its folder leads outside the mesh directory (through a symlink)`);
  return path.join(realParent, path.basename(target));
}

async function exists(p: string): Promise<boolean> {
  try {
    await stat(p);
    return true;
  } catch {
    return false;
  }
}
