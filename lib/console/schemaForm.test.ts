import { describe, expect, it } from 'vitest';
import { meshJsonSchema } from '../model/jsonSchemas';
import type { Diagnostic } from '../model/diagnostic';
import {
  defaultFor,
  diagnosticsByField,
  type JsonSchema,
  parseNumberInput,
  pickVariant,
  variants,
  widgetFor,
} from './schemaForm';

const vs = meshJsonSchema('VirtualService') as JsonSchema;
const spec = vs.properties!.spec!;
const route = spec.properties!.rules!.items!.properties!.action!.properties!.route!;

describe('generated form helpers', () => {
  it('picks a widget for every kind of schema node of the model', () => {
    expect(widgetFor(vs)).toBe('object');
    expect(widgetFor(vs.properties!.kind!)).toBe('const');
    expect(widgetFor(spec.properties!.udp!.properties!.port!)).toBe('integer');
    expect(widgetFor(spec.properties!.rules!)).toBe('array');
    expect(widgetFor(route)).toBe('union');
    expect(widgetFor(vs.properties!.metadata!.properties!.labels!)).toBe('record');
    expect(widgetFor(spec.properties!.rules!.items!.properties!.match!)).toBe('json');
    expect(widgetFor(spec.properties!.options!.properties!.removeOrphanSessions!)).toBe('boolean');
    const retry = meshJsonSchema('Route') as JsonSchema;
    expect(widgetFor(retry.properties!.spec!.properties!.retry!.properties!.retry_on!)).toBe('enum');
  });

  it('matches a union value to its variant: a name or an inline Route', () => {
    expect(variants(route)).toHaveLength(2);
    expect(pickVariant(route, 'echo-route')).toBe(0);
    expect(pickVariant(route, { destination: 'x' })).toBe(1);
  });

  it('makes defaults with the required fields filled', () => {
    expect(defaultFor(vs.properties!.metadata!)).toEqual({ name: '' });
    expect(defaultFor(spec.properties!.udp!.properties!.port!)).toBe(1);
    expect(defaultFor(variants(route)[1]!)).toEqual({ destination: '' });
  });

  it('reads numbers and says what is wrong with one that is not accepted', () => {
    const port = spec.properties!.udp!.properties!.port!;
    expect(parseNumberInput('9001', port)).toEqual({ value: 9001 });
    expect(parseNumberInput('90x', port)).toEqual({ error: '"90x" is not a number' });
    expect(parseNumberInput('1.5', port)).toEqual({ error: '1.5 is not a whole number' });
    expect(parseNumberInput('70000', port)).toEqual({ error: '70000 is above the maximum 65535' });
  });

  it('shows each diagnostic on the deepest field that exists', () => {
    const value = { spec: { rules: [{ action: { route: 'r' } }] } };
    const d = (path: string): Diagnostic => ({
      severity: 'error',
      code: 'x',
      message: path,
      object: { kind: 'VirtualService', name: 'v' },
      path,
    });
    const m = diagnosticsByField(value, [d('spec.rules[0].action.route'), d('spec.udp.port'), d('')]);
    expect([...m.keys()].sort()).toEqual(['', 'spec', 'spec.rules[0].action.route']);
  });
});
