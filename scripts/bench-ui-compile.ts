/**
 * Edit -> recompile in the console (issue 5, goal P8: preview and markers updated within 50 ms for a
 * 500-object mesh). Builds a synthetic draft, applies a form edit (setField) and recompiles, as the
 * browser does on every edit, and prints the figures as JSON. Figures, never assertions.
 *
 *   npx tsx scripts/bench-ui-compile.ts [--groups 100] [--proxies 10] [--edits 40] [--local]
 *
 * `--local` compiles as on the local mesh (`meshdeck serve`): prepareLocalMesh + renderLocalMesh.
 */
import { performance } from 'node:perf_hooks';
import { Document } from 'yaml';
import { syntheticMesh } from '../bench/syntheticMesh';
import { compileDraft } from '../lib/console/compileDraft';
import { applyCommand } from '../lib/console/draftCommands';
import type { DraftDoc } from '../lib/console/draftDoc';
import { parseDraft } from '../lib/console/draftModel';
import { draftSnapshot } from '../lib/console/draftSnapshot';
import { meshGraph } from '../lib/console/meshGraph';
import { compileMesh } from '../lib/engine/compileMesh';
import { renderXds } from '../lib/xds/renderXds';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const groups = arg('groups', 100);
const proxies = arg('proxies', 10);
const edits = arg('edits', 40);
const localMesh = process.argv.includes('--local') ? { podsDir: '/pods' } : undefined;

// One file per group: VirtualService, Route, Target, Service and EndpointSlice (5 objects).
const snap = syntheticMesh({ services: groups, endpoints: groups * 4, proxies });
const files: Record<string, string> = {};
const yaml = (o: unknown) => new Document(o).toString({ lineWidth: 0 });
for (let i = 0; i < groups; i++) {
  files[`mesh-${i}.yaml`] = [
    snap.virtualServices[i],
    snap.routes[i],
    snap.targets[i],
    snap.services[i],
    snap.endpointSlices[i],
  ]
    .map(yaml)
    .join('---\n');
}
files['pods.yaml'] = snap.pods.map(yaml).join('---\n');
let draft: DraftDoc = { files, layout: {} };
const objects = groups * 5 + proxies;

const time = <T>(f: () => T): [T, number] => {
  const t = performance.now();
  const r = f();
  return [r, performance.now() - t];
};
const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p: number) => Math.round(s[Math.min(s.length - 1, Math.floor(p * s.length))]! * 10) / 10;
  return { median: q(0.5), p95: q(0.95), max: q(1) };
};

const [, coldMs] = time(() => compileDraft(draft, { localMesh }));
const editToPreview: number[] = [];
const recompile: number[] = [];
const recompileNoXds: number[] = [];
const commandMs: number[] = [];
for (let k = 0; k < edits; k++) {
  const i = k % groups;
  const t0 = performance.now();
  const r = applyCommand(draft, {
    type: 'setField',
    key: `Route/default/route-${i}`,
    path: ['spec', 'retry', 'timeout'],
    value: 1000 + k,
  });
  if (!r.ok) throw new Error(r.error);
  draft = r.draft;
  const t1 = performance.now();
  // Every other edit skips xDS, to show what the xDS preview costs.
  compileDraft(draft, { xds: k % 2 === 0, localMesh });
  const t2 = performance.now();
  commandMs.push(t1 - t0);
  (k % 2 === 0 ? recompile : recompileNoXds).push(t2 - t1);
  if (k % 2 === 0) editToPreview.push(t2 - t0);
}

// Where the time goes, once, warm.
const stages: Record<string, number> = {};
const [, pd] = time(() => parseDraft(draft));
stages.parseDraftMs = pd;
const [s2, pm] = time(() => draftSnapshot(draft.files));
stages.draftSnapshotMs = pm;
const [c2, cm] = time(() => compileMesh(s2));
stages.compileMeshMs = cm;
stages.meshGraphMs = time(() => meshGraph(s2, c2))[1];
stages.renderXdsMs = time(() => renderXds(c2.mesh))[1];
for (const k of Object.keys(stages)) stages[k] = Math.round(stages[k]! * 10) / 10;

console.log(
  JSON.stringify({
    objects,
    localMesh: localMesh !== undefined,
    files: Object.keys(draft.files).length,
    proxies,
    coldCompileMs: Math.round(coldMs),
    editToPreviewMs: stats(editToPreview),
    editCommandMs: stats(commandMs),
    recompileMs: stats(recompile),
    recompileWithoutXdsMs: stats(recompileNoXds),
    stagesWarm: stages,
    edits,
  }),
);
