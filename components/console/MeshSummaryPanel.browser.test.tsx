/** The Inspector's summary of the draft, in Chromium: counts read as words, one or several. */
import { createRoot } from 'react-dom/client';
import { afterEach, describe, expect, it } from 'vitest';
import type { DraftCompilation } from '@/lib/console/compileDraft';
import type { GraphNode } from '@/lib/console/meshGraph';
import { MeshSummaryPanel } from './MeshSummaryPanel';
import { graphNode } from '@/lib/console/liveState.testutil';

let host: HTMLDivElement | undefined;
afterEach(() => host?.remove());

const node = (kind: GraphNode['kind'], name: string): GraphNode => graphNode(kind, name);

function draw(nodes: GraphNode[]): HTMLElement {
  host = document.createElement('div');
  document.body.append(host);
  const compilation = { graph: { nodes, edges: [] }, diagnostics: [] } as unknown as DraftCompilation;
  createRoot(host).render(<MeshSummaryPanel compilation={compilation} live={undefined} onFind={() => {}} />);
  return host;
}

async function kindText(root: HTMLElement, kind: string): Promise<string | null> {
  await expect.poll(() => root.querySelector(`[data-testid="summary-kind-${kind}"]`)).not.toBeNull();
  return root.querySelector(`[data-testid="summary-kind-${kind}"]`)!.textContent;
}

describe('MeshSummaryPanel', () => {
  it('names one of a kind in the singular and several in the plural, missing references too', async () => {
    const root = draw([
      node('VirtualService', 'a'),
      node('VirtualService', 'b'),
      node('Route', 'r'),
      node('Proxy', 'p'),
      node('Missing', 'nope'),
    ]);
    expect(await kindText(root, 'VirtualService')).toBe('2 VirtualServices');
    expect(await kindText(root, 'Route')).toBe('1 Route');
    expect(await kindText(root, 'Proxy')).toBe('1 proxy');
    expect(await kindText(root, 'Missing')).toBe('1 missing reference');
  });

  it('several proxies and missing references', async () => {
    const root = draw([node('Proxy', 'p'), node('Proxy', 'q'), node('Missing', 'x'), node('Missing', 'y')]);
    expect(await kindText(root, 'Proxy')).toBe('2 proxies');
    expect(await kindText(root, 'Missing')).toBe('2 missing references');
  });
});
