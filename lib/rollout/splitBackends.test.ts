import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileMesh } from '../engine/compileMesh';
import { prepareLocalMesh } from '../localMesh/prepareLocalMesh';
import { parseManifests } from '../parse/parseManifests';
import { splitBackends } from './splitBackends';

const canaryDir = path.join(__dirname, '../../examples/canary');
const canary = Object.fromEntries(
  ['mesh.yaml', 'cluster.yaml'].map((f) => [f, readFileSync(path.join(canaryDir, f), 'utf8')]),
);
const ref = { namespace: 'default', name: 'echo-canary' };

function resolved(files: Record<string, string>) {
  const snapshot = parseManifests(Object.entries(files).map(([p, content]) => ({ path: p, content })));
  return compileMesh(prepareLocalMesh(snapshot).snapshot).mesh;
}

describe('splitBackends', () => {
  it("maps each pod of the canary example to its naked Service's split entry, by name and by namespace/name", () => {
    const of = splitBackends(resolved(canary), ref, ['echo-v1', 'echo-v2']);
    expect(['echo-v1-a', 'echo-v1-b', 'echo-v2-a', 'default/echo-v2-a'].map(of)).toEqual([
      'echo-v1',
      'echo-v1',
      'echo-v2',
      'echo-v2',
    ]);
    expect(of('gateway-0')).toBeUndefined();
    expect(of('other/echo-v2-a')).toBeUndefined();
  });

  it('resolves an entry named by a VirtualService through its selector, and a weight-0 entry too', () => {
    const vs = [
      'apiVersion: msm.l7mp.io/v1',
      'kind: VirtualService',
      'metadata: { name: echo-next, namespace: default }',
      'spec: { selector: { matchLabels: { app: echo, version: v2 } }, udp: { port: 9200 } }',
    ].join('\n');
    const mesh = canary['mesh.yaml']!.replace(
      'serviceName: echo-v2, weight: 20',
      'serviceName: echo-next, weight: 0',
    );
    const of = splitBackends(resolved({ ...canary, 'mesh.yaml': mesh, 'next.yaml': vs }), ref, [
      'echo-v1',
      'echo-next',
    ]);
    expect(of('echo-v2-a')).toBe('echo-next');
    expect(of('echo-v1-b')).toBe('echo-v1');
  });

  it('knows no pod for a Target that is not there or has no split', () => {
    const mesh = resolved(canary);
    expect(splitBackends(mesh, { namespace: 'other', name: 'echo-canary' }, ['echo-v1'])('echo-v1-a')).toBe(
      undefined,
    );
    expect(splitBackends({ targets: {} }, ref, ['echo-v1', 'echo-v2'])('echo-v1-a')).toBeUndefined();
  });
});
