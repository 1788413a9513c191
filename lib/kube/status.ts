import { z } from 'zod';
import { CONDITION_TYPES } from './meshStatus';

/** metav1.Condition: the shape `kubectl describe` and every Kubernetes tool understand. */
export const Condition = z.strictObject({
  type: z
    .string()
    .min(1)
    .max(316)
    .regex(
      /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/,
    )
    .describe(`The aspect this condition is about: ${CONDITION_TYPES.join(', ')}.`),
  status: z.enum(['True', 'False', 'Unknown']),
  observedGeneration: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe('The metadata.generation this condition was computed from.'),
  lastTransitionTime: z
    .string()
    .meta({ format: 'date-time' })
    .describe('When status last changed (RFC 3339).'),
  reason: z
    .string()
    .min(1)
    .max(1024)
    .regex(/^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/)
    .describe('A CamelCase reason, e.g. Accepted, Invalid, RefNotFound, Pending.'),
  message: z.string().max(32768).describe("The engine's diagnostics for this aspect, for humans."),
});
export type Condition = z.infer<typeof Condition>;

/** The conditions list: at most one entry per type (a list-map keyed by type in the CRD). */
export const Conditions = z.array(Condition).max(8);

/** The status subresource of VirtualService, Route and Target. */
export const MeshResourceStatus = z.strictObject({
  observedGeneration: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe('The metadata.generation the controller last processed.'),
  conditions: Conditions.optional(),
});
export type MeshResourceStatus = z.infer<typeof MeshResourceStatus>;
