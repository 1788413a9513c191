import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileMesh } from '../engine/compileMesh';
import { prepareLocalMesh } from '../localMesh/prepareLocalMesh';
import { parseManifests } from '../parse/parseManifests';
import { grpcRouting } from './grpcRouting';

const examples = path.join(__dirname, '../../examples');

function resolved(dir: string, edit: (file: string, text: string) => string = (_f, t) => t) {
  const snapshot = parseManifests(
    ['mesh.yaml', 'cluster.yaml'].map((f) => ({
      path: f,
      content: edit(f, readFileSync(path.join(examples, dir, f), 'utf8')),
    })),
  );
  return compileMesh(prepareLocalMesh(snapshot).snapshot).mesh;
}

describe('grpcRouting', () => {
  const ref = { namespace: 'default', name: 'echo-split' };

  it('names each entry’s xDS cluster and the proxyless clients that route to the Target', () => {
    expect(grpcRouting(resolved('grpc-canary'), ref, ['echo-v1', 'echo-v2'])).toEqual({
      clusters: [
        'echo-split.default.target.cluster.local/echo-v1',
        'echo-split.default.target.cluster.local/echo-v2',
      ],
      clients: ['default/grpc-client'],
    });
  });

  it('still finds the clients while the canary has weight 0 (its cluster is not rendered then)', () => {
    const mesh = resolved('grpc-canary', (f, t) =>
      f === 'mesh.yaml' ? t.replace('weight: 80', 'weight: 100').replace('weight: 20', 'weight: 0') : t,
    );
    expect(grpcRouting(mesh, ref, ['echo-v1', 'echo-v2'])).toMatchObject({
      clients: ['default/grpc-client'],
    });
  });

  it('refuses a Target no proxyless client reaches, and one without a split', () => {
    const canary = resolved('canary');
    expect(
      grpcRouting(canary, { namespace: 'default', name: 'echo-canary' }, ['echo-v1', 'echo-v2']),
    ).toEqual({
      error:
        'no proxyless gRPC client (a pod labelled msm.l7mp.io/proxy: grpc) routes to Target default/echo-canary: its xDS clusters are rendered for none, so no load reports can judge the canary',
    });
    expect(grpcRouting(canary, { namespace: 'default', name: 'nothing' }, [])).toEqual({
      error: 'Target default/nothing has no split the proxyless gRPC clients see, so none of them report it',
    });
  });
});
