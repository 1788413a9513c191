import { type Diagnostic, formatObjectRef, type Severity } from '@/lib/model/diagnostic';

/** What the CLI calls each severity; `info` diagnostics are notes to the user. */
const LABEL: Record<Severity, string> = { error: 'error', warning: 'warning', info: 'note' };
const LABEL_WIDTH = Math.max(...Object.values(LABEL).map((l) => l.length));

/**
 * Formats diagnostics for a terminal, one per line: severity, object (`Kind ns/name`), field path,
 * `file:line` and message, separated by two spaces, with the rule the diagnostic implements (a seed
 * quote or a note reference) on an indented second line. Absent parts are left out.
 */
export function formatDiagnostics(diagnostics: readonly Diagnostic[]): string {
  return diagnostics.map(formatDiagnostic).join('');
}

function formatDiagnostic(d: Diagnostic): string {
  const parts = [LABEL[d.severity].padEnd(LABEL_WIDTH)];
  // A problem with a whole file names the file as its object; saying so twice adds nothing.
  if (!(d.object.kind === 'File' && d.source?.file === d.object.name)) parts.push(formatObjectRef(d.object));
  if (d.path) parts.push(d.path);
  if (d.source) parts.push(formatSource(d.source));
  parts.push(d.message);
  let out = `${parts.join('  ')}\n`;
  if (d.rule) out += `${' '.repeat(LABEL_WIDTH + 2)}rule: ${d.rule}\n`;
  return out;
}

/** `file:line[:col]`, the form editors and terminals turn into links. */
function formatSource(source: NonNullable<Diagnostic['source']>): string {
  return source.col === undefined
    ? `${source.file}:${source.line}`
    : `${source.file}:${source.line}:${source.col}`;
}

/** The summary line: `2 errors, 1 warning, 0 notes`. */
export function summarizeDiagnostics(diagnostics: readonly Diagnostic[]): string {
  const count = (s: Severity) => diagnostics.filter((d) => d.severity === s).length;
  return [
    plural(count('error'), 'error'),
    plural(count('warning'), 'warning'),
    plural(count('info'), 'note'),
  ].join(', ');
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
