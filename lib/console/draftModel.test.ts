import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { DraftDoc } from './draftDoc';
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
    const seeded = paths.flatMap((p) => seed[p]!.objects);
    model.objects.forEach((o, i) => expect(o).toBe(seeded[i]));
    expect(main.takeParsedFiles()).toEqual({}); // nothing for the main thread to hand on
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
    // That file read again, once: document by document (lib/parse/yamlDocuments.ts), nothing else.
    expect(parses.texts.join('')).toBe(edited.files[paths[0]!]);
    const own = model.objects.filter((o) => o.file === paths[0]);
    expect(own.length).toBeGreaterThan(0);
    for (const o of own) expect(seed[paths[0]!]!.objects).not.toContain(o);
    expect(own).toEqual(seed[paths[0]!]!.objects); // a trailing comment changes no object
    expect(main.takeParsedFiles()[paths[0]!]!.text).toBe(edited.files[paths[0]!]);
  });
});
