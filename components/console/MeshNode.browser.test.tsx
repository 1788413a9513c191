/** MeshNode in a real React Flow canvas in Chromium: a node waiting for its first layout is a plain box. */
import { ReactFlow, ReactFlowProvider } from '@xyflow/react';
import { createRoot } from 'react-dom/client';
import { afterEach, describe, expect, it } from 'vitest';
import type { GraphNode } from '@/lib/console/meshGraph';
import { MeshNode, type MeshFlowNode } from './MeshNode';

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
  host = document.createElement('div');
  host.style.cssText = 'width: 800px; height: 400px';
  document.body.append(host);
  const nodes: MeshFlowNode[] = [
    { id: node.id, type: 'mesh', position: { x: 20, y: 20 }, data, width: 184, height: 60 },
  ];
  createRoot(host).render(
    <ReactFlowProvider>
      <ReactFlow nodes={nodes} nodeTypes={{ mesh: MeshNode }} defaultViewport={{ x: 0, y: 0, zoom: 1 }} />
    </ReactFlowProvider>,
  );
  for (let i = 0; i < 100; i++) {
    const el = host.querySelector<HTMLElement>(`[data-testid="node-${node.id}"]`);
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
