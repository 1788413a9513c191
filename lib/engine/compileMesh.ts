import { type Diagnostic, normalizeDiagnostics } from '../model/diagnostic';
import type { Snapshot } from '../model/snapshot';
import { type L7mpRender, renderL7mp } from './renderL7mp';
import { resolveMesh } from './resolveMesh';
import type { ResolvedMesh } from './resolvedMesh';

/** What the engine makes of a snapshot: the resolved mesh, each proxy's l7mp config, every diagnostic. */
export interface CompiledMesh {
  mesh: ResolvedMesh;
  l7mp: L7mpRender;
  diagnostics: Diagnostic[];
}

/** resolve then render, with the diagnostics of parsing, resolving and rendering merged and sorted. */
export function compileMesh(snapshot: Snapshot): CompiledMesh {
  const mesh = resolveMesh(snapshot);
  const l7mp = renderL7mp(mesh);
  return { mesh, l7mp, diagnostics: normalizeDiagnostics([...mesh.diagnostics, ...l7mp.diagnostics]) };
}
