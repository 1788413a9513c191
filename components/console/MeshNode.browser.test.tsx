/**
 * MeshNode in a real React Flow canvas in Chromium: a node waiting for its first layout is a plain box;
 * a collapsed group shows the sessions and the gRPC clients' RPCs it stands in for.
 */
import { ReactFlow, ReactFlowProvider } from '@xyflow/react';
import { createRoot } from 'react-dom/client';
import { afterEach, describe, expect, it } from 'vitest';
import type { GraphGroup } from '@/lib/console/groupGraph';
import { clusterLoad } from '@/lib/console/liveState.testutil';
import type { GraphNode } from '@/lib/console/meshGraph';
import { MeshGroupNode, type MeshGroupData, MeshNode, type MeshFlowNode } from './MeshNode';

const node: GraphNode = {
  id: 'Route/default/route-1',
  kind: 'Route',
  name: 'route-1',
  namespace: 'default',
  detail: 'udp · inline',
  diagnostics: [],
  counts: { error: 0, warning: 0, info: 0 },
};

let host: HTMLDivElement | undefined;
afterEach(() => host?.remove());

/** Renders one node at zoom 1 (readable) and returns its element once drawn. */
async function draw(data: MeshFlowNode['data']): Promise<HTMLElement> {
  return drawOne(
    { id: node.id, type: 'mesh', position: { x: 20, y: 20 }, data, width: 184, height: 60 },
    `node-${node.id}`,
  );
}

async function drawOne(
  flowNode:
    MeshFlowNode | { id: string; type: 'meshGroup'; position: { x: number; y: number }; data: MeshGroupData },
  testId: string,
): Promise<HTMLElement> {
  host = document.createElement('div');
  host.style.cssText = 'width: 800px; height: 400px';
  document.body.append(host);
  createRoot(host).render(
    <ReactFlowProvider>
      <ReactFlow
        nodes={[flowNode]}
        nodeTypes={{ mesh: MeshNode, meshGroup: MeshGroupNode }}
        defaultViewport={{ x: 0, y: 0, zoom: 1 }}
      />
    </ReactFlowProvider>,
  );
  for (let i = 0; i < 100; i++) {
    const el = host.querySelector<HTMLElement>(`[data-testid="${testId}"]`);
    if (el) return el;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('the node was not drawn');
}

describe('MeshNode', () => {
  it('at a readable zoom shows kind and name', async () => {
    const el = await draw({ node });
    expect(el.classList.contains('mesh-node--far')).toBe(false);
    expect(el.textContent).toContain('route-1');
  });

  it('waiting for its first layout, is a plain box without text at the same zoom', async () => {
    const el = await draw({ node, waiting: true });
    expect(el.classList.contains('mesh-node--far')).toBe(true);
    expect(el.textContent).toBe('');
    expect(el.getAttribute('aria-label')).toBe('Route default/route-1');
  });
});

describe('MeshGroupNode', () => {
  const group: GraphGroup = {
    id: 'Group:proxies/default',
    namespace: 'default',
    by: 'proxies',
    members: ['Pod/default/grpc-client-0', 'Pod/default/grpc-client-1'],
    kinds: { Proxy: 2 },
    diagnostics: { error: 0, warning: 0, info: 0 },
  };
  const load = (issued: number, failed: number) =>
    clusterLoad('c', { issued, failed, succeeded: issued - failed });
  const drawGroup = (data: MeshGroupData) =>
    drawOne({ id: group.id, type: 'meshGroup', position: { x: 20, y: 20 }, data }, `group-${group.id}`);

  it("shows the gRPC clients' RPCs through the group, red when some failed", async () => {
    const ok = await drawGroup({ group, load: load(120, 0) });
    const line = ok.querySelector<HTMLElement>('[data-testid="group-load"]')!;
    expect(line.textContent).toBe(' · ⇄ 12 RPC/s');
    expect(line.className).toBe('tone-flow');
    expect(line.title).toBe("gRPC clients' RPCs through this group: 12 RPC/s · 100%");
    expect(ok.dataset.rps).toBe('12');
    host!.remove();
    const failing = await drawGroup({ group, sessions: 3, load: load(40, 10) });
    expect(failing.querySelector('[data-testid="group-load"]')!.className).toBe('tone-bad');
    expect(failing.textContent).toContain('⇄ 3 · ⇄ 4 RPC/s');
  });

  it('shows no RPC line without load', async () => {
    const el = await drawGroup({ group });
    expect(el.querySelector('[data-testid="group-load"]')).toBeNull();
    expect(el.textContent).toContain('2 objects');
  });
});
