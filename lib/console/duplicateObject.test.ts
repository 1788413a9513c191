import { describe, expect, it } from 'vitest';
import { compileDraft } from './compileDraft';
import { applyCommand } from './draftCommands';
import { parseDraft } from './draftModel';
import { duplicateObject } from './duplicateObject';
import { exampleDraft } from './testDrafts.testutil';

describe('duplicateObject', () => {
  it('copies a VirtualService under the next free name, in its file, on a port nobody uses', () => {
    const draft = exampleDraft('canary');
    const d = duplicateObject(parseDraft(draft), 'VirtualService/default/gateway');
    if (!d.ok) throw new Error(d.error);
    expect(d.key).toBe('VirtualService/default/gateway-copy');
    expect(d.file).toBe('mesh.yaml');
    const r = applyCommand(draft, { type: 'duplicateObject', key: 'VirtualService/default/gateway' });
    if (!r.ok) throw new Error(r.error);
    // The original's file gets the copy as one more document; every other file is untouched.
    expect(r.draft.files['mesh.yaml']!.startsWith(draft.files['mesh.yaml']!)).toBe(true);
    expect(r.draft.files['cluster.yaml']).toBe(draft.files['cluster.yaml']);
    const c = compileDraft(r.draft);
    const copy = c.snapshot.virtualServices.find((v) => v.metadata.name === 'gateway-copy')!;
    const original = c.snapshot.virtualServices.find((v) => v.metadata.name === 'gateway')!;
    // 9100 is the gateway's (and gateway-svc's); 9101 is the next one up that nothing uses.
    expect([original.spec.udp?.port, copy.spec.udp?.port]).toEqual([9100, 9101]);
    expect(copy.spec.rules).toEqual(original.spec.rules);
    expect(copy.spec.selector).toEqual(original.spec.selector);
    // Valid at once: no schema error, no port clash, nothing dangling.
    expect(c.diagnostics.filter((x) => x.severity === 'error')).toEqual([]);
  });

  it('numbers further copies, keeps references, and gives each port of a Service its own free one', () => {
    let draft = exampleDraft('canary');
    for (let i = 0; i < 2; i++) {
      const r = applyCommand(draft, { type: 'duplicateObject', key: 'Route/default/echo-route' });
      if (!r.ok) throw new Error(r.error);
      draft = r.draft;
    }
    const model = parseDraft(draft);
    expect(model.byKey.has('Route/default/echo-route-copy')).toBe(true);
    expect(model.byKey.has('Route/default/echo-route-copy-2')).toBe(true);
    const route = model.byKey.get('Route/default/echo-route-copy-2')![0]!.value as { spec: unknown };
    expect(route.spec).toEqual(
      (model.byKey.get('Route/default/echo-route')![0]!.value as { spec: unknown }).spec,
    );

    const twoPorts = {
      files: {
        'svc.yaml':
          'apiVersion: v1\nkind: Service\nmetadata: { name: s, namespace: prod, uid: abc, resourceVersion: "7" }\n' +
          'spec: { selector: { app: s }, ports: [{ name: a, port: 9000 }, { name: b, port: 9001 }] }\n' +
          'status: { loadBalancer: {} }\n',
      },
      layout: {},
    };
    const s = duplicateObject(parseDraft(twoPorts), 'Service/prod/s');
    if (!s.ok) throw new Error(s.error);
    expect(s.object.metadata).toEqual({ name: 's-copy', namespace: 'prod' });
    expect(s.object.status).toBeUndefined();
    expect((s.object.spec as { ports: { port: number }[] }).ports.map((p) => p.port)).toEqual([9002, 9003]);
  });

  it('says why when it cannot: no such object, one defined twice, a kind it does not copy, a name too long', () => {
    const draft = exampleDraft('canary');
    const model = parseDraft(draft);
    expect(duplicateObject(model, 'Route/default/nope')).toEqual({
      ok: false,
      error: 'cannot duplicate Route/default/nope: no such object in the draft',
    });
    expect(duplicateObject(model, 'Pod/default/gateway-0')).toMatchObject({
      ok: false,
      error: expect.stringContaining('cannot duplicate a Pod'),
    });
    const twice = { ...draft, files: { ...draft.files, 'again.yaml': draft.files['mesh.yaml']! } };
    expect(duplicateObject(parseDraft(twice), 'Route/default/echo-route')).toMatchObject({
      ok: false,
      error: expect.stringContaining('defined 2 times'),
    });
    const long = 'a'.repeat(250);
    const longDraft = {
      files: {
        'r.yaml': `apiVersion: msm.l7mp.io/v1\nkind: Route\nmetadata: { name: ${long} }\nspec: { destination: t }\n`,
      },
      layout: {},
    };
    const r = applyCommand(longDraft, { type: 'duplicateObject', key: `Route/default/${long}` });
    expect(r).toMatchObject({ ok: false, error: expect.stringContaining('too long for a name') });
  });
});
