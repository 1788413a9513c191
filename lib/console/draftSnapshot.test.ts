import { describe, expect, it } from 'vitest';
import { parseManifests } from '../parse/parseManifests';
import { draftSnapshot, fileSnapshot } from './draftSnapshot';
import { parseDraft } from './draftModel';
import { LineCounter, parseAllDocuments } from 'yaml';
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

/** Every example's files as one file, and texts whose documents are cut in odd places. */
const ONE_FILE_CASES: Record<string, string> = {
  'every example in one file': ['canary', 'grpc-canary', 'seed-example-1', 'seed-example-2']
    .flatMap((n) => Object.values(exampleDraft(n).files))
    // Examples repeat each other's objects: keep each example's own names apart.
    .map((t, i) => t.replace(/name: ([\w-]+)/g, `name: $1-${i}`))
    .join('---\n'),
  'comments before, between and after documents, an empty one, a List': `# header

---
${route('a')}# after a

---  # b
${route('b')}---
---
apiVersion: v1
kind: List
items:
  - ${route('c').trimEnd().replace(/\n/g, '\n    ')}
  - ${route('d', ', bogus: 1').trimEnd().replace(/\n/g, '\n    ')}
# trailing
`,
  'CRLF line ends': [route('e'), route('f')].join('---\n').replace(/\n/g, '\r\n'),
  'a broken document among good ones (read whole)': `${route('g')}---\nkind: [\n---\n${route('h')}`,
  'an object in two documents (read whole)': `${route('i')}---\n${route('i')}`,
  'a directive (read whole)': `%YAML 1.2\n---\n${route('j')}---\n${route('k')}`,
  'the seed dialect': Object.values(exampleDraft('seed-example-1').files).join('---\n'),
};

describe('a file read document by document', () => {
  for (const [name, text] of Object.entries(ONE_FILE_CASES)) {
    it(`fileSnapshot equals parseManifests of the whole file: ${name}`, () => {
      expect(JSON.stringify(fileSnapshot('mesh.yaml', text))).toBe(
        JSON.stringify(full({ 'mesh.yaml': text })),
      );
    });

    it(`the draft model's objects are where a whole-file parse puts them: ${name}`, () => {
      // The oracle: yaml's own parse of the whole text (its documents' index, first line and value).
      const lc = new LineCounter();
      const docs = parseAllDocuments(text, { lineCounter: lc });
      const whole = (Array.isArray(docs) ? docs : []).flatMap(
        (d, doc): ({ doc: number } & ({ line: number } | { item: number }))[] => {
          if (d.errors.length > 0) return [];
          const v = d.toJS() as { kind?: string; items?: unknown[] } | null;
          if (v?.kind === 'List') return (v.items ?? []).map((_, item) => ({ doc, item }));
          return v ? [{ doc, line: lc.linePos(d.contents!.range[0]).line }] : [];
        },
      );
      const model = parseDraft({ files: { 'mesh.yaml': text }, layout: {} });
      expect(
        model.objects.map((o) => ({
          doc: o.doc,
          ...(o.item === undefined ? { line: o.line } : { item: o.item }),
        })),
      ).toEqual(whole);
    });
  }

  it('reads again only the document an edit changed, and follows the documents after it down', () => {
    const text = [route('m'), route('n'), route('o')].join('---\n');
    const a = fileSnapshot('one.yaml', text);
    const edited = text
      .replace('metadata: {name: m}', '# a new line\nmetadata: {name: m}')
      .replace('name: n}', 'name: n2}');
    const b = fileSnapshot('one.yaml', edited);
    expect(JSON.stringify(b)).toBe(JSON.stringify(full({ 'one.yaml': edited })));
    expect(b.routes.map((r) => r.metadata.name)).toEqual(['m', 'n2', 'o']);
    // The last document is the same text: its object is the one read before, only its lines moved.
    expect(b.routes[2]).toBe(a.routes[2]);
    expect(b.sources['Route/default/o']!.line).toBe(a.sources['Route/default/o']!.line + 1);
  });
});
