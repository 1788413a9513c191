/** The Inspector's summary of the draft, in Chromium: counts read as words, one or several. */
import { createRoot } from 'react-dom/client';
import { afterEach, describe, expect, it } from 'vitest';
import type { DraftCompilation } from '@/lib/console/compileDraft';
import type { GraphNode } from '@/lib/console/meshGraph';
import { MeshSummaryPanel } from './MeshSummaryPanel';
import { clusterLoad, graphNode } from '@/lib/console/liveState.testutil';
import type { GraphTraffic } from '@/lib/console/graphTraffic';
import { type GraphLoad, NO_LOAD } from '@/lib/console/grpcLoad';
import { NO_REPORTS } from './GrpcLoad';

let host: HTMLDivElement | undefined;
afterEach(() => host?.remove());

const node = (kind: GraphNode['kind'], name: string): GraphNode => graphNode(kind, name);

function draw(nodes: GraphNode[], traffic?: GraphTraffic): HTMLElement {
  host = document.createElement('div');
  document.body.append(host);
  const compilation = {
    graph: { nodes, edges: [], listeners: {} },
    diagnostics: [],
  } as unknown as DraftCompilation;
  createRoot(host).render(
    <MeshSummaryPanel compilation={compilation} live={undefined} traffic={traffic} onFind={() => {}} />,
  );
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

  it("sums the gRPC clients' RPCs, red when some failed, and says when none has reported yet", async () => {
    const traffic = (load: GraphLoad): GraphTraffic => ({
      nodes: {},
      edges: {},
      sessions: [],
      unplaced: 0,
      unavailable: [],
      load,
    });
    const placed = (c: ReturnType<typeof clusterLoad>) => ({
      proxy: 'default/grpc-client',
      cluster: c.cluster,
      load: c,
      windowMs: 10_000,
      nodes: [],
      edges: [],
    });
    const reporting: GraphLoad = {
      ...NO_LOAD,
      clients: ['default/grpc-client'],
      reporting: ['default/grpc-client'],
      clusters: [
        placed(clusterLoad('a', { issued: 80 })),
        placed(clusterLoad('b', { issued: 20, succeeded: 15, failed: 5 })),
      ],
    };
    const root = draw([node('Proxy', 'grpc-client')], traffic(reporting));
    await expect
      .poll(() => root.querySelector('[data-testid="summary-grpc-load"]')?.textContent)
      .toBe('gRPC clients: ⇄ 10 RPC/s · 95%');
    expect(root.querySelector('[data-testid="summary-grpc-load"] .tone-bad')).not.toBeNull();
    host?.remove();
    const idle = draw(
      [node('Proxy', 'grpc-client')],
      traffic({ ...NO_LOAD, clients: ['default/grpc-client'] }),
    );
    await expect
      .poll(() => idle.querySelector('[data-testid="summary-grpc-load"]')?.textContent)
      .toBe(`gRPC clients: ${NO_REPORTS}`);
    host?.remove();
    const none = draw([node('Proxy', 'gateway-0')], traffic(NO_LOAD));
    await expect.poll(() => none.querySelector('[data-testid="summary-traffic"]')).not.toBeNull();
    expect(none.querySelector('[data-testid="summary-grpc-load"]')).toBeNull();
  });
});
