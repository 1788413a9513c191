import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import { describe, expect, it } from 'vitest';
import { meshJsonSchema, SCHEMA_KINDS } from './jsonSchemas';

describe('generated JSON Schemas', () => {
  it.each(SCHEMA_KINDS)('schemas/%s.json is up to date with the zod model (npm run schemas:json)', (kind) => {
    const file = path.join(__dirname, '..', '..', 'schemas', `${kind}.json`);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(meshJsonSchema(kind));
  });

  it('accepts a valid VirtualService and rejects a typo and a bad port', () => {
    const validate = new Ajv2020({ strict: false }).compile(meshJsonSchema('VirtualService'));
    const vs = {
      apiVersion: 'msm.l7mp.io/v1',
      kind: 'VirtualService',
      metadata: { name: 'gw' },
      spec: { selector: { serviceName: 'gw-svc' }, udp: { port: 9001 }, rules: [{ action: { route: 'r' } }] },
    };
    expect(validate(vs)).toBe(true);
    expect(validate({ ...vs, spec: { ...vs.spec, rulez: [] } })).toBe(false);
    expect(validate({ ...vs, spec: { ...vs.spec, udp: { port: 70000 } } })).toBe(false);
  });
});
