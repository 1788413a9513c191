import { type CompiledMesh, compileMesh } from '@/lib/engine/compileMesh';
import { prepareLocalMesh } from '@/lib/localMesh/prepareLocalMesh';
import { renderLocalMesh } from '@/lib/localMesh/renderLocalMesh';
import { normalizeDiagnostics } from '@/lib/model/diagnostic';
import { parseManifests } from '@/lib/parse/parseManifests';
import { localMeshPodsDir } from '../controlPlane/localMeshPaths';
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

/** Like loadMesh, for the local mesh: loopback addresses, derived EndpointSlices, local adaptations. */
export async function loadLocalMesh(dir: string): Promise<CompiledMesh> {
  const files = await readManifestDir(dir);
  if (files.length === 0) throw new CliError(`${dir}: no manifests found (*.yaml, *.yml, *.json)`);
  const prepared = prepareLocalMesh(parseManifests(files));
  const compiled = compileMesh(prepared.snapshot);
  const local = renderLocalMesh(compiled, { podsDir: localMeshPodsDir(), apps: prepared.apps });
  const diagnostics = normalizeDiagnostics([...prepared.diagnostics, ...local.diagnostics]);
  return { mesh: compiled.mesh, l7mp: { proxies: local.proxies, diagnostics: [] }, diagnostics };
}
