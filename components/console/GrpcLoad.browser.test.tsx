/**
 * The gRPC clients' RPC load in Chromium: the Inspector's table per cluster and the proxies page's row.
 * The live state is given as a proxy event leaves it (a proxy event replaces the whole proxy).
 */
import '@/app/globals.css';
import { describe, expect, it } from 'vitest';
import { render } from 'vitest-browser-react';
import { type GraphLoad, NO_LOAD, type PlacedClusterLoad } from '@/lib/console/grpcLoad';
import { clusterLoad, grpcClientLive } from '@/lib/console/liveState.testutil';
import type { ClusterLoadView } from '@/lib/xds/loadReports';
import { GrpcLoadTable, NO_REPORTS, ProxyLoadCell } from './GrpcLoad';

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
    ).toEqual(['Cluster', 'RPC/s', 'Success', 'Errors', 'Open']);
    const rows = screen.getByTestId('grpc-load-row').elements();
    expect(rows.map(cells)).toEqual([
      ['echo-split/echo-v1', '8', '100%', '0', '0'],
      ['echo-split/echo-v2', '2', '75%', '5', '2'],
      ['gone (not in this draft)', '0.3', '100%', '0', '0'],
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
      ['echo-split/echo-v1', '10', '99%', '1', '0'],
      ['echo-split/echo-v3 (split entry not in this draft)', '1', '100%', '0', '0'],
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

describe("the proxies page's load cell of a gRPC client", () => {
  // The cell as the proxies page renders it in a row (e2e/console-grpc.spec.ts checks the real page).
  function Row({ proxy }: { proxy: Parameters<typeof ProxyLoadCell>[0]['proxy'] }) {
    return (
      <table style={{ width: '1280px' }}>
        <tbody>
          <tr data-testid="row">
            <td>default/grpc-client</td>
            <td>
              <ProxyLoadCell proxy={proxy} />
            </td>
          </tr>
        </tbody>
      </table>
    );
  }

  it('shows RPC/s and success % once reports arrive, in the space kept for them', async () => {
    const idle = grpcClientLive('default/grpc-client', undefined);
    const screen = await render(<Row proxy={idle} />);
    const cell = screen.getByTestId('proxy-load-default/grpc-client');
    await expect.element(cell).toHaveTextContent('no reports');
    await expect.element(cell).toHaveAttribute('title', NO_REPORTS);
    const before = screen.getByTestId('row').element().getBoundingClientRect();
    const cellBefore = cell.element().getBoundingClientRect();

    // A proxy event replaces the whole proxy: now with a load.
    const reporting = grpcClientLive('default/grpc-client', [
      clusterLoad(`${SPLIT}/echo-v1`, { issued: 80 }),
      clusterLoad(`${SPLIT}/echo-v2`, { issued: 21, succeeded: 15, failed: 5, inProgress: 1 }),
    ]);
    await screen.rerender(<Row proxy={reporting} />);
    await expect.element(screen.getByTestId('proxy-load-rps')).toHaveTextContent('10.1 RPC/s');
    await expect.element(screen.getByTestId('proxy-load-success')).toHaveTextContent('95% ok');
    expect(screen.getByTestId('proxy-load-success').element().classList.contains('tone-bad')).toBe(true);
    expect(cell.element().getAttribute('title')).toContain('(5 failed)');
    const after = screen.getByTestId('row').element().getBoundingClientRect();
    const cellAfter = cell.element().getBoundingClientRect();
    // Heights only: this bare table sizes its columns by content, the page's does not.
    expect([after.height, cellAfter.height]).toEqual([before.height, cellBefore.height]);

    // All fine: not red.
    const fine = grpcClientLive('default/grpc-client', [clusterLoad(`${SPLIT}/echo-v1`, { issued: 50 })]);
    await screen.rerender(<Row proxy={fine} />);
    await expect.element(screen.getByTestId('proxy-load-success')).toHaveTextContent('100% ok');
    expect(screen.getByTestId('proxy-load-success').element().classList.contains('tone-bad')).toBe(false);
  });
});
