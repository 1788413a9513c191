import { type Diagnostic, objectKey } from '../model/diagnostic';

/**
 * A React key per diagnostic that stays with it while others come and go: severity, code, object,
 * field path and message (not the source line, which an edit above it shifts), with `#n` on the
 * second and later diagnostics that agree on all of these. Keyed by index, a new diagnostic at the top
 * of the list rewrote every row below it (hundreds of text nodes, one relayout per edit on big meshes).
 */
export function diagnosticKeys(diagnostics: readonly Diagnostic[]): string[] {
  const seen = new Map<string, number>();
  return diagnostics.map((d) => {
    const base = `${d.severity}|${d.code}|${objectKey(d.object)}|${d.path ?? ''}|${d.message}`;
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    return n === 0 ? base : `${base}#${n}`;
  });
}
