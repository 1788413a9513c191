import { describe, expect, it } from 'vitest';
import { syntheticDraft } from '../../bench/syntheticMesh';
import { draftFirstView } from './draftFirstView';
import { layeredLayout } from './layeredLayout';
import { firstViewLayout } from './firstViewLayout';
import { exampleDraft } from './testDrafts.testutil';
import { compileDraft } from './compileDraft';

describe('firstViewLayout', () => {
  it("gives a large draft's first view the layered places under the hash the canvas and the server use", () => {
    const draft = syntheticDraft(70);
    const view = draftFirstView(draft, { localMesh: true })!;
    expect(view.input.nodes.length).toBeGreaterThan(300);
    const got = firstViewLayout(view.graph, draft.layout);
    expect(got).toEqual({ hash: view.hash, positions: layeredLayout(view.input) });
    // A layout kept under that hash (the browser's storage) is not made again.
    expect(firstViewLayout(view.graph, draft.layout, new Set(['other', view.hash]))).toBeUndefined();
    expect(firstViewLayout(view.graph, draft.layout, new Set(['other']))).toEqual(got);
  });

  it('gives nothing for a small graph (ELK lays it out) or one the draft places itself', () => {
    const small = exampleDraft('seed-example-1');
    const { graph } = compileDraft(small, { xds: false, localMesh: { podsDir: '' } });
    expect(firstViewLayout(graph, small.layout)).toBeUndefined();
    const draft = syntheticDraft(70);
    const view = draftFirstView(draft, { localMesh: true })!;
    const placed = Object.fromEntries(view.graph.nodes.map((n, i) => [n.id, { x: i * 200, y: 0 }]));
    expect(firstViewLayout(view.graph, placed)).toBeUndefined();
  });
});
