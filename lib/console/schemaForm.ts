/**
 * What the generated Inspector form needs from a JSON Schema (generated from the zod model): which
 * widget a schema node gets, the union variant a value matches, a default for a new value, and where
 * each diagnostic is shown (the deepest field that exists). No form is written per kind.
 */
import type { Diagnostic } from '../model/diagnostic';
import { formatFieldPath } from '../model/fieldPath';
import { type FieldPath, parseFieldPath } from './fieldPath';

export type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  description?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  pattern?: string;
  [k: string]: unknown;
};

export type Widget =
  | 'union'
  | 'const'
  | 'enum'
  | 'string'
  | 'number'
  | 'integer'
  | 'boolean'
  | 'object'
  | 'record'
  | 'array'
  | 'json';

/** The widget a schema node is edited with. */
export function widgetFor(schema: JsonSchema): Widget {
  if (schema.anyOf || schema.oneOf) return 'union';
  if (schema.const !== undefined) return 'const';
  if (Array.isArray(schema.enum)) return 'enum';
  const t = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (t) {
    case 'string':
      return 'string';
    case 'integer':
      return 'integer';
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'array':
      return schema.items ? 'array' : 'json';
    case 'object':
      if (schema.properties) return 'object';
      if (
        typeof schema.additionalProperties === 'object' &&
        widgetFor(schema.additionalProperties) !== 'json'
      )
        return 'record';
      return 'json';
    default:
      return 'json';
  }
}

/** The variants of a union. */
export function variants(schema: JsonSchema): JsonSchema[] {
  return schema.anyOf ?? schema.oneOf ?? [];
}

/** Index of the union variant a value fits (by JSON type), 0 when nothing fits. */
export function pickVariant(schema: JsonSchema, value: unknown): number {
  const list = variants(schema);
  const t = jsonType(value);
  const i = list.findIndex((v) => {
    const vt = Array.isArray(v.type) ? v.type : v.type ? [v.type] : [];
    if (vt.includes(t) || (t === 'integer' && vt.includes('number'))) return true;
    return v.const !== undefined && v.const === value;
  });
  return i < 0 ? 0 : i;
}

/** A short name for a union variant, for the variant switch (`name`, `inline object`). */
export function variantLabel(schema: JsonSchema): string {
  const w = widgetFor(schema);
  if (w === 'string') return 'name';
  if (w === 'object' || w === 'record') return 'inline object';
  if (w === 'array') return 'list';
  return w;
}

/** A value to start a new field with: required properties filled, the first enum value, the minimum. */
export function defaultFor(schema: JsonSchema): unknown {
  switch (widgetFor(schema)) {
    case 'union':
      return defaultFor(variants(schema)[0] ?? {});
    case 'const':
      return schema.const;
    case 'enum':
      return schema.enum?.[0];
    case 'string':
      return '';
    case 'integer':
    case 'number':
      return schema.minimum ?? 0;
    case 'boolean':
      return false;
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const k of schema.required ?? []) {
        const p = schema.properties?.[k];
        if (p) out[k] = defaultFor(p);
      }
      return out;
    }
    case 'record':
      return {};
    case 'array':
      return [];
    case 'json':
      return schema.type === 'object' ? {} : null;
  }
}

/** Reads a number typed in a field; an error message when it is not one the schema accepts. */
export function parseNumberInput(text: string, schema: JsonSchema): { value: number } | { error: string } {
  const t = text.trim();
  if (!/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(t)) return { error: `"${text}" is not a number` };
  const n = Number(t);
  if (widgetFor(schema) === 'integer' && !Number.isInteger(n)) return { error: `${t} is not a whole number` };
  if (schema.minimum !== undefined && n < schema.minimum)
    return { error: `${t} is below the minimum ${schema.minimum}` };
  if (schema.maximum !== undefined && n > schema.maximum)
    return { error: `${t} is above the maximum ${schema.maximum}` };
  return { value: n };
}

/**
 * Groups an object's diagnostics by the field that shows them: the deepest prefix of the
 * diagnostic's path that exists in the value (a missing field's error shows on its parent).
 */
export function diagnosticsByField(
  value: unknown,
  diagnostics: readonly Diagnostic[],
): Map<string, Diagnostic[]> {
  const out = new Map<string, Diagnostic[]>();
  for (const d of diagnostics) {
    const anchor = formatFieldPath(existingPrefix(value, d.path ? parseFieldPath(d.path) : []));
    const list = out.get(anchor) ?? [];
    list.push(d);
    out.set(anchor, list);
  }
  return out;
}

/** The longest prefix of `path` that exists in `value`. */
export function existingPrefix(value: unknown, path: FieldPath): (string | number)[] {
  const out: (string | number)[] = [];
  let cur = value;
  for (const k of path) {
    if (cur === null || typeof cur !== 'object' || !(k in (cur as object))) break;
    cur = (cur as Record<string | number, unknown>)[k];
    out.push(k);
  }
  return out;
}

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}
