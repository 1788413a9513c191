import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { readMeshDirContent } from './meshDirFiles';

/** A shipped example mesh, for "load an example" in the console. */
export interface ConsoleExample {
  name: string;
  /** The leading comment of its mesh.yaml (or of its first file that has one). */
  description: string;
  /** Relative path -> text, as a draft holds them. */
  files: Record<string, string>;
}

/** Examples listed at most (the repository ships a handful). */
const MAX_EXAMPLES = 100;

/** The example mesh directories under `examplesDir`, sorted by name; a missing directory gives none. */
export async function listExamples(examplesDir: string): Promise<ConsoleExample[]> {
  let entries;
  try {
    entries = await readdir(examplesDir, { withFileTypes: true });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new Error(`${examplesDir}: cannot read the examples (${(e as Error).message})`);
  }
  const names = entries
    .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
    .map((e) => e.name)
    .sort()
    .slice(0, MAX_EXAMPLES);
  const out: ConsoleExample[] = [];
  for (const name of names) {
    const { files } = await readMeshDirContent(path.join(examplesDir, name));
    if (Object.keys(files).length === 0) continue;
    out.push({ name, description: describe(files), files });
  }
  return out;
}

function describe(files: Record<string, string>): string {
  const order = Object.keys(files).sort((a, b) => Number(b === 'mesh.yaml') - Number(a === 'mesh.yaml'));
  for (const p of order) {
    const lines: string[] = [];
    for (const line of files[p]!.split('\n')) {
      const m = /^#\s?(.*)$/.exec(line);
      if (!m) break;
      lines.push(m[1]!.trim());
    }
    const text = lines.join(' ').trim();
    if (text) return text;
  }
  return '';
}
