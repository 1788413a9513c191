import { describe, expect, it } from 'vitest';
import type { Diagnostic } from '../model/diagnostic';
import { diagnosticKeys } from './diagnosticKeys';

const diag = (name: string, over: Partial<Diagnostic> = {}): Diagnostic => ({
  severity: 'error',
  code: 'dangling-reference',
  message: `route ${name} points nowhere`,
  object: { kind: 'Route', namespace: 'default', name },
  path: 'spec.destination',
  source: { file: `${name}.yaml`, line: 3 },
  ...over,
});

describe('diagnosticKeys', () => {
  it('gives each diagnostic the same key when another one is added before it', () => {
    const before = [diag('a'), diag('b')];
    const after = [diag('new'), ...before];
    expect(diagnosticKeys(after).slice(1)).toEqual(diagnosticKeys(before));
  });

  it('keeps the key when only the source line moved, and changes it when the message did', () => {
    const [k] = diagnosticKeys([diag('a')]);
    expect(diagnosticKeys([diag('a', { source: { file: 'a.yaml', line: 9 } })])[0]).toBe(k);
    expect(diagnosticKeys([diag('a', { message: 'other' })])[0]).not.toBe(k);
    expect(diagnosticKeys([diag('a', { severity: 'warning' })])[0]).not.toBe(k);
  });

  it('makes keys unique when diagnostics agree on everything but their line', () => {
    const keys = diagnosticKeys([diag('a'), diag('a', { source: { file: 'a.yaml', line: 7 } }), diag('a')]);
    expect(new Set(keys).size).toBe(3);
  });
});
