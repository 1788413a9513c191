/**
 * One Inspector field edit of a generated mesh in Node, by how its files are laid out (issue 5, P8): the
 * command that rewrites the YAML (`applyCommand`, on the console's main thread) and the compile after
 * it (`compileDraft`, in the compile worker), as median ms over --edits edits (default 20) after one
 * warm-up compile. Layouts: a file per group (VirtualService, Route, Target, Service, EndpointSlice:
 * bench/syntheticMesh.ts), and the same documents in one file, as a mesh exported or built by one
 * tool is. Figures, never assertions; not part of `npm test`.
 *
 *   node --import tsx bench/draftEdit.ts [--groups 99] [--edits 20]
 */
import { performance } from 'node:perf_hooks';
import { compileDraft } from '../lib/console/compileDraft';
import { applyCommand } from '../lib/console/draftCommands';
import type { DraftDoc } from '../lib/console/draftDoc';
import { parseDraft } from '../lib/console/draftModel';
import { numberArg } from './argv';
import { syntheticDraft } from './syntheticMesh';

const groups = numberArg('groups', 99);
const edits = numberArg('edits', 20);
const perGroup = syntheticDraft(groups);
const oneFile: DraftDoc = { files: { 'mesh.yaml': Object.values(perGroup.files).join('---\n') }, layout: {} };
const med = (xs: number[]) => Math.round([...xs].sort((a, b) => a - b)[xs.length >> 1]! * 10) / 10;

const layouts: Record<string, unknown> = {};
for (const [name, start] of [
  ['file per group', perGroup],
  ['one file', oneFile],
] as const) {
  let draft = start;
  let model = compileDraft(draft).model;
  const key = [...model.byKey.keys()].find((k) => k.startsWith('Route/'))!;
  const editMs: number[] = [];
  const compileMs: number[] = [];
  for (let i = 0; i < edits; i++) {
    let t = performance.now();
    // Dangling, then back: each edit changes the graph and the diagnostics, as bench/ui.ts's P8 edits do.
    const r = applyCommand(
      draft,
      { type: 'setField', key, path: ['spec', 'destination'], value: i % 2 ? 'target-0' : 'missing' },
      model,
    );
    editMs.push(performance.now() - t);
    if (!r.ok) throw new Error(r.error);
    draft = r.draft;
    t = performance.now();
    model = compileDraft(draft).model;
    compileMs.push(performance.now() - t);
  }
  layouts[name] = {
    files: Object.keys(draft.files).length,
    objects: parseDraft(draft).objects.length,
    editMedianMs: med(editMs),
    compileMedianMs: med(compileMs),
  };
}
console.log(JSON.stringify({ bench: 'draftEdit', groups, edits, layouts }, null, 2));
