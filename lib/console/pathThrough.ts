/**
 * What the canvas keeps bright when a node is selected: the paths through it. Everything the node
 * reaches along the edges' direction (a VirtualService's rules, their routes, Targets, the
 * VirtualServices and Services behind them) and everything that reaches it (the proxy that runs it,
 * the routes that send to it), but not a neighbour's other branches.
 */
import type { MeshGraph } from './meshGraph';

/** The nodes and edges on the paths through `id`; undefined when the graph has no such node. */
export function pathThrough(
  graph: Pick<MeshGraph, 'nodes' | 'edges'>,
  id: string,
): { nodes: Set<string>; edges: Set<string> } | undefined {
  const proxies = new Set<string>();
  let known = false;
  for (const n of graph.nodes) {
    if (n.id === id) known = true;
    if (n.kind === 'Proxy') proxies.add(n.id);
  }
  if (!known) return undefined;
  const out = new Map<string, { id: string; to: string }[]>();
  const into = new Map<string, { id: string; to: string }[]>();
  for (const e of graph.edges) {
    // A VirtualService (or Target) "selects" the proxy that runs it, but traffic enters at the proxy:
    // a route's path goes back to its proxy, and a proxy's goes on through what it runs.
    const [from, to] =
      e.kind === 'selects' && proxies.has(e.target) ? [e.target, e.source] : [e.source, e.target];
    let o = out.get(from);
    if (!o) out.set(from, (o = []));
    o.push({ id: e.id, to });
    let i = into.get(to);
    if (!i) into.set(to, (i = []));
    i.push({ id: e.id, to: from });
  }
  const nodes = new Set([id]);
  const edges = new Set<string>();
  // Downstream and upstream apart: going down and then up again would reach the siblings.
  for (const step of [out, into]) {
    const seen = new Set([id]);
    const queue = [id];
    for (let k = 0; k < queue.length; k++)
      for (const e of step.get(queue[k]!) ?? []) {
        edges.add(e.id);
        if (seen.has(e.to)) continue;
        seen.add(e.to);
        nodes.add(e.to);
        queue.push(e.to);
      }
  }
  return { nodes, edges };
}
