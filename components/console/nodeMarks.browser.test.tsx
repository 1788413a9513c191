/** The markers store ahead of the canvas (nodeMarks.ts), and a MeshNode following it in Chromium. */
import { ReactFlow, ReactFlowProvider } from '@xyflow/react';
import { describe, expect, it } from 'vitest';
import { page } from 'vitest/browser';
import { render } from 'vitest-browser-react';
import type { GraphNode } from '@/lib/console/meshGraph';
import type { Diagnostic } from '@/lib/model/diagnostic';
import { MeshNode, type MeshFlowNode } from './MeshNode';
import { NodeMarksContext, NodeMarksStore } from './nodeMarks';

const graphNode = (name: string, diagnostics: Diagnostic[] = []): GraphNode => ({
  id: `Route/default/${name}`,
  kind: 'Route',
  name,
  namespace: 'default',
  detail: 'udp',
  diagnostics,
  counts: {
    error: diagnostics.filter((d) => d.severity === 'error').length,
    warning: diagnostics.filter((d) => d.severity === 'warning').length,
    info: 0,
  },
});
const dangling: Diagnostic = {
  severity: 'error',
  code: 'dangling-reference',
  message: 'destination Target/default/nope does not exist',
  object: { kind: 'Route', name: 'route-1', namespace: 'default' },
  path: 'spec.destination',
};

describe('NodeMarksStore', () => {
  it('tells only the nodes whose markers changed, and the ones gone', () => {
    const store = new NodeMarksStore();
    const a = graphNode('a');
    const b = graphNode('b');
    const c = graphNode('c');
    store.publish([a, b, c]);
    const told: string[] = [];
    for (const n of [a, b, c]) store.subscribe(n.id, () => told.push(n.name));
    // a: same object; b: a new object with the same markers; c: gone; d: new, nobody listens yet.
    store.publish([a, graphNode('b'), graphNode('d')]);
    expect(told).toEqual(['c']);
    expect(store.get(b.id)).toBe(b);
    expect(store.get(c.id)).toBeUndefined();
    store.publish([graphNode('a', [dangling]), graphNode('b')]);
    expect(told).toEqual(['c', 'a']);
    expect(store.get(a.id)?.counts.error).toBe(1);
  });

  it('stops telling a listener that unsubscribed', () => {
    const store = new NodeMarksStore();
    let told = 0;
    const off = store.subscribe('Route/default/a', () => told++);
    store.publish([graphNode('a')]);
    off();
    store.publish([graphNode('a', [dangling])]);
    expect(told).toBe(1);
  });
});

describe('MeshNode with the markers store', () => {
  it("shows the store's markers before its own data changes", async () => {
    const store = new NodeMarksStore();
    const node = graphNode('route-1');
    store.publish([node]);
    const nodes: MeshFlowNode[] = [
      { id: node.id, type: 'mesh', position: { x: 20, y: 20 }, data: { node }, width: 184, height: 60 },
    ];
    await render(
      <div style={{ width: 800, height: 400 }}>
        <NodeMarksContext.Provider value={store}>
          <ReactFlowProvider>
            <ReactFlow
              nodes={nodes}
              nodeTypes={{ mesh: MeshNode }}
              defaultViewport={{ x: 0, y: 0, zoom: 1 }}
            />
          </ReactFlowProvider>
        </NodeMarksContext.Provider>
      </div>,
    );
    const el = page.getByTestId(`node-${node.id}`);
    await expect.element(el).toHaveAttribute('data-errors', '0');
    // The canvas still has the node without the error (its render is deferred); the store has it.
    store.publish([graphNode('route-1', [dangling])]);
    await expect.element(el).toHaveAttribute('data-errors', '1');
    await expect.element(el.getByTestId('node-error-badge')).toHaveTextContent('1');
    await expect.element(el).toHaveAttribute('title', `error: ${dangling.message}`);
    await expect.element(el).toHaveAttribute('aria-label', 'Route default/route-1: 1 error');
    store.publish([graphNode('route-1')]);
    await expect.element(el).toHaveAttribute('data-errors', '0');
  });
});
