import { readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Diagnostic } from '../model/diagnostic';
import { branchName, commitMessage, commitSubject, pullRequestBody } from './messages';
import { type ObjectChange, objectChanges, type ObjectChanges } from './objectChanges';
import { renderedChanges } from './renderedChanges';

const NOW = new Date('2026-11-26T04:07:49Z');

function change(
  partial: Partial<ObjectChange> & Pick<ObjectChange, 'kind' | 'name' | 'change'>,
): ObjectChange {
  const namespace = partial.namespace ?? 'default';
  return {
    key: `${partial.kind}/${namespace}/${partial.name}`,
    namespace,
    file: 'mesh.yaml',
    line: 1,
    ...partial,
  };
}

const none: ObjectChanges = { objects: [], files: [], duplicates: [] };

/** What `git check-ref-format` accepts (the rules that apply to our alphabet and more). */
function validRef(name: string): boolean {
  return (
    !/[\x00-\x20~^:?*[\\\x7f]/.test(name) &&
    !name.includes('..') &&
    !name.includes('@{') &&
    !name.includes('//') &&
    !name.endsWith('/') &&
    !name.endsWith('.') &&
    !name.endsWith('.lock') &&
    name.split('/').every((c) => c.length > 0 && !c.startsWith('.'))
  );
}

describe('branchName', () => {
  it('names the one object changed, with the UTC date and time', () => {
    const c = { ...none, objects: [change({ kind: 'VirtualService', name: 'gateway', change: 'modified' })] };
    expect(branchName(c, NOW)).toBe('meshdeck/20261126-0407-edit-virtualservice-gateway');
  });

  it('summarises several changes and layout-only drafts', () => {
    const two = {
      ...none,
      objects: [
        change({ kind: 'Route', name: 'r1', change: 'added' }),
        change({ kind: 'Route', name: 'r2', change: 'added' }),
      ],
    };
    expect(branchName(two, NOW)).toBe('meshdeck/20261126-0407-add-r1-and-1-more');
    const mixed = {
      ...two,
      objects: [...two.objects, change({ kind: 'Target', name: 't', change: 'deleted' })],
    };
    expect(branchName(mixed, NOW)).toBe('meshdeck/20261126-0407-update-3-objects');
    const layout: ObjectChanges = {
      ...none,
      files: [{ path: '.meshdeck-layout.json', change: 'modified', what: 'non-object' }],
    };
    expect(branchName(layout, NOW)).toBe('meshdeck/20261126-0407-layout');
    expect(branchName(none, NOW)).toBe('meshdeck/20261126-0407-draft');
  });

  it('is always a valid git ref of at most 60 characters', () => {
    const arbChange = fc.record({
      kind: fc.string({ minLength: 1, maxLength: 30 }),
      name: fc.string({ minLength: 1, maxLength: 80 }),
      change: fc.constantFrom('added', 'modified', 'deleted', 'moved', 'formatting' as const),
    });
    fc.assert(
      fc.property(
        fc.array(arbChange, { maxLength: 4 }),
        fc.date({ noInvalidDate: true, min: new Date(0), max: new Date('9999-01-01') }),
        (list, now) => {
          const name = branchName(
            { ...none, objects: list.map((c) => change(c as Parameters<typeof change>[0])) },
            now,
          );
          expect(name.length).toBeLessThanOrEqual(60);
          expect(validRef(name), name).toBe(true);
          expect(name.startsWith('meshdeck/')).toBe(true);
        },
      ),
    );
  });
});

describe('commitMessage', () => {
  it('a subject naming the objects, a body with files, lines and proxies', () => {
    const c: ObjectChanges = {
      objects: [
        change({
          kind: 'Target',
          name: 'echo-canary',
          change: 'modified',
          line: 21,
          previousFile: 'mesh.yaml',
          previousLine: 21,
        }),
        change({ kind: 'Route', name: 'extra', change: 'added', file: 'route-extra.yaml' }),
        change({ kind: 'Service', name: 'old', change: 'deleted', file: 'cluster.yaml', line: 9 }),
        change({
          kind: 'Route',
          name: 'echo-route',
          change: 'formatting',
          line: 13,
          previousFile: 'mesh.yaml',
        }),
      ],
      files: [{ path: '.meshdeck-layout.json', change: 'modified', what: 'non-object' }],
      duplicates: [],
    };
    expect(commitMessage(c, ['default/gateway-0'])).toBe(
      [
        'Edit Target echo-canary; add Route extra; delete Service old',
        '',
        'Objects:',
        '- edited Target default/echo-canary (mesh.yaml:21)',
        '- added Route default/extra (route-extra.yaml:1)',
        '- deleted Service default/old (was cluster.yaml:9)',
        '- reformatted Route default/echo-route (mesh.yaml:13)',
        '',
        'Files:',
        '- .meshdeck-layout.json (modified, canvas layout)',
        '',
        'Affected proxies:',
        '- default/gateway-0',
        '',
      ].join('\n'),
    );
  });

  it('keeps the subject within 72 characters by counting when names do not fit', () => {
    const many = {
      ...none,
      objects: Array.from({ length: 7 }, (_, i) =>
        change({
          kind: 'VirtualService',
          name: `a-rather-long-virtual-service-name-${i}`,
          change: 'modified',
        }),
      ),
    };
    expect(commitSubject(many)).toBe('Edit 7 VirtualServices');
    const mixed = {
      ...many,
      objects: [...many.objects, change({ kind: 'Route', name: 'r', change: 'deleted' })],
    };
    expect(commitSubject(mixed)).toBe('Edit 7 VirtualServices, delete 1');
    expect(commitMessage(none, [])).toBe('Update the mesh (no changes)\n\nNo proxy configuration changes.\n');
    fc.assert(
      fc.property(
        fc.array(fc.string({ minLength: 1, maxLength: 100 }), { minLength: 1, maxLength: 5 }),
        (names) => {
          const s = commitSubject({
            ...none,
            objects: names.map((name) => change({ kind: 'Target', name, change: 'added' })),
          });
          expect(s.length).toBeLessThanOrEqual(72);
        },
      ),
    );
  });
});

describe('pullRequestBody', () => {
  it('lists the changes, diagnostics errors first, and per-proxy rendered changes (from a real example)', () => {
    const dir = path.join(__dirname, '../../examples/canary');
    const base = {
      'mesh.yaml': readFileSync(path.join(dir, 'mesh.yaml'), 'utf8'),
      'cluster.yaml': readFileSync(path.join(dir, 'cluster.yaml'), 'utf8'),
    };
    const draft = {
      ...base,
      'mesh.yaml': base['mesh.yaml'].replace('weight: 80', 'weight: 50').replace('weight: 20', 'weight: 50'),
    };
    const changes = objectChanges(base, draft);
    const rendered = renderedChanges(base, draft);
    const warning: Diagnostic = {
      severity: 'warning',
      code: 'w',
      message: 'a | pipe and `tick`',
      object: { kind: 'Route', namespace: 'default', name: 'r' },
    };
    const error: Diagnostic = {
      severity: 'error',
      code: 'e',
      message: 'broken',
      object: { kind: 'Target', namespace: 'default', name: 't' },
      path: 'spec.split',
      source: { file: 'mesh.yaml', line: 21 },
    };
    const md = pullRequestBody({ changes, diagnostics: [warning, error], perProxy: rendered.proxies });
    expect(md).toContain('| edited | `Target default/echo-canary` | `mesh.yaml:20` |');
    expect(md).toContain('1 error, 1 warning, 0 notes: `meshdeck check` fails.');
    const e = md.indexOf('- **error** `Target default/t` `spec.split` `mesh.yaml:21`: broken [e]');
    const w = md.indexOf('- warning `Route default/r`: a \\| pipe and \\`tick\\` [w]');
    expect(e).toBeGreaterThan(0);
    expect(w).toBeGreaterThan(e);
    expect(md).toContain('### `default/gateway-0`');
    expect(md).toContain('<summary>l7mp: 6 operations (3 POST, 3 DELETE)</summary>');
    expect(md).toContain(
      'DELETE endpoint echo-canary.default.target.cluster.local@127.0.0.51 (endpoint weight 45 -> 30)',
    );
    expect(md).toContain('  - endpoints: changed `echo-canary.default.target.cluster.local`');
    expect(md.endsWith('\n')).toBe(true);
    expect(md).not.toMatch(/\n{3}/);
  });

  it('says so when there is nothing to report', () => {
    expect(pullRequestBody({ changes: none, diagnostics: [], perProxy: [] })).toBe(
      [
        'Opened from the Meshdeck console.',
        '',
        '## Changes',
        '',
        'No changes.',
        '',
        '## Diagnostics',
        '',
        'None: `meshdeck check` passes.',
        '',
        '## Rendered changes per proxy',
        '',
        'No proxy configuration changes.',
        '',
      ].join('\n'),
    );
  });
});
