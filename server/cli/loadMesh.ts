import { type CompiledMesh, compileMesh } from '@/lib/engine/compileMesh';
import { parseManifests } from '@/lib/parse/parseManifests';
import { readManifestDir } from '../manifestDir';
import { CliError } from './cliError';

/**
 * Reads a mesh directory (or file) and runs the engine on it: parse, resolve, render. Throws
 * ManifestDirError for a missing path and CliError for a directory without manifests, which is
 * almost always a wrong path rather than a mesh that is meant to be empty.
 */
export async function loadMesh(dir: string): Promise<CompiledMesh> {
  const files = await readManifestDir(dir);
  if (files.length === 0) throw new CliError(`${dir}: no manifests found (*.yaml, *.yml, *.json)`);
  return compileMesh(parseManifests(files));
}
