/**
 * DraftLayouts with its real worker thread (tsx-loaded job, real elkjs) and the route that serves its
 * layouts: a large draft's first view equals the browser's layout of the graph the canvas lays out first
 * (layeredLayout.ts at that size, ELK for a small graph), under the hash the canvas asks for; small,
 * placed, broken or unknown drafts get none.
 */
import { cp as copyDir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import ELK from 'elkjs/lib/elk.bundled.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GET as getCompiled } from '@/app/api/draft/compiled/route';
import { GET as getLayout } from '@/app/api/layouts/[hash]/route';
import { syntheticDraft } from '@/bench/syntheticMesh';
import { compilationForTransfer, compileDraft, consoleCompileOptions } from '@/lib/console/compileDraft';
import type { DraftDoc } from '@/lib/console/draftDoc';
import { MAIN_DRAFT } from '@/lib/console/draftIds';
import { draftFirstView } from '@/lib/console/draftFirstView';
import {
  elkGraphOf,
  layoutAlgorithmOf,
  packPositions,
  positionsOf,
  unpackPositions,
} from '@/lib/console/elkLayout';
import { layeredLayout } from '@/lib/console/layeredLayout';
import { firstViewPicture } from '@/lib/console/firstViewPicture';
import { exampleDraft } from '@/lib/console/testDrafts.testutil';
import { ConsoleAuth, setConsoleAuth } from './consoleAuth';
import { setConsoleContext } from './consoleContext';
import { DraftLayouts } from './DraftLayouts';
import { DraftRegistry } from './DraftRegistry';

const REPO = path.resolve(__dirname, '..', '..');

/** The draft compiled as the console's compile worker sends it, as JSON. */
function consoleCompileJson(draft: DraftDoc, localMesh: boolean): string {
  return JSON.stringify(compilationForTransfer(compileDraft(draft, consoleCompileOptions(localMesh))));
}

/** The hash and graph the console's canvas would lay out first for this draft. */
function firstView(draft: DraftDoc, { localMesh } = { localMesh: true }) {
  return draftFirstView(draft, { localMesh });
}

const warnings: string[] = [];
const logger = { warn: (m: string) => void warnings.push(m) };
let layouts: DraftLayouts | undefined;
afterEach(async () => {
  await layouts?.close();
  layouts = undefined;
  warnings.length = 0;
});

describe('DraftLayouts', () => {
  it('lays out a large draft in its worker: the positions the browser would give it, under the hash the canvas asks for', async () => {
    // 70 synthetic services: about 360 nodes, over SERVER_LAYOUT_MIN_NODES, flat.
    const draft = syntheticDraft(70);
    const view = firstView(draft)!;
    expect(view.input.nodes.length).toBeGreaterThan(300);
    layouts = new DraftLayouts({ localMesh: true, logger });
    layouts.prepare(draft);
    const got = await layouts.get(view.hash, 60_000);
    // At this size the browser runs layeredLayout, not ELK (layoutAlgorithmOf).
    expect(layoutAlgorithmOf(view.input)).toBe('layered');
    const expected = layeredLayout(view.input);
    expect(got).toEqual(expected);
    expect(Object.keys(got!).sort()).toEqual(view.input.nodes.map((n) => n.id).sort());
    // Asked again: the same layout, kept.
    expect(await layouts.get(view.hash, 1000)).toBe(got);
    // Its picture, for the page to draw early: for this draft's content exactly.
    expect(layouts.picture(draft)).toEqual(firstViewPicture(view.graph, view.input, expected, view.hash));
    const edited = { ...draft, files: { ...draft.files, 'extra.yaml': '# an edit\n' } };
    expect(layouts.picture(edited)).toBeUndefined();
    // And its compile, as the console opening it compiles it (the local mesh's options), with the layout.
    const first = layouts.firstCompile(draft)!;
    expect(first.json).toBe(consoleCompileJson(draft, true));
    expect(first.localMesh).toBe(true);
    expect(first.layout).toEqual({ hash: view.hash, positions: expected });
    expect(layouts.firstCompile(edited)).toBeUndefined();
    // The edit leaves the graph as it was: once the server has looked at it, the same picture.
    layouts.prepare(edited);
    await expect.poll(() => layouts!.picture(edited)?.hash, { timeout: 60_000 }).toBe(view.hash);
    // The edited draft's own compile (not laid out again: its first view is the one laid out before).
    expect(layouts.firstCompile(edited)!.json).toBe(consoleCompileJson(edited, true));
    expect(layouts.firstCompile(edited)!.layout).toEqual({ hash: view.hash, positions: expected });
    expect(warnings).toEqual([]);
  }, 90_000);

  it('compiles for the cluster when not on the local mesh, as the console there does', async () => {
    const draft = syntheticDraft(70);
    const cluster = firstView(draft, { localMesh: false })!;
    layouts = new DraftLayouts({ localMesh: false, logger });
    layouts.prepare(draft);
    const got = await layouts.get(cluster.hash, 60_000);
    expect(got).toEqual(layeredLayout(cluster.input));
    // The cluster's compile: xDS rendered, no local-mesh adaptations.
    const first = layouts.firstCompile(draft)!;
    expect(first.localMesh).toBe(false);
    expect(first.json).toBe(consoleCompileJson(draft, false));
    expect(first.json).not.toBe(consoleCompileJson(draft, true));
  }, 90_000);

  it('has nothing for a small draft, one whose nodes the draft places, broken YAML, or a hash it never saw', async () => {
    layouts = new DraftLayouts({ localMesh: true, logger });
    const small = exampleDraft('seed-example-1');
    layouts.prepare(small);
    expect(await layouts.get(firstView(small)!.hash, 30_000)).toBeUndefined();
    // Too few objects for a large graph: no worker thread at all.
    expect(layouts.workerRunning).toBe(false);

    const large = syntheticDraft(70);
    const view = firstView(large)!;
    const placed = {
      ...large,
      layout: Object.fromEntries(view.input.nodes.map((n, i) => [n.id, { x: i * 10, y: 0 }])),
    };
    expect(firstView(placed)).toBeUndefined();
    layouts.prepare(placed);
    expect(await layouts.get(view.hash, 30_000)).toBeUndefined();

    // A small draft's compile is not made here either: the browser's own is quick.
    expect(layouts.firstCompile(small)).toBeUndefined();
    const broken = { files: { 'mesh.yaml': 'kind: [unclosed\n  : :' }, layout: {} };
    expect(() => layouts!.prepare(broken)).not.toThrow();
    expect(await layouts.get('0123456789abcdef', 30_000)).toBeUndefined();
    expect(warnings).toEqual([]);
  }, 90_000);

  it('prepareLater waits for the draft to settle and keeps no layout request waiting meanwhile; prepare starts at once', async () => {
    layouts = new DraftLayouts({ localMesh: true, logger, laterMs: 60_000 });
    const draft = syntheticDraft(70);
    const view = firstView(draft)!;
    layouts.prepareLater(draft);
    // Had it waited for the save's job, it would have its layout after 60 s (or the test time out).
    expect(await layouts.get(view.hash, 120_000)).toBeUndefined();
    layouts.prepare(draft);
    expect(Object.keys((await layouts.get(view.hash, 60_000))!)).toHaveLength(view.input.nodes.length);
  }, 90_000);

  it('a small minNodes lays out a small draft; close() leaves nothing waiting', async () => {
    layouts = new DraftLayouts({ localMesh: true, logger, minNodes: 1 });
    const small = exampleDraft('seed-example-1');
    const view = firstView(small)!;
    layouts.prepare(small);
    expect(Object.keys((await layouts.get(view.hash, 60_000))!).sort()).toEqual(
      view.input.nodes.map((n) => n.id).sort(),
    );
    const large = syntheticDraft(70);
    layouts.prepare(large);
    const waiting = layouts.get(firstView(large)!.hash, 60_000);
    await layouts.close();
    expect(await waiting).toBeUndefined();
  }, 90_000);
});

describe('GET /api/layouts/<hash>', () => {
  let tmp: string;
  beforeEach(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'md-layouts-'));
    const meshDir = path.join(tmp, 'mesh');
    await copyDir(path.join(REPO, 'examples', 'seed-example-1'), meshDir, { recursive: true });
    setConsoleAuth(new ConsoleAuth('layout-test-token'));
  });
  afterEach(async () => {
    setConsoleAuth(undefined);
    setConsoleContext(undefined);
    await rm(tmp, { recursive: true, force: true });
  });
  const get = (hash: string, headers: Record<string, string> = {}) =>
    getLayout(new Request(`http://127.0.0.1:3100/api/layouts/${hash}`, { headers }), {
      params: Promise.resolve({ hash }),
    });

  it('answers the packed positions of a layout the server made, 404 for one it did not, 400 for a bad hash', async () => {
    const drafts = new DraftRegistry({
      meshDir: path.join(tmp, 'mesh'),
      stateDir: path.join(tmp, 'state'),
      logger,
    });
    expect((await get('0123456789abcdef')).status).toBe(503);
    layouts = new DraftLayouts({ localMesh: true, logger, minNodes: 1 });
    setConsoleContext({ drafts, examplesDir: path.join(REPO, 'examples'), layouts });
    const draft = exampleDraft('seed-example-1');
    const view = firstView(draft)!;
    layouts.prepare(draft);

    const ok = await get(view.hash);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('server-timing')).toMatch(
      /^wait;dur=\d+, compile;dur=\d+, layout;dur=\d+, total;dur=\d+$/,
    );
    const positions = unpackPositions(((await ok.json()) as { positions: unknown }).positions);
    // A small graph (minNodes 1 here): ELK's places, as the browser's.
    expect(layoutAlgorithmOf(view.input)).toBe('elk');
    expect(positions).toEqual(positionsOf(await new ELK().layout(elkGraphOf(view.input))));

    const missing = await get('0123456789abcdef');
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: string }).error).toMatch(
      /no layout for graph 0123456789abcdef/,
    );
    const bad = await get('..%2F..%2Fetc');
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toMatch(/not a graph hash/);
    // Another site's page cannot read it through the user's browser.
    expect((await get(view.hash, { origin: 'http://evil.example' })).status).toBe(403);
  }, 90_000);
});

describe('GET /api/draft/compiled', () => {
  let tmp: string;
  beforeEach(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'md-compiled-'));
    await copyDir(path.join(REPO, 'examples', 'seed-example-1'), path.join(tmp, 'mesh'), { recursive: true });
    setConsoleAuth(new ConsoleAuth('compiled-test-token'));
  });
  afterEach(async () => {
    setConsoleAuth(undefined);
    setConsoleContext(undefined);
    await rm(tmp, { recursive: true, force: true });
  });
  const url = (p: string) => `http://127.0.0.1:3100${p}`;

  it("answers the server's compile of the draft as it is now, with its revision, and none once the draft changed", async () => {
    const drafts = new DraftRegistry({
      meshDir: path.join(tmp, 'mesh'),
      stateDir: path.join(tmp, 'state'),
      logger,
    });
    expect((await getCompiled(new Request(url('/api/draft/compiled')))).status).toBe(503);
    // minNodes 1: the seed example's graph is laid out (and compiled) here as a large one would be.
    layouts = new DraftLayouts({ localMesh: true, logger, minNodes: 1 });
    setConsoleContext({ drafts, examplesDir: path.join(REPO, 'examples'), layouts });
    const store = (await drafts.get(MAIN_DRAFT))!;
    const { draft, revision } = await store.get();
    const view = firstView(draft)!;

    // Before the server has compiled it: nothing.
    const before = await getCompiled(new Request(url('/api/draft/compiled')));
    expect(before.status).toBe(204);
    expect(before.headers.get('cache-control')).toBe('no-store');

    layouts.prepare(draft);
    const positions = await layouts.get(view.hash, 60_000);
    const ok = await getCompiled(new Request(url('/api/draft/compiled')));
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toBe('application/json');
    expect(ok.headers.get('cache-control')).toBe('no-store');
    expect(ok.headers.get('X-Draft-Revision')).toBe(String(revision));
    const body = (await ok.json()) as Record<string, unknown>;
    expect(body).toEqual({
      revision,
      localMesh: true,
      layout: { hash: view.hash, positions: packPositions(positions!) },
      result: JSON.parse(consoleCompileJson(draft, true)),
    });
    // The main draft named: the same.
    expect((await getCompiled(new Request(url(`/api/draft/compiled?draft=${MAIN_DRAFT}`)))).status).toBe(200);
    // Another site's page cannot read it through the user's browser.
    expect(
      (
        await getCompiled(
          new Request(url('/api/draft/compiled'), { headers: { origin: 'http://evil.example' } }),
        )
      ).status,
    ).toBe(403);
    // A draft that does not exist.
    expect((await getCompiled(new Request(url('/api/draft/compiled?draft=nosuch')))).status).toBe(404);

    // A save changes the draft: the compile of the old content is not answered for it.
    const edited = { ...draft, files: { ...draft.files, 'extra.yaml': '# an edit\n' } };
    const saved = await store.save({ draft: edited, baseRevision: revision });
    expect(saved.ok).toBe(true);
    expect((await getCompiled(new Request(url('/api/draft/compiled')))).status).toBe(204);
    expect(warnings).toEqual([]);
  }, 90_000);
});
