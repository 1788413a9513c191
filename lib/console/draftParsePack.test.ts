import { describe, expect, it, vi } from 'vitest';
import type { CompileOptions } from './compileDraft';
import type { DraftDoc } from './draftDoc';
import { exampleDraft } from './testDrafts.testutil';

/** A fresh compiler with cold memos, as in another thread or process (the server, the worker). */
async function thread() {
  vi.resetModules();
  const pack = await import('./draftParsePack');
  const compile = await import('./compileDraft');
  return { ...pack, ...compile };
}

/** What the server sends: the pack through JSON. */
const overTheWire = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

// Malformed YAML, a schema violation, a `kind: List`, the seed's dialect and an unknown kind: every
// path of the readers that ends in a diagnostic or a problem.
const troubled: DraftDoc = {
  files: {
    'broken.yaml': 'apiVersion: v1\nkind: [unclosed\n',
    'bad-port.yaml':
      'apiVersion: msm.l7mp.io/v1\nkind: VirtualService\nmetadata: {name: vs}\nspec:\n  udp: {port: not-a-port}\n',
    'list.yaml':
      'apiVersion: v1\nkind: List\nitems:\n  - apiVersion: v1\n    kind: Service\n    metadata: {name: a}\n    spec: {ports: [{port: 80, protocol: UDP}]}\n',
    'seed.yaml':
      'apiVersion: l7mp.io/MSM/v1\nkind: Target\nmetadata: { name: t, selector: { serviceName: s } }\nspec: { udp: { port: "8001," } }\n',
    'other.yaml': 'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n',
  },
  layout: {},
};

const cases: [string, DraftDoc, CompileOptions][] = [
  ['seed example 1 (local mesh)', exampleDraft('seed-example-1'), { localMesh: { podsDir: '/run/pods' } }],
  ['seed example 2', exampleDraft('seed-example-2'), {}],
  ['canary', exampleDraft('canary'), {}],
  ['grpc-canary', exampleDraft('grpc-canary'), {}],
  ['a draft with errors', troubled, {}],
];

describe('a compile seeded with the server-read pack', () => {
  it.each(cases)('equals one that reads the text: %s', async (_, draft, opts) => {
    const server = await thread();
    const pack = overTheWire(server.buildDraftParsePack(draft.files));
    expect(Object.keys(pack.files).sort()).toEqual(Object.keys(draft.files).sort());
    const browser = await thread();
    expect(browser.seedDraftParsePack(draft.files, pack)).toBe(Object.keys(draft.files).length);
    const seeded = browser.compileDraft(draft, opts);
    const cold = (await thread()).compileDraft(draft, opts);
    expect(seeded.diagnostics.length).toBeGreaterThan(0);
    expect(seeded.model).toEqual(cold.model);
    expect(seeded.snapshot).toEqual(cold.snapshot);
    expect(browser.compilationForTransfer(seeded)).toEqual(browser.compilationForTransfer(cold));
  });

  it('reads no text the pack covers: a seeded entry is what the compile sees', async () => {
    const draft = exampleDraft('canary');
    const server = await thread();
    const pack = overTheWire(server.buildDraftParsePack(draft.files));
    // Tamper with the pack only: were the text read again, the original name would show.
    const [path, part] = Object.entries(pack.files).find(([, p]) => p.snapshot.routes.length > 0)!;
    const name = part.snapshot.routes[0]!.metadata.name;
    part.snapshot.routes[0]!.metadata.name = `${name}-from-pack`;
    const browser = await thread();
    browser.seedDraftParsePack(draft.files, pack);
    const seeded = browser.compileDraft(draft);
    expect(seeded.snapshot.routes.map((r) => r.metadata.name)).toContain(`${name}-from-pack`);
    expect(seeded.snapshot.routes.map((r) => r.metadata.name)).not.toContain(name);
    expect(Object.keys(draft.files)).toContain(path);
  });

  it('serves only the text it was read from: an edited file is read again', async () => {
    const draft = exampleDraft('canary');
    const server = await thread();
    const pack = overTheWire(server.buildDraftParsePack(draft.files));
    const path = Object.keys(draft.files).sort()[0]!;
    const edited: DraftDoc = {
      ...draft,
      files: { ...draft.files, [path]: 'apiVersion: v1\nkind: [unclosed\n' },
    };
    const browser = await thread();
    browser.seedDraftParsePack(draft.files, pack);
    const seeded = browser.compileDraft(edited);
    const cold = (await thread()).compileDraft(edited);
    expect(seeded.diagnostics.some((d) => d.code === 'yaml-syntax')).toBe(true);
    expect(browser.compilationForTransfer(seeded)).toEqual(browser.compilationForTransfer(cold));
  });

  it('leaves out a file whose values JSON cannot carry (.nan, .inf, -0), which is then read from text', async () => {
    const draft: DraftDoc = {
      files: {
        'nan.yaml':
          'apiVersion: v1\nkind: Service\nmetadata: {name: n, annotations: {x: .nan}}\nspec: {ports: [{port: 80, protocol: UDP}]}\n',
        'inf.yaml': 'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {v: -.inf}\n',
        'zero.yaml': 'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: z}\nspec: {v: -0}\n',
        'plain.yaml': exampleDraft('canary').files[Object.keys(exampleDraft('canary').files)[0]!]!,
      },
      layout: {},
    };
    const server = await thread();
    const pack = overTheWire(server.buildDraftParsePack(draft.files));
    expect(Object.keys(pack.files)).toEqual(['plain.yaml']);
    const browser = await thread();
    browser.seedDraftParsePack(draft.files, pack);
    const seeded = browser.compileDraft(draft);
    const cold = (await thread()).compileDraft(draft);
    expect(seeded.model).toEqual(cold.model);
    expect(browser.compilationForTransfer(seeded)).toEqual(browser.compilationForTransfer(cold));
  });

  it('ignores entries for files the draft does not have', async () => {
    const { seedDraftParsePack } = await thread();
    expect(
      seedDraftParsePack(
        { 'a.yaml': '' },
        {
          files: {
            'b.yaml': {
              objects: [],
              problems: [],
              snapshot: (await import('../model/snapshot')).emptySnapshot(),
            },
          },
        },
      ),
    ).toBe(0);
  });
});

describe('jsonFaithful', () => {
  it('accepts what JSON gives back unchanged', async () => {
    const { jsonFaithful } = await thread();
    for (const v of [null, 0, 1.5, -3, '', 's', true, [], {}, [1, 'a', null], { a: { b: [{ c: 1 }] } }])
      expect(jsonFaithful(v), JSON.stringify(v)).toBe(true);
    expect(jsonFaithful(Object.assign(Object.create(null), { a: 1 }))).toBe(true);
  });

  it('refuses what JSON would change or drop', async () => {
    const { jsonFaithful } = await thread();
    const holes = [1, , 3];
    for (const v of [
      NaN,
      Infinity,
      -Infinity,
      -0,
      undefined,
      { a: undefined },
      [undefined],
      holes,
      { a: { b: [NaN] } },
      new Date(0),
      new Map(),
      new Uint8Array(1),
      () => 1,
      1n,
      Symbol('s'),
    ])
      expect(jsonFaithful(v), String(v)).toBe(false);
  });
});
