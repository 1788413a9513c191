/** MeshXdsPublisher on the real engine, renderer and SnapshotCache (no network). */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileMesh } from '@/lib/engine/compileMesh';
import { type ManifestFile, parseManifests } from '@/lib/parse/parseManifests';
import { renderXdsProxy } from '@/lib/xds/renderXds';
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

  it('renders replicas once, and every proxy still gets exactly its own render', async () => {
    const files = await readManifestDir(path.join(EXAMPLES, 'grpc-canary'));
    const pod = (name: string, labels: string) =>
      `---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\n  namespace: default\n` +
      `  labels: { ${labels} }\nstatus: { podIP: 127.0.0.${80 + Number(name.slice(-1))} }\n`;
    const replicas = [0, 1, 2].map((i) =>
      pod(`grpc-client-${i}`, 'app: grpc-client, msm.l7mp.io/proxy: grpc'),
    );
    // One more client that a second VirtualService also selects: a different placement.
    const special = pod('grpc-client-9', 'app: grpc-client, tier: special, msm.l7mp.io/proxy: grpc');
    const vs = (name: string, tier: string, protocol: string) =>
      `---\napiVersion: msm.l7mp.io/v1\nkind: VirtualService\n` +
      `metadata: { name: ${name}, namespace: default }\n` +
      `spec:\n  selector: { matchLabels: { tier: ${tier} } }\n  ${protocol}\n` +
      `  rules: [{ action: { route: { destination: echo-split } } }]\n`;
    const extraVs = vs('echo-special', 'special', 'grpc: { port: 50052 }');
    // A TCP VirtualService on an l7mp sidecar and on a proxyless client with the same labels: the same
    // placement, but the client takes only grpc VirtualServices (no listener, a diagnostic).
    const sidecar = pod('grpc-client-7', 'app: grpc-client, tier: tcp, msm.l7mp.io/proxy: sidecar');
    const tcpClient = pod('grpc-client-8', 'app: grpc-client, tier: tcp, msm.l7mp.io/proxy: grpc');
    const tcpVs = vs('echo-tcp', 'tcp', 'tcp: { port: 9002 }');
    const mesh = meshOf([
      ...files,
      { path: 'more.yaml', content: [...replicas, sidecar, tcpClient, special, extraVs, tcpVs].join('') },
    ]);
    expect(Object.keys(mesh.proxies)).toContain('default/grpc-client-7');
    expect(renderXdsProxy(mesh, 'default/grpc-client-8').snapshot.listeners.map((l) => l.name)).toEqual([
      'echo',
    ]);
    const published = new MeshXdsPublisher().publish(mesh);
    const ids = ['default/grpc-client-0', 'default/grpc-client-1', 'default/grpc-client-2'];
    for (const id of [...ids, 'default/grpc-client-7', 'default/grpc-client-8', 'default/grpc-client-9']) {
      const own = renderXdsProxy(mesh, id).snapshot;
      expect(published.snapshots[id]).toEqual(own);
      expect(published.snapshots[id]!.node).toBe(id);
      expect(published.snapshots[id]!.proxy).toBe(mesh.proxies[id]);
    }
    // Rendered once: the replicas share the lists.
    expect(published.snapshots[ids[1]!]!.listeners).toBe(published.snapshots[ids[0]!]!.listeners);
    expect(published.snapshots[ids[2]!]!.routes).toBe(published.snapshots[ids[0]!]!.routes);
    expect(published.snapshots['default/grpc-client-9']!.listeners.map((l) => l.name).sort()).toEqual([
      'echo',
      'echo-special',
    ]);
  });

  it('publishes for every example exactly what renderXdsProxy renders for each proxy', async () => {
    const dirs = readdirSync(EXAMPLES, { withFileTypes: true }).filter((d) => d.isDirectory());
    expect(dirs.length).toBeGreaterThan(3);
    for (const d of dirs) {
      const mesh = meshOf(await readManifestDir(path.join(EXAMPLES, d.name)));
      const published = new MeshXdsPublisher().publish(mesh);
      expect(Object.keys(published.snapshots).sort()).toEqual(Object.keys(mesh.proxies).sort());
      for (const id of Object.keys(mesh.proxies))
        expect(published.snapshots[id], `${d.name} ${id}`).toEqual(renderXdsProxy(mesh, id).snapshot);
    }
  });
});
