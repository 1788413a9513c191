import { z } from 'zod';

/** The canonical API group/version of Meshdeck's mesh resources. */
export const MSM_API_VERSION = 'msm.l7mp.io/v1';
/** The MSM API seed's own spelling, accepted as an import dialect and converted. */
export const SEED_API_VERSION = 'l7mp.io/MSM/v1';

export const Port = z.number().int().min(1).max(65535).describe('A TCP/UDP port, 1-65535.');

/** Kubernetes object names: DNS subdomains (dots allowed), namespaces: DNS labels. */
export const ObjectName = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'must be a lowercase DNS subdomain name (a-z, 0-9, "-", ".")');
export const NamespaceName = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a lowercase DNS label (a-z, 0-9, "-")');

export const ObjectMeta = z
  .looseObject({
    name: ObjectName,
    namespace: NamespaceName.optional(),
    labels: z.record(z.string(), z.string()).optional(),
    annotations: z.record(z.string(), z.string()).optional(),
  })
  .describe('Standard Kubernetes object metadata (only the fields Meshdeck uses are checked).');
export type ObjectMeta = z.infer<typeof ObjectMeta>;

/**
 * Which pods an object applies to: a Kubernetes Service by name, or a label selector.
 * "deploy this VirtualService to all pods labeled with app:worker" (MSM API seed).
 */
export const Selector = z
  .strictObject({
    serviceName: z.string().min(1).optional().describe('A Kubernetes Service (short or long name).'),
    matchLabels: z.record(z.string(), z.string()).optional().describe('Pods carrying all these labels.'),
  })
  .refine((s) => (s.serviceName === undefined) !== (s.matchLabels === undefined), {
    message: 'selector needs exactly one of serviceName or matchLabels',
  });
export type Selector = z.infer<typeof Selector>;

export const AddressPort = z.strictObject({
  address: z.string().min(1).optional(),
  port: Port.optional(),
});
export type AddressPort = z.infer<typeof AddressPort>;

/** A JSONPredicate query on connection metadata (draft-snell-json-test); an empty match always matches. */
export const JsonPredicate = z
  .record(z.string(), z.unknown())
  .describe(
    'A JSONPredicate query on connection metadata, e.g. {op: test, path: /IP/src_addr, value: 10.0.0.1}.',
  );
export type JsonPredicate = z.infer<typeof JsonPredicate>;

export const Rewrite = z.strictObject({
  path: z.string().min(1).describe('JSON pointer into the session metadata, e.g. /labels/session_id.'),
  value: z.unknown().describe('The constant to set.'),
});
export type Rewrite = z.infer<typeof Rewrite>;

export const Retry = z.strictObject({
  retry_on: z.enum(['never', 'connect-failure', 'disconnect', 'always']),
  num_retries: z.number().int().min(0).optional(),
  timeout: z.number().int().min(0).optional().describe('Milliseconds per attempt and between attempts.'),
});
export type Retry = z.infer<typeof Retry>;

export const LoadBalancer = z.strictObject({
  policy: z.enum(['Trivial', 'ConsistentHash', 'HashRing']),
  key: z.string().optional().describe('JSON pointer into the session metadata to hash on.'),
});
export type LoadBalancer = z.infer<typeof LoadBalancer>;
