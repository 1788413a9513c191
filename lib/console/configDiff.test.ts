import { describe, expect, it } from 'vitest';
import type { L7mpConfig } from '../model/l7mp';
import { compileDraft } from './compileDraft';
import { l7mpConfigDiff, xdsConfigDiff } from './configDiff';
import { applyCommand } from './draftCommands';
import type { DraftDoc } from './draftDoc';
import { exampleDraft } from './testDrafts.testutil';

const GATEWAY = 'default/gateway-0';
const VS = 'VirtualService/default/gateway-vsvc';

function edited(draft: DraftDoc, key: string, path: (string | number)[], value: unknown): DraftDoc {
  const r = applyCommand(draft, { type: 'setField', key, path, value });
  if (!r.ok) throw new Error(r.error);
  return r.draft;
}

/** Changed lines of a section as [removed, added] texts. */
function changes(diff: ReturnType<typeof l7mpConfigDiff>, kind: string): [string[], string[]] {
  const ops = diff.sections.find((s) => s.kind === kind)!.ops;
  return [
    ops.filter((o) => o.kind === 'del').map((o) => o.text.trim()),
    ops.filter((o) => o.kind === 'add').map((o) => o.text.trim()),
  ];
}

describe('l7mpConfigDiff', () => {
  const ex1 = exampleDraft('seed-example-1');
  const live = compileDraft(ex1, { xds: false }).l7mp[GATEWAY]!;

  it('says a proxy running the draft has no differences, whatever defaults either side spells out', () => {
    // As read back from a proxy: no options, inline route without retry, l7mp's bookkeeping.
    const readBack: L7mpConfig = {
      ...live,
      listeners: live.listeners.map((l) => ({
        ...l,
        options: undefined,
        live: { rules: ['r0'], routes: [] },
      })),
    };
    const d = l7mpConfigDiff(readBack, live);
    expect(d.same).toBe(true);
    expect(d.sections.map((s) => s.kind)).toEqual(['listeners', 'rules', 'routes', 'clusters']);
  });

  it('shows a listener port change as the old line removed and the new one added', () => {
    const draft = edited(ex1, VS, ['spec', 'udp', 'port'], 9002);
    const d = l7mpConfigDiff(live, compileDraft(draft, { xds: false }).l7mp[GATEWAY]!);
    expect(d.same).toBe(false);
    expect(changes(d, 'listeners')).toEqual([['port: 9001'], ['port: 9002']]);
    expect(d.sections.find((s) => s.kind === 'clusters')!.added).toBe(0);
  });

  it('against an empty proxy, everything is added', () => {
    const d = l7mpConfigDiff({ listeners: [], routes: [], clusters: [] }, live);
    expect(d.sections.every((s) => s.removed === 0)).toBe(true);
    expect(d.sections.find((s) => s.kind === 'listeners')!.ops[0]).toMatchObject({
      kind: 'add',
      text: '- name: gateway-vsvc.default.virtualservice.cluster.local',
    });
  });
});

describe('xdsConfigDiff', () => {
  const render = (d: DraftDoc) => {
    const x = compileDraft(d).xds;
    if ('error' in x) throw new Error(x.error);
    return x.proxies[GATEWAY];
  };

  const canary = exampleDraft('canary');

  it('compares config_dump sections; equal renderings have no differences', () => {
    expect(xdsConfigDiff(render(canary), render(canary)).same).toBe(true);
    const d = xdsConfigDiff(
      render(canary),
      render(edited(canary, 'VirtualService/default/gateway', ['spec', 'udp', 'port'], 9102)),
    );
    expect(d.same).toBe(false);
    expect(changes(d, 'listeners')).toEqual([['port_value: 9100'], ['port_value: 9102']]);
    expect(d.sections.find((s) => s.kind === 'endpoints')!.added).toBe(0);
  });

  it('a proxy without resources on one side is all added', () => {
    const d = xdsConfigDiff(undefined, render(canary));
    expect(d.sections.every((s) => s.removed === 0) && !d.same).toBe(true);
  });
});
