import { describe, expect, it } from 'vitest';
import {
  type ClusterChange,
  changesUndoneBy,
  clusterChangeConsequence,
  clusterChangeLabel,
  clusterChanges,
} from './clusterDrift';

const KINDS = ['VirtualService', 'Route', 'Target'];

function route(name: string, destination: string, extra = ''): string {
  return `apiVersion: msm.l7mp.io/v1\nkind: Route\nmetadata:\n  name: ${name}\n  namespace: default\n${extra}spec:\n  destination: ${destination}\n`;
}

function file(...docs: string[]): Record<string, string> {
  return { 'default/mesh.yaml': docs.join('---\n') };
}

describe('clusterChanges', () => {
  it('nothing when the cluster still holds the base', () => {
    const base = file(route('r1', 'a'));
    expect(clusterChanges(base, file(route('r1', 'b')), base, KINDS)).toEqual([]);
  });

  it('an object the cluster modified and the draft holds as the base had: applying would revert it', () => {
    const base = file(route('r1', 'a'), route('r2', 'x'));
    const cluster = file(route('r1', 'b'), route('r2', 'x'));
    const changes = clusterChanges(base, base, cluster, KINDS);
    expect(changes).toEqual([
      {
        key: 'Route/default/r1',
        kind: 'Route',
        namespace: 'default',
        name: 'r1',
        change: 'modified',
        fields: ['spec.destination'],
        draftChanged: false,
      },
    ]);
    expect(clusterChangeLabel(changes[0]!)).toBe(
      'Route default/r1 (modified in the cluster: spec.destination)',
    );
  });

  it('a change the draft already holds (its own apply) does not count; one both sides made differently does', () => {
    const base = file(route('r1', 'a'), route('r2', 'x'));
    const draft = file(route('r1', 'b'), route('r2', 'y'));
    const cluster = file(route('r1', 'b'), route('r2', 'z'));
    const changes = clusterChanges(base, draft, cluster, KINDS);
    expect(changes.map((c) => [c.key, c.change, c.draftChanged])).toEqual([
      ['Route/default/r2', 'modified', true],
    ]);
  });

  it('objects the cluster gained or lost, in key order; formatting and file moves do not count', () => {
    const base = file(route('r1', 'a'), route('r2', 'x'));
    const cluster = file(route('r0', 'n'), route('r1', 'a'));
    const draft = {
      'elsewhere.yaml': `# moved and reformatted\n${route('r1', '"a"')}`,
      ...file(route('r2', 'x')),
    };
    expect(clusterChanges(base, draft, cluster, KINDS).map((c) => [c.key, c.change, c.draftChanged])).toEqual(
      [
        ['Route/default/r0', 'added', false],
        ['Route/default/r2', 'deleted', false],
      ],
    );
  });

  it('labels and annotations count; other kinds (the cluster.yaml Services and Pods) never do', () => {
    const svc = (port: number) =>
      `apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n  namespace: default\nspec:\n  ports:\n  - port: ${port}\n`;
    const base = { ...file(route('r1', 'a')), 'default/cluster.yaml': svc(80) };
    const cluster = {
      ...file(route('r1', 'a', '  labels:\n    team: b\n')),
      'default/cluster.yaml': svc(81),
    };
    const changes = clusterChanges(base, base, cluster, KINDS);
    expect(changes.map((c) => [c.key, c.fields])).toEqual([['Route/default/r1', ['metadata.labels']]]);
  });

  it("parses only files that name a mesh kind: a large mirror's cluster.yaml is never parsed", () => {
    const svc = 'apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n  namespace: default\n';
    const json = JSON.stringify({
      apiVersion: 'msm.l7mp.io/v1',
      kind: 'Route',
      metadata: { name: 'r9', namespace: 'default' },
      spec: { destination: 'x' },
    });
    const base = { ...file(route('r1', 'a')), 'default/cluster.yaml': svc };
    const cluster = { ...base, 'other/mesh.json': json };
    const cache = new Map();
    expect(clusterChanges(base, base, cluster, KINDS, cache).map((c) => c.key)).toEqual(['Route/default/r9']);
    expect([...cache.keys()].map((k: string) => k.split('\0')[0]).sort()).toEqual([
      'default/mesh.yaml',
      'other/mesh.json',
    ]);
  });

  it('an unreadable file contributes no objects instead of throwing', () => {
    const base = file(route('r1', 'a'));
    const cluster = { 'default/mesh.yaml': 'kind: [unclosed\n' };
    expect(clusterChanges(base, base, cluster, KINDS).map((c) => c.change)).toEqual(['deleted']);
  });
});

describe('changesUndoneBy', () => {
  const change = (name: string, c: ClusterChange['change'], draftChanged = false): ClusterChange => ({
    key: `Route/default/${name}`,
    kind: 'Route',
    namespace: 'default',
    name,
    change: c,
    fields: [],
    draftChanged,
  });

  it('an object the cluster gained is undone only by Prune; modified and deleted ones always', () => {
    const all = [change('a', 'added'), change('m', 'modified'), change('d', 'deleted')];
    expect(changesUndoneBy(all, false).map((c) => c.name)).toEqual(['m', 'd']);
    expect(changesUndoneBy(all, true).map((c) => c.name)).toEqual(['a', 'm', 'd']);
  });

  it('says what applying the draft does to each', () => {
    expect(clusterChangeConsequence(change('m', 'modified'))).toBe('applying the draft reverts it');
    expect(clusterChangeConsequence(change('d', 'deleted'))).toBe('applying the draft creates it again');
    expect(clusterChangeConsequence(change('m', 'modified', true))).toMatch(/writes your version over it/);
    expect(clusterChangeConsequence(change('a', 'added'))).toMatch(/Prune deletes it/);
  });
});
