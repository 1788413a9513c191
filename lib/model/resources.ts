import { z } from 'zod';
import { JsonPredicate, LoadBalancer, MSM_API_VERSION, ObjectMeta, Retry, Rewrite, Selector } from './common';
import {
  EmptySpec,
  GrpcSpec,
  HttpSpec,
  JsonSocketSpec,
  LoggerSpec,
  MetricSpec,
  SyncSpec,
  TcpSpec,
  UdpSpec,
  UnixDomainSocketSpec,
  WebSocketSpec,
} from './protocolSpecs';
import { CLUSTER_PROTOCOL_KEYS, LISTENER_PROTOCOL_KEYS } from './protocols';

const listenerProtocolFields = {
  udp: UdpSpec.optional(),
  tcp: TcpSpec.optional(),
  http: HttpSpec.optional(),
  websocket: WebSocketSpec.optional(),
  jsonsocket: JsonSocketSpec.optional(),
  unixdomainsocket: UnixDomainSocketSpec.optional(),
  grpc: GrpcSpec.optional().describe(
    'xDS only: a proxyless gRPC client listener (api_listener named after the VirtualService).',
  ),
};

const clusterProtocolFields = {
  udp: UdpSpec.optional(),
  tcp: TcpSpec.optional(),
  websocket: WebSocketSpec.optional(),
  jsonsocket: JsonSocketSpec.optional(),
  unixdomainsocket: UnixDomainSocketSpec.optional(),
  sync: SyncSpec.optional(),
  echo: EmptySpec.optional(),
  discard: EmptySpec.optional(),
  logger: LoggerSpec.optional(),
  stdio: EmptySpec.optional(),
  jsonencap: EmptySpec.optional(),
  jsondecap: EmptySpec.optional(),
  metric: MetricSpec.optional(),
  prometheus: EmptySpec.optional(),
};

function countKeys(o: Record<string, unknown>, keys: readonly string[]): number {
  return keys.filter((k) => o[k] !== undefined).length;
}

/** A fixed endpoint of a Target: "copied verbatim ... and never managed" (MSM API seed). */
export const StaticEndpoint = z.strictObject({
  name: z.string().regex(/^\S+$/, 'must not contain whitespace').optional(),
  spec: z.looseObject({ address: z.string().min(1).describe('IP address, DNS name or socket path.') }),
  weight: z.number().int().min(0).optional().describe('Load-balancing weight (ConsistentHash).'),
});
export type StaticEndpoint = z.infer<typeof StaticEndpoint>;

/** Meshdeck's canary extension: split a Target's traffic over several VirtualServices by weight. */
export const SplitEntry = z.strictObject({
  serviceName: z.string().min(1).describe('A VirtualService (or naked Kubernetes Service) name.'),
  weight: z.number().int().min(0).describe('Relative weight; weights are normalised over the split.'),
});
export type SplitEntry = z.infer<typeof SplitEntry>;

const targetFields = {
  ...clusterProtocolFields,
  serviceName: z.string().min(1).optional().describe('The VirtualService whose pods are the endpoints.'),
  endpoints: z.array(StaticEndpoint).min(1).optional(),
  loadbalancer: LoadBalancer.optional(),
  split: z.array(SplitEntry).min(1).optional().describe('Meshdeck extension: weighted canary split.'),
};

function checkTarget(t: Record<string, unknown>, ctx: z.RefinementCtx): void {
  if (countKeys(t, CLUSTER_PROTOCOL_KEYS) > 1) {
    ctx.addIssue({ code: 'custom', message: 'a Target takes at most one protocol key' });
  }
  const sources = ['serviceName', 'endpoints', 'split'].filter((k) => t[k] !== undefined);
  if (sources.length > 1) {
    ctx.addIssue({
      code: 'custom',
      message: `a Target takes only one of serviceName, endpoints, split (got ${sources.join(', ')})`,
    });
  }
}

/** A Target without a name: "a fully specified unnamed in-line Target specification". */
export const InlineTarget = z.strictObject(targetFields).superRefine(checkTarget);
export type InlineTarget = z.infer<typeof InlineTarget>;

/** A string names a Target, else a VirtualService, else a naked Kubernetes Service; an object is an inline Target. */
export const TargetRef = z.union([z.string().min(1), InlineTarget]);
export type TargetRef = z.infer<typeof TargetRef>;

export const RouteSpecBody = z.strictObject({
  destination: TargetRef.describe('The service "sink" that eventually consumes the traffic (required).'),
  ingress: z.array(TargetRef).optional().describe('Transformers from the source towards the destination.'),
  egress: z.array(TargetRef).optional().describe('Transformers from the destination back to the source.'),
  retry: Retry.optional(),
});
export type RouteSpecBody = z.infer<typeof RouteSpecBody>;

export const RuleAction = z.strictObject({
  rewrite: z.array(Rewrite).optional(),
  route: z.union([z.string().min(1), RouteSpecBody]).describe('A named Route or an inline Route.'),
});

export const Rule = z.strictObject({
  match: JsonPredicate.optional(),
  action: RuleAction,
});
export type Rule = z.infer<typeof Rule>;

export const VirtualServiceOptions = z.strictObject({
  removeOrphanSessions: z
    .boolean()
    .optional()
    .describe('Delete every stream established via this VirtualService when it is deleted.'),
  track: z.number().int().min(0).optional().describe('Seconds to keep ended sessions for post-mortem.'),
});

export const VirtualServiceSpec = z
  .strictObject({
    selector: Selector,
    ...listenerProtocolFields,
    rules: z.array(Rule).optional(),
    options: VirtualServiceOptions.optional(),
  })
  .superRefine((s, ctx) => {
    if (countKeys(s, LISTENER_PROTOCOL_KEYS) !== 1) {
      ctx.addIssue({
        code: 'custom',
        message: `a VirtualService needs exactly one protocol key of ${LISTENER_PROTOCOL_KEYS.join(', ')}`,
      });
    }
  });
export type VirtualServiceSpec = z.infer<typeof VirtualServiceSpec>;

export const RouteSpec = RouteSpecBody;
export type RouteSpec = RouteSpecBody;

export const TargetSpec = z
  .strictObject({ selector: Selector.optional(), ...targetFields })
  .superRefine(checkTarget);
export type TargetSpec = z.infer<typeof TargetSpec>;

export const VirtualService = z.strictObject({
  apiVersion: z.literal(MSM_API_VERSION),
  kind: z.literal('VirtualService'),
  metadata: ObjectMeta,
  spec: VirtualServiceSpec,
});
export type VirtualService = z.infer<typeof VirtualService>;

export const Route = z.strictObject({
  apiVersion: z.literal(MSM_API_VERSION),
  kind: z.literal('Route'),
  metadata: ObjectMeta,
  spec: RouteSpec,
});
export type Route = z.infer<typeof Route>;

export const Target = z.strictObject({
  apiVersion: z.literal(MSM_API_VERSION),
  kind: z.literal('Target'),
  metadata: ObjectMeta,
  spec: TargetSpec,
});
export type Target = z.infer<typeof Target>;

export type MeshResource = VirtualService | Route | Target;
export const MESH_KINDS = ['VirtualService', 'Route', 'Target'] as const;
