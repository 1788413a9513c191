import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { Route, Target, VirtualService } from '../model/resources';
import {
  crdFileName,
  crdSchema,
  type JSONSchemaProps,
  MESH_CRD_KINDS,
  meshCrd,
  meshCrdYaml,
  type MeshCrdKind,
  toStructural,
} from './crds';
import { Condition, MeshResourceStatus } from './status';

const ZOD = { VirtualService, Route, Target } as const;
const JUNCTORS = ['anyOf', 'oneOf', 'allOf', 'not'] as const;
/** Keys apiextensions.k8s.io/v1 JSONSchemaProps knows and a structural CRD may use. */
const ALLOWED_KEYS = new Set([
  'type',
  'description',
  'format',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'pattern',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'minItems',
  'maxItems',
  'anyOf',
  'oneOf',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-int-or-string',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-validations',
]);

interface Visit {
  node: JSONSchemaProps;
  path: string;
  /** Every ancestor has a type (CEL can only be compiled there). */
  typedAncestry: boolean;
}

function walk(root: JSONSchemaProps): Visit[] {
  const out: Visit[] = [];
  const go = (node: JSONSchemaProps, p: string, typedAncestry: boolean) => {
    out.push({ node, path: p, typedAncestry });
    const typed = typedAncestry && node.type !== undefined;
    for (const [k, v] of Object.entries(node.properties ?? {})) go(v, `${p}.${k}`, typed);
    if (node.items) go(node.items, `${p}[]`, typed);
    if (node.additionalProperties) go(node.additionalProperties, `${p}.*`, typed);
  };
  go(root, '', true);
  return out;
}

const issuesOf = (schema: z.ZodType, value: unknown) =>
  schema.safeParse(value).error?.issues.map((i) => i.message) ?? [];

describe('mesh CRDs', () => {
  it.each(MESH_CRD_KINDS)('deploy/crds/ holds the current %s CRD (npm run gen:crds)', (kind) => {
    const file = path.join(__dirname, '..', '..', 'deploy', 'crds', crdFileName(kind));
    const text = readFileSync(file, 'utf8');
    expect(text).toBe(meshCrdYaml(kind));
    expect(parseYaml(text)).toEqual(JSON.parse(JSON.stringify(meshCrd(kind))));
  });

  it('names: group msm.l7mp.io, v1 served and stored, namespaced, short names and categories', () => {
    const names = MESH_CRD_KINDS.map((k) => {
      const crd = meshCrd(k);
      expect(crd.spec.group).toBe('msm.l7mp.io');
      expect(crd.spec.scope).toBe('Namespaced');
      expect(crd.spec.versions.map((v) => [v.name, v.served, v.storage])).toEqual([['v1', true, true]]);
      expect(crd.spec.versions[0]!.subresources).toEqual({ status: {} });
      expect(crd.spec.names.categories).toContain('msm');
      expect(crd.metadata.name).toBe(`${crd.spec.names.plural}.msm.l7mp.io`);
      return [crd.spec.names.kind, crd.spec.names.plural, crd.spec.names.shortNames];
    });
    expect(names).toEqual([
      ['VirtualService', 'virtualservices', ['vsvc']],
      ['Route', 'routes', ['rt']],
      ['Target', 'targets', ['tgt']],
    ]);
  });

  describe.each(MESH_CRD_KINDS)('%s schema is structural', (kind: MeshCrdKind) => {
    const schema = crdSchema(kind);
    const visits = walk(schema);

    it('uses only JSONSchemaProps keys, and no $ref, definitions, const or propertyNames anywhere', () => {
      const text = JSON.stringify(schema);
      for (const bad of ['$ref', '$schema', 'definitions', '$defs', '"const"', 'propertyNames'])
        expect(text).not.toContain(bad);
      for (const { node, path: p } of visits) {
        for (const k of Object.keys(node)) expect(ALLOWED_KEYS.has(k), `${p}: ${k}`).toBe(true);
      }
    });

    it('types every node, except int-or-string and preserve-unknown-fields nodes', () => {
      for (const { node, path: p } of visits) {
        if (node.type !== undefined) continue;
        expect(
          node['x-kubernetes-int-or-string'] || node['x-kubernetes-preserve-unknown-fields'],
          `${p} has no type`,
        ).toBe(true);
      }
      for (const { node, path: p } of visits) {
        if (node.type === 'array') expect(node.items, `${p} items`).toBeDefined();
      }
    });

    it('never combines additionalProperties with properties, and never sets additionalProperties: false', () => {
      for (const { node, path: p } of visits) {
        if (node.additionalProperties !== undefined) {
          expect(node.properties, p).toBeUndefined();
          expect(node.additionalProperties, p).not.toBe(false);
        }
      }
    });

    it('puts nothing but value validation under anyOf/oneOf (the structural-allowed form)', () => {
      for (const { node, path: p } of visits) {
        for (const j of JUNCTORS) {
          for (const branch of ([] as JSONSchemaProps[]).concat((node as Record<string, never>)[j] ?? [])) {
            const keys = Object.keys(branch);
            if (node['x-kubernetes-int-or-string']) {
              expect(branch, p).toMatchObject({ type: expect.stringMatching(/^(integer|string)$/) });
            } else {
              expect(keys, `${p}.${j}`).toEqual(['required']);
              for (const r of (branch as { required: string[] }).required)
                expect(
                  node.properties?.[r],
                  `${p}.${j} names ${r}, which must be specified outside`,
                ).toBeDefined();
            }
          }
        }
      }
    });

    it('keeps CEL rules where every ancestor is typed (the API server cannot compile them elsewhere)', () => {
      for (const { node, path: p, typedAncestry } of visits) {
        if (node['x-kubernetes-validations']) expect(typedAncestry && node.type === 'object', p).toBe(true);
      }
    });

    it('metadata is left to the API server (only `type: object`)', () => {
      expect(schema.properties!.metadata).toEqual({ type: 'object' });
      expect(schema.required).toEqual(['spec']);
    });
  });

  it('preserves unknown fields only where the model is free-form or a name-or-object union', () => {
    const preserved = MESH_CRD_KINDS.flatMap((k) =>
      walk(crdSchema(k))
        .filter((v) => v.node['x-kubernetes-preserve-unknown-fields'])
        .map((v) => `${k}${v.path}`),
    );
    const allowed = [
      // z.unknown(): a rewrite's constant and a JSONPredicate's operands are any JSON.
      /\.action\.rewrite\[\]\.value$/,
      /\.rules\[\]\.match$/,
      // A static endpoint's spec is copied verbatim to l7mp (a loose zod object).
      /\.endpoints\[\]\.spec$/,
      // A Target reference (a name or an inline Target) and a rule's route (a name or an inline Route).
      /\.(destination|ingress\[\]|egress\[\])$/,
      /\.action\.route$/,
    ];
    expect(preserved.length).toBeGreaterThan(0);
    for (const p of preserved)
      expect(
        allowed.some((re) => re.test(p)),
        p,
      ).toBe(true);
    // The typed parts of an inline Target below such a node are still typed and pruned.
    const vs = crdSchema('VirtualService');
    const dest =
      vs.properties!.spec!.properties!.rules!.items!.properties!.action!.properties!.route!.properties!
        .destination!;
    expect(dest.type).toBeUndefined();
    expect(dest.properties!.udp!.type).toBe('object');
    expect(dest.properties!.udp!['x-kubernetes-preserve-unknown-fields']).toBeUndefined();
    expect(dest.minLength).toBe(1);
  });

  it('JSONSocket header entries are one object with oneOf the two forms', () => {
    const header = crdSchema('Target').properties!.spec!.properties!.jsonsocket!.properties!.header!.items!;
    expect(header.type).toBe('object');
    expect(Object.keys(header.properties!)).toEqual(['path', 'set']);
    expect(header.oneOf).toEqual([{ required: ['path'] }, { required: ['set'] }]);
  });

  it('the status subresource has Gateway-API-style conditions and observedGeneration', () => {
    for (const kind of MESH_CRD_KINDS) {
      const status = crdSchema(kind).properties!.status!;
      expect(status.properties!.observedGeneration).toMatchObject({ type: 'integer', minimum: 0 });
      const conditions = status.properties!.conditions!;
      expect(conditions).toMatchObject({
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['type'],
      });
      const item = conditions.items!;
      expect(item.required).toEqual(['type', 'status', 'lastTransitionTime', 'reason', 'message']);
      expect(item.properties!.status!.enum).toEqual(['True', 'False', 'Unknown']);
      expect(item.properties!.lastTransitionTime).toMatchObject({ type: 'string', format: 'date-time' });
      expect(item.properties!.observedGeneration).toMatchObject({ type: 'integer', minimum: 0 });
    }
    const ok = {
      type: 'Accepted',
      status: 'False',
      reason: 'Invalid',
      message: 'spec.udp.port: must be 1-65535',
      lastTransitionTime: '2026-01-01T00:00:00Z',
      observedGeneration: 2,
    };
    expect(Condition.safeParse(ok).success).toBe(true);
    expect(Condition.safeParse({ ...ok, status: 'Maybe' }).success).toBe(false);
    expect(Condition.safeParse({ ...ok, reason: 'not camel case' }).success).toBe(false);
    expect(MeshResourceStatus.safeParse({ observedGeneration: 2, conditions: [ok] }).success).toBe(true);
  });

  it('printer columns: ports, selector, conditions and age', () => {
    const cols = (k: MeshCrdKind) =>
      meshCrd(k).spec.versions[0]!.additionalPrinterColumns.map((c) => `${c.name}=${c.jsonPath}`);
    expect(cols('VirtualService')).toEqual(
      expect.arrayContaining([
        "Port=.spec['udp','tcp','http','websocket','grpc'].port",
        "JSONSocket-Port=.spec.jsonsocket.transport['udp','tcp','websocket'].port",
        'Service=.spec.selector.serviceName',
        'Accepted=.status.conditions[?(@.type=="Accepted")].status',
        'Programmed=.status.conditions[?(@.type=="Programmed")].status',
        'Age=.metadata.creationTimestamp',
      ]),
    );
    expect(cols('Route')).toEqual(
      expect.arrayContaining([
        'Destination=.spec.destination',
        'ResolvedRefs=.status.conditions[?(@.type=="ResolvedRefs")].status',
      ]),
    );
    expect(cols('Target')).toEqual(
      expect.arrayContaining([
        'Endpoints-From=.spec.serviceName',
        'Endpoints=.spec.endpoints[*].spec.address',
      ]),
    );
    for (const k of MESH_CRD_KINDS) {
      for (const c of meshCrd(k).spec.versions[0]!.additionalPrinterColumns)
        expect(c.jsonPath).toMatch(/^\./);
    }
  });

  // The CEL rules restate refinements zod checks in code: the API server must say what the engine says.
  it.each([
    ['VirtualService', 'spec', { selector: { serviceName: 's' }, udp: { port: 1 }, tcp: { port: 2 } }],
    ['VirtualService', 'spec', { selector: { serviceName: 's' } }],
    [
      'VirtualService',
      'spec.selector',
      { selector: { serviceName: 's', matchLabels: {} }, udp: { port: 1 } },
    ],
    [
      'VirtualService',
      'spec.jsonsocket.transport',
      { selector: { serviceName: 's' }, jsonsocket: { transport: {} } },
    ],
    ['Target', 'spec', { echo: {}, discard: {} }],
    ['Target', 'spec', { serviceName: 'a', split: [{ serviceName: 'b', weight: 1 }] }],
  ] as const)("%s %s: the CEL message is zod's", (kind, at, spec) => {
    const obj = { apiVersion: 'msm.l7mp.io/v1', kind, metadata: { name: 'x' }, spec };
    const messages = issuesOf(ZOD[kind], obj);
    expect(messages).toHaveLength(1);
    let node: JSONSchemaProps = crdSchema(kind);
    for (const seg of at.split('.')) node = node.properties![seg]!;
    const rules = node['x-kubernetes-validations']!.map((r) => r.message);
    expect(
      rules.some((m) => messages[0]!.startsWith(m)),
      `${messages[0]} vs ${rules.join(' | ')}`,
    ).toBe(true);
  });

  it('int-or-string becomes x-kubernetes-int-or-string; an inexpressible union throws', () => {
    const json = (s: z.ZodType) => z.toJSONSchema(s, { io: 'input' }) as Record<string, unknown>;
    expect(toStructural(json(z.union([z.number().int(), z.string()])))).toEqual({
      'x-kubernetes-int-or-string': true,
      anyOf: [{ type: 'integer' }, { type: 'string' }],
    });
    expect(() => toStructural(json(z.union([z.string(), z.array(z.string())])))).toThrow(
      /no structural form/,
    );
    expect(() => toStructural(json(z.tuple([z.string()])))).toThrow(/cannot express "prefixItems"/);
  });
});
