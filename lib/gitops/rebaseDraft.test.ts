import { readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseFiles } from './manifestObjects';
import { rebaseDraft, resolveConflict, type RebaseResult } from './rebaseDraft';

// A file with everything a person writes: a header comment, flow and block styles, a comment on
// a key, blank lines, explicit separators, a document end marker and a trailing comment.
const MESH = `# Mesh of the team: hand written, keep the comments.
apiVersion: msm.l7mp.io/v1
kind: VirtualService
metadata: { name: gateway, namespace: default }
spec:
  selector: { serviceName: gateway-svc }   # the l7mp gateway
  udp: { port: 9100 }
  rules:
    - action: { route: echo-route }


---
# The route: retries tuned by hand.
apiVersion: msm.l7mp.io/v1
kind: Route
metadata:
  namespace: default
  name: echo-route
spec:
  destination: echo-canary
  retry: { retry_on: connect-failure, num_retries: 2, timeout: 1000 }
...
---
apiVersion: msm.l7mp.io/v1
kind: Target
metadata: { name: echo-canary, namespace: default }
spec:
  split:
    - { serviceName: echo-v1, weight: 80 }   # stable
    - { serviceName: echo-v2, weight: 20 }   # canary
# end of mesh
`;

const CLUSTER = `apiVersion: v1
kind: Service
metadata: { name: echo-v1, namespace: default }
spec: { ports: [{ protocol: UDP, port: 9200 }] }
---
apiVersion: v1
kind: Service
metadata: { name: echo-v2, namespace: default }
spec: { ports: [{ protocol: UDP, port: 9200 }] }
`;

const BASE = { 'mesh.yaml': MESH, 'cluster.yaml': CLUSTER, '.meshdeck-layout.json': '{}\n' };

function replaceOnce(text: string, from: string, to: string): string {
  expect(text.split(from).length, `"${from}" occurs once`).toBe(2);
  return text.replace(from, to);
}

function values(files: Record<string, string>) {
  return Object.fromEntries(
    [...parseFiles(files).byKey].map(([k, list]) => [k, list.map((o) => ({ file: o.file, value: o.value }))]),
  );
}

describe('rebaseDraft', () => {
  it('re-applies our edit of one object into their changed file, every other byte theirs', () => {
    const ours = { ...BASE, 'mesh.yaml': replaceOnce(MESH, 'weight: 80 }', 'weight: 50 }') };
    const oursMesh = replaceOnce(ours['mesh.yaml'], 'weight: 20 }', 'weight: 50 }');
    ours['mesh.yaml'] = oursMesh;
    const theirsMesh = replaceOnce(
      replaceOnce(MESH, 'num_retries: 2', 'num_retries: 3'),
      '# The route: retries tuned by hand.',
      '# The route: retries tuned by hand (3 now).',
    );
    const theirs = { ...BASE, 'mesh.yaml': theirsMesh };
    const r = rebaseDraft({ base: BASE, ours, theirs });
    expect(r.conflicts).toEqual([]);
    expect(r.merged).toEqual([{ key: 'Target/default/echo-canary', from: 'ours' }]);
    // Exactly: their text with our two weights, nothing else moved.
    const expected = theirsMesh
      .replace('weight: 80 }', 'weight: 50 }')
      .replace('weight: 20 }', 'weight: 50 }');
    expect(r.files['mesh.yaml']).toBe(expected);
    expect(r.files['cluster.yaml']).toBe(CLUSTER);
    expect(r.notes).toEqual([]);
  });

  it('keeps our text of an edited object (our comments and style inside it)', () => {
    const oursRoute = `apiVersion: msm.l7mp.io/v1
kind: Route
metadata:
  namespace: default
  name: echo-route
spec:
  destination: echo-canary # now with a comment
  retry:
    retry_on: always
    num_retries: 2
    timeout: 1000
`;
    const start = MESH.indexOf('apiVersion: msm.l7mp.io/v1\nkind: Route');
    const end = MESH.indexOf('...\n');
    const ours = { ...BASE, 'mesh.yaml': MESH.slice(0, start) + oursRoute + MESH.slice(end) };
    const theirsMesh = replaceOnce(MESH, 'udp: { port: 9100 }', 'udp: { port: 9101 }');
    const r = rebaseDraft({ base: BASE, ours, theirs: { ...BASE, 'mesh.yaml': theirsMesh } });
    expect(r.conflicts).toEqual([]);
    const ts = theirsMesh.indexOf('apiVersion: msm.l7mp.io/v1\nkind: Route');
    expect(r.files['mesh.yaml']).toBe(
      theirsMesh.slice(0, ts) + oursRoute + theirsMesh.slice(theirsMesh.indexOf('...\n')),
    );
  });

  it('adds our new object to the file we put it in, and removes the one we deleted', () => {
    const newRoute = `# a second route
apiVersion: msm.l7mp.io/v1
kind: Route
metadata: { name: other-route, namespace: default }
spec: { destination: echo-v1 }
`;
    // Ours: a new Route appended to mesh.yaml, Service echo-v2 deleted from cluster.yaml.
    const ours = {
      ...BASE,
      'mesh.yaml': `${MESH}---\n${newRoute}`,
      'cluster.yaml': CLUSTER.slice(0, CLUSTER.indexOf('---\n')),
    };
    // Theirs: edits in both files.
    const theirsMesh = replaceOnce(MESH, '# end of mesh', '# end of mesh (reviewed)');
    const theirsCluster = replaceOnce(CLUSTER, 'name: echo-v1', 'name: echo-v1, labels: { tier: a }');
    const r = rebaseDraft({
      base: BASE,
      ours,
      theirs: { ...BASE, 'mesh.yaml': theirsMesh, 'cluster.yaml': theirsCluster },
    });
    expect(r.conflicts).toEqual([]);
    expect(r.files['mesh.yaml']).toBe(`${theirsMesh}---\n${newRoute}`);
    expect(r.files['cluster.yaml']).toBe(theirsCluster.slice(0, theirsCluster.indexOf('---\n')));
    expect(r.merged.map((m) => m.key).sort()).toEqual([
      'Route/default/other-route',
      'Service/default/echo-v2',
    ]);
  });

  it('removes a file that becomes empty of documents, and drops the marker of a new first document', () => {
    const [svc1, svc2] = CLUSTER.split('---\n') as [string, string];
    const c = CLUSTER.replaceAll('echo-v', 'echo-c');
    const base = { 'a.yaml': svc1, 'b.yaml': svc2, 'c.yaml': c };
    // Ours: delete a.yaml's only object and c.yaml's first one. Theirs: touch all three files.
    const ours = { 'b.yaml': svc2, 'c.yaml': c.slice(c.indexOf('---\n') + 4) };
    const theirsC = replaceOnce(
      c,
      'name: echo-c2, namespace: default }',
      'name: echo-c2, namespace: default } # c2',
    );
    const theirs = {
      'a.yaml': `${svc1}# the first service\n`,
      'b.yaml': replaceOnce(svc2, 'port: 9200', 'port: 9201'),
      'c.yaml': theirsC,
    };
    const r = rebaseDraft({ base, ours, theirs });
    expect(r.conflicts).toEqual([]);
    expect(Object.keys(r.files).sort()).toEqual(['b.yaml', 'c.yaml']);
    expect(r.files['b.yaml']).toBe(theirs['b.yaml']);
    expect(r.files['c.yaml']).toBe(theirsC.slice(theirsC.indexOf('---\n') + 4));
  });

  it('a delete/modify conflict keeps their object in place until resolved', () => {
    const ours = { ...BASE, 'cluster.yaml': CLUSTER.slice(CLUSTER.indexOf('---\n') + 4) };
    const theirsCluster = replaceOnce(CLUSTER, 'port: 9200 }] }\n---', 'port: 9201 }] }\n---');
    const r = rebaseDraft({ base: BASE, ours, theirs: { ...BASE, 'cluster.yaml': theirsCluster } });
    expect(r.conflicts.map((c) => [c.key, c.reason, c.oursFile, c.theirsFile])).toEqual([
      ['Service/default/echo-v1', 'you deleted it; the base branch changed it', null, 'cluster.yaml'],
    ]);
    expect(r.files['cluster.yaml']).toBe(theirsCluster);
    const o = resolveConflict(r, 'Service/default/echo-v1', 'ours');
    expect(o.ok && o.result.files['cluster.yaml']).toBe(ours['cluster.yaml']);
  });

  it('reports a true conflict with both sides, and resolveConflict applies each choice', () => {
    const ours = { ...BASE, 'mesh.yaml': replaceOnce(MESH, 'num_retries: 2', 'num_retries: 5') };
    const theirsMesh = replaceOnce(MESH, 'num_retries: 2', 'num_retries: 3');
    const theirs = { ...BASE, 'mesh.yaml': theirsMesh };
    const r = rebaseDraft({ base: BASE, ours, theirs });
    expect(r.conflicts).toHaveLength(1);
    const c = r.conflicts[0]!;
    expect(c).toMatchObject({
      key: 'Route/default/echo-route',
      type: 'object',
      reason: 'changed on both sides',
      oursFile: 'mesh.yaml',
      theirsFile: 'mesh.yaml',
    });
    expect(c.ours!.text).toContain('num_retries: 5');
    expect(c.theirs!.text).toContain('num_retries: 3');
    expect(c.base!.text).toContain('num_retries: 2');
    expect(c.ours!.text).toContain('# The route: retries tuned by hand.');
    // Until resolved the file holds theirs.
    expect(r.files['mesh.yaml']).toBe(theirsMesh);

    const o = resolveConflict(r, c.key, 'ours');
    expect(o.ok && o.result.files['mesh.yaml']).toBe(ours['mesh.yaml']);
    expect(o.ok && o.result.conflicts).toEqual([]);
    const t = resolveConflict(r, c.key, 'theirs');
    expect(t.ok && t.result.files['mesh.yaml']).toBe(theirsMesh);
    const edited = c.theirs!.text.replace('num_retries: 3', 'num_retries: 4');
    const e = resolveConflict(r, c.key, { text: edited });
    expect(e.ok && e.result.files['mesh.yaml']).toBe(replaceOnce(MESH, 'num_retries: 2', 'num_retries: 4'));
    expect(e.ok && e.result.merged).toContainEqual({ key: c.key, from: 'edited' });
    const wrong = resolveConflict(r, c.key, { text: edited.replace('echo-route', 'x-route') });
    expect(wrong).toEqual({
      ok: false,
      error:
        'the text is Route/default/x-route, not Route/default/echo-route: kind, namespace and name must stay',
    });
    expect(resolveConflict(r, c.key, { text: 'a: [' }).ok).toBe(false);
    const del = resolveConflict(r, c.key, { text: '' });
    expect(del.ok && Object.keys(values(del.result.files))).not.toContain(c.key);
  });

  it('a modify/delete conflict resolved as ours puts our object back', () => {
    const ours = { ...BASE, 'mesh.yaml': replaceOnce(MESH, 'num_retries: 2', 'num_retries: 5') };
    const start = MESH.indexOf('---\n# The route');
    const end = MESH.indexOf('---\napiVersion: msm.l7mp.io/v1\nkind: Target');
    const theirs = { ...BASE, 'mesh.yaml': MESH.slice(0, start) + MESH.slice(end) };
    const r = rebaseDraft({ base: BASE, ours, theirs });
    expect(r.conflicts.map((c) => [c.key, c.reason])).toEqual([
      ['Route/default/echo-route', 'you changed it; the base branch deleted it'],
    ]);
    expect(r.conflicts[0]!.theirs).toBeNull();
    const o = resolveConflict(r, 'Route/default/echo-route', 'ours');
    expect(o.ok).toBe(true);
    if (!o.ok) return;
    const v = values(o.result.files)['Route/default/echo-route'];
    expect(v).toHaveLength(1);
    expect(v![0]!.file).toBe('mesh.yaml');
    expect((v![0]!.value.spec as { retry: { num_retries: number } }).retry.num_retries).toBe(5);
    expect(o.result.files['mesh.yaml']!.startsWith(theirs['mesh.yaml'])).toBe(true);
  });

  it('takes a change both sides made identically, and theirs over our mere reformatting', () => {
    const same = replaceOnce(MESH, 'udp: { port: 9100 }', 'udp: { port: 9200 }');
    const r = rebaseDraft({
      base: BASE,
      ours: { ...BASE, 'mesh.yaml': replaceOnce(same, '# end of mesh', '# end') },
      theirs: { ...BASE, 'mesh.yaml': same },
    });
    expect(r.conflicts).toEqual([]);
    expect(r.merged).toEqual([{ key: 'VirtualService/default/gateway', from: 'both' }]);

    const reformatted = replaceOnce(MESH, 'udp: { port: 9100 }', 'udp:\n    port: 9100');
    const theirsMesh = replaceOnce(MESH, 'udp: { port: 9100 }', 'udp: { port: 9300 }');
    const r2 = rebaseDraft({
      base: BASE,
      ours: { ...BASE, 'mesh.yaml': reformatted },
      theirs: { ...BASE, 'mesh.yaml': theirsMesh },
    });
    expect(r2.conflicts).toEqual([]);
    expect(r2.merged).toEqual([{ key: 'VirtualService/default/gateway', from: 'theirs' }]);
    expect(r2.files['mesh.yaml']).toBe(theirsMesh);
  });

  it('follows an object we moved to another file, with their file otherwise intact', () => {
    const targetAt = MESH.indexOf('---\napiVersion: msm.l7mp.io/v1\nkind: Target');
    const targetDoc = MESH.slice(targetAt + 4);
    const ours = { ...BASE, 'mesh.yaml': MESH.slice(0, targetAt), 'targets.yaml': targetDoc };
    const theirsMesh = replaceOnce(MESH, 'udp: { port: 9100 }', 'udp: { port: 9101 }');
    const r = rebaseDraft({ base: BASE, ours, theirs: { ...BASE, 'mesh.yaml': theirsMesh } });
    expect(r.conflicts).toEqual([]);
    expect(r.files['targets.yaml']).toBe(targetDoc);
    expect(r.files['mesh.yaml']).toBe(
      theirsMesh.slice(0, theirsMesh.indexOf('---\napiVersion: msm.l7mp.io/v1\nkind: Target')),
    );
  });

  it('follows their refactor: our edit lands where they moved the object', () => {
    const [svc1, svc2] = CLUSTER.split('---\n') as [string, string];
    const ours = {
      ...BASE,
      'cluster.yaml': replaceOnce(
        CLUSTER,
        'name: echo-v2, namespace: default }',
        'name: echo-v2, namespace: default, labels: { a: b } }',
      ),
    };
    // Theirs split cluster.yaml into one file per Service.
    const theirs = {
      'mesh.yaml': MESH,
      '.meshdeck-layout.json': '{}\n',
      'svc/echo-v1.yaml': svc1,
      'svc/echo-v2.yaml': `# v2\n${svc2}`,
    };
    const r = rebaseDraft({ base: BASE, ours, theirs });
    expect(r.conflicts).toEqual([]);
    expect(Object.keys(r.files).sort()).toEqual([
      '.meshdeck-layout.json',
      'mesh.yaml',
      'svc/echo-v1.yaml',
      'svc/echo-v2.yaml',
    ]);
    expect(r.files['svc/echo-v2.yaml']).toBe(
      replaceOnce(
        theirs['svc/echo-v2.yaml'],
        'name: echo-v2, namespace: default }',
        'name: echo-v2, namespace: default, labels: { a: b } }',
      ),
    );
  });

  it('merges items of a kind: List document through the Document API', () => {
    const list = `apiVersion: v1
kind: List
# two services
items:
  - apiVersion: v1
    kind: Service
    metadata: { name: a }
    spec: { ports: [{ port: 1 }] } # port one
  - apiVersion: v1
    kind: Service
    metadata: { name: b }
    spec: { ports: [{ port: 2 }] }
`;
    const base = { 'list.yaml': list, 'other.yaml': CLUSTER };
    const ours = { ...base, 'list.yaml': replaceOnce(list, 'port: 2 }', 'port: 3 }') };
    const theirs = { ...base, 'list.yaml': replaceOnce(list, '# port one', '# port one!') };
    const r = rebaseDraft({ base, ours, theirs });
    expect(r.conflicts).toEqual([]);
    expect(r.files['list.yaml']).toContain('# port one!');
    expect(r.files['list.yaml']).toContain('# two services');
    const v = values(r.files);
    expect(v['Service/default/b']![0]!.value.spec).toEqual({ ports: [{ port: 3 }] });
    expect(v['Service/default/a']![0]!.value.spec).toEqual({ ports: [{ port: 1 }] });
    // Deleting an item.
    const oursDel = {
      ...base,
      'list.yaml': list.slice(
        0,
        list.indexOf('  - apiVersion: v1\n    kind: Service\n    metadata: { name: b }'),
      ),
    };
    const d = rebaseDraft({ base, ours: oursDel, theirs });
    expect(d.conflicts).toEqual([]);
    expect(Object.keys(values(d.files)).sort()).toEqual([
      'Service/default/a',
      'Service/default/echo-v1',
      'Service/default/echo-v2',
    ]);
    expect(d.files['list.yaml']).toContain('# port one!');
  });

  it('merges the layout file key by key, and makes other non-object files a file conflict', () => {
    const layout = (o: Record<string, { x: number; y: number }>) => JSON.stringify(o);
    const base = {
      ...BASE,
      '.meshdeck-layout.json': layout({ a: { x: 0, y: 0 }, b: { x: 1, y: 1 } }),
      'notes.json': '[1]',
    };
    const r = rebaseDraft({
      base,
      ours: {
        ...base,
        '.meshdeck-layout.json': layout({ a: { x: 5, y: 5 }, b: { x: 1, y: 1 } }),
        'notes.json': '[2]',
      },
      theirs: {
        ...base,
        '.meshdeck-layout.json': layout({ a: { x: 0, y: 0 }, c: { x: 2, y: 2 } }),
        'notes.json': '[3]',
      },
    });
    expect(JSON.parse(r.files['.meshdeck-layout.json']!)).toEqual({ a: { x: 5, y: 5 }, c: { x: 2, y: 2 } });
    expect(r.conflicts.map((c) => [c.key, c.type])).toEqual([['notes.json', 'file']]);
    const o = resolveConflict(r, 'notes.json', 'ours');
    expect(o.ok && o.result.files['notes.json']).toBe('[2]');
  });

  it('never loses an object in a file that does not parse: the file is a conflict', () => {
    const ours = { ...BASE, 'mesh.yaml': `${MESH}  bad: [\n` };
    const theirs = { ...BASE, 'mesh.yaml': replaceOnce(MESH, 'port: 9100', 'port: 9101') };
    const r = rebaseDraft({ base: BASE, ours, theirs });
    expect(r.conflicts.map((c) => [c.key, c.type])).toEqual([['mesh.yaml', 'file']]);
    expect(r.files['mesh.yaml']).toBe(theirs['mesh.yaml']);
  });

  it('notes our comment edits outside objects that could not be carried over', () => {
    const ours = { ...BASE, 'mesh.yaml': replaceOnce(MESH, '# The route: retries tuned by hand.', '# ours') };
    const theirs = { ...BASE, 'mesh.yaml': replaceOnce(MESH, 'port: 9100', 'port: 9101') };
    const r = rebaseDraft({ base: BASE, ours, theirs });
    expect(r.conflicts).toEqual([]);
    expect(r.files['mesh.yaml']).toBe(theirs['mesh.yaml']);
    expect(r.notes).toEqual([
      'mesh.yaml: your changes to comments or text outside objects were not carried over, because the base branch changed this file too',
    ]);
  });
});

// ------------------------------------------------------------------ properties over the examples

const EXAMPLES = ['canary', 'grpc-canary', 'seed-example-1', 'seed-example-2'].map((name) => {
  const dir = path.join(__dirname, '../../examples', name);
  return {
    'mesh.yaml': readFileSync(path.join(dir, 'mesh.yaml'), 'utf8'),
    'cluster.yaml': readFileSync(path.join(dir, 'cluster.yaml'), 'utf8'),
  };
});

/** A random edit of a file map: change a number, drop a document, add a document, restyle. */
const arbEdit = fc.oneof(
  fc.record({ type: fc.constant('number' as const), at: fc.nat(), to: fc.integer({ min: 1, max: 65000 }) }),
  fc.record({ type: fc.constant('drop' as const), at: fc.nat() }),
  fc.record({
    type: fc.constant('add' as const),
    name: fc.stringMatching(/^[a-z][a-z0-9-]{0,8}$/),
    port: fc.nat(60000),
  }),
  fc.record({ type: fc.constant('comment' as const), at: fc.nat() }),
);

type Edit = { type: string; at?: number; to?: number; name?: string; port?: number };

function applyEdit(files: Record<string, string>, edit: Edit): Record<string, string> {
  const paths = Object.keys(files).sort();
  const p = paths[(edit.at ?? 0) % paths.length]!;
  const text = files[p]!;
  const out = { ...files };
  if (edit.type === 'number') {
    const nums = [...text.matchAll(/port: (\d+)/g)];
    if (nums.length === 0) return out;
    const m = nums[(edit.at ?? 0) % nums.length]!;
    out[p] = text.slice(0, m.index) + `port: ${edit.to}` + text.slice(m.index! + m[0].length);
  } else if (edit.type === 'drop') {
    const docs = text.split(/^---\n/m);
    if (docs.length < 2) return out;
    docs.splice((edit.at ?? 0) % docs.length, 1);
    out[p] = docs.join('---\n');
  } else if (edit.type === 'add') {
    out[p] =
      `${text}---\napiVersion: v1\nkind: Service\nmetadata: { name: x-${edit.name}, namespace: default }\nspec: { ports: [{ protocol: UDP, port: ${edit.port} }] }\n`;
  } else {
    out[p] = text.replace(/^(\w)/m, '# a comment\n$1');
  }
  return out;
}

describe('rebaseDraft properties (the examples as input)', () => {
  const arb = fc.record({
    example: fc.nat(EXAMPLES.length - 1),
    ours: fc.array(arbEdit, { maxLength: 4 }),
    theirs: fc.array(arbEdit, { maxLength: 4 }),
  });
  const build = (x: { example: number; ours: Edit[]; theirs: Edit[] }) => {
    const base = EXAMPLES[x.example]!;
    return {
      base,
      ours: x.ours.reduce<Record<string, string>>((f, e) => applyEdit(f, e), base),
      theirs: x.theirs.reduce<Record<string, string>>((f, e) => applyEdit(f, e), base),
    };
  };

  it('theirs === base returns ours exactly; ours === base returns theirs exactly', () => {
    fc.assert(
      fc.property(arb, (x) => {
        const { base, ours, theirs } = build(x);
        const a = rebaseDraft({ base, ours, theirs: base });
        expect(a.files).toEqual(ours);
        expect(a.conflicts).toEqual([]);
        const b = rebaseDraft({ base, ours: base, theirs });
        expect(b.files).toEqual(theirs);
        expect(b.conflicts).toEqual([]);
      }),
      { numRuns: 30 },
    );
  });

  it('nothing of ours is dropped: each object is as we left it, as they left it, or in conflict', () => {
    fc.assert(
      fc.property(arb, (x) => {
        const { base, ours, theirs } = build(x);
        const r: RebaseResult = rebaseDraft({ base, ours, theirs });
        const b = values(base);
        const o = values(ours);
        const t = values(theirs);
        const m = values(r.files);
        const conflicted = new Set(r.conflicts.map((c) => c.key));
        const fileConflict = r.conflicts.some((c) => c.type === 'file');
        if (fileConflict) return;
        for (const key of new Set([...Object.keys(b), ...Object.keys(o), ...Object.keys(t)])) {
          if (conflicted.has(key)) continue;
          const vals = (s: Record<string, { value: unknown }[]>) => (s[key] ?? []).map((v) => v.value);
          const oursChanged = JSON.stringify(vals(o)) !== JSON.stringify(vals(b));
          const theirsChanged = JSON.stringify(vals(t)) !== JSON.stringify(vals(b));
          if ((o[key]?.length ?? 0) > 1 || (t[key]?.length ?? 0) > 1 || (b[key]?.length ?? 0) > 1) continue;
          if (oursChanged) expect(vals(m), key).toEqual(vals(o));
          else if (theirsChanged) expect(vals(m), key).toEqual(vals(t));
          else expect(vals(m), key).toEqual(vals(b));
        }
        // An object we did not touch keeps their exact text and file (bytes inside it are theirs).
        const texts = (files: Record<string, string>) =>
          new Map(
            [...parseFiles(files).byKey].map(([k, list]) => [k, list.map((x) => `${x.file}:${x.text}`)]),
          );
        const [bt, ot, tt, mt] = [texts(base), texts(ours), texts(theirs), texts(r.files)];
        for (const [key, theirsText] of tt) {
          if (conflicted.has(key) || JSON.stringify(ot.get(key)) !== JSON.stringify(bt.get(key))) continue;
          if (theirsText.length === 1 && (ot.get(key)?.length ?? 0) <= 1)
            expect(mt.get(key), key).toEqual(theirsText);
        }
        // The merge is idempotent: rebasing the result onto the same tip changes nothing.
        if (r.conflicts.length === 0)
          expect(rebaseDraft({ base: theirs, ours: r.files, theirs }).files).toEqual(r.files);
      }),
      { numRuns: 30 },
    );
  });
});
