import { z } from 'zod';

/**
 * The l7mp 0.5.7 REST API objects as Meshdeck renders them: exactly the bodies the proxy accepts
 * (see shared/notes/l7mp-rest-api.md). Every object is named so that it can be deleted later.
 */
export const L7mpEndpoint = z.object({
  name: z.string(),
  spec: z.looseObject({ address: z.string() }),
  /** l7mp reads the top-level weight; `spec.weight` is ignored by 0.5.7. */
  weight: z.number().int().min(0).optional(),
});
export type L7mpEndpoint = z.infer<typeof L7mpEndpoint>;

export const L7mpSpec = z.looseObject({ protocol: z.string() });
export type L7mpSpec = z.infer<typeof L7mpSpec>;

export const L7mpLoadBalancer = z.object({ policy: z.string(), key: z.string().optional() });
export type L7mpLoadBalancer = z.infer<typeof L7mpLoadBalancer>;

export const L7mpCluster = z.object({
  name: z.string(),
  spec: L7mpSpec,
  endpoints: z.array(L7mpEndpoint).optional(),
  loadbalancer: L7mpLoadBalancer.optional(),
});
export type L7mpCluster = z.infer<typeof L7mpCluster>;

export const L7mpRetry = z.object({
  retry_on: z.string(),
  num_retries: z.number().int(),
  timeout: z.number().int(),
});
export type L7mpRetry = z.infer<typeof L7mpRetry>;

/** A route body; clusters are always referenced by name (inline clusters can crash 0.5.7 on delete). */
export const L7mpRouteBody = z.object({
  destination: z.string(),
  ingress: z.array(z.string()).optional(),
  egress: z.array(z.string()).optional(),
  retry: L7mpRetry.optional(),
});
export type L7mpRouteBody = z.infer<typeof L7mpRouteBody>;

export const L7mpRoute = L7mpRouteBody.extend({ name: z.string() });
export type L7mpRoute = z.infer<typeof L7mpRoute>;

export const L7mpRule = z.object({
  match: z.record(z.string(), z.unknown()).optional(),
  action: z.object({
    rewrite: z.array(z.object({ path: z.string(), value: z.unknown() })).optional(),
    route: z.union([z.string(), L7mpRouteBody]),
  }),
});
export type L7mpRule = z.infer<typeof L7mpRule>;

/** What l7mp auto-generated for a listener's inline rules (read back from a live proxy). */
export const L7mpListenerLiveParts = z.object({
  rulelist: z.string().optional(),
  rules: z.array(z.string()),
  routes: z.array(z.string()),
});
export type L7mpListenerLiveParts = z.infer<typeof L7mpListenerLiveParts>;

export const L7mpListener = z.object({
  name: z.string(),
  spec: L7mpSpec,
  rules: z.array(L7mpRule),
  options: z.record(z.string(), z.unknown()).optional(),
  /** Only on configs read from a proxy: the auto-generated objects to clean up after a delete. */
  live: L7mpListenerLiveParts.optional(),
});
export type L7mpListener = z.infer<typeof L7mpListener>;

/** One proxy's configuration, each list sorted by name. */
export const L7mpConfig = z.object({
  listeners: z.array(L7mpListener),
  routes: z.array(L7mpRoute),
  clusters: z.array(L7mpCluster),
});
export type L7mpConfig = z.infer<typeof L7mpConfig>;

/** One l7mp REST API call. */
export const L7mpOperation = z.object({
  method: z.enum(['POST', 'DELETE']),
  path: z.string(),
  body: z.unknown().optional(),
  /** What the call does, for previews and logs. */
  kind: z.enum(['cluster', 'endpoint', 'route', 'listener', 'rulelist', 'rule']),
  name: z.string(),
  reason: z.string(),
});
export type L7mpOperation = z.infer<typeof L7mpOperation>;

export function emptyL7mpConfig(): L7mpConfig {
  return { listeners: [], routes: [], clusters: [] };
}
