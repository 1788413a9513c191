/** MeshXdsPublisher on the real engine, renderer and SnapshotCache (no network). */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileMesh } from '@/lib/engine/compileMesh';
import { type ManifestFile, parseManifests } from '@/lib/parse/parseManifests';
import { readManifestDir } from '../manifestDir';
import { TypeUrls, type XdsTypeUrl } from './envoyProtos';
import { MeshXdsPublisher } from './meshXds';

const EXAMPLES = path.resolve(__dirname, '..', '..', 'examples');
const SHORT: Record<XdsTypeUrl, string> = {
  [TypeUrls.listener]: 'LDS',
  [TypeUrls.route]: 'RDS',
  [TypeUrls.cluster]: 'CDS',
  [TypeUrls.endpoint]: 'EDS',
};

const meshOf = (files: ManifestFile[]) => compileMesh(parseManifests(files)).mesh;

describe('MeshXdsPublisher', () => {
  it('publishes every proxy, announces only what changed, and clears proxies that left', async () => {
    const files = await readManifestDir(path.join(EXAMPLES, 'grpc-canary'));
    const publisher = new MeshXdsPublisher();
    const changes: string[] = [];
    publisher.cache.on('change', (node, snap, types) =>
      changes.push(`${node} ${snap ? types.map((t) => SHORT[t]).join(',') : 'cleared'}`),
    );

    const first = publisher.publish(meshOf(files));
    expect(Object.keys(first.snapshots)).toEqual(['default/grpc-client']);
    expect(first.refused.size).toBe(0);
    expect(first.diagnostics).toEqual([]);
    publisher.cache.flush();
    expect(changes.splice(0)).toEqual(['default/grpc-client LDS,RDS,CDS,EDS']);

    // The same mesh again (a pod event that changed nothing for xDS): nothing is announced.
    publisher.publish(meshOf(files));
    publisher.cache.flush();
    expect(changes.splice(0)).toEqual([]);

    // New split weights change the route only.
    const edited = files.map((f) => ({
      ...f,
      content: f.content.replace('weight: 80', 'weight: 50').replace('weight: 20', 'weight: 50'),
    }));
    expect(edited).not.toEqual(files);
    publisher.publish(meshOf(edited));
    publisher.cache.flush();
    expect(changes.splice(0)).toEqual(['default/grpc-client RDS']);

    // A mesh without the client: its snapshot is cleared, the other mesh's proxies are published.
    const other = publisher.publish(meshOf(await readManifestDir(path.join(EXAMPLES, 'canary'))));
    publisher.cache.flush();
    expect(changes).toContain('default/grpc-client cleared');
    expect(publisher.cache.getSnapshot('default/grpc-client')).toBeUndefined();
    expect(publisher.cache.nodeIds().sort()).toEqual(Object.keys(other.snapshots).sort());
    publisher.cache.close();
  });

  it('keeps the render diagnostics of the proxies diagnosticsFor selects only', async () => {
    const mesh = meshOf(await readManifestDir(path.join(EXAMPLES, 'seed-example-1')));
    const all = new MeshXdsPublisher().publish(mesh);
    expect(all.diagnostics.some((d) => d.code === 'xds-unsupported')).toBe(true);
    const none = new MeshXdsPublisher().publish(mesh, (p) => p.role === 'grpc');
    expect(none.diagnostics).toEqual([]);
    expect(Object.keys(none.snapshots)).toEqual(Object.keys(all.snapshots));
  });
});
