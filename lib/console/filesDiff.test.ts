import { describe, expect, it } from 'vitest';
import { LAYOUT_FILE } from './draftDoc';
import { filesDiff } from './filesDiff';

const vs = (port: number) =>
  `apiVersion: msm.l7mp.io/v1\nkind: VirtualService\nmetadata:\n  name: a\nspec:\n  listener:\n    spec:\n      UDP:\n        port: ${port}\n`;

describe('filesDiff', () => {
  it('is the same for equal directories, the layout included', () => {
    const doc = { files: { 'a.yaml': vs(1), 'b.yaml': 'x: 1\n' }, layout: { n: { x: 1, y: 2 } } };
    const d = filesDiff(doc, structuredClone(doc));
    expect(d).toEqual({ sections: [], same: true });
  });

  it('gives one section per changed file, in path order, with how it changed and its line counts', () => {
    const d = filesDiff(
      { files: { 'b.yaml': vs(9001), 'gone.yaml': 'a: 1\nb: 2\n', 'same.yaml': 's: 1\n' }, layout: {} },
      { files: { 'b.yaml': vs(9002), 'a-new.yaml': 'n: 1\n', 'same.yaml': 's: 1\n' }, layout: {} },
    );
    expect(d.same).toBe(false);
    expect(d.sections.map((s) => [s.kind, s.change, s.added, s.removed])).toEqual([
      ['a-new.yaml', 'added', 1, 0],
      ['b.yaml', 'modified', 1, 1],
      ['gone.yaml', 'deleted', 0, 2],
    ]);
    const b = d.sections[1]!;
    expect(b.ops.filter((o) => o.kind !== 'same').map((o) => `${o.kind} ${o.text}`)).toEqual([
      'del         port: 9001',
      'add         port: 9002',
    ]);
    // Line numbers are the file's own (1-based), so the diff reads like the file.
    expect(b.ops.find((o) => o.kind === 'add')).toMatchObject({ b: 9 });
  });

  it('shows moved nodes as changes of the layout file, written as apply writes it', () => {
    const d = filesDiff(
      {
        files: {},
        layout: { 'VirtualService/default/a': { x: 0, y: 0 }, 'Route/default/r': { x: 5, y: 5 } },
      },
      {
        files: {},
        layout: { 'VirtualService/default/a': { x: 40, y: 0 }, 'Route/default/r': { x: 5, y: 5 } },
      },
    );
    expect(d.sections).toHaveLength(1);
    expect(d.sections[0]).toMatchObject({ kind: LAYOUT_FILE, change: 'modified', added: 1, removed: 1 });
    expect(d.sections[0]!.ops.find((o) => o.kind === 'add')?.text).toBe(
      '  "VirtualService/default/a": {"x":40,"y":0}',
    );
  });

  it('a layout that appears or goes away is an added or deleted layout file', () => {
    const some = { n: { x: 1, y: 1 } };
    expect(filesDiff({ files: {}, layout: {} }, { files: {}, layout: some }).sections[0]?.change).toBe(
      'added',
    );
    expect(filesDiff({ files: {}, layout: some }, { files: {}, layout: {} }).sections[0]?.change).toBe(
      'deleted',
    );
  });

  it('an empty file added counts no lines but is still listed', () => {
    const d = filesDiff({ files: {}, layout: {} }, { files: { 'e.yaml': '' }, layout: {} });
    expect(d.sections).toEqual([{ kind: 'e.yaml', change: 'added', ops: [], added: 0, removed: 0 }]);
  });
});
