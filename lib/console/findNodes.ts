/**
 * The canvas's finder: which graph nodes a typed query names, best first. Free words match a node's
 * name first (whole, then as a prefix, then at a word start inside it, then anywhere), then its
 * namespace, kind and detail; every word must match. `kind:`, `ns:` and `is:` words filter: `kind:route`,
 * `ns:prod`, `is:error` / `is:warning` (nodes with such diagnostics), `is:generated`.
 */
import type { GraphNode } from './meshGraph';

/** One node the query names. */
export interface FoundNode {
  id: string;
  kind: GraphNode['kind'];
  name: string;
  namespace: string;
  detail: string;
  errors: number;
  warnings: number;
}

export interface FindResult {
  /** The best matches, at most `limit`. */
  nodes: FoundNode[];
  /** How many nodes match in all. */
  total: number;
}

/** Short names a kind can be typed as, besides any prefix of its own name. */
const KIND_ALIASES: Record<string, GraphNode['kind']> = {
  vs: 'VirtualService',
  vsvc: 'VirtualService',
  svc: 'Service',
  pod: 'Proxy',
};

type Word = { kind: 'kind' | 'ns' | 'is' | 'text'; value: string };

function parseQuery(query: string): Word[] {
  const words: Word[] = [];
  for (const raw of query.toLowerCase().split(/\s+/)) {
    if (!raw) continue;
    const m = /^(kind|ns|namespace|is):(.*)$/.exec(raw);
    if (!m) words.push({ kind: 'text', value: raw });
    else if (m[2]) words.push({ kind: m[1] === 'namespace' ? 'ns' : (m[1] as Word['kind']), value: m[2] });
    // "kind:" with nothing after it yet (still being typed) filters nothing.
  }
  return words;
}

function kindMatches(kind: GraphNode['kind'], value: string): boolean {
  return kind.toLowerCase().startsWith(value) || KIND_ALIASES[value] === kind;
}

function isMatches(n: GraphNode, value: string): boolean {
  if ('error'.startsWith(value) || value === 'errors') return n.counts.error > 0;
  if ('warning'.startsWith(value) || value === 'warnings') return n.counts.warning > 0;
  if ('generated'.startsWith(value)) return n.generated !== undefined;
  if ('invalid'.startsWith(value)) return n.invalid === true;
  return false;
}

/** Where `word` is in `name`: 0 whole, 1 prefix, 2 at a word start, 3 anywhere; -1 nowhere. */
function nameRank(name: string, word: string): number {
  if (name === word) return 0;
  if (name.startsWith(word)) return 1;
  const at = name.indexOf(word);
  if (at < 0) return -1;
  for (let i = at; i >= 0; i = name.indexOf(word, i + 1)) if (/[-._/:]/.test(name[i - 1] ?? '')) return 2;
  return 3;
}

/** A node's cost for the query's words (lower is better), or -1 when a word does not match it. */
function costOf(n: GraphNode, words: Word[]): number {
  let cost = 0;
  const name = n.name.toLowerCase();
  for (const w of words) {
    if (w.kind === 'kind') {
      if (!kindMatches(n.kind, w.value)) return -1;
    } else if (w.kind === 'ns') {
      if (!n.namespace.toLowerCase().startsWith(w.value)) return -1;
    } else if (w.kind === 'is') {
      if (!isMatches(n, w.value)) return -1;
    } else {
      const r = nameRank(name, w.value);
      if (r >= 0) cost += r;
      else if (n.namespace.toLowerCase().includes(w.value) || kindMatches(n.kind, w.value)) cost += 5;
      else if (n.detail.toLowerCase().includes(w.value)) cost += 6;
      else return -1;
    }
  }
  return cost;
}

/** The nodes `query` names, best first (then shorter names, then by id); nothing for an empty query. */
export function findNodes(nodes: readonly GraphNode[], query: string, limit = 20): FindResult {
  const words = parseQuery(query);
  if (words.length === 0) return { nodes: [], total: 0 };
  const hits: { n: GraphNode; cost: number }[] = [];
  for (const n of nodes) {
    const cost = costOf(n, words);
    if (cost >= 0) hits.push({ n, cost });
  }
  hits.sort(
    (a, b) =>
      a.cost - b.cost ||
      a.n.name.length - b.n.name.length ||
      (a.n.id < b.n.id ? -1 : a.n.id > b.n.id ? 1 : 0),
  );
  return {
    total: hits.length,
    nodes: hits.slice(0, Math.max(0, limit)).map(({ n }) => ({
      id: n.id,
      kind: n.kind,
      name: n.name,
      namespace: n.namespace,
      detail: n.detail,
      errors: n.counts.error,
      warnings: n.counts.warning,
    })),
  };
}
