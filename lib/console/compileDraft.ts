/**
 * The engine run on the draft in the browser, on every edit: draft -> snapshot -> compileMesh ->
 * graph, plus the xDS resources when they render, with each diagnostic mapped to where the console
 * shows it (a file line for the YAML editor, a node for the canvas, a field for the form).
 */
import { type CompiledMesh, compileMesh } from '../engine/compileMesh';
import type { Diagnostic, Severity } from '../model/diagnostic';
import type { L7mpConfig } from '../model/l7mp';
import type { Snapshot } from '../model/snapshot';
import { renderXds, type XdsRender } from '../xds/renderXds';
import type { DraftDoc } from './draftDoc';
import { type DraftModel, parseDraft } from './draftModel';
import { draftSnapshot } from './draftSnapshot';
import { meshGraph, type MeshGraph } from './meshGraph';

/** A diagnostic placed on a line of a draft file (1-based), as the YAML editor marks it. */
export interface FileMarker {
  line: number;
  col?: number;
  severity: Severity;
  message: string;
  diagnostic: Diagnostic;
}

export interface DraftCompilation {
  model: DraftModel;
  snapshot: Snapshot;
  compiled: CompiledMesh;
  graph: MeshGraph;
  /** Each l7mp proxy's desired config, by proxy id (`namespace/pod`). */
  l7mp: Record<string, L7mpConfig>;
  /** Envoy resources per proxy, or why they could not be rendered. */
  xds: XdsRender | { error: string };
  /** Every diagnostic, engine order (errors first, causes before consequences). */
  diagnostics: Diagnostic[];
  markers: Record<string, FileMarker[]>;
  /** Node id per diagnostic (index into `diagnostics`), when it belongs to a node. */
  diagnosticNodes: (string | undefined)[];
}

/** Compiles a draft. Never throws: a failing stage leaves a diagnostic and the others run. */
export function compileDraft(draft: DraftDoc, opts: { xds?: boolean } = {}): DraftCompilation {
  const model = parseDraft(draft);
  const snapshot = draftSnapshot(draft.files);
  const compiled = compileMesh(snapshot);
  const graph = meshGraph(snapshot, compiled);
  const l7mp: Record<string, L7mpConfig> = {};
  for (const [id, p] of Object.entries(compiled.l7mp.proxies)) l7mp[id] = p.config;
  let xds: DraftCompilation['xds'] = { error: 'not rendered' };
  if (opts.xds !== false) {
    try {
      xds = renderXds(compiled.mesh);
    } catch (e) {
      xds = { error: `the xDS renderer failed: ${(e as Error).message}` };
    }
  }
  const diagnostics = compiled.diagnostics;
  const nodeOf = new Map<Diagnostic, string>();
  for (const n of graph.nodes) for (const d of n.diagnostics) nodeOf.set(d, n.id);
  const markers: Record<string, FileMarker[]> = {};
  for (const d of diagnostics) {
    const at = d.source ?? sourceFromModel(model, d);
    if (!at) continue;
    (markers[at.file] ??= []).push({
      line: at.line,
      col: at.col,
      severity: d.severity,
      message: `${d.message}${d.path ? ` (${d.path})` : ''} [${d.code}]`,
      diagnostic: d,
    });
  }
  return {
    model,
    snapshot,
    compiled,
    graph,
    l7mp,
    xds,
    diagnostics,
    markers,
    diagnosticNodes: diagnostics.map((d) => nodeOf.get(d)),
  };
}

/** A diagnostic without a source line (one about a generated object) points at its object's first line. */
function sourceFromModel(
  model: DraftModel,
  d: Diagnostic,
): { file: string; line: number; col?: number } | null {
  const key = `${d.object.kind}/${d.object.namespace ?? 'default'}/${d.object.name}`;
  const o = model.byKey.get(key)?.[0];
  return o ? { file: o.file, line: o.line } : null;
}
