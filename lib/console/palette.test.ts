import { describe, expect, it } from 'vitest';
import { compileDraft } from './compileDraft';
import { applyCommand } from './draftCommands';
import { parseDraft } from './draftModel';
import { newObject, PALETTE_KINDS } from './palette';
import { exampleDraft } from './testDrafts.testutil';

describe('palette', () => {
  it('adds objects that pass the schema, with free names and ports, referring to what exists', () => {
    let draft = exampleDraft('canary');
    for (const kind of PALETTE_KINDS) {
      const r = applyCommand(draft, { type: 'addObject', object: newObject(kind, parseDraft(draft)) });
      if (!r.ok) throw new Error(r.error);
      draft = r.draft;
    }
    const c = compileDraft(draft);
    expect(c.diagnostics.filter((d) => d.code === 'schema')).toEqual([]);
    expect(c.snapshot.routes.find((r) => r.metadata.name === 'route-1')!.spec.destination).toBe(
      'echo-canary',
    );
    expect(c.snapshot.targets.find((t) => t.metadata.name === 'target-1')!.spec.serviceName).toBe('gateway');
    const vs = c.snapshot.virtualServices.find((v) => v.metadata.name === 'vsvc-1')!;
    expect(vs.spec.udp).toEqual({ port: 9000 });
    expect(c.snapshot.services.find((s) => s.metadata.name === 'svc-1')!.spec.ports![0]!.port).toBe(9001);
    // The next one gets the next name.
    expect((newObject('Route', parseDraft(draft)).metadata as { name: string }).name).toBe('route-2');
  });

  it('a Target in an empty draft has explicit endpoints so it is complete on its own', () => {
    const t = newObject('Target', parseDraft({ files: {}, layout: {} }));
    expect(t.spec).toEqual({ udp: { port: 9000 }, endpoints: [{ spec: { address: '127.0.0.1' } }] });
  });
});
