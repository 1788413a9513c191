import { z } from 'zod';
import { ObjectMeta } from './common';

/** The parts of a Kubernetes Service the engine uses. */
export const ServicePort = z.looseObject({
  name: z.string().optional(),
  protocol: z.enum(['TCP', 'UDP', 'SCTP']).optional(),
  appProtocol: z.string().optional(),
  port: z.number().int().min(1).max(65535),
  targetPort: z.union([z.number().int().min(1).max(65535), z.string()]).optional(),
});
export type ServicePort = z.infer<typeof ServicePort>;

export const Service = z.looseObject({
  apiVersion: z.literal('v1'),
  kind: z.literal('Service'),
  metadata: ObjectMeta,
  spec: z.looseObject({
    selector: z.record(z.string(), z.string()).optional(),
    ports: z.array(ServicePort).optional(),
    clusterIP: z.string().optional(),
  }),
});
export type Service = z.infer<typeof Service>;

export const EndpointSlice = z.looseObject({
  apiVersion: z.literal('discovery.k8s.io/v1'),
  kind: z.literal('EndpointSlice'),
  metadata: ObjectMeta,
  addressType: z.enum(['IPv4', 'IPv6', 'FQDN']).optional(),
  endpoints: z
    .array(
      z.looseObject({
        addresses: z.array(z.string()).min(1),
        conditions: z.looseObject({ ready: z.boolean().nullable().optional() }).optional(),
        targetRef: z.looseObject({ kind: z.string().optional(), name: z.string().optional() }).optional(),
      }),
    )
    .nullable()
    .optional(),
  ports: z
    .array(
      z.looseObject({
        name: z.string().optional(),
        port: z.number().int().optional(),
        protocol: z.string().optional(),
      }),
    )
    .nullable()
    .optional(),
});
export type EndpointSlice = z.infer<typeof EndpointSlice>;

export const Pod = z.looseObject({
  apiVersion: z.literal('v1'),
  kind: z.literal('Pod'),
  metadata: ObjectMeta,
  spec: z.looseObject({}).optional(),
  status: z
    .looseObject({
      podIP: z.string().optional(),
      phase: z.string().optional(),
    })
    .optional(),
});
export type Pod = z.infer<typeof Pod>;

/** A pod labelled with this runs l7mp as a `sidecar` or a `gateway`. */
export const PROXY_LABEL = 'msm.l7mp.io/proxy';
/** Overrides the l7mp REST API port of a proxy pod (default 1234, as the seed says). */
export const API_PORT_ANNOTATION = 'msm.l7mp.io/api-port';
export const DEFAULT_L7MP_API_PORT = 1234;
/** The label Kubernetes puts on an EndpointSlice to name its Service. */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

export const KUBE_KINDS = ['Service', 'EndpointSlice', 'Pod'] as const;
