/** FlowGraphSync in a real React Flow canvas in Chromium: nodes and edges land in one store update. */
import { type Edge, type Node, ReactFlow, ReactFlowProvider, useStoreApi } from '@xyflow/react';
import { useEffect } from 'react';
import { flushSync } from 'react-dom';
import { createRoot, type Root } from 'react-dom/client';
import { afterEach, describe, expect, it } from 'vitest';
import { FlowGraphSync } from './FlowGraphSync';

let host: HTMLDivElement | undefined;
let root: Root | undefined;
afterEach(() => {
  root?.unmount();
  host?.remove();
});

const node = (id: string, x: number): Node => ({
  id,
  position: { x, y: 20 },
  data: { label: id },
  width: 150,
  height: 40,
  measured: { width: 150, height: 40 },
});
const edge = (source: string, target: string): Edge => ({ id: `${source}-${target}`, source, target });

/** Counts React Flow store updates that touch nodes or edges. */
function CountUpdates({ into }: { into: { updates: number; last?: { nodes: number; edges: number } } }) {
  const store = useStoreApi();
  useEffect(
    () =>
      store.subscribe((s, prev) => {
        if (s.nodes === prev.nodes && s.edges === prev.edges) return;
        into.updates++;
        into.last = { nodes: s.nodes.length, edges: s.edges.length };
      }),
    [store, into],
  );
  return null;
}

function render(nodes: Node[], edges: Edge[], counter: { updates: number }) {
  flushSync(() =>
    root!.render(
      <ReactFlowProvider>
        <ReactFlow defaultViewport={{ x: 0, y: 0, zoom: 1 }}>
          <CountUpdates into={counter} />
          <FlowGraphSync nodes={nodes} edges={edges} />
        </ReactFlow>
      </ReactFlowProvider>,
    ),
  );
}

async function until(check: () => boolean, what: string) {
  for (let i = 0; i < 100; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('FlowGraphSync', () => {
  it('draws the nodes and edges it is given, and a change of both is one store update', async () => {
    host = document.createElement('div');
    host.style.cssText = 'width: 800px; height: 400px';
    document.body.append(host);
    root = createRoot(host);
    const counter: { updates: number; last?: { nodes: number; edges: number } } = { updates: 0 };
    const a = node('a', 0);
    const b = node('b', 300);
    render([a, b], [edge('a', 'b')], counter);
    await until(() => host!.querySelectorAll('.react-flow__edge').length === 1, 'the first edge');
    expect(host.querySelectorAll('.react-flow__node')).toHaveLength(2);

    const before = counter.updates;
    const c = node('c', 600);
    render([a, b, c], [edge('a', 'b'), edge('b', 'c')], counter);
    await until(() => host!.querySelectorAll('.react-flow__edge').length === 2, 'the second edge');
    expect(host.querySelectorAll('.react-flow__node')).toHaveLength(3);
    expect(counter.updates - before).toBe(1);
    expect(counter.last).toEqual({ nodes: 3, edges: 2 });

    // The same arrays again: nothing to do.
    const settled = counter.updates;
    const nodes = [a, b, c];
    const edges = [edge('a', 'b')];
    render(nodes, edges, counter);
    render(nodes, edges, counter);
    await until(() => host!.querySelectorAll('.react-flow__edge').length === 1, 'the edge removed');
    expect(counter.updates - settled).toBe(1);
    expect(host.querySelector('[data-id="c"]')).not.toBeNull();
  });
});
