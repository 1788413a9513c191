/**
 * The engine run on the draft in the browser (in a Web Worker, components/console/compile.worker.ts,
 * latest edit wins), on every edit: draft -> snapshot -> compileMesh ->
 * graph, plus the xDS resources when they render, with each diagnostic mapped to where the console
 * shows it (a file line for the YAML editor, a node for the canvas, a field for the form).
 */
import { type CompiledMesh, compileMesh } from '../engine/compileMesh';
import { prepareLocalMesh } from '../localMesh/prepareLocalMesh';
import { renderLocalMesh } from '../localMesh/renderLocalMesh';
import { type Diagnostic, normalizeDiagnostics, type Severity } from '../model/diagnostic';
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

/**
 * What the console's panels read of a compilation: the part the compile worker sends back (the
 * snapshot and the engine's whole result stay in the worker; copying them cost more than they serve).
 */
export interface DraftCompilation {
  model: DraftModel;
  /** The resolved mesh's proxies (the Preview lists them). */
  compiled: { mesh: Pick<CompiledMesh['mesh'], 'proxies'> };
  graph: MeshGraph;
  /**
   * Each l7mp proxy's desired config, by proxy id (`namespace/pod`): on the local mesh, as the local
   * mesh pushes it (loopback adaptations), else the cluster config.
   */
  l7mp: Record<string, L7mpConfig>;
  /** True when compiled for the local mesh (what `meshdeck serve` applies to). */
  localMesh: boolean;
  /** Envoy resources per proxy, or why they could not be rendered. */
  xds: XdsRender | { error: string };
  /** Every diagnostic, engine order (errors first, causes before consequences). */
  diagnostics: Diagnostic[];
  markers: Record<string, FileMarker[]>;
  /** Node id per diagnostic (index into `diagnostics`), when it belongs to a node. */
  diagnosticNodes: (string | undefined)[];
}

/** A compilation with everything the engine produced. */
export interface FullDraftCompilation extends DraftCompilation {
  snapshot: Snapshot;
  compiled: CompiledMesh;
}

/**
 * The panels' part of a compilation without the model: the main thread rebuilds it with parseDraft
 * from the per-file parses the worker sends beside it (`takeParsedFiles`), only the files it parsed.
 */
export function compilationForTransfer(c: DraftCompilation): Omit<DraftCompilation, 'model'> {
  return {
    compiled: { mesh: { proxies: c.compiled.mesh.proxies } },
    graph: c.graph,
    l7mp: c.l7mp,
    localMesh: c.localMesh,
    xds: c.xds,
    diagnostics: c.diagnostics,
    markers: c.markers,
    diagnosticNodes: c.diagnosticNodes,
  };
}

export interface CompileOptions {
  /** Render xDS too (default true). */
  xds?: boolean;
  /**
   * Compile for the local mesh, as the server checks and pushes a draft there: loopback addresses,
   * derived EndpointSlices, the local adaptations (sockets under `podsDir`) and its own checks.
   */
  localMesh?: { podsDir: string };
}

/**
 * The options the console compiles a draft with when it opens it (components/console/ConsoleApp.tsx):
 * for the local mesh with its adaptations, sockets under `podsDir` ('' until the console has read it
 * off a pushed config), else for a cluster, xDS included. The server's first compile of a draft
 * (server/console/draftLayoutJob.ts) uses them too, so the console can show that result as its own.
 */
export function consoleCompileOptions(localMesh: boolean, podsDir = ''): CompileOptions {
  return localMesh ? { localMesh: { podsDir } } : {};
}

/** Compiles a draft. Never throws: a failing stage leaves a diagnostic and the others run. */
export function compileDraft(draft: DraftDoc, opts: CompileOptions = {}): FullDraftCompilation {
  const model = parseDraft(draft);
  const parsed = draftSnapshot(draft.files);
  let snapshot = parsed;
  let compiled: CompiledMesh;
  const l7mp: Record<string, L7mpConfig> = {};
  if (opts.localMesh) {
    const prepared = prepareLocalMesh(parsed);
    snapshot = prepared.snapshot;
    const plain = compileMesh(snapshot);
    const local = renderLocalMesh(plain, { podsDir: opts.localMesh.podsDir, apps: prepared.apps });
    // The same diagnostics the server checks before it applies a draft to the local mesh.
    compiled = {
      ...plain,
      diagnostics: normalizeDiagnostics([...prepared.diagnostics, ...local.diagnostics]),
    };
    for (const [id, p] of Object.entries(local.proxies)) l7mp[id] = p.config;
  } else {
    compiled = compileMesh(snapshot);
    for (const [id, p] of Object.entries(compiled.l7mp.proxies)) l7mp[id] = p.config;
  }
  const graph = meshGraph(snapshot, compiled);
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
    localMesh: opts.localMesh !== undefined,
    xds,
    diagnostics,
    markers,
    diagnosticNodes: diagnostics.map((d) => nodeOf.get(d)),
  };
}

/**
 * Where the server keeps the local mesh's pod folders, read off one proxy's config as the server
 * pushes it (`server`) against the same proxy rendered with an empty podsDir (`ours`): socket paths
 * are `<podsDir>/<namespace>/<pod>/<path>`. Undefined when the proxy has no socket to compare.
 */
export function inferPodsDir(ours: L7mpConfig, server: L7mpConfig): string | undefined {
  const pairs: [string, string][] = [];
  for (const c of ours.clusters) {
    const s = server.clusters.find((x) => x.name === c.name);
    if (c.spec.protocol !== 'UnixDomainSocket' || !s) continue;
    (c.endpoints ?? []).forEach((e, i) => {
      const t = s.endpoints?.[i];
      if (t) pairs.push([e.spec.address, t.spec.address]);
    });
  }
  for (const l of ours.listeners) {
    const s = server.listeners.find((x) => x.name === l.name);
    if (s && typeof l.spec.filename === 'string' && typeof s.spec.filename === 'string')
      pairs.push([l.spec.filename, s.spec.filename]);
  }
  for (const [a, b] of pairs)
    if (a.startsWith('/') && b.endsWith(a) && b !== a) return b.slice(0, b.length - a.length);
  return undefined;
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
