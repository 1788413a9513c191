import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { parse } from 'yaml';
import type { L7mpOperation } from '@/lib/model/l7mp';

/**
 * Validates request bodies against the OpenAPI document that ships with @l7mp/l7mp 0.5.7, the one its
 * strict mode (`-s`) checks every request against (422 on failure). Test-only: reads the file with Node.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OPENAPI = path.join(ROOT, 'node_modules/@l7mp/l7mp/openapi/l7mp-openapi.yaml');
const DOC_ID = 'l7mp-openapi';

/**
 * ajv 8 refuses `discriminator.mapping` ("mapping is not supported"), so the mappings are dropped and
 * `discriminator: true` kept: it only picks the oneOf branch by `protocol`, for readable errors. That is
 * equivalent to the plain oneOf that l7mp's own validator (openapi-backend with ajv 6, which ignores
 * `discriminator`) applies, because every branch pins `protocol` to a single enum value.
 */
function dropDiscriminatorMappings(node: unknown): void {
  if (Array.isArray(node)) {
    node.forEach(dropDiscriminatorMappings);
  } else if (node !== null && typeof node === 'object') {
    const record = node as Record<string, unknown>;
    const discriminator = record.discriminator;
    if (discriminator !== null && typeof discriminator === 'object') {
      delete (discriminator as Record<string, unknown>).mapping;
    }
    Object.values(record).forEach(dropDiscriminatorMappings);
  }
}

// ajv-formats is CommonJS; depending on the loader its function is the module or its `default`.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv,
) => Ajv;

let validators: Record<string, ValidateFunction> | undefined;

function load(): Record<string, ValidateFunction> {
  if (validators) return validators;
  const doc = parse(readFileSync(OPENAPI, 'utf8')) as { components: unknown };
  dropDiscriminatorMappings(doc);
  const ajv = new Ajv({ strict: false, discriminator: true, allErrors: true });
  addFormats(ajv);
  // The document's $refs are `#/components/schemas/...`, so the whole document is one schema.
  ajv.addSchema({ $id: DOC_ID, components: doc.components });
  const get = (name: string): ValidateFunction => {
    const validate = ajv.getSchema(`${DOC_ID}#/components/schemas/io.l7mp.api.v1.${name}`);
    if (!validate) throw new Error(`l7mp OpenAPI schema ${name} not found`);
    return validate;
  };
  validators = {
    cluster: get('ClusterRequest'),
    listener: get('ListenerRequest'),
    route: get('RouteRequest'),
    endpoint: get('EndPointRequest'),
  };
  return validators;
}

/** The l7mp 0.5.7 OpenAPI errors of one operation's request body (none for body-less DELETEs). */
export function validateL7mpRequest(op: L7mpOperation): string[] {
  if (op.method !== 'POST') return op.body === undefined ? [] : [`${op.method} must not have a body`];
  const validate = load()[op.kind];
  if (!validate) return [`no OpenAPI request schema for a POST of kind ${op.kind}`];
  if (validate(op.body)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? e.keyword}`);
}
