import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyCommand, type DraftCommand } from './draftCommands';
import type { DraftDoc } from './draftDoc';
import { createHistory, pushHistory, redoHistory, undoHistory } from './draftHistory';
import { parseDraft } from './draftModel';
import { exampleDraft } from './testDrafts.testutil';

const drafts: DraftDoc[] = [
  exampleDraft('canary'),
  exampleDraft('seed-example-1'),
  exampleDraft('seed-example-2'),
].map((d, i): DraftDoc => ({
  ...d,
  layout: i === 0 ? { 'Route/default/echo-route': { x: 10, y: 20 } } : {},
}));

const name = fc.constantFrom('a', 'echo-v1', 'gateway', 'new-name', 'worker-svc', 'transcoder-vsvc');
const value = fc.oneof(
  fc.integer({ min: 0, max: 70000 }),
  fc.string({ maxLength: 8 }),
  fc.boolean(),
  fc.constant(undefined),
  fc.constant({ udp: { port: 9 } }),
);
const path = fc.array(
  fc.oneof(fc.constantFrom('spec', 'metadata', 'rules', 'udp', 'port', 'destination', 'labels'), fc.nat(3)),
  { minLength: 1, maxLength: 4 },
);

function commandFor(draft: DraftDoc): fc.Arbitrary<DraftCommand> {
  const keys = parseDraft(draft).objects.map((o) => o.key);
  const key = fc.constantFrom(...keys, 'Route/default/missing');
  const files = fc.constantFrom(...Object.keys(draft.files), 'new.yaml', '../bad.yaml');
  const node = fc.oneof(key, fc.constant('VirtualService/default/gateway-vsvc#spec.rules[0].action.route'));
  return fc.oneof(
    fc.record({ type: fc.constant('setField' as const), key, path, value }),
    fc.record({ type: fc.constant('deleteObject' as const), key }),
    fc.record({ type: fc.constant('renameObject' as const), key, name }),
    fc.record({
      type: fc.constant('connect' as const),
      source: node,
      target: node,
      chain: fc.constantFrom(undefined, 'ingress' as const, 'egress' as const),
    }),
    fc.record({ type: fc.constant('setFileText' as const), path: files, text: fc.string({ maxLength: 40 }) }),
    fc.record({ type: fc.constant('deleteFile' as const), path: files }),
    fc.record({
      type: fc.constant('moveNodes' as const),
      positions: fc.dictionary(
        fc.oneof(key, fc.constant('Route/default/echo-route')),
        fc.oneof(fc.constant(null), fc.record({ x: fc.integer(), y: fc.integer() })),
      ),
    }),
    fc.record({
      type: fc.constant('addObject' as const),
      object: fc.record({
        apiVersion: fc.constant('msm.l7mp.io/v1'),
        kind: fc.constantFrom('Route', 'Target', 'VirtualService'),
        metadata: fc.record({ name }),
        spec: fc.constant({ destination: 'x' }),
      }),
    }),
  );
}

describe('DraftHistory', () => {
  it('undo after any command restores the exact draft, and redo the command result', () => {
    const arb = fc
      .nat(drafts.length - 1)
      .chain((i) =>
        fc.tuple(fc.constant(drafts[i]!), fc.array(commandFor(drafts[i]!), { minLength: 1, maxLength: 4 })),
      );
    fc.assert(
      fc.property(arb, ([start, commands]) => {
        let h = createHistory(start);
        const seen: DraftDoc[] = [start];
        for (const cmd of commands) {
          const r = applyCommand(h.present, cmd);
          if (!r.ok) {
            expect(typeof r.error).toBe('string');
            continue;
          }
          const before = h.present;
          const next = pushHistory(h, r.draft);
          if (next === h) {
            // A command that changes nothing records nothing.
            expect(JSON.stringify(r.draft)).toBe(JSON.stringify(before));
            continue;
          }
          h = next;
          seen.push(h.present);
          const undone = undoHistory(h);
          expect(JSON.stringify(undone.present)).toBe(JSON.stringify(before));
          expect(undone.present).toEqual(before);
          const redone = redoHistory(undone);
          expect(JSON.stringify(redone.present)).toBe(JSON.stringify(r.draft));
        }
        // Undoing everything walks back through every state to the start.
        for (let i = seen.length - 2; i >= 0; i--) {
          h = undoHistory(h);
          expect(JSON.stringify(h.present)).toBe(JSON.stringify(seen[i]));
        }
      }),
      { numRuns: 150 },
    );
  });

  it('merges consecutive edits of one group within the window into one step', () => {
    const d0 = drafts[0]!;
    const d1 = { ...d0, files: { ...d0.files, 'x.yaml': 'a' } };
    const d2 = { ...d0, files: { ...d0.files, 'x.yaml': 'ab' } };
    const d3 = { ...d0, files: { ...d0.files, 'x.yaml': 'abc' } };
    let h = createHistory(d0);
    h = pushHistory(h, d1, { group: 'yaml:x.yaml', at: 0 });
    h = pushHistory(h, d2, { group: 'yaml:x.yaml', at: 500 });
    h = pushHistory(h, d3, { group: 'yaml:x.yaml', at: 5000 });
    expect(h.past).toHaveLength(2);
    expect(undoHistory(h).present).toEqual(d2);
    expect(undoHistory(undoHistory(h)).present).toEqual(d0);
    expect(pushHistory(h, h.present)).toBe(h);
  });
});
