import { beforeEach, describe, expect, it, vi } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { exampleDraft } from '../console/testDrafts.testutil';

// Counts the YAML parses of every module instance (vi.resetModules gives fresh ones below).
const parses = vi.hoisted(() => ({ count: 0, texts: [] as string[] }));
vi.mock('yaml', async (importOriginal) => {
  const yaml = await importOriginal<typeof import('yaml')>();
  return {
    ...yaml,
    parseAllDocuments: (...args: Parameters<typeof yaml.parseAllDocuments>) => {
      parses.count++;
      parses.texts.push(args[0]);
      return yaml.parseAllDocuments(...args);
    },
  };
});

/** Fresh instances of the shared parse and both of its readers, with cold memos. */
async function fresh() {
  vi.resetModules();
  return {
    ...(await import('./parseYamlFile')),
    ...(await import('./parseManifests')),
    ...(await import('../console/draftModel')),
    ...(await import('../console/draftSnapshot')),
  };
}

const route = (name: string, extra = '') =>
  `apiVersion: msm.l7mp.io/v1\nkind: Route\nmetadata: {name: ${name}}\nspec: {destination: echo${extra}}\n`;

// Every shape the two readers treat differently: lists, errors, duplicate keys, aliases, the seed dialect.
const FILES: Record<string, string> = {
  ...exampleDraft('seed-example-1').files,
  ...exampleDraft('canary').files,
  'multi.yaml': `# lead comment\n${route('a')}---\n${route('b', ', bogus: 1')}---\n\n---\n${route('c')}`,
  'list.yaml': `kind: List\nitems:\n  - ${route('l1').trimEnd().replace(/\n/g, '\n    ')}\n  - kind: Nope\n    metadata: {name: x}\n`,
  'syntax.yaml': `${route('ok')}---\nkind: [\n`,
  'dup-key.yaml': `apiVersion: msm.l7mp.io/v1\nkind: Route\nkind: Target\nmetadata: {name: d}\n`,
  'alias.yaml': `apiVersion: msm.l7mp.io/v1\nkind: Route\nmetadata: &m {name: al}\nspec: {destination: echo, x: *m}\n`,
  'bad-alias.yaml': `kind: Route\nmetadata: {name: *nowhere}\n`,
  'alias-bomb.yaml': `a: &a [x, x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n`,
  'empty.yaml': '',
  'comment.yaml': '# nothing here\n',
};
const draft = { files: FILES, layout: {} };
const manifests = (files: Record<string, string>) =>
  Object.entries(files).map(([path, content]) => ({ path, content }));

beforeEach(() => {
  parses.count = 0;
});

describe('parseYamlFile', () => {
  it('parses a text once and gives the same documents back', async () => {
    const { parseYamlFile } = await fresh();
    const a = parseYamlFile(FILES['multi.yaml']!);
    expect(parseYamlFile(FILES['multi.yaml']!)).toBe(a);
    expect(parses.count).toBe(1);
    expect(a.docs).toHaveLength(4);
    expect(a.lineCounter.linePos(a.docs[1]!.contents!.range[0]).line).toBe(7);
  });

  it('reads as both readers read before: duplicate keys are errors, errors are not prettified', async () => {
    const { parseYamlFile } = await fresh();
    for (const [path, text] of Object.entries(FILES)) {
      const shared = parseYamlFile(text).docs;
      for (const options of [{ prettyErrors: false }, { prettyErrors: false, uniqueKeys: true }]) {
        const separate = parseAllDocuments(text, options) as unknown as typeof shared;
        expect(shared.map(show), path).toEqual(separate.map(show));
      }
    }
    expect(parseYamlFile(FILES['dup-key.yaml']!).docs[0]!.errors[0]!.code).toBe('DUPLICATE_KEY');
  });

  it('forgets the least recently used texts beyond its budget', async () => {
    const { parseYamlFile } = await fresh();
    const first = parseYamlFile(FILES['multi.yaml']!);
    const big = (i: number) => `# ${i}\n${'x: 1\n'.padEnd(300_000, '#')}\n`;
    for (let i = 0; i < 3; i++) parseYamlFile(big(i));
    expect(parseYamlFile(FILES['multi.yaml']!)).toBe(first); // used last, kept
    parseYamlFile(big(3));
    parseYamlFile(big(4));
    const count = parses.count;
    parseYamlFile(big(0)); // least recently used: parsed again
    expect(parses.count).toBe(count + 1);
    expect(parseYamlFile(FILES['multi.yaml']!)).toBe(first);
  });
});

describe('one parse shared by parseDraft and parseManifests', () => {
  it('parses each file (or each of its documents) once for both', async () => {
    const m = await fresh();
    parses.texts = [];
    m.parseDraft(draft);
    // A file of several documents is read document by document (lib/parse/yamlDocuments.ts), and
    // whole as well where one of them does not read alone (syntax.yaml).
    expect(new Set(parses.texts).size).toBe(parses.texts.length);
    for (const [path, text] of Object.entries(FILES))
      expect(
        parses.texts.includes(text) || parses.texts.filter((t) => text.includes(t)).join('') === text,
        path,
      ).toBe(true);
    const afterModel = parses.count;
    m.draftSnapshot(FILES);
    expect(parses.count).toBe(afterModel);
  });

  it('gives byte for byte what separate parses give, in either order', async () => {
    let m = await fresh();
    const parsed = m.parseDraft(draft);
    // The corpus reaches every error path of both readers.
    expect(parsed.problems.map((p) => p.file)).toEqual([
      'alias-bomb.yaml',
      'bad-alias.yaml',
      'dup-key.yaml',
      'syntax.yaml',
    ]);
    const model = JSON.stringify(parsed, mapsAsObjects);
    m = await fresh();
    const snapshot = JSON.stringify(m.parseManifests(manifests(FILES)));
    parses.texts = [];
    const perFile = JSON.stringify(m.draftSnapshot(FILES));
    // parseManifests read whole files: draftSnapshot read only what it reads apart, the documents of files with several.
    expect(parses.texts.length).toBeGreaterThan(0);
    for (const t of parses.texts) expect(Object.values(FILES)).not.toContain(t);

    m = await fresh();
    expect(JSON.stringify(m.parseDraft(draft), mapsAsObjects)).toBe(model);
    expect(JSON.stringify(m.parseManifests(manifests(FILES)))).toBe(snapshot);
    expect(JSON.stringify(m.draftSnapshot(FILES))).toBe(perFile);

    m = await fresh();
    expect(JSON.stringify(m.parseManifests(manifests(FILES)))).toBe(snapshot);
    expect(JSON.stringify(m.parseDraft(draft), mapsAsObjects)).toBe(model);
  });

  it('leaves the shared documents as parsed, editing included', async () => {
    const m = await fresh();
    m.parseDraft(draft);
    m.draftSnapshot(FILES);
    const [object] = m.parseDraft(draft).byKey.get('Route/default/a')!;
    const edited = m.editObjects(draft, [
      { object: object!, edit: (doc, base) => m.setNode(doc, [...base, 'spec', 'destination'], 'edited') },
    ]);
    expect(edited).toMatchObject({ files: { 'multi.yaml': expect.stringContaining('destination: edited') } });
    for (const [path, text] of Object.entries(FILES)) {
      const shared = m.parseYamlFile(text).docs;
      const separate = parseAllDocuments(text, { prettyErrors: false }) as unknown as typeof shared;
      expect(shared.map(show), path).toEqual(separate.map(show));
    }
  });
});

/** What a reader can see of a document: its errors, else its text and value (or why there are none). */
function show(doc: ReturnType<typeof parseAllDocuments>[number]): unknown {
  if (doc.errors.length > 0) return doc.errors;
  return [attempt(() => String(doc)), attempt(() => doc.toJS({ maxAliasCount: 100 }))];
}

function attempt(f: () => unknown): unknown {
  try {
    return f();
  } catch (e) {
    return `throws: ${(e as Error).message}`;
  }
}

function mapsAsObjects(_key: string, value: unknown): unknown {
  return value instanceof Map ? Object.fromEntries(value) : value;
}
