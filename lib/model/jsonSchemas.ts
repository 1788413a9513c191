import { z } from 'zod';
import { EndpointSlice, Pod, Service } from './kube';
import { Route, Target, VirtualService } from './resources';

const SCHEMAS = { VirtualService, Route, Target, Service, EndpointSlice, Pod } as const;
export type SchemaKind = keyof typeof SCHEMAS;

/**
 * JSON Schemas generated from the zod schemas (the one source of the model's types), for the YAML
 * editor and the CRDs. Refinements that JSON Schema cannot express (exactly one protocol key) are
 * checked by zod only.
 */
export function meshJsonSchema(kind: SchemaKind): Record<string, unknown> {
  const schema = z.toJSONSchema(SCHEMAS[kind], { unrepresentable: 'any', io: 'input' }) as Record<
    string,
    unknown
  >;
  return { ...schema, title: kind };
}

export const SCHEMA_KINDS = Object.keys(SCHEMAS) as SchemaKind[];
