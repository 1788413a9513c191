import { z } from 'zod';
import { Diagnostic, ObjectRef, SourceLocation } from './diagnostic';
import { EndpointSlice, Pod, Service } from './kube';
import { Route, Target, VirtualService } from './resources';

/** Where an object came from, with the line of each field path (e.g. `spec.rules[0].action`). */
export const ObjectSource = SourceLocation.extend({
  fields: z.record(z.string(), z.number().int()).optional(),
});
export type ObjectSource = z.infer<typeof ObjectSource>;

/**
 * Everything the engine needs, as plain data: the mesh resources and the cluster objects.
 * Sources build snapshots; nothing else does I/O for the engine.
 */
export const Snapshot = z.object({
  virtualServices: z.array(VirtualService),
  routes: z.array(Route),
  targets: z.array(Target),
  services: z.array(Service),
  endpointSlices: z.array(EndpointSlice),
  pods: z.array(Pod),
  /** Keyed by `Kind/namespace/name`. */
  sources: z.record(z.string(), ObjectSource),
  /** Objects that failed validation: references to them say so instead of "not found". */
  rejected: z.array(ObjectRef),
  /** Problems found while reading the input (YAML, schema, dialect conversions). */
  diagnostics: z.array(Diagnostic),
});
export type Snapshot = z.infer<typeof Snapshot>;

export function emptySnapshot(): Snapshot {
  return {
    virtualServices: [],
    routes: [],
    targets: [],
    services: [],
    endpointSlices: [],
    pods: [],
    sources: {},
    rejected: [],
    diagnostics: [],
  };
}
