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
  return error.issues.map((issue) => {
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

/** zod's message, or a plainer one for the two issues people meet most: missing and unknown fields. */
function describeIssue(issue: z.core.$ZodIssue, object: unknown): string {
  if (issue.path.length > 0 && valueAt(object, issue.path) === undefined) return 'required field is missing';
  if (issue.code === 'unrecognized_keys')
    return `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
  return issue.message;
}

function valueAt(v: unknown, path: readonly PropertyKey[]): unknown {
  let cur = v;
  for (const k of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[k];
  }
  return cur;
}
