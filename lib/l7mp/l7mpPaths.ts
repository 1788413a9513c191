/**
 * REST paths of the l7mp 0.5.7 API. Names are always URL-encoded: ours look like
 * `worker-svc.default.target.cluster.local` and may contain `/`, `@` or `:`, which l7mp accepts in
 * names (its only check is `^\S+$`) but which would otherwise split or end the path segment.
 */

const API = '/api/v1';

/** A query suffix: l7mp only understands `recursive=true` on GETs and DELETEs. */
function query(options: { recursive?: boolean } | undefined): string {
  return options?.recursive === true ? '?recursive=true' : '';
}

function named(collection: string, name: string, options?: { recursive?: boolean }): string {
  return `${API}/${collection}/${encodeURIComponent(name)}${query(options)}`;
}

/** Path builders for every l7mp object kind Meshdeck reads or writes. */
export const l7mpPaths = {
  /** `/api/v1/clusters`: POST a cluster, or GET them all (recursive to expand endpoints). */
  clusters: (options?: { recursive?: boolean }): string => `${API}/clusters${query(options)}`,
  /** `/api/v1/clusters/{name}`: GET or DELETE one cluster. */
  cluster: (name: string, options?: { recursive?: boolean }): string => named('clusters', name, options),
  /** `/api/v1/clusters/{cluster}/endpoints`: POST an endpoint into a cluster, or GET its endpoints. */
  clusterEndpoints: (cluster: string): string => `${named('clusters', cluster)}/endpoints`,
  /** `/api/v1/endpoints/{name}`: DELETE an endpoint (names are global per proxy). */
  endpoint: (name: string, options?: { recursive?: boolean }): string => named('endpoints', name, options),
  /** `/api/v1/routes`: POST a route, or GET them all. */
  routes: (options?: { recursive?: boolean }): string => `${API}/routes${query(options)}`,
  /** `/api/v1/routes/{name}`: GET or DELETE one route. */
  route: (name: string, options?: { recursive?: boolean }): string => named('routes', name, options),
  /** `/api/v1/listeners`: POST a listener, or GET them all (recursive to expand rules and routes). */
  listeners: (options?: { recursive?: boolean }): string => `${API}/listeners${query(options)}`,
  /** `/api/v1/listeners/{name}`: GET or DELETE one listener. */
  listener: (name: string, options?: { recursive?: boolean }): string => named('listeners', name, options),
  /** `/api/v1/rulelists`: GET all rulelists. */
  rulelists: (options?: { recursive?: boolean }): string => `${API}/rulelists${query(options)}`,
  /** `/api/v1/rulelists/{name}`: GET or DELETE one rulelist. */
  rulelist: (name: string, options?: { recursive?: boolean }): string => named('rulelists', name, options),
  /** `/api/v1/rules`: GET all rules. */
  rules: (options?: { recursive?: boolean }): string => `${API}/rules${query(options)}`,
  /** `/api/v1/rules/{name}`: GET or DELETE one rule. */
  rule: (name: string, options?: { recursive?: boolean }): string => named('rules', name, options),
} as const;
