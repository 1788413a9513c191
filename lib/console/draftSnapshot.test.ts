import { describe, expect, it } from 'vitest';
import { parseManifests } from '../parse/parseManifests';
import { draftSnapshot } from './draftSnapshot';
import { exampleDraft } from './testDrafts.testutil';

function full(files: Record<string, string>) {
  return parseManifests(Object.entries(files).map(([path, content]) => ({ path, content })));
}

const route = (name: string, extra = '') =>
  `apiVersion: msm.l7mp.io/v1\nkind: Route\nmetadata: {name: ${name}}\nspec: {destination: echo-canary${extra}}\n`;

describe('draftSnapshot', () => {
  const cases: Record<string, Record<string, string>> = {
    'seed example 1': exampleDraft('seed-example-1').files,
    'seed example 2': exampleDraft('seed-example-2').files,
    'canary plus more files, in any key order': {
      'z.yaml': route('zz'),
      ...exampleDraft('canary').files,
      'a.yaml': route('aa') + '---\n' + route('bad', ', bogus: 1'),
      'b.yaml': 'kind: [\n',
      'c.yaml': route('dup-in-file') + '---\n' + route('dup-in-file'),
    },
    'the same object in two files': { ...exampleDraft('canary').files, 'x.yaml': route('echo-route') },
  };
  for (const [name, files] of Object.entries(cases)) {
    it(`equals parseManifests over all files, order included: ${name}`, () => {
      expect(JSON.stringify(draftSnapshot(files))).toBe(JSON.stringify(full(files)));
    });
  }

  it('reuses unchanged files and follows an edited one', () => {
    const files = exampleDraft('canary').files;
    const a = draftSnapshot(files);
    const edited = { ...files, 'mesh.yaml': files['mesh.yaml']!.replace('num_retries: 2', 'num_retries: 4') };
    const b = draftSnapshot(edited);
    expect(b.routes[0]!.spec.retry!.num_retries).toBe(4);
    expect(b.services[0]).toBe(a.services[0]); // cluster.yaml was not parsed again
    expect(JSON.stringify(b)).toBe(JSON.stringify(full(edited)));
  });
});
