/**
 * The gRPC clients' RPC load in Chromium: the Inspector's table per cluster and the proxies page's row.
 * FAKE live events and links: next/link is a plain anchor; EventSource is a stub that never connects; the live state is set in the query
 * cache, as useLiveEvents' reducer does when a proxy event arrives.
 */
import '@/app/globals.css';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { render } from 'vitest-browser-react';
import { type GraphLoad, NO_LOAD, type PlacedClusterLoad } from '@/lib/console/grpcLoad';
import { clusterLoad, grpcClientLive, proxyLive } from '@/lib/console/liveState.testutil';
import type { ClusterLoadView } from '@/lib/xds/loadReports';
import type { MeshLiveState } from '@/server/controlPlane/liveState';
import { GrpcLoadTable, NO_REPORTS } from './GrpcLoad';
import { ProxiesPage } from './ProxiesPage';
import { liveStateKey } from './queries';

// next/link reads Node's `process` at import: outside Next a plain anchor does what the row needs.
vi.mock('next/link', () => {
  const Link = ({ href, children, ...rest }: { href: string; children: React.ReactNode }) => (
    <a href={href} {...rest}>
      {children}
    </a>
  );
  // The page imports next/link's CommonJS module, whose default export is read off the module itself.
  return Object.assign(Link, { default: Link, __esModule: true });
});

const SPLIT = 'echo-split.default.target.cluster.local';
const CLIENT = 'Pod/default/grpc-client';
const TARGET = 'Target/default/echo-split';

function placed(
  proxy: string,
  load: ClusterLoadView,
  patch: Partial<PlacedClusterLoad> = {},
): PlacedClusterLoad {
  return {
    proxy,
    cluster: load.cluster,
    load,
    windowMs: 10_000,
    target: TARGET,
    nodes: [`Pod/${proxy}`, TARGET],
    edges: [],
    ...patch,
  };
}

function graphLoad(clusters: PlacedClusterLoad[], clients = ['default/grpc-client']): GraphLoad {
  return {
    ...NO_LOAD,
    clusters,
    clients,
    reporting: [...new Set(clusters.map((c) => c.proxy))],
    served: [TARGET],
  };
}

const cells = (row: Element) => [...row.querySelectorAll('td')].map((c) => c.textContent);

describe('GrpcLoadTable', () => {
  it("lists a client's clusters with RPC/s, success, errors, in progress and window, failing ones red", async () => {
    const load = graphLoad([
      placed('default/grpc-client', clusterLoad(`${SPLIT}/echo-v1`, { issued: 80 })),
      placed(
        'default/grpc-client',
        clusterLoad(`${SPLIT}/echo-v2`, { issued: 20, succeeded: 15, failed: 5, inProgress: 2 }),
      ),
      placed('default/grpc-client', clusterLoad('gone.default.target.cluster.local', { issued: 3 }), {
        target: undefined,
        missing: 'cluster',
        nodes: [CLIENT],
      }),
    ]);
    const screen = await render(<GrpcLoadTable load={load} nodeId={CLIENT} client="default/grpc-client" />);
    await expect.element(screen.getByRole('heading')).toHaveTextContent('RPCs of this gRPC client');
    expect(
      screen
        .getByRole('columnheader')
        .elements()
        .map((h) => h.textContent),
    ).toEqual(['Cluster', 'RPC/s', 'Success', 'Errors', 'In progress', 'Window']);
    const rows = screen.getByTestId('grpc-load-row').elements();
    expect(rows.map(cells)).toEqual([
      ['echo-split/echo-v1', '8', '100%', '0', '0', '10 s'],
      ['echo-split/echo-v2', '2', '75%', '5', '2', '10 s'],
      ['gone (not in this draft)', '0.3', '100%', '0', '0', '10 s'],
    ]);
    const success = screen.getByTestId('grpc-load-success').elements();
    expect(success.map((c) => c.classList.contains('tone-bad'))).toEqual([false, true, false]);
    // The full cluster name and the clients are in the row's title.
    expect(rows[0]!.getAttribute('title')).toBe(`${SPLIT}/echo-v1\nfrom default/grpc-client`);
  });

  it("sums a Target's clusters over the clients that reach it", async () => {
    const load = graphLoad(
      [
        placed('default/grpc-client', clusterLoad(`${SPLIT}/echo-v1`, { issued: 80 })),
        placed(
          'default/grpc-client-2',
          clusterLoad(`${SPLIT}/echo-v1`, { issued: 20, succeeded: 19, failed: 1 }),
        ),
        placed('default/grpc-client-2', clusterLoad(`${SPLIT}/echo-v3`, { issued: 10 }), {
          missing: 'entry',
        }),
      ],
      ['default/grpc-client', 'default/grpc-client-2'],
    );
    const screen = await render(<GrpcLoadTable load={load} nodeId={TARGET} />);
    await expect.element(screen.getByRole('heading')).toHaveTextContent('RPCs from gRPC clients');
    expect(screen.getByTestId('grpc-load-row').elements().map(cells)).toEqual([
      ['echo-split/echo-v1', '10', '99%', '1', '0', '10 s'],
      ['echo-split/echo-v3 (split entry not in this draft)', '1', '100%', '0', '0', '10 s'],
    ]);
  });

  it('says in plain words that no report has come yet, and that a reporting client sends nothing here', async () => {
    const idle = await render(
      <GrpcLoadTable load={graphLoad([])} nodeId={CLIENT} client="default/grpc-client" />,
    );
    await expect.element(idle.getByTestId('grpc-load-empty')).toHaveTextContent(NO_REPORTS);
    expect(idle.getByRole('table').query()).toBeNull();
    await idle.unmount();
    const elsewhere = graphLoad([
      placed('default/grpc-client', clusterLoad('other.default.target.cluster.local', { issued: 5 }), {
        target: 'Target/default/other',
        nodes: [CLIENT, 'Target/default/other'],
      }),
    ]);
    const quiet = await render(<GrpcLoadTable load={elsewhere} nodeId={TARGET} />);
    await expect
      .element(quiet.getByTestId('grpc-load-empty'))
      .toHaveTextContent('No RPCs through it in the last 10 s.');
  });
});

describe('the proxies page row of a gRPC client', () => {
  class SilentEventSource {
    onerror = null;
    addEventListener() {}
    removeEventListener() {}
    close() {}
  }

  let client: QueryClient;
  beforeEach(() => {
    vi.stubGlobal('EventSource', SilentEventSource);
    client = new QueryClient({ defaultOptions: { queries: { staleTime: Infinity, retry: false } } });
  });
  afterEach(() => vi.unstubAllGlobals());

  function live(...proxies: MeshLiveState['proxies'][string][]): MeshLiveState {
    return {
      version: 1,
      mesh: { source: 'dir', mode: 'local', loadedAt: '2026-11-28T14:00:00Z' },
      proxies: Object.fromEntries(proxies.map((p) => [p.id, p])),
      services: {},
      diagnostics: [],
    };
  }

  it('shows RPC/s and success % once reports arrive, in the space kept for them', async () => {
    const gateway = proxyLive('default/gateway-0', { apiUrl: 'http://127.0.0.10:1234' });
    client.setQueryData(liveStateKey, live(gateway, grpcClientLive('default/grpc-client', undefined)));
    const screen = await render(
      <div style={{ width: '1280px' }}>
        <QueryClientProvider client={client}>
          <ProxiesPage />
        </QueryClientProvider>
      </div>,
    );
    const cell = screen.getByTestId('proxy-load-default/grpc-client');
    await expect.element(cell).toHaveTextContent('no reports');
    await expect.element(cell).toHaveAttribute('title', NO_REPORTS);
    const row = screen.getByTestId('proxy-row-default/grpc-client');
    const before = row.element().getBoundingClientRect();
    const cellBefore = cell.element().getBoundingClientRect();
    // The l7mp gateway keeps its sessions count.
    await expect.element(screen.getByTestId('proxy-row-default/gateway-0')).toHaveTextContent('SYNCED');
    expect(screen.getByTestId('proxy-load-default/gateway-0').query()).toBeNull();

    // A proxy event replaces the whole proxy: now with a load.
    const reporting = grpcClientLive('default/grpc-client', [
      clusterLoad(`${SPLIT}/echo-v1`, { issued: 80 }),
      clusterLoad(`${SPLIT}/echo-v2`, { issued: 21, succeeded: 15, failed: 5, inProgress: 1 }),
    ]);
    client.setQueryData(liveStateKey, { ...live(gateway, reporting), version: 2 });
    await expect.element(screen.getByTestId('proxy-load-rps')).toHaveTextContent('10.1 RPC/s');
    await expect.element(screen.getByTestId('proxy-load-success')).toHaveTextContent('95% ok');
    expect(screen.getByTestId('proxy-load-success').element().classList.contains('tone-bad')).toBe(true);
    expect(cell.element().getAttribute('title')).toContain('(5 failed)');
    const after = row.element().getBoundingClientRect();
    const cellAfter = cell.element().getBoundingClientRect();
    expect([after.height, cellAfter.height, cellAfter.width]).toEqual([
      before.height,
      cellBefore.height,
      cellBefore.width,
    ]);

    // All fine: not red.
    client.setQueryData(liveStateKey, {
      ...live(
        gateway,
        grpcClientLive('default/grpc-client', [clusterLoad(`${SPLIT}/echo-v1`, { issued: 50 })]),
      ),
      version: 3,
    });
    await expect.element(screen.getByTestId('proxy-load-success')).toHaveTextContent('100% ok');
    expect(screen.getByTestId('proxy-load-success').element().classList.contains('tone-bad')).toBe(false);
  });
});
