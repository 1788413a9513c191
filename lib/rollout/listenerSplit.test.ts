import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileMesh } from '../engine/compileMesh';
import { prepareLocalMesh } from '../localMesh/prepareLocalMesh';
import { parseManifests } from '../parse/parseManifests';
import { splitReachedBy } from './listenerSplit';

const examples = path.join(__dirname, '../../examples');

/** An example resolved as the local mesh runs it, its files edited first. */
function resolved(dir: string, edit: (file: string, text: string) => string = (_f, t) => t) {
  const snapshot = parseManifests(
    ['mesh.yaml', 'cluster.yaml'].map((f) => ({
      path: f,
      content: edit(f, readFileSync(path.join(examples, dir, f), 'utf8')),
    })),
  );
  const compiled = compileMesh(prepareLocalMesh(snapshot).snapshot);
  expect(compiled.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  return compiled.mesh;
}

const withoutLookup = (s: ReturnType<typeof splitReachedBy>) => s && { target: s.target, entries: s.entries };

describe('splitReachedBy', () => {
  const canary = resolved('canary');
  const echoCanary = {
    target: { namespace: 'default', name: 'echo-canary' },
    entries: [
      { name: 'echo-v1', weight: 80 },
      { name: 'echo-v2', weight: 20 },
    ],
  };

  it("finds the canary example's split from the gateway, by any name the probe takes, and its pods' entries", () => {
    for (const name of ['gateway', 'gateway.default.virtualservice.cluster.local'])
      expect(withoutLookup(splitReachedBy(canary, name)), name).toEqual(echoCanary);
    expect(withoutLookup(splitReachedBy(canary, 'gateway', 'gateway-0'))).toEqual(echoCanary);
    expect(withoutLookup(splitReachedBy(canary, 'gateway', 'default/gateway-0'))).toEqual(echoCanary);
    const { backendOf } = splitReachedBy(canary, 'gateway')!;
    expect(['echo-v1-a', 'echo-v1-b', 'echo-v2-a', 'default/echo-v2-a', 'gateway-0'].map(backendOf)).toEqual([
      'echo-v1',
      'echo-v1',
      'echo-v2',
      'echo-v2',
      undefined,
    ]);
  });

  it('finds none for a listener that does not exist, another proxy, or one that reaches no split', () => {
    expect(splitReachedBy(canary, 'nothing')).toBeUndefined();
    expect(splitReachedBy(canary, 'gateway', 'echo-v1-a')).toBeUndefined();
    // The split's own backends are naked Services, not listeners.
    expect(splitReachedBy(canary, 'echo-v1')).toBeUndefined();
    expect(splitReachedBy(resolved('seed-example-1'), 'gateway-vsvc')).toBeUndefined();
    expect(splitReachedBy(resolved('seed-example-2'), 'gateway-user-a-vsvc')).toBeUndefined();
  });

  it('keeps an entry of weight 0 in its place', () => {
    const mesh = resolved('canary', (f, t) =>
      f === 'mesh.yaml' ? t.replace('weight: 80', 'weight: 100').replace('weight: 20', 'weight: 0') : t,
    );
    expect(splitReachedBy(mesh, 'gateway')!.entries).toEqual([
      { name: 'echo-v1', weight: 100 },
      { name: 'echo-v2', weight: 0 },
    ]);
  });

  it('finds none when the rules lead to two splits', () => {
    const mesh = resolved('canary', (f, t) =>
      f === 'mesh.yaml'
        ? t.replace(
            '    - action: { route: echo-route }',
            [
              "    - match: { op: test, path: '/IP/src_addr', value: 127.0.0.101 }",
              '      action: { route: { destination: echo-other } }',
              '    - action: { route: echo-route }',
            ].join('\n'),
          ) +
          [
            '---',
            'apiVersion: msm.l7mp.io/v1',
            'kind: Target',
            'metadata: { name: echo-other, namespace: default }',
            'spec:',
            '  split:',
            '    - { serviceName: echo-v1, weight: 50 }',
            '    - { serviceName: echo-v2, weight: 50 }',
            '',
          ].join('\n')
        : t,
    );
    expect(Object.values(mesh.targets).filter((t) => t.split)).toHaveLength(2);
    expect(splitReachedBy(mesh, 'gateway')).toBeUndefined();
  });

  it("follows a Target to another proxy's listener and that listener's rules to the split", () => {
    const mesh = resolved('canary', (f, t) => {
      if (f === 'cluster.yaml')
        return `${t}\n---\n${[
          'apiVersion: v1',
          'kind: Pod',
          'metadata:',
          '  name: mid-0',
          '  namespace: default',
          '  labels: { app: mid, msm.l7mp.io/proxy: sidecar }',
          "  annotations: { msm.l7mp.io/api-port: '1235' }",
          'status: { podIP: 127.0.0.11 }',
          '',
        ].join('\n')}`;
      return (
        t.replace('    - action: { route: echo-route }', '    - action: { route: { destination: mid } }') +
        [
          '---',
          'apiVersion: msm.l7mp.io/v1',
          'kind: VirtualService',
          'metadata: { name: mid, namespace: default }',
          'spec:',
          '  selector: { matchLabels: { app: mid } }',
          '  udp: { port: 9300 }',
          '  rules:',
          '    - action: { route: echo-route }',
          '',
        ].join('\n')
      );
    });
    expect(mesh.virtualServices['mid.default.virtualservice.cluster.local']?.listener).toBe(true);
    expect(withoutLookup(splitReachedBy(mesh, 'gateway'))).toEqual(echoCanary);
    expect(withoutLookup(splitReachedBy(mesh, 'mid'))).toEqual(echoCanary);
  });
});
