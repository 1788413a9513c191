import { beforeEach, describe, expect, it, vi } from 'vitest';
import { applyCommand, type DraftCommand } from './draftCommands';
import type { DraftDoc } from './draftDoc';
import { parseDraft } from './draftModel';

// The texts parseAllDocuments is given, to see what an edit parses.
const parsed = vi.hoisted(() => ({ texts: [] as string[] }));
vi.mock('yaml', async (importOriginal) => {
  const yaml = await importOriginal<typeof import('yaml')>();
  return {
    ...yaml,
    parseAllDocuments: (...args: Parameters<typeof yaml.parseAllDocuments>) => {
      parsed.texts.push(args[0]);
      return yaml.parseAllDocuments(...args);
    },
  };
});

const route = (name: string, dest: string) =>
  `apiVersion: msm.l7mp.io/v1\nkind: Route\nmetadata:\n  name: ${name}\nspec:\n  destination: ${dest} # the target\n`;

/** The draft after `cmd`, which must succeed, and the texts parsed to make it (the model is read first). */
function run(
  files: Record<string, string>,
  cmd: DraftCommand,
): { files: DraftDoc['files']; texts: string[] } {
  const draft: DraftDoc = { files, layout: {} };
  const model = parseDraft(draft);
  parsed.texts.length = 0;
  const r = applyCommand(draft, cmd, model);
  if (!r.ok) throw new Error(r.error);
  return { files: r.draft.files, texts: [...parsed.texts] };
}

const set = (name: string, value: unknown): DraftCommand => ({
  type: 'setField',
  key: `Route/default/${name}`,
  path: ['spec', 'destination'],
  value,
});

beforeEach(() => {
  parsed.texts.length = 0;
});

describe('an edit parses only its own document', () => {
  const big = Array.from({ length: 50 }, (_, i) => route(`r${i}`, `t${i}`)).join('---\n');

  it('parses the one document and splices it back, the rest of the file byte for byte', () => {
    const { files, texts } = run({ 'mesh.yaml': big }, set('r7', 'elsewhere'));
    expect(texts).toEqual([`---\n${route('r7', 't7')}`]);
    expect(files['mesh.yaml']).toBe(big.replace('destination: t7 #', 'destination: elsewhere #'));
  });

  it('keeps comments around documents, CRLF line ends and a List document', () => {
    const text =
      '# file header\n---\n' +
      route('a', 'ta') +
      '# between\n---\napiVersion: v1\nkind: List\nitems:\n  - ' +
      route('b', 'tb').trimEnd().replace(/\n/g, '\n    ') +
      '\n  - ' +
      route('c', 'tc').trimEnd().replace(/\n/g, '\n    ') +
      '\n';
    const a = run({ 'f.yaml': text }, set('a', 'xa'));
    // yaml writes a document's trailing comment after a blank line (as the whole-file parse did).
    expect(a.files['f.yaml']).toBe(
      text.replace('destination: ta # the target\n# between', 'destination: xa # the target\n\n# between'),
    );
    expect(a.texts).toHaveLength(1);
    const c = run({ 'f.yaml': text }, set('c', 'xc'));
    expect(c.files['f.yaml']).toBe(text.replace('destination: tc', 'destination: xc'));
    expect(c.texts).toHaveLength(1);

    const crlf = [route('d', 'td'), route('e', 'te')].join('---\n').replace(/\n/g, '\r\n');
    const e = run({ 'g.yaml': crlf }, set('e', 'xe'));
    expect(e.texts).toHaveLength(1);
    expect(parseDraft({ files: e.files, layout: {} }).byKey.get('Route/default/e')![0]!.value).toMatchObject({
      spec: { destination: 'xe' },
    });
    expect(e.files['g.yaml']!.startsWith(route('d', 'td').replace(/\n/g, '\r\n'))).toBe(true);
  });

  it('deletes one document of several, and the file with its last object', () => {
    const text = [route('a', 'ta'), route('b', 'tb')].join('---\n');
    const del = (name: string): DraftCommand => ({ type: 'deleteObject', key: `Route/default/${name}` });
    const one = run({ 'f.yaml': text }, del('b'));
    expect(one.files['f.yaml']).toBe(route('a', 'ta'));
    const first = run({ 'f.yaml': text }, del('a'));
    expect(first.files['f.yaml']).toBe(route('b', 'tb'));
    const last = run({ 'f.yaml': `# only\n---\n${route('a', 'ta')}---\n# trailing\n` }, del('a'));
    expect(last.files['f.yaml']).toBeUndefined();
  });

  it('parses the whole file where its documents cannot be cut apart (directives), with the same result', () => {
    const text = `%YAML 1.2\n---\n${route('a', 'ta')}---\n${route('b', 'tb')}`;
    const { files, texts } = run({ 'f.yaml': text }, set('b', 'xb'));
    expect(texts).toEqual([text]);
    expect(files['f.yaml']).toBe(text.replace('destination: tb', 'destination: xb'));
  });

  it('parses the whole file where a document read alone does not start on the object’s line', () => {
    // A block scalar's `---` line: a whole-file parse ends the scalar there too, but the model's line
    // for b is checked all the same; here it holds, and one document is parsed.
    const text = [route('a', 'ta'), route('b', 'tb')].join('---\n');
    const draft: DraftDoc = { files: { 'f.yaml': text }, layout: {} };
    const model = parseDraft(draft);
    const b = model.byKey.get('Route/default/b')![0]!;
    // A model made from another text (a line off): the edit does not trust the cut.
    const stale = { ...model, byKey: new Map(model.byKey).set(b.key, [{ ...b, line: b.line + 1 }]) };
    parsed.texts.length = 0;
    const r = applyCommand(draft, set('b', 'xb'), stale);
    expect(r.ok && r.draft.files['f.yaml']).toBe(text.replace('destination: tb', 'destination: xb'));
    expect(parsed.texts).toEqual([`---\n${route('b', 'tb')}`, text]);
  });

  it('says a document with a YAML error cannot be edited, as before', () => {
    const text = `${route('a', 'ta')}---\n${route('b', 'tb')}bad: [\n`;
    const draft: DraftDoc = { files: { 'f.yaml': text }, layout: {} };
    // The model of the file before the error, so that b is still known.
    const model = parseDraft({ files: { 'f.yaml': text.replace('bad: [\n', '') }, layout: {} });
    const r = applyCommand(draft, set('b', 'xb'), model);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(/f\.yaml has a YAML error in the document of Route default\/b/);
  });
});

describe('reading a file’s documents ahead of its first edit', () => {
  it('fills the per-document memos in steps, so that a changed document is the only one read', async () => {
    const { readDocumentsAhead } = await import('./draftModel');
    const { fileSnapshot, snapshotDocumentsAhead } = await import('./draftSnapshot');
    const text = ['p', 'q', 'r'].map((n) => route(`ahead-${n}`, 'tx')).join('---\n');
    let steps = 0;
    // One document per step.
    const oneEach = () => {
      let n = 0;
      return () => n++ > 0;
    };
    while (!readDocumentsAhead('ahead.yaml', text, oneEach())) steps++;
    expect(steps).toBe(2);
    while (!snapshotDocumentsAhead('ahead.yaml', text, oneEach())) steps++;
    expect(steps).toBe(4); // its own memo: a step per document again (their parses are shared)
    expect(readDocumentsAhead('ahead.yaml', text, () => true)).toBe(true);

    const edited = text.replace('name: ahead-q', 'name: ahead-q2');
    parsed.texts.length = 0;
    const model = parseDraft({ files: { 'ahead.yaml': edited }, layout: {} });
    const snapshot = fileSnapshot('ahead.yaml', edited);
    expect(parsed.texts).toEqual([`---\n${route('ahead-q2', 'tx')}`]);
    expect(model.objects.map((o) => [o.name, o.doc, o.line])).toEqual([
      ['ahead-p', 0, 1],
      ['ahead-q2', 1, 8],
      ['ahead-r', 2, 15],
    ]);
    expect(snapshot.routes.map((r) => r.metadata.name)).toEqual(['ahead-p', 'ahead-q2', 'ahead-r']);
  });
});
