import { stringify as toYaml } from 'yaml';
import { z } from 'zod';
import { MSM_API_VERSION, Selector } from '../model/common';
import { TransportSpec } from '../model/protocolSpecs';
import { CLUSTER_PROTOCOL_KEYS, LISTENER_PROTOCOL_KEYS, TRANSPORT_PROTOCOL_KEYS } from '../model/protocols';
import { RouteSpec, TargetSpec, VirtualServiceSpec } from '../model/resources';
import { Conditions, MeshResourceStatus } from './status';

/** The API group of the mesh CRDs (`msm.l7mp.io/v1` without the version). */
export const CRD_GROUP = MSM_API_VERSION.split('/')[0]!;
export const CRD_VERSION = MSM_API_VERSION.split('/')[1]!;

/** The subset of an OpenAPI v3 schema a CustomResourceDefinition takes (apiextensions.k8s.io/v1 JSONSchemaProps). */
export interface JSONSchemaProps {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  description?: string;
  format?: string;
  properties?: Record<string, JSONSchemaProps>;
  required?: string[];
  additionalProperties?: JSONSchemaProps;
  items?: JSONSchemaProps;
  enum?: unknown[];
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  anyOf?: JSONSchemaProps[];
  oneOf?: JSONSchemaProps[];
  'x-kubernetes-preserve-unknown-fields'?: true;
  'x-kubernetes-int-or-string'?: true;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-validations'?: { rule: string; message: string }[];
}

export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
  priority?: number;
}

/** An apiextensions.k8s.io/v1 CustomResourceDefinition, as far as Meshdeck fills it in. */
export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; labels: Record<string, string> };
  spec: {
    group: string;
    scope: 'Namespaced';
    names: {
      kind: string;
      listKind: string;
      plural: string;
      singular: string;
      shortNames: string[];
      categories: string[];
    };
    versions: {
      name: string;
      served: true;
      storage: true;
      schema: { openAPIV3Schema: JSONSchemaProps };
      subresources: { status: Record<string, never> };
      additionalPrinterColumns: PrinterColumn[];
    }[];
  };
}

const condition = (type: string): PrinterColumn => ({
  name: type,
  type: 'string',
  jsonPath: `.status.conditions[?(@.type=="${type}")].status`,
  description: `The ${type} condition's status (True, False, Unknown).`,
});
const AGE: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };
const SELECTOR_COLUMNS: PrinterColumn[] = [
  {
    name: 'Service',
    type: 'string',
    jsonPath: '.spec.selector.serviceName',
    description: 'spec.selector.serviceName',
  },
  {
    name: 'Labels',
    type: 'string',
    jsonPath: '.spec.selector.matchLabels',
    description: 'spec.selector.matchLabels',
    priority: 1,
  },
];

/** What differs between the three kinds. */
interface KindInfo {
  spec: z.ZodType;
  plural: string;
  shortName: string;
  description: string;
  columns: PrinterColumn[];
}

const KINDS = {
  VirtualService: {
    spec: VirtualServiceSpec,
    plural: 'virtualservices',
    shortName: 'vsvc',
    description:
      'A server-side socket (an l7mp Listener) on the pods its selector picks, with match-action rules routing each new connection.',
    columns: [
      // A column cannot name the protocol key that is set (JSONPath yields values, not keys); the port
      // of whichever key carries one can be shown, a JSONSocket's from its transport.
      {
        name: 'Port',
        type: 'integer',
        jsonPath: ".spec['udp','tcp','http','websocket','grpc'].port",
        description: 'The listener port (udp, tcp, http, websocket, grpc).',
      },
      {
        name: 'JSONSocket-Port',
        type: 'integer',
        jsonPath: ".spec.jsonsocket.transport['udp','tcp','websocket'].port",
        description: 'The port of a JSONSocket listener, from its transport.',
      },
      {
        name: 'Socket',
        type: 'string',
        jsonPath: '.spec.unixdomainsocket.filename',
        description: 'The socket path of a UnixDomainSocket listener.',
        priority: 1,
      },
      ...SELECTOR_COLUMNS,
      condition('Accepted'),
      condition('Programmed'),
      AGE,
    ],
  },
  Route: {
    spec: RouteSpec,
    plural: 'routes',
    shortName: 'rt',
    description:
      'A named route: a destination Target with optional ingress/egress chains and a retry policy, reusable by several VirtualServices.',
    columns: [
      { name: 'Destination', type: 'string', jsonPath: '.spec.destination', description: 'spec.destination' },
      { name: 'Retry', type: 'string', jsonPath: '.spec.retry.retry_on', description: 'spec.retry.retry_on' },
      condition('Accepted'),
      condition('ResolvedRefs'),
      AGE,
    ],
  },
  Target: {
    spec: TargetSpec,
    plural: 'targets',
    shortName: 'tgt',
    description:
      'Client-side settings of a connection (an l7mp Cluster): protocol, load balancing, and endpoints from a VirtualService, a static list or a canary split.',
    columns: [
      {
        name: 'Endpoints-From',
        type: 'string',
        jsonPath: '.spec.serviceName',
        description: 'spec.serviceName: the VirtualService whose pods are the endpoints.',
      },
      {
        name: 'Endpoints',
        type: 'string',
        jsonPath: '.spec.endpoints[*].spec.address',
        description: 'The first static endpoint address (spec.endpoints).',
      },
      {
        name: 'LB',
        type: 'string',
        jsonPath: '.spec.loadbalancer.policy',
        description: 'spec.loadbalancer.policy',
      },
      ...SELECTOR_COLUMNS,
      condition('Accepted'),
      condition('Programmed'),
      AGE,
    ],
  },
} as const satisfies Record<string, KindInfo>;

export type MeshCrdKind = keyof typeof KINDS;
export const MESH_CRD_KINDS = Object.keys(KINDS) as MeshCrdKind[];

const has = (keys: readonly string[]) =>
  `[${keys.map((k) => `has(self.${k})`).join(', ')}].filter(x, x).size()`;

/**
 * The refinements zod checks in code, as CEL rules on the same zod schemas (so the API server refuses
 * what the engine refuses, with the engine's message). Inline Targets have none: they sit in a
 * string-or-object node that carries no CEL type.
 */
const CEL_RULES = new Map<unknown, { rule: string; message: string }[]>([
  [
    Selector,
    [
      {
        rule: 'has(self.serviceName) != has(self.matchLabels)',
        message: 'selector needs exactly one of serviceName or matchLabels',
      },
    ],
  ],
  [
    TransportSpec,
    [
      {
        rule: `${has(TRANSPORT_PROTOCOL_KEYS)} == 1`,
        message: `transport needs exactly one of ${TRANSPORT_PROTOCOL_KEYS.join(', ')}`,
      },
    ],
  ],
  [
    VirtualServiceSpec,
    [
      {
        rule: `${has(LISTENER_PROTOCOL_KEYS)} == 1`,
        message: `a VirtualService needs exactly one protocol key of ${LISTENER_PROTOCOL_KEYS.join(', ')}`,
      },
    ],
  ],
  [
    TargetSpec,
    [
      { rule: `${has(CLUSTER_PROTOCOL_KEYS)} <= 1`, message: 'a Target takes at most one protocol key' },
      {
        rule: `${has(['serviceName', 'endpoints', 'split'])} <= 1`,
        message: 'a Target takes only one of serviceName, endpoints, split',
      },
    ],
  ],
]);

type JsonSchema = Record<string, unknown>;

/** The JSON Schema of a zod schema with the CEL rules attached where their zod schema appears. */
function zodJsonSchema(schema: z.ZodType): JsonSchema {
  return z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'throw',
    override: (ctx) => {
      const rules = CEL_RULES.get(ctx.zodSchema);
      if (rules) ctx.jsonSchema['x-kubernetes-validations'] = rules;
      if (ctx.zodSchema === Conditions) {
        ctx.jsonSchema['x-kubernetes-list-type'] = 'map';
        ctx.jsonSchema['x-kubernetes-list-map-keys'] = ['type'];
      }
    },
  }) as JsonSchema;
}

const SCALAR_KEYS = ['description', 'format', 'pattern', 'minLength', 'maxLength', 'minItems', 'maxItems'];
const PASSTHROUGH = new Set([
  ...SCALAR_KEYS,
  'x-kubernetes-validations',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
]);
const HANDLED = new Set([
  ...PASSTHROUGH,
  '$schema',
  'type',
  'properties',
  'required',
  'additionalProperties',
  'propertyNames',
  'items',
  'enum',
  'const',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'anyOf',
  'oneOf',
]);

/**
 * Turns the JSON Schema zod writes into a structural schema (apiextensions.k8s.io/v1): every node typed,
 * no $ref, unions only as the API server allows them. Throws on anything it cannot express, so a model
 * change that needs a new rule fails the tests instead of producing a CRD the server refuses.
 */
export function toStructural(node: JsonSchema, where = '$'): JSONSchemaProps {
  for (const k of Object.keys(node)) {
    if (!HANDLED.has(k)) throw new Error(`${where}: cannot express "${k}" in a structural schema`);
  }
  const union = (node.anyOf ?? node.oneOf) as JsonSchema[] | undefined;
  if (union) return unionToStructural(node, union, where);

  const out: JSONSchemaProps = {};
  if (node.type !== undefined) {
    if (typeof node.type !== 'string') throw new Error(`${where}: a list of types is not structural`);
    out.type = node.type as JSONSchemaProps['type'];
  }
  for (const k of PASSTHROUGH) if (node[k] !== undefined) (out as JsonSchema)[k] = node[k];
  if (node.const !== undefined) out.enum = [node.const];
  if (node.enum !== undefined) out.enum = node.enum as unknown[];
  numericBounds(node, out);

  switch (out.type) {
    case undefined:
      // z.unknown(): any JSON value, kept as written.
      if (Object.keys(out).some((k) => k !== 'description'))
        throw new Error(`${where}: untyped node with constraints`);
      out['x-kubernetes-preserve-unknown-fields'] = true;
      break;
    case 'object':
      objectToStructural(node, out, where);
      break;
    case 'array':
      if (!node.items || typeof node.items !== 'object') throw new Error(`${where}: an array needs items`);
      out.items = toStructural(node.items as JsonSchema, `${where}[]`);
      break;
  }
  return out;
}

function objectToStructural(node: JsonSchema, out: JSONSchemaProps, where: string): void {
  const props = node.properties as Record<string, JsonSchema> | undefined;
  const extra = node.additionalProperties as JsonSchema | boolean | undefined;
  if (props) {
    out.properties = Object.fromEntries(
      Object.entries(props).map(([k, v]) => [k, toStructural(v, `${where}.${k}`)]),
    );
    if (Array.isArray(node.required) && node.required.length > 0) out.required = node.required as string[];
    // `additionalProperties: false` (a strict zod object) is the API server's default pruning: it may not be
    // combined with properties. A loose object (`{}`) keeps what it does not know.
    if (extra !== undefined && extra !== false) {
      if (!isEmptySchema(extra)) throw new Error(`${where}: properties with typed additionalProperties`);
      out['x-kubernetes-preserve-unknown-fields'] = true;
    }
  } else if (extra === undefined || extra === true || isEmptySchema(extra)) {
    // A record of anything (a JSONPredicate): really free-form.
    out['x-kubernetes-preserve-unknown-fields'] = true;
  } else if (extra !== false) {
    out.additionalProperties = toStructural(extra, `${where}.*`);
  }
}

function isEmptySchema(s: unknown): boolean {
  return s === true || (typeof s === 'object' && s !== null && Object.keys(s).length === 0);
}

/** zod's safe-integer bounds say nothing to Kubernetes; the 2020-12 numeric exclusive bounds become OpenAPI 3.0's. */
function numericBounds(node: JsonSchema, out: JSONSchemaProps): void {
  const min = node.minimum as number | undefined;
  const max = node.maximum as number | undefined;
  if (min !== undefined && min !== Number.MIN_SAFE_INTEGER) out.minimum = min;
  if (max !== undefined && max !== Number.MAX_SAFE_INTEGER) out.maximum = max;
  if (node.exclusiveMinimum !== undefined || node.exclusiveMaximum !== undefined) {
    throw new Error('exclusive bounds are not used by the model; add their OpenAPI 3.0 form when they are');
  }
}

/**
 * The unions the model has: int-or-string (x-kubernetes-int-or-string), objects (one object holding every
 * branch's properties; `oneOf` of the branches' required keys keeps them apart), and string-or-object
 * (a name or an inline object): no structural type covers both, so that node is untyped with
 * x-kubernetes-preserve-unknown-fields and still validates the object form through its properties.
 */
function unionToStructural(node: JsonSchema, branches: JsonSchema[], where: string): JSONSchemaProps {
  const types = branches.map((b) => b.type);
  const description = node.description as string | undefined;
  const withDescription = (s: JSONSchemaProps): JSONSchemaProps =>
    description !== undefined ? { description, ...s } : s;
  const key = [...new Set(types)].sort().join(',');
  if (key === 'integer,string' && branches.length === 2) {
    return withDescription({
      'x-kubernetes-int-or-string': true,
      anyOf: [{ type: 'integer' }, { type: 'string' }],
    });
  }
  const objects = branches.filter((b) => b.type === 'object').map((b, i) => toStructural(b, `${where}|${i}`));
  if (key === 'object') {
    const merged = mergeObjects(objects, where);
    const requiredSets = objects.map((o) => o.required ?? []);
    if (requiredSets.every((r) => r.length > 0))
      merged.oneOf = requiredSets.map((required) => ({ required }));
    return withDescription(merged);
  }
  if (key === 'object,string') {
    // CEL needs types all the way up ("unable to convert structural schema to CEL declarations" below an
    // untyped node): the object form's refinements stay with zod, and the engine reports them.
    const merged = withoutCel(mergeObjects(objects, where));
    delete merged.type;
    if (objects.length > 1) throw new Error(`${where}: string-or-object with several object forms`);
    // The string form's constraints apply to strings only, as the object form's apply to objects only.
    const str = toStructural(
      branches.find((b) => b.type === 'string')!,
      `${where}|string`,
    );
    const { type: _string, description: _d, ...strConstraints } = str;
    return withDescription({ ...strConstraints, ...merged, 'x-kubernetes-preserve-unknown-fields': true });
  }
  throw new Error(`${where}: a union of ${types.join(', ')} has no structural form`);
}

function withoutCel(s: JSONSchemaProps): JSONSchemaProps {
  const { 'x-kubernetes-validations': _rules, ...rest } = s;
  const out: JSONSchemaProps = { ...rest };
  if (rest.properties) {
    out.properties = Object.fromEntries(Object.entries(rest.properties).map(([k, v]) => [k, withoutCel(v)]));
  }
  if (rest.items) out.items = withoutCel(rest.items);
  if (rest.additionalProperties) out.additionalProperties = withoutCel(rest.additionalProperties);
  return out;
}

function mergeObjects(objects: JSONSchemaProps[], where: string): JSONSchemaProps {
  if (objects.length === 1) return { ...objects[0]! };
  const properties: Record<string, JSONSchemaProps> = {};
  for (const o of objects) {
    if (o['x-kubernetes-preserve-unknown-fields'] || o['x-kubernetes-validations'])
      throw new Error(`${where}: cannot merge objects with extensions`);
    for (const [k, v] of Object.entries(o.properties ?? {})) {
      if (properties[k] && JSON.stringify(properties[k]) !== JSON.stringify(v))
        throw new Error(`${where}.${k}: union branches disagree on this property`);
      properties[k] = v;
    }
  }
  return { type: 'object', properties };
}

/** The openAPIV3Schema of one kind: the spec and status from the zod schemas, metadata left to the API server. */
export function crdSchema(kind: MeshCrdKind): JSONSchemaProps {
  const info: KindInfo = KINDS[kind];
  return {
    type: 'object',
    description: info.description,
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      // The API server validates and prunes metadata itself (a `selector` under it is dropped: the seed
      // dialect's `metadata.selector` must move to spec.selector, which lib/parse/seedDialect.ts does).
      metadata: { type: 'object' },
      spec: toStructural(zodJsonSchema(info.spec), 'spec'),
      status: toStructural(zodJsonSchema(MeshResourceStatus), 'status'),
    },
    required: ['spec'],
  };
}

/** The CustomResourceDefinition of one mesh kind. */
export function meshCrd(kind: MeshCrdKind): CustomResourceDefinition {
  const info: KindInfo = KINDS[kind];
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${info.plural}.${CRD_GROUP}`, labels: { 'app.kubernetes.io/part-of': 'meshdeck' } },
    spec: {
      group: CRD_GROUP,
      scope: 'Namespaced',
      names: {
        kind,
        listKind: `${kind}List`,
        plural: info.plural,
        singular: kind.toLowerCase(),
        shortNames: [info.shortName],
        categories: ['msm', 'meshdeck'],
      },
      versions: [
        {
          name: CRD_VERSION,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: crdSchema(kind) },
          subresources: { status: {} },
          additionalPrinterColumns: info.columns,
        },
      ],
    },
  };
}

/** The three CRDs, VirtualService, Route, Target. */
export function meshCrds(): CustomResourceDefinition[] {
  return MESH_CRD_KINDS.map(meshCrd);
}

/** The resource name of a kind's CRD, e.g. `virtualservices`. */
export function crdPlural(kind: MeshCrdKind): string {
  return KINDS[kind].plural;
}

/** The file a kind's CRD is written to under deploy/crds/, e.g. `virtualservices.msm.l7mp.io.yaml`. */
export function crdFileName(kind: MeshCrdKind): string {
  return `${crdPlural(kind)}.${CRD_GROUP}.yaml`;
}

/** The YAML of a kind's CRD as written to deploy/crds/ (a generated-file header, then the object). */
export function meshCrdYaml(kind: MeshCrdKind): string {
  return (
    `# Generated from the zod model by scripts/gen-crds.ts (lib/kube/crds.ts); do not edit.\n` +
    toYaml(meshCrd(kind), { lineWidth: 0, aliasDuplicateObjects: false, singleQuote: true })
  );
}
