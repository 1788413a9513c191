/**
 * The diagnostics every reader of mesh objects (manifest files, the Kubernetes API) gives alike: the
 * seed dialect's conversions and the zod schema's issues, worded for a person.
 */
import type { z } from 'zod';
import type { Diagnostic, ObjectRef } from '../model/diagnostic';
import { formatFieldPath } from '../model/fieldPath';
import type { DialectConversion } from './seedDialect';

type Source = NonNullable<Diagnostic['source']>;

/** A warning that the object was written in the seed's dialect and read as the canonical form. */
export function dialectDiagnostic(c: DialectConversion, object: ObjectRef, source: Source): Diagnostic {
  return {
    severity: 'warning',
    code: c.code,
    message: c.message,
    object,
    path: c.path,
    source,
    rule: 'seeds/INDEX.md: Known looseness in the MSM API document',
  };
}

/** One error per schema issue, at its field path; `sourceAt` says where that path is written. */
export function schemaDiagnostics(
  error: z.ZodError,
  candidate: unknown,
  object: ObjectRef,
  sourceAt: (path: string) => Source,
): Diagnostic[] {
  return error.issues.map((raw) => {
    const issue = unwrapUnion(raw, candidate);
    const path = formatFieldPath(issue.path);
    return {
      severity: 'error',
      code: 'schema',
      message: describeIssue(issue, candidate),
      object,
      path: path || undefined,
      source: sourceAt(path),
    };
  });
}

/**
 * A union's issue ("Invalid input" from zod, for a value that is "a name or an inline object") made
 * specific: when no alternative matched even the value's type, one issue listing what each expects;
 * else the issue of the alternative that got furthest into the value (the inline object with a bad
 * port), at its own deeper path.
 */
function unwrapUnion(issue: z.core.$ZodIssue, object: unknown): z.core.$ZodIssue {
  if (issue.code !== 'invalid_union' || issue.errors.length === 0) return issue;
  const branches = issue.errors.filter((b) => b.length > 0);
  const typeOnly = branches.every(
    (b) => b.length === 1 && b[0]!.code === 'invalid_type' && b[0]!.path.length === 0,
  );
  if (typeOnly && branches.length > 0) {
    const expected = [...new Set(branches.map((b) => (b[0] as z.core.$ZodIssueInvalidType).expected))];
    return {
      ...issue,
      message: `expected ${expected.join(' or ')}, received ${typeName(valueAt(object, issue.path))}`,
    } as z.core.$ZodIssue;
  }
  const depth = (b: z.core.$ZodIssue[]) => Math.max(...b.map((i) => i.path.length));
  const furthest = branches.reduce((a, b) => (depth(b) > depth(a) ? b : a), branches[0]!);
  const first = furthest[0]!;
  return unwrapUnion({ ...first, path: [...issue.path, ...first.path] } as z.core.$ZodIssue, object);
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

/** zod's message, or a plainer one for the two issues people meet most: missing and unknown fields. */
function describeIssue(issue: z.core.$ZodIssue, object: unknown): string {
  if (issue.path.length > 0 && valueAt(object, issue.path) === undefined) return 'required field is missing';
  if (issue.code === 'unrecognized_keys')
    return `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
  // zod 4 starts type errors with "Invalid input: "; the field path already says where.
  return issue.message.replace(/^Invalid input: (?=expected )/, '');
}

function valueAt(v: unknown, path: readonly PropertyKey[]): unknown {
  let cur = v;
  for (const k of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[k];
  }
  return cur;
}
