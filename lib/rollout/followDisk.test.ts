import { describe, expect, it } from 'vitest';
import type { DraftDoc } from '../console/draftDoc';
import { exampleDraft } from '../console/testDrafts.testutil';
import { mayFollowDisk, onlySplitWeightsMoved, rolloutsQuiet } from './followDisk';
import { NOW, rolloutIn } from './rolloutFixtures.testutil';
import { setSplitWeights } from './splitInFiles';

const TARGET = { namespace: 'default', name: 'echo-canary' };
const base = exampleDraft('canary');

/** `doc` with the canary's weights set as a rollout step writes them. */
function stepped(doc: DraftDoc, weights: number[]): DraftDoc {
  const r = setSplitWeights(doc.files, TARGET, weights);
  if ('error' in r) throw new Error(r.error);
  return { ...doc, files: { ...doc.files, [r.file]: r.text } };
}

const edit = (doc: DraftDoc, from: string, to: string): DraftDoc => ({
  ...doc,
  files: { ...doc.files, 'mesh.yaml': doc.files['mesh.yaml']!.replace(from, to) },
});

describe('onlySplitWeightsMoved', () => {
  it('is true when the disk is the base with the Target’s split weights changed, and only then', () => {
    const disk = stepped(base, [50, 50]);
    expect(disk.files['mesh.yaml']).not.toBe(base.files['mesh.yaml']);
    expect(onlySplitWeightsMoved(base, disk, TARGET)).toBe(true);
    // Two steps at once (a tab that missed one) are still only weights.
    expect(onlySplitWeightsMoved(base, stepped(stepped(base, [50, 50]), [0, 100]), TARGET)).toBe(true);
    // The weights and something else: the user decides.
    expect(onlySplitWeightsMoved(base, edit(disk, 'port: 9100', 'port: 9101'), TARGET)).toBe(false);
    expect(
      onlySplitWeightsMoved(base, { ...disk, files: { ...disk.files, 'extra.yaml': 'a: 1\n' } }, TARGET),
    ).toBe(false);
    expect(onlySplitWeightsMoved(base, { ...disk, layout: { x: { x: 1, y: 2 } } }, TARGET)).toBe(false);
    // Another entry, or another Target's split, is not a rollout's step of this one.
    expect(
      onlySplitWeightsMoved(
        base,
        edit(base, 'serviceName: echo-v2, weight: 20', 'serviceName: echo-v3, weight: 20'),
        TARGET,
      ),
    ).toBe(false);
    expect(onlySplitWeightsMoved(base, disk, { namespace: 'default', name: 'other' })).toBe(false);
    // Nothing moved.
    expect(onlySplitWeightsMoved(base, base, TARGET)).toBe(false);
  });
});

describe('mayFollowDisk', () => {
  const disk = stepped(base, [50, 50]);
  it('follows only a draft without edits of its own, with its base kept', () => {
    expect(mayFollowDisk(base, { base, disk }, [TARGET])).toBe(true);
    expect(mayFollowDisk(edit(base, 'port: 9100', 'port: 9200'), { base, disk }, [TARGET])).toBe(false);
    // The draft moved the slider itself: its own edit, even if it is a weight.
    expect(mayFollowDisk(stepped(base, [70, 30]), { base, disk }, [TARGET])).toBe(false);
    expect(mayFollowDisk(base, { disk }, [TARGET])).toBe(false);
    expect(mayFollowDisk(base, { base, disk }, [])).toBe(false);
  });
});

describe('rolloutsQuiet', () => {
  it('is quiet when every rollout ended or paused, or waits out a pause that lasts past the margin', () => {
    expect(
      rolloutsQuiet([rolloutIn('succeeded'), rolloutIn('paused'), rolloutIn('rolled-back')], NOW, 500),
    ).toBe(true);
    expect(rolloutsQuiet([], NOW, 500)).toBe(true);
    // The fixture waits until NOW + 12 s.
    const waiting = rolloutIn('progressing');
    expect(rolloutsQuiet([waiting], NOW, 500)).toBe(true);
    expect(rolloutsQuiet([waiting], NOW + 11_600, 500)).toBe(false);
    for (const activity of ['applying', 'analysing', 'rolling back'] as const)
      expect(
        rolloutsQuiet([rolloutIn('progressing', { activity, nextAt: undefined })], NOW, 500),
        activity,
      ).toBe(false);
    // Just started: nothing says what it does yet.
    expect(
      rolloutsQuiet([rolloutIn('progressing', { activity: undefined, nextAt: undefined })], NOW, 500),
    ).toBe(false);
  });
});
