import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isUnchanged, objectChanges, semanticChanges } from './objectChanges';

const dir = path.join(__dirname, '../../examples/seed-example-2');
const BASE = {
  'mesh.yaml': readFileSync(path.join(dir, 'mesh.yaml'), 'utf8'),
  'cluster.yaml': readFileSync(path.join(dir, 'cluster.yaml'), 'utf8'),
};

describe('objectChanges', () => {
  it('finds nothing between identical file maps', () => {
    const c = objectChanges(BASE, { ...BASE });
    expect(c).toEqual({ objects: [], files: [], duplicates: [] });
    expect(isUnchanged(c)).toBe(true);
  });

  it('reports added, modified, deleted and moved objects with file and line', () => {
    const mesh = BASE['mesh.yaml'];
    const docs = mesh.split(/^---\n/m);
    const firstKey = /kind: (\w+)[\s\S]*?name: ([\w-]+)/.exec(docs[0]!)!;
    // Move the first document to its own file, change a port in the last one, drop the second.
    const moved = docs[0]!;
    const last = docs[docs.length - 1]!;
    const portLine = /port: ?(\d+)/.exec(last)!;
    const changedLast = last.replace(portLine[0], `port: ${Number(portLine[1]) + 1}`);
    const draftMesh = [...docs.slice(2, -1), changedLast].join('---\n');
    const added =
      'apiVersion: v1\nkind: Service\nmetadata: { name: extra, namespace: ns1 }\nspec: { ports: [{ port: 1 }] }\n';
    const draft = { ...BASE, 'mesh.yaml': draftMesh, 'moved.yaml': moved, 'service-ns1-extra.yaml': added };
    const c = objectChanges(BASE, draft);
    const byChange = Object.fromEntries(
      ['added', 'modified', 'deleted', 'moved', 'formatting'].map((k) => [
        k,
        c.objects.filter((o) => o.change === k).map((o) => `${o.key} ${o.file}:${o.line}`),
      ]),
    );
    expect(byChange.added).toEqual(['Service/ns1/extra service-ns1-extra.yaml:1']);
    expect(byChange.moved).toHaveLength(1);
    expect(byChange.moved![0]).toMatch(new RegExp(`^${firstKey[1]}/\\w+/\\S+ moved.yaml:\\d+$`));
    expect(byChange.deleted).toHaveLength(1);
    expect(byChange.deleted![0]).toMatch(/ mesh\.yaml:\d+$/);
    expect(byChange.modified).toHaveLength(1);
    const mod = c.objects.find((o) => o.change === 'modified')!;
    expect(mod.file).toBe('mesh.yaml');
    expect(mod.previousFile).toBe('mesh.yaml');
    // The line is where the object starts in the draft.
    expect(draftMesh.split('\n')[mod.line - 1]).toMatch(/^\S/);
    expect(c.objects.map((o) => o.key)).toEqual([...c.objects.map((o) => o.key)].sort());
    expect(
      semanticChanges(c)
        .map((o) => o.change)
        .sort(),
    ).toEqual(['added', 'deleted', 'modified']);
    expect(c.files).toEqual([]);
  });

  it('calls reformatting "formatting", not a modification; comments outside objects are a file change', () => {
    const text = 'apiVersion: v1\nkind: Service\nmetadata: { name: a }\nspec: { ports: [{ port: 80 }] }\n';
    const base = { 'a.yaml': text };
    const reformatted =
      'apiVersion: v1\nkind: Service\nmetadata:\n  name: a\nspec:\n  ports:\n    - port: 80\n';
    expect(objectChanges(base, { 'a.yaml': reformatted }).objects).toEqual([
      {
        key: 'Service/default/a',
        kind: 'Service',
        namespace: 'default',
        name: 'a',
        change: 'formatting',
        file: 'a.yaml',
        line: 1,
        previousFile: 'a.yaml',
        previousLine: 1,
      },
    ]);
    const commented = objectChanges(base, { 'a.yaml': `# owned by team a\n${text}` });
    expect(commented.objects).toEqual([]);
    expect(commented.files).toEqual([{ path: 'a.yaml', change: 'modified', what: 'outside-objects' }]);
  });

  it('compares the seed dialect as the engine reads it', () => {
    const seed =
      'apiVersion: l7mp.io/MSM/v1\nkind: Target\nmetadata: { name: t, selector: { serviceName: s } }\nspec: { udp: { port: "8001," } }\n';
    const canonical =
      'apiVersion: msm.l7mp.io/v1\nkind: Target\nmetadata: { name: t }\nspec: { selector: { serviceName: s }, udp: { port: 8001 } }\n';
    expect(objectChanges({ 't.yaml': seed }, { 't.yaml': canonical }).objects.map((o) => o.change)).toEqual([
      'formatting',
    ]);
  });

  it('lists the layout file and unreadable files, and objects of kind: List items', () => {
    const list =
      'apiVersion: v1\nkind: List\nitems:\n  - { apiVersion: v1, kind: Service, metadata: { name: a }, spec: { ports: [{ port: 1 }] } }\n  - { apiVersion: v1, kind: Service, metadata: { name: b }, spec: { ports: [{ port: 2 }] } }\n';
    const base = { 'list.yaml': list, '.meshdeck-layout.json': '{}\n', 'bad.yaml': 'a: 1\n' };
    const draft = {
      'list.yaml': list.replace('port: 2', 'port: 3'),
      '.meshdeck-layout.json': '{\n  "Service/default/a": {"x":1,"y":2}\n}\n',
      'bad.yaml': 'a: [\n',
    };
    const c = objectChanges(base, draft);
    expect(c.objects.map((o) => [o.key, o.change, o.line])).toEqual([['Service/default/b', 'modified', 5]]);
    expect(c.files).toEqual([
      { path: '.meshdeck-layout.json', change: 'modified', what: 'non-object' },
      { path: 'bad.yaml', change: 'modified', what: 'unreadable' },
    ]);
  });

  it('reuses a cache across calls and keeps it to the files in use', () => {
    const cache = new Map();
    const draft = { ...BASE, 'mesh.yaml': `# one\n${BASE['mesh.yaml']}` };
    const first = objectChanges(BASE, draft, cache);
    expect(cache.size).toBe(3);
    let again = first;
    for (let i = 0; i < 5; i++) {
      again = objectChanges(BASE, { ...draft, 'mesh.yaml': `# ${i}\n${BASE['mesh.yaml']}` }, cache);
      // Bounded by the files of both sides, however many calls.
      expect(cache.size).toBeLessThanOrEqual(4);
    }
    expect(again).toEqual(first);
  });

  it('names duplicates', () => {
    const svc = 'apiVersion: v1\nkind: Service\nmetadata: { name: a }\n';
    expect(objectChanges({ 'a.yaml': svc }, { 'a.yaml': svc, 'b.yaml': svc }).duplicates).toEqual([
      'Service/default/a',
    ]);
  });
});
