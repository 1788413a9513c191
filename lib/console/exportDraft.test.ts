import { describe, expect, it } from 'vitest';
import { parseManifests } from '../parse/parseManifests';
import { draftAsYaml, importFileName } from './exportDraft';
import { exampleDraft } from './testDrafts.testutil';

describe('export / import', () => {
  it('exports one YAML stream that reads back as the same mesh, comments kept', () => {
    const draft = exampleDraft('seed-example-1');
    const text = draftAsYaml(draft);
    expect(text).toContain('# file: cluster.yaml');
    expect(text).toContain('# Seed Example 1');
    const back = parseManifests([{ path: 'export.yaml', content: text }]);
    const orig = parseManifests(Object.entries(draft.files).map(([path, content]) => ({ path, content })));
    expect(back.virtualServices).toEqual(orig.virtualServices);
    expect(back.pods).toEqual(orig.pods);
    expect(back.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  });

  it('names an import file that is free', () => {
    const draft = { files: { 'imported.yaml': '' }, layout: {} };
    expect(importFileName(draft)).toBe('imported-2.yaml');
    expect(importFileName(draft, 'mesh')).toBe('mesh.yaml');
  });
});
