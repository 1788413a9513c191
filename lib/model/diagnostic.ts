import { z } from 'zod';

export const SourceLocation = z.object({
  file: z.string(),
  line: z.number().int().min(1),
  col: z.number().int().min(1).optional(),
});
export type SourceLocation = z.infer<typeof SourceLocation>;

/** The object a diagnostic is about. Problems with a whole file name the file (kind `File`). */
export const ObjectRef = z.object({
  kind: z.string(),
  namespace: z.string().optional(),
  name: z.string(),
});
export type ObjectRef = z.infer<typeof ObjectRef>;

export const Severity = z.enum(['error', 'warning', 'info']);
export type Severity = z.infer<typeof Severity>;

/** A problem or a note about the mesh: what, where (object, field path, source) and why. */
export const Diagnostic = z.object({
  severity: Severity,
  code: z.string(),
  message: z.string(),
  object: ObjectRef,
  path: z.string().optional(),
  source: SourceLocation.optional(),
  /** The seed's words or the note this behaviour implements. */
  rule: z.string().optional(),
});
export type Diagnostic = z.infer<typeof Diagnostic>;

/** `Kind/namespace/name`, the key the engine indexes objects by. */
export function objectKey(ref: ObjectRef): string {
  return `${ref.kind}/${ref.namespace ?? ''}/${ref.name}`;
}

export function formatObjectRef(ref: ObjectRef): string {
  return ref.namespace ? `${ref.kind} ${ref.namespace}/${ref.name}` : `${ref.kind} ${ref.name}`;
}

const SEVERITY_ORDER: Record<Severity, number> = { error: 0, warning: 1, info: 2 };

/** Codes that only report the consequence of another problem: listed after their cause. */
const CONSEQUENCES = new Set(['route-dropped', 'rule-dropped', 'listener-dropped']);

/** Whether a diagnostic only reports the consequence of another (a rule dropped since its route is). */
export function isConsequence(d: Pick<Diagnostic, 'code'>): boolean {
  return CONSEQUENCES.has(d.code);
}

/** Orders diagnostics so that output never depends on input order, causes before consequences. */
export function compareDiagnostics(a: Diagnostic, b: Diagnostic): number {
  return (
    SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity] ||
    compareObjectKeys(a.object, b.object) ||
    Number(CONSEQUENCES.has(a.code)) - Number(CONSEQUENCES.has(b.code)) ||
    cmp(a.path ?? '', b.path ?? '') ||
    cmp(a.code, b.code) ||
    cmp(a.message, b.message)
  );
}

/**
 * `cmp(objectKey(a), objectKey(b))` without building the keys when kind and namespace agree (the
 * usual case: renders sort hundreds of diagnostics, and every comparison built two strings).
 */
function compareObjectKeys(a: ObjectRef, b: ObjectRef): number {
  if (a.kind === b.kind && (a.namespace ?? '') === (b.namespace ?? '')) return cmp(a.name, b.name);
  return cmp(objectKey(a), objectKey(b));
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Sorts and removes exact duplicates. */
export function normalizeDiagnostics(ds: Diagnostic[]): Diagnostic[] {
  const sorted = [...ds].sort(compareDiagnostics);
  return sorted.filter(
    (d, i) =>
      i === 0 ||
      compareDiagnostics(d, sorted[i - 1]!) !== 0 ||
      d.source?.file !== sorted[i - 1]!.source?.file,
  );
}
