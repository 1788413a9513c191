import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { DraftDoc } from './draftDoc';
import type { ParsedFile } from './draftModel';
import { exampleDraft } from './testDrafts.testutil';

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

/** A fresh draftModel with a cold memo and a cold shared parse, as in another thread. */
async function thread() {
  vi.resetModules();
  return import('./draftModel');
}

const draft = exampleDraft('canary');
const paths = Object.keys(draft.files).sort();
const edit = (d: DraftDoc, path: string): DraftDoc => ({
  ...d,
  files: { ...d.files, [path]: `${d.files[path]!}# edited\n` },
});

/** The objects a handed-on file carries: the file's, or its documents' (relative to each document). */
const objectsOf = (p: ParsedFile) =>
  'documents' in p ? Object.values(p.documents).flatMap((d) => d.objects) : p.objects;

beforeEach(() => {
  parses.count = 0;
});

describe('parse results handed from the compile worker to the main thread', () => {
  it('takes each freshly parsed file once', async () => {
    const worker = await thread();
    expect(worker.takeParsedFiles()).toEqual({});
    worker.parseDraft(draft);
    const taken = worker.takeParsedFiles();
    expect(Object.keys(taken).sort()).toEqual(paths);
    expect(taken[paths[0]!]!.text).toBe(draft.files[paths[0]!]);
    expect(worker.takeParsedFiles()).toEqual({});
    worker.parseDraft(draft); // memo hits are not fresh
    expect(worker.takeParsedFiles()).toEqual({});
    const edited = edit(draft, paths[1]!);
    worker.parseDraft(edited);
    expect(Object.keys(worker.takeParsedFiles())).toEqual([paths[1]]);
  });

  it('seeded files are not parsed again: the seeded objects are the model', async () => {
    const worker = await thread();
    const fromWorker = worker.parseDraft(draft);
    // What postMessage delivers: a structured clone.
    const seed = structuredClone(worker.takeParsedFiles());
    const main = await thread();
    parses.count = 0;
    main.seedParsedFiles(seed);
    const model = main.parseDraft(draft);
    expect(parses.count).toBe(0);
    expect(model.objects.length).toBeGreaterThan(0);
    expect(model.objects).toEqual(fromWorker.objects);
    // The seeded values themselves (a file of several documents comes as its documents, each object
    // placed in its file again: lines and document index).
    const seeded = paths.flatMap((p) => objectsOf(seed[p]!));
    model.objects.forEach((o, i) => expect(o.value).toBe(seeded[i]!.value));
  });

  it('ignores a seeded file whose text is not the draft’s', async () => {
    const worker = await thread();
    worker.parseDraft(draft);
    const seed = structuredClone(worker.takeParsedFiles());
    const main = await thread();
    parses.count = 0;
    parses.texts = [];
    main.seedParsedFiles(seed);
    const edited = edit(draft, paths[0]!);
    const model = main.parseDraft(edited);
    // Of that file, the one document whose text changed (its last) is read again, nothing else.
    const text = edited.files[paths[0]!]!;
    expect(parses.texts).toEqual([text.slice(text.lastIndexOf('---\n'))]);
    const own = model.objects.filter((o) => o.file === paths[0]);
    expect(own.length).toBeGreaterThan(0);
    expect(own).toEqual(worker.parseDraft(edited).objects.filter((o) => o.file === paths[0]));
    expect(own.at(-1)!.value).not.toBe(objectsOf(seed[paths[0]!]!).at(-1)!.value);
    expect(main.takeParsedFiles()[paths[0]!]!.text).toBe(edited.files[paths[0]!]);
  });

  it('hands on only the documents the main thread has not had: an edit sends one', async () => {
    const worker = await thread();
    const main = await thread();
    const one: DraftDoc = { files: { 'one.yaml': Object.values(draft.files).join('---\n') }, layout: {} };
    worker.parseDraft(one);
    const first = structuredClone(worker.takeParsedFiles());
    const docs = Object.keys((first['one.yaml'] as { documents: object }).documents);
    expect(docs.join('')).toBe(one.files['one.yaml']);
    main.seedParsedFiles(first);

    const edited = {
      ...one,
      files: { 'one.yaml': one.files['one.yaml']!.replace('echo-route', 'echo-route-2') },
    };
    const fromWorker = worker.parseDraft(edited);
    const next = structuredClone(worker.takeParsedFiles());
    const sent = Object.keys((next['one.yaml'] as { documents: object }).documents);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toContain('echo-route-2');
    parses.count = 0;
    main.seedParsedFiles(next);
    expect(main.parseDraft(edited).objects).toEqual(fromWorker.objects);
    expect(parses.count).toBe(0);
  });
});
