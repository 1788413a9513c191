import { describe, expect, it } from 'vitest';
import type { Diagnostic } from '@/lib/model/diagnostic';
import { formatDiagnostics, summarizeDiagnostics } from './formatDiagnostics';

const full: Diagnostic = {
  severity: 'error',
  code: 'dangling',
  message: '"nope" is not a Target',
  object: { kind: 'VirtualService', namespace: 'default', name: 'gw' },
  path: 'spec.rules[0].action.route.destination',
  source: { file: 'mesh/a.yaml', line: 12 },
  rule: 'If a naked Kubernetes service does no exist either, return an error.',
};

describe('formatDiagnostics', () => {
  it('prints severity, object, field path, file:line and message, and the rule on an indented line', () => {
    expect(formatDiagnostics([full])).toBe(
      'error    VirtualService default/gw  spec.rules[0].action.route.destination  mesh/a.yaml:12  "nope" is not a Target\n' +
        '         rule: If a naked Kubernetes service does no exist either, return an error.\n',
    );
  });

  it('leaves out what a diagnostic does not have, calls info a note and adds the column', () => {
    const note: Diagnostic = {
      severity: 'info',
      code: 'x',
      message: 'fyi',
      object: { kind: 'Pod', name: 'p' },
    };
    const file: Diagnostic = {
      severity: 'warning',
      code: 'yaml',
      message: 'odd',
      object: { kind: 'File', name: 'b.yaml' },
      source: { file: 'b.yaml', line: 3, col: 7 },
    };
    expect(formatDiagnostics([note, file])).toBe('note     Pod p  fyi\nwarning  b.yaml:3:7  odd\n');
  });

  it('summarizes the counts per severity', () => {
    expect(summarizeDiagnostics([])).toBe('0 errors, 0 warnings, 0 notes');
    expect(
      summarizeDiagnostics([full, full, { ...full, severity: 'warning' }, { ...full, severity: 'info' }]),
    ).toBe('2 errors, 1 warning, 1 note');
  });
});
