/**
 * What the Inspector shows when nothing is selected: the draft at a glance. Objects per kind (how many
 * of them the engine generated), the diagnostics by severity, and the objects that need attention
 * first (most errors, then most warnings), to go to with a click.
 */
import type { GraphNode, MeshGraph } from './meshGraph';

export interface MeshSummary {
  /** Per kind in the canvas's order, only kinds that occur: how many, and how many of those generated. */
  kinds: { kind: GraphNode['kind']; count: number; generated: number }[];
  errors: number;
  warnings: number;
  infos: number;
  /** Nodes with errors or warnings, worst first, at most `limit`. */
  attention: {
    id: string;
    kind: GraphNode['kind'];
    namespace: string;
    name: string;
    errors: number;
    warnings: number;
  }[];
  /** Nodes with errors or warnings in all. */
  attentionTotal: number;
}

const ORDER: GraphNode['kind'][] = ['VirtualService', 'Route', 'Target', 'Service', 'Proxy', 'Missing'];

/** The draft's graph at a glance; `diagnostics` counts every diagnostic, also those on no node. */
export function meshSummary(
  graph: Pick<MeshGraph, 'nodes'>,
  diagnostics: readonly { severity: string }[],
  limit = 5,
): MeshSummary {
  const kinds = new Map<GraphNode['kind'], { count: number; generated: number }>();
  const attention: MeshSummary['attention'] = [];
  for (const n of graph.nodes) {
    let k = kinds.get(n.kind);
    if (!k) kinds.set(n.kind, (k = { count: 0, generated: 0 }));
    k.count++;
    if (n.generated) k.generated++;
    if (n.counts.error > 0 || n.counts.warning > 0)
      attention.push({
        id: n.id,
        kind: n.kind,
        namespace: n.namespace,
        name: n.name,
        errors: n.counts.error,
        warnings: n.counts.warning,
      });
  }
  attention.sort(
    (a, b) => b.errors - a.errors || b.warnings - a.warnings || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
  const count = (s: string) => diagnostics.filter((d) => d.severity === s).length;
  return {
    kinds: ORDER.filter((k) => kinds.has(k)).map((kind) => ({ kind, ...kinds.get(kind)! })),
    errors: count('error'),
    warnings: count('warning'),
    infos: count('info'),
    attention: attention.slice(0, Math.max(0, limit)),
    attentionTotal: attention.length,
  };
}
