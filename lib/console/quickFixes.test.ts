import { describe, expect, it } from 'vitest';
import type { Diagnostic } from '../model/diagnostic';
import { compileDraft } from './compileDraft';
import { applyCommand } from './draftCommands';
import type { DraftDoc } from './draftDoc';
import { parseDraft } from './draftModel';
import { editDistance, mayHaveQuickFix, type QuickFix, quickFixes } from './quickFixes';
import { exampleDraft } from './testDrafts.testutil';

const canary = exampleDraft('canary');
const ex1 = exampleDraft('seed-example-1');

function withMesh(draft: DraftDoc, from: string, to: string): DraftDoc {
  const text = draft.files['mesh.yaml']!;
  if (!text.includes(from)) throw new Error(`mesh.yaml has no ${from}`);
  return { ...draft, files: { ...draft.files, 'mesh.yaml': text.replace(from, to) } };
}

function fixesFor(draft: DraftDoc, pick: (d: Diagnostic) => boolean): { d: Diagnostic; fixes: QuickFix[] } {
  const c = compileDraft(draft);
  const d = c.diagnostics.find(pick);
  if (!d) throw new Error(`no such diagnostic in ${c.diagnostics.map((x) => x.code).join(', ')}`);
  return { d, fixes: quickFixes(d, parseDraft(draft)) };
}

function applyFix(draft: DraftDoc, fix: QuickFix): DraftDoc {
  const r = applyCommand(draft, fix.command);
  if (!r.ok) throw new Error(r.error);
  return r.draft;
}

const unresolved = (path: string) => (d: Diagnostic) => d.code === 'unresolved-reference' && d.path === path;

describe('quickFixes: a dangling reference', () => {
  it('offers the closest existing name first; applying it gives back the config the typo broke', () => {
    const typo = withMesh(canary, 'route: echo-route', 'route: echo-rout');
    const { fixes } = fixesFor(typo, unresolved('spec.rules[0].action.route'));
    expect(fixes.map((f) => f.title)).toEqual(['Change to "echo-route" (Route)', 'Create Route "echo-rout"']);
    const fixed = applyFix(typo, fixes[0]!);
    const c = compileDraft(fixed);
    expect(c.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(c.l7mp).toEqual(compileDraft(canary).l7mp);
    // Only the reference changed: the rest of the file is as written.
    expect(fixed.files['mesh.yaml']).toBe(canary.files['mesh.yaml']);
  });

  it('creates the object a reference names, selected after the fix, and the reference then resolves', () => {
    const dangling = withMesh(canary, 'destination: echo-canary', 'destination: brand-new');
    const { fixes } = fixesFor(dangling, unresolved('spec.destination'));
    const create = fixes.find((f) => f.title === 'Create Target "brand-new"')!;
    expect(create.select).toBe('Target/default/brand-new');
    const c = compileDraft(applyFix(dangling, create));
    expect(c.diagnostics.filter((d) => d.code === 'unresolved-reference')).toEqual([]);
    expect(c.model.byKey.get('Target/default/brand-new')).toHaveLength(1);
  });

  it("suggests a Target's endpoint source among VirtualServices and Services, and creates a Service", () => {
    const typo = withMesh(canary, 'serviceName: echo-v2,', 'serviceName: echo-v3,');
    const { fixes } = fixesFor(typo, unresolved('spec.split[1].serviceName'));
    expect(fixes.map((f) => f.title)).toEqual([
      'Change to "echo-v1" (Service)',
      'Change to "echo-v2" (Service)',
      'Create Service "echo-v3"',
    ]);
    const c = compileDraft(applyFix(typo, fixes[1]!));
    expect(c.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(c.l7mp).toEqual(compileDraft(canary).l7mp);
  });

  it("fixes a selector naming no Service with the closest Service's name, or a new Service", () => {
    const typo = withMesh(canary, 'serviceName: gateway-svc', 'serviceName: gateway-sv');
    const { d, fixes } = fixesFor(typo, (x) => x.code === 'selector-no-service');
    expect(d.path).toBe('spec.selector.serviceName');
    expect(fixes.map((f) => f.title)).toEqual([
      'Change to "gateway-svc" (Service)',
      'Create Service "gateway-sv"',
    ]);
    const c = compileDraft(applyFix(typo, fixes[0]!));
    expect(c.diagnostics.filter((x) => x.code === 'selector-no-service')).toEqual([]);
    expect(c.l7mp).toEqual(compileDraft(canary).l7mp);
  });

  it('orders suggestions by how close they are', () => {
    const typo = withMesh(canary, 'serviceName: echo-v1,', 'serviceName: echo-v22,');
    const { fixes } = fixesFor(typo, unresolved('spec.split[0].serviceName'));
    // echo-v2 is one edit away, echo-v1 two.
    expect(fixes.map((f) => f.title)).toEqual([
      'Change to "echo-v2" (Service)',
      'Change to "echo-v1" (Service)',
      'Create Service "echo-v22"',
    ]);
  });

  it('keeps a long name long, and creates the object in the namespace it names', () => {
    const typo = withMesh(canary, 'route: echo-route', 'route: echo-rout.default.route.cluster.local');
    const { fixes } = fixesFor(typo, unresolved('spec.rules[0].action.route'));
    expect(fixes.map((f) => f.title)).toEqual([
      'Change to "echo-route.default.route.cluster.local" (Route)',
      'Create Route "echo-rout"',
    ]);
    expect(compileDraft(applyFix(typo, fixes[0]!)).l7mp).toEqual(compileDraft(canary).l7mp);
    const other = withMesh(canary, 'route: echo-route', 'route: echo-route.blue.route.cluster.local');
    const { fixes: f2 } = fixesFor(other, unresolved('spec.rules[0].action.route'));
    // Nothing named like it in namespace blue: only the creation, there.
    expect(f2.map((f) => f.title)).toEqual(['Create Route "echo-route" in blue']);
    expect(f2[0]!.command).toMatchObject({
      type: 'addObject',
      object: { kind: 'Route', metadata: { name: 'echo-route', namespace: 'blue' } },
    });
  });

  it('offers nothing for an object defined twice, and no creation for a name that is no object name', () => {
    const typo = withMesh(canary, 'route: echo-route', 'route: echo-rout');
    const { d } = fixesFor(typo, unresolved('spec.rules[0].action.route'));
    const twice = { ...typo, files: { ...typo.files, 'b.yaml': typo.files['mesh.yaml']!.split('---')[0]! } };
    expect(parseDraft(twice).byKey.get('VirtualService/default/gateway')).toHaveLength(2);
    expect(quickFixes(d, parseDraft(twice))).toEqual([]);
    const bad = withMesh(canary, 'route: echo-route', 'route: Echo_Route');
    const { fixes } = fixesFor(bad, unresolved('spec.rules[0].action.route'));
    // Not a valid object name: nothing to create, but the close name is still offered.
    expect(fixes.map((f) => f.title)).toEqual(['Change to "echo-route" (Route)']);
  });
});

describe('quickFixes: an object defined twice', () => {
  it('offers to delete the copy each diagnostic is about; the other one is then used', () => {
    const copy = canary.files['mesh.yaml']!.split('---')[1]!.trimStart(); // the Route echo-route
    const twice = { ...canary, files: { ...canary.files, 'b.yaml': `# a pasted copy\n${copy}` } };
    const c = compileDraft(twice);
    const dups = c.diagnostics.filter((d) => d.code === 'duplicate-name');
    expect(dups.map((d) => `${d.source!.file}:${d.source!.line}`).sort()).toEqual([
      'b.yaml:2',
      'mesh.yaml:13',
    ]);
    const model = parseDraft(twice);
    const fix = quickFixes(
      dups.find((d) => d.source!.file === 'b.yaml')!,
      model,
    );
    expect(fix.map((f) => f.title)).toEqual(['Delete this copy (b.yaml:2)']);
    const fixed = applyFix(twice, fix[0]!);
    expect(fixed.files['b.yaml']).toBeUndefined(); // its only object gone, the file goes
    expect(fixed.files['mesh.yaml']).toBe(canary.files['mesh.yaml']);
    const after = compileDraft(fixed);
    expect(after.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(after.l7mp).toEqual(compileDraft(canary).l7mp);
    // The other diagnostic deletes the original instead, and leaves the pasted copy.
    const other = quickFixes(
      dups.find((d) => d.source!.file === 'mesh.yaml')!,
      model,
    );
    const kept = applyFix(twice, other[0]!);
    expect(kept.files['b.yaml']).toBe(twice.files['b.yaml']);
    expect(kept.files['mesh.yaml']).not.toContain('kind: Route');
    expect(compileDraft(kept).l7mp).toEqual(compileDraft(canary).l7mp);
  });

  it('refuses to delete a copy that is not there, or the only definition', () => {
    expect(
      applyCommand(canary, {
        type: 'deleteCopy',
        key: 'Route/default/echo-route',
        file: 'mesh.yaml',
        line: 3,
      }),
    ).toEqual({
      ok: false,
      error: 'cannot delete: no definition of Route default/echo-route starts at mesh.yaml:3',
    });
    expect(
      applyCommand(canary, {
        type: 'deleteCopy',
        key: 'Route/default/echo-route',
        file: 'mesh.yaml',
        line: 13,
      }),
    ).toEqual({
      ok: false,
      error: 'cannot delete a copy: Route default/echo-route is defined once; delete the object instead',
    });
  });
});

describe('quickFixes: the seed dialect', () => {
  const dialect = (d: Diagnostic) => d.code.startsWith('seed-dialect');

  it('converts one object, or all of them, keeping comments and the rendered config', () => {
    const before = compileDraft(ex1);
    const { d, fixes } = fixesFor(ex1, dialect);
    expect(fixes.map((f) => f.title)).toEqual([
      'Convert to msm.l7mp.io/v1',
      'Convert all 2 seed-dialect objects',
    ]);
    const one = compileDraft(applyFix(ex1, fixes[0]!));
    expect(one.diagnostics.filter(dialect).map((x) => x.object.name)).not.toContain(d.object.name);
    expect(one.diagnostics.filter(dialect).length).toBeGreaterThan(0);
    const all = applyFix(ex1, fixes[1]!);
    const c = compileDraft(all);
    expect(c.diagnostics.filter(dialect)).toEqual([]);
    expect(c.l7mp).toEqual(before.l7mp);
    expect(all.files['mesh.yaml']).toContain('# Seed Example 1');
    expect(all.files['mesh.yaml']).not.toMatch(/apiVersion: \S*l7mp.io\/MSM\/v1/);
  });

  it('refuses to convert what is already canonical, and says so', () => {
    const r = applyCommand(canary, { type: 'canonicalize', keys: ['Route/default/echo-route'] });
    expect(r).toEqual({
      ok: false,
      error: 'nothing to convert: these objects are already written in msm.l7mp.io/v1',
    });
    const gone = applyCommand(canary, { type: 'canonicalize', keys: ['Route/default/nope'] });
    expect(gone).toEqual({ ok: false, error: 'cannot convert: Route default/nope is not in the draft' });
  });
});

describe('quickFixes: a port clash', () => {
  it('moves the listener to the next port no object uses, and the clash is gone', () => {
    const second = [
      '---',
      'apiVersion: msm.l7mp.io/v1',
      'kind: VirtualService',
      'metadata: { name: gateway-b, namespace: default }',
      'spec:',
      '  selector: { serviceName: gateway-svc }',
      '  udp: { port: 9100 }',
      '  rules:',
      '    - action: { route: echo-route }',
    ].join('\n');
    const clash = { ...canary, files: { ...canary.files, 'b.yaml': second } };
    const { fixes } = fixesFor(clash, (d) => d.code === 'port-clash' && d.object.name === 'gateway-b');
    // 9100 is taken by both VirtualServices and the Service, 9200 by the echo Services: 9101 is free.
    expect(fixes.map((f) => f.title)).toEqual(['Move to port 9101']);
    const c = compileDraft(applyFix(clash, fixes[0]!));
    expect(c.diagnostics.filter((d) => d.code === 'port-clash')).toEqual([]);
    expect(c.model.byKey.get('VirtualService/default/gateway-b')![0]!.value.spec).toMatchObject({
      udp: { port: 9101 },
    });
  });
});

describe('editDistance and mayHaveQuickFix', () => {
  it('counts insertions, deletions and substitutions, and stops past the limit', () => {
    expect(editDistance('echo-rout', 'echo-route')).toBe(1);
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('abcdef', 'uvwxyz', 2)).toBe(3);
  });

  it('says which codes can have a fix without computing any', () => {
    const d = (code: string): Diagnostic => ({
      severity: 'error',
      code,
      message: '',
      object: { kind: 'Route', name: 'x' },
    });
    expect(mayHaveQuickFix(d('unresolved-reference'))).toBe(true);
    expect(mayHaveQuickFix(d('seed-dialect-api-version'))).toBe(true);
    expect(mayHaveQuickFix(d('rule-dropped'))).toBe(false);
  });
});
