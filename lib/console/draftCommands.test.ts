import { describe, expect, it } from 'vitest';
import { parseManifests } from '../parse/parseManifests';
import { compileDraft } from './compileDraft';
import { applyCommand, type DraftCommand } from './draftCommands';
import type { DraftDoc } from './draftDoc';
import { createHistory, pushHistory, undoHistory } from './draftHistory';
import { parseDraft } from './draftModel';
import { exampleDraft } from './testDrafts.testutil';

function apply(draft: DraftDoc, cmd: DraftCommand): DraftDoc {
  const r = applyCommand(draft, cmd);
  if (!r.ok) throw new Error(r.error);
  return r.draft;
}

function snapshotOf(draft: DraftDoc) {
  return parseManifests(Object.entries(draft.files).map(([p, content]) => ({ path: p, content })));
}

const canary = exampleDraft('canary');
const ex1 = exampleDraft('seed-example-1');

describe('parseDraft', () => {
  it('finds every object with its file, document index, line and dialect', () => {
    const m = parseDraft(ex1);
    const vs = m.byKey.get('VirtualService/default/gateway-vsvc')![0]!;
    expect(vs).toMatchObject({ file: 'mesh.yaml', doc: 1, line: 24, dialect: true, kind: 'VirtualService' });
    // The value is the canonical (converted) object.
    expect((vs.value.spec as any).selector).toEqual({ serviceName: 'gateway-svc' });
    expect(m.byKey.get('Pod/default/worker-1')![0]).toMatchObject({ file: 'cluster.yaml', doc: 5 });
    expect(m.objects).toHaveLength(8);
  });

  it('reports a YAML error with its file and line, and keeps the other documents', () => {
    const m = parseDraft({
      files: { 'a.yaml': 'kind: Route\nmetadata: {name: r}\n---\nkind: [\n' },
      layout: {},
    });
    expect(m.objects.map((o) => o.key)).toEqual(['Route/default/r']);
    expect(m.problems).toEqual([expect.objectContaining({ file: 'a.yaml', line: 5 })]);
  });
});

describe('setField', () => {
  it('changes one field in place, keeping comments, key order and the other documents byte for byte', () => {
    const next = apply(canary, {
      type: 'setField',
      key: 'Route/default/echo-route',
      path: ['spec', 'retry', 'num_retries'],
      value: 5,
    });
    const before = canary.files['mesh.yaml']!;
    const after = next.files['mesh.yaml']!;
    expect(after).toBe(before.replace('num_retries: 2', 'num_retries: 5'));
    expect(next.files['cluster.yaml']).toBe(canary.files['cluster.yaml']);
  });

  it('deletes a field when the value is undefined', () => {
    const next = apply(canary, {
      type: 'setField',
      key: 'Route/default/echo-route',
      path: ['spec', 'retry'],
      value: undefined,
    });
    expect(next.files['mesh.yaml']).not.toContain('retry');
    expect(snapshotOf(next).routes[0]!.spec).toEqual({ destination: 'echo-canary' });
  });

  it('rewrites a seed-dialect object in canonical form on its first edit, keeping its comments', () => {
    const next = apply(ex1, {
      type: 'setField',
      key: 'VirtualService/default/transcoder-vsvc',
      path: ['spec', 'websocket', 'port'],
      value: 8889,
    });
    const text = next.files['mesh.yaml']!;
    expect(text).toContain('# Seed Example 1'); // the file's header comment
    const snap = snapshotOf(next);
    const vs = snap.virtualServices.find((v) => v.metadata.name === 'transcoder-vsvc')!;
    expect(vs.spec.websocket).toEqual({ port: 8889 });
    // No dialect warnings left for the edited object; the other one still has its own.
    const warnings = snap.diagnostics.filter((d) => d.code.startsWith('seed-dialect'));
    expect(new Set(warnings.map((d) => d.object.name))).toEqual(new Set(['gateway-vsvc']));
    expect(text.slice(text.indexOf('name: gateway-vsvc') - 60)).toBe(
      ex1.files['mesh.yaml']!.slice(ex1.files['mesh.yaml']!.indexOf('name: gateway-vsvc') - 60),
    );
  });

  it('refuses a path through a single value and says where', () => {
    const r = applyCommand(canary, {
      type: 'setField',
      key: 'Route/default/echo-route',
      path: ['spec', 'destination', 'udp'],
      value: {},
    });
    expect(r).toEqual({
      ok: false,
      error: expect.stringMatching(
        /Route default\/echo-route: cannot set spec.destination.udp: spec.destination is a single value/,
      ),
    });
  });

  it('refuses an object that is not in the draft or a file with a YAML error', () => {
    expect(
      applyCommand(canary, { type: 'setField', key: 'Route/default/nope', path: ['spec'], value: 1 }),
    ).toEqual({
      ok: false,
      error: 'cannot edit: Route default/nope is not in the draft',
    });
    const broken = { files: { 'a.yaml': 'kind: Route\nmetadata: {name: r}\nspec: [\n' }, layout: {} };
    expect(parseDraft(broken).objects).toEqual([]);
  });
});

describe('addObject / deleteObject', () => {
  const route = {
    apiVersion: 'msm.l7mp.io/v1',
    kind: 'Route',
    metadata: { name: 'r2', namespace: 'default' },
    spec: { destination: 'echo-v1' },
  };

  it('adds an object as a new file named after it', () => {
    const next = apply(canary, { type: 'addObject', object: route });
    expect(Object.keys(next.files)).toEqual(['cluster.yaml', 'mesh.yaml', 'route-r2.yaml']);
    expect(
      snapshotOf(next)
        .routes.map((r) => r.metadata.name)
        .sort(),
    ).toEqual(['echo-route', 'r2']);
  });

  it('refuses a duplicate and a bad name', () => {
    const next = apply(canary, { type: 'addObject', object: route });
    expect(applyCommand(next, { type: 'addObject', object: route })).toMatchObject({
      ok: false,
      error: expect.stringContaining('Route default/r2: it already exists (route-r2.yaml:1)'),
    });
    const bad = { ...route, metadata: { name: 'Bad Name' } };
    expect(applyCommand(canary, { type: 'addObject', object: bad })).toMatchObject({
      ok: false,
      error: expect.stringContaining('must be a lowercase DNS subdomain name'),
    });
  });

  it('removes the document and drops a file left empty', () => {
    const added = apply(canary, { type: 'addObject', object: route });
    const removed = apply(added, { type: 'deleteObject', key: 'Route/default/r2' });
    expect(removed.files).toEqual(canary.files);
    const next = apply(canary, { type: 'deleteObject', key: 'Route/default/echo-route' });
    const text = next.files['mesh.yaml']!;
    expect(text).not.toContain('echo-route\n');
    expect(text).toContain('name: gateway');
    expect(text).toContain('name: echo-canary');
    expect(parseDraft(next).objects.filter((o) => o.file === 'mesh.yaml')).toHaveLength(2);
  });

  it('deletes the first document of a file without leaving a separator', () => {
    const next = apply(canary, { type: 'deleteObject', key: 'VirtualService/default/gateway' });
    expect(next.files['mesh.yaml']!.startsWith('---')).toBe(false);
    expect(
      parseDraft(next)
        .objects.filter((o) => o.file === 'mesh.yaml')
        .map((o) => o.name),
    ).toEqual(['echo-route', 'echo-canary']);
  });
});

describe('renameObject', () => {
  it('renames a Route and the rules that use it, and moves its layout entry', () => {
    const draft = { ...canary, layout: { 'Route/default/echo-route': { x: 1, y: 2 } } };
    const next = apply(draft, { type: 'renameObject', key: 'Route/default/echo-route', name: 'main' });
    const snap = snapshotOf(next);
    expect(snap.routes[0]!.metadata.name).toBe('main');
    expect(snap.virtualServices[0]!.spec.rules![0]!.action.route).toBe('main');
    expect(next.layout).toEqual({ 'Route/default/main': { x: 1, y: 2 } });
  });

  it('renames a Target and the destinations naming it', () => {
    const next = apply(canary, { type: 'renameObject', key: 'Target/default/echo-canary', name: 'echo' });
    expect(snapshotOf(next).routes[0]!.spec.destination).toBe('echo');
  });

  it('renames a naked Service in split entries, ingress chains and long names, not a same-named Target', () => {
    const withLong = apply(canary, {
      type: 'setField',
      key: 'Route/default/echo-route',
      path: ['spec', 'ingress'],
      value: ['echo-v1.default.svc.cluster.local', 'echo-v2'],
    });
    const next = apply(withLong, { type: 'renameObject', key: 'Service/default/echo-v1', name: 'echo-old' });
    const snap = snapshotOf(next);
    expect(snap.targets[0]!.spec.split!.map((e) => e.serviceName)).toEqual(['echo-old', 'echo-v2']);
    expect(snap.routes[0]!.spec.ingress).toEqual(['echo-old.default.svc.cluster.local', 'echo-v2']);
    // A name that resolves to a Target first is not the Service's.
    const shadowed = apply(canary, {
      type: 'renameObject',
      key: 'Target/default/echo-canary',
      name: 'echo-v1',
    });
    const again = apply(
      apply(shadowed, {
        type: 'setField',
        key: 'Route/default/echo-route',
        path: ['spec', 'ingress'],
        value: ['echo-v1'],
      }),
      { type: 'renameObject', key: 'Service/default/echo-v1', name: 'echo-old' },
    );
    expect(snapshotOf(again).routes[0]!.spec).toMatchObject({ destination: 'echo-v1', ingress: ['echo-v1'] });
  });

  it('renames a Service and the EndpointSlices labelled with it', () => {
    const draft: DraftDoc = {
      files: {
        'a.yaml': [
          'apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: [{port: 80}]}',
          'apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: s-1\n  labels: {kubernetes.io/service-name: s}\nendpoints: []',
        ].join('\n---\n'),
      },
      layout: {},
    };
    const next = apply(draft, { type: 'renameObject', key: 'Service/default/s', name: 't' });
    expect(next.files['a.yaml']).toContain('kubernetes.io/service-name: t');
    expect(next.files['a.yaml']).toContain('metadata: { name: t }');
  });

  it('refuses a name that is taken', () => {
    expect(
      applyCommand(canary, { type: 'renameObject', key: 'Route/default/echo-route', name: 'echo-route' }),
    ).toEqual({
      ok: true,
      draft: canary,
    });
    const r = applyCommand(canary, { type: 'renameObject', key: 'Service/default/echo-v1', name: 'echo-v2' });
    expect(r).toMatchObject({
      ok: false,
      error: expect.stringContaining('Service default/echo-v2 already exists'),
    });
  });
});

describe('connect', () => {
  it('Route -> Target sets the destination; with a chain it appends to ingress', () => {
    let next = apply(canary, {
      type: 'connect',
      source: 'Route/default/echo-route',
      target: 'VirtualService/default/echo-v1',
    });
    expect(snapshotOf(next).routes[0]!.spec.destination).toBe('echo-v1');
    next = apply(next, {
      type: 'connect',
      source: 'Route/default/echo-route',
      target: 'Target/default/echo-canary',
      chain: 'ingress',
    });
    next = apply(next, {
      type: 'connect',
      source: 'Route/default/echo-route',
      target: 'Service/default/echo-v2',
      chain: 'ingress',
    });
    expect(snapshotOf(next).routes[0]!.spec.ingress).toEqual(['echo-canary', 'echo-v2']);
  });

  it('an inline Route in a rule -> Target edits the owner VirtualService', () => {
    const next = apply(ex1, {
      type: 'connect',
      source: 'VirtualService/default/gateway-vsvc#spec.rules[0].action.route',
      target: 'Target/default/transcoder-vsvc',
      chain: 'egress',
    });
    const vs = snapshotOf(next).virtualServices.find((v) => v.metadata.name === 'gateway-vsvc')!;
    expect((vs.spec.rules![0]!.action.route as any).egress).toEqual(['transcoder-vsvc']);
  });

  it('VirtualService -> Route adds a rule', () => {
    const next = apply(canary, {
      type: 'connect',
      source: 'VirtualService/default/gateway',
      target: 'Route/default/echo-route',
    });
    expect(
      snapshotOf(next).virtualServices.find((v) => v.metadata.name === 'gateway')!.spec.rules,
    ).toHaveLength(2);
  });

  it('Target -> VirtualService sets serviceName, or adds a split entry to a canary Target', () => {
    const next = apply(canary, {
      type: 'connect',
      source: 'Target/default/echo-canary',
      target: 'VirtualService/default/gateway',
    });
    expect(snapshotOf(next).targets[0]!.spec.split).toEqual([
      { serviceName: 'echo-v1', weight: 80 },
      { serviceName: 'echo-v2', weight: 20 },
      { serviceName: 'gateway', weight: 0 },
    ]);
  });

  it('explains what can be connected', () => {
    const r = applyCommand(canary, {
      type: 'connect',
      source: 'Service/default/gateway-svc',
      target: 'Route/default/echo-route',
    });
    expect(r).toMatchObject({ ok: false, error: expect.stringContaining('connect a Route to a Target') });
  });
});

describe('replaceObject / setFileText / moveNodes', () => {
  it('replaceObject keeps the comments of unchanged fields', () => {
    const draft: DraftDoc = {
      files: {
        'r.yaml':
          'apiVersion: msm.l7mp.io/v1\nkind: Route\nmetadata:\n  name: r # the route\nspec:\n  destination: a\n',
      },
      layout: {},
    };
    const obj = parseDraft(draft).objects[0]!.value;
    const next = apply(draft, {
      type: 'replaceObject',
      key: 'Route/default/r',
      object: { ...obj, spec: { destination: 'b' } },
    });
    expect(next.files['r.yaml']).toBe(draft.files['r.yaml']!.replace('destination: a', 'destination: b'));
    expect(
      applyCommand(draft, {
        type: 'replaceObject',
        key: 'Route/default/r',
        object: { ...obj, metadata: { name: 'x' } },
      }),
    ).toMatchObject({ ok: false });
  });

  it('setFileText refuses paths outside the mesh directory', () => {
    expect(applyCommand(canary, { type: 'setFileText', path: '../x.yaml', text: '' })).toMatchObject({
      ok: false,
      error: 'cannot write ../x.yaml: must be a relative path inside the mesh directory',
    });
    expect(apply(canary, { type: 'setFileText', path: 'new.yaml', text: 'a: 1\n' }).files['new.yaml']).toBe(
      'a: 1\n',
    );
  });

  it('moveNodes stores rounded positions and null removes one', () => {
    const a = apply(canary, { type: 'moveNodes', positions: { n1: { x: 1.4, y: 2.6 } } });
    expect(a.layout).toEqual({ n1: { x: 1, y: 3 } });
    expect(apply(a, { type: 'moveNodes', positions: { n1: null } }).layout).toEqual({});
    expect(applyCommand(a, { type: 'moveNodes', positions: { n1: { x: NaN, y: 0 } } })).toMatchObject({
      ok: false,
    });
  });
});

describe('disconnect', () => {
  const GATEWAY = 'VirtualService/default/gateway-vsvc';
  const edgeRef = (draft: DraftDoc, kind: string, target: string) => {
    const e = compileDraft(draft).graph.edges.find((x) => x.kind === kind && x.target === target);
    if (!e?.ref) throw new Error(`no ${kind} edge to ${target} with a reference`);
    return e.ref;
  };
  const chain = `
apiVersion: msm.l7mp.io/v1
kind: VirtualService
metadata: { name: vs }
spec:
  selector: { matchLabels: { app: x } }
  udp: { port: 1000 }
  rules:
    - action: { route: ra }
    - action: { route: rb }
---
apiVersion: msm.l7mp.io/v1
kind: Route
metadata: { name: ra }
spec:
  destination: t0
  # the chain
  ingress: [t1, t2, t3]
---
apiVersion: msm.l7mp.io/v1
kind: Route
metadata: { name: rb }
spec: { destination: t0 }
`;
  const targets = ['t0', 't1', 't2', 't3']
    .map(
      (t) =>
        `---\napiVersion: msm.l7mp.io/v1\nkind: Target\nmetadata: { name: ${t} }\nspec: { udp: { port: 1 } }\n`,
    )
    .join('');
  const small: DraftDoc = { files: { 'mesh.yaml': chain + targets }, layout: {} };
  const valueOf = (draft: DraftDoc, key: string) => parseDraft(draft).byKey.get(key)![0]!.value.spec;

  it("removes seed Example 1's ingress-chain entry and keeps the destination; undo restores the exact draft", () => {
    const ref = edgeRef(ex1, 'ingress', 'Target/default/transcoder-vsvc');
    expect(ref).toEqual({ key: GATEWAY, path: ['spec', 'rules', 0, 'action', 'route', 'ingress', 0] });
    const next = apply(ex1, { type: 'disconnect', refs: [ref] });
    const route = (valueOf(next, GATEWAY) as any).rules[0].action.route;
    expect(route).toEqual({ destination: 'worker-svc' });
    expect(compileDraft(next).graph.edges.some((e) => e.kind === 'ingress')).toBe(false);
    expect(snapshotOf(next).diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    const h = undoHistory(pushHistory(createHistory(ex1), next));
    expect(h.present).toEqual(ex1);
  });

  it('refuses to empty a required destination, serviceName or selector, and says what to do instead', () => {
    const dest = edgeRef(ex1, 'destination', 'Target/default/worker-svc');
    const r = applyCommand(ex1, { type: 'disconnect', refs: [dest] });
    expect(r).toEqual({
      ok: false,
      error: expect.stringMatching(/destination.* is required: connect the route to another Target/),
    });
    const svc = edgeRef(canary, 'split', 'VirtualService/default/echo-v1');
    expect(
      applyCommand(canary, { type: 'disconnect', refs: [{ ...svc, path: ['spec', 'serviceName'] }] }),
    ).toEqual({
      ok: false,
      error: expect.stringMatching(/is not there any more|is required/),
    });
    const sel = edgeRef(ex1, 'selects', 'Service/default/gateway-svc');
    expect(applyCommand(ex1, { type: 'disconnect', refs: [sel] })).toEqual({
      ok: false,
      error: expect.stringContaining('is required: edit the selector'),
    });
    // Nothing half-done: a refused reference fails the whole command.
    const ing = edgeRef(ex1, 'ingress', 'Target/default/transcoder-vsvc');
    expect(applyCommand(ex1, { type: 'disconnect', refs: [ing, dest] }).ok).toBe(false);
  });

  it('removes several chain entries of one list at once, a rule, and an emptied chain', () => {
    const in1 = edgeRef(small, 'ingress', 'Target/default/t1');
    const in3 = edgeRef(small, 'ingress', 'Target/default/t3');
    const two = apply(small, { type: 'disconnect', refs: [in1, in3] });
    expect(valueOf(two, 'Route/default/ra')).toEqual({ destination: 't0', ingress: ['t2'] });
    // The comment above the chain stays.
    expect(two.files['mesh.yaml']).toContain('# the chain');
    const none = apply(two, { type: 'disconnect', refs: [edgeRef(two, 'ingress', 'Target/default/t2')] });
    expect(valueOf(none, 'Route/default/ra')).toEqual({ destination: 't0' });
    const rule = edgeRef(small, 'rule', 'Route/default/ra');
    const oneRule = apply(small, { type: 'disconnect', refs: [rule] });
    expect((valueOf(oneRule, 'VirtualService/default/vs') as any).rules).toEqual([
      { action: { route: 'rb' } },
    ]);
    // A reference that moved meanwhile (a stale edge) is refused, not guessed.
    expect(
      applyCommand(oneRule, {
        type: 'disconnect',
        refs: [{ ...rule, path: ['spec', 'rules', 1, 'action', 'route'] }],
      }).ok,
    ).toBe(false);
  });
});
