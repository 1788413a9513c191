import { describe, expect, it } from 'vitest';
import { Route } from '../model/resources';
import { schemaDiagnostics } from './objectDiagnostics';

/** `path: message` of each schema diagnostic of a Route with this spec. */
function problems(spec: unknown): string[] {
  const candidate = {
    apiVersion: 'msm.l7mp.io/v1',
    kind: 'Route',
    metadata: { name: 'r', namespace: 'default' },
    spec,
  };
  const parsed = Route.safeParse(candidate);
  if (parsed.success) return [];
  return schemaDiagnostics(parsed.error, candidate, { kind: 'Route', name: 'r' }, () => ({
    file: 'f',
    line: 1,
  })).map((d) => `${d.path}: ${d.message}`);
}

describe('schemaDiagnostics', () => {
  it('says what a "name or inline object" field takes instead of zod\'s "Invalid input"', () => {
    expect(problems({ destination: 42 })).toEqual([
      'spec.destination: expected string or object, received number',
    ]);
    expect(problems({ destination: [1] })).toEqual([
      'spec.destination: expected string or object, received array',
    ]);
  });

  it('follows the alternative that got furthest: an inline Target with a bad field, at its own path', () => {
    expect(problems({ destination: { udp: { port: 'x' } } })).toEqual([
      'spec.destination.udp.port: expected number, received string',
    ]);
  });

  it('keeps the plain wording for missing and unknown fields', () => {
    expect(problems({ destination: 'a', retry: { num_retries: 3 }, extra: 1 })).toEqual(
      expect.arrayContaining([
        'spec.retry.retry_on: required field is missing',
        'spec: unknown field "extra"',
      ]),
    );
  });
});
