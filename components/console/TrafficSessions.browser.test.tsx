import '@/app/globals.css';
import { describe, expect, it } from 'vitest';
import { render } from 'vitest-browser-react';
import type { GraphTraffic, TrafficSession } from '@/lib/console/graphTraffic';
import { NO_LOAD } from '@/lib/console/grpcLoad';
import { clusterLoad } from '@/lib/console/liveState.testutil';
import { SplitEditor } from './SplitEditor';
import { TrafficSessions } from './TrafficSessions';

const TARGET = 'Target/default/echo-canary';

function flow(proxy: string, port: number, endpoint: string, second: number): TrafficSession {
  return {
    proxy,
    session: {
      name: `UDP:127.0.0.100:${port}-127.0.0.10:9100-0`,
      status: 'CONNECTED',
      source: `127.0.0.100:${port}`,
      endpoint,
      startedAt: `2026-11-28T14:41:${String(second).padStart(2, '0')}.000Z`,
    },
    nodes: ['VirtualService/default/gateway', TARGET],
    edges: [],
  };
}

function traffic(sessions: TrafficSession[], unavailable: GraphTraffic['unavailable'] = []): GraphTraffic {
  return {
    nodes: { [TARGET]: sessions.length },
    edges: {},
    sessions,
    unplaced: 0,
    unavailable,
    load: NO_LOAD,
  };
}

describe('TrafficSessions', () => {
  it('lists the sessions through the node oldest first, naming a single proxy once', async () => {
    const screen = await render(
      <TrafficSessions
        traffic={traffic([
          flow('default/gateway-0', 9002, '127.0.0.52', 30),
          flow('default/gateway-0', 9001, '127.0.0.61', 10),
        ])}
        nodeId={TARGET}
      />,
    );
    await expect.element(screen.getByTestId('traffic-count')).toHaveTextContent('2');
    await expect
      .element(screen.getByRole('heading'))
      .toHaveTextContent('Live sessions 2 on default/gateway-0');
    const rows = screen.getByTestId('traffic-session').elements();
    expect(rows.map((r) => [...r.querySelectorAll('td')].slice(0, 2).map((c) => c.textContent))).toEqual([
      ['127.0.0.100:9001', '127.0.0.61'],
      ['127.0.0.100:9002', '127.0.0.52'],
    ]);
    // No proxy column when there is one proxy.
    expect(
      screen
        .getByRole('columnheader')
        .elements()
        .map((h) => h.textContent),
    ).toEqual(['Client', 'Endpoint', 'Since']);
  });

  it('has a proxy column for several proxies, caps the list, and says which proxies were not counted', async () => {
    const many = Array.from({ length: 55 }, (_, i) =>
      flow(i % 2 ? 'default/gw-1' : 'default/gw-0', 9000 + i, '127.0.0.51', i % 60),
    );
    const screen = await render(
      <TrafficSessions
        traffic={traffic(many, [{ proxy: 'default/tc-0', reason: 'l7mp 0.5.7 cannot list sessions (422)' }])}
        nodeId={TARGET}
      />,
    );
    await expect.element(screen.getByTestId('traffic-count')).toHaveTextContent('55');
    expect(
      screen
        .getByRole('columnheader')
        .elements()
        .map((h) => h.textContent),
    ).toContain('Proxy');
    expect(screen.getByTestId('traffic-session').elements()).toHaveLength(50);
    await expect.element(screen.getByText('and 5 more (the Proxies page lists every session)')).toBeVisible();
    await expect
      .element(screen.getByTestId('traffic-unavailable'))
      .toHaveTextContent('Not counted: the sessions of default/tc-0 (l7mp 0.5.7 cannot list sessions (422))');
  });

  it('says none when no session runs through the node', async () => {
    const screen = await render(<TrafficSessions traffic={traffic([])} nodeId={TARGET} />);
    await expect.element(screen.getByText('No session runs through it now.')).toBeVisible();
    expect(screen.getByRole('table').query()).toBeNull();
  });
});

describe('SplitEditor with live sessions', () => {
  const entries = [
    { serviceName: 'echo-v1', weight: 70 },
    { serviceName: 'echo-v2', weight: 30 },
  ];

  it("sets each backend's live sessions and share under its slider", async () => {
    const screen = await render(<SplitEditor entries={entries} live={[17, 3]} onWeights={() => {}} />);
    await expect
      .element(screen.getByTestId('split-live-0'))
      .toHaveTextContent('⇄ 17 (85%) of the live sessions');
    await expect
      .element(screen.getByTestId('split-live-1'))
      .toHaveTextContent('⇄ 3 (15%) of the live sessions');
  });

  it("sets each backend's gRPC RPCs, their share of the split's and their success under its slider", async () => {
    const cell = (issued: number, failed: number) =>
      clusterLoad('c', { issued, failed, succeeded: issued - failed });
    const screen = await render(
      <SplitEditor entries={entries} rpc={[cell(72, 0), cell(28, 7)]} onWeights={() => {}} />,
    );
    await expect.element(screen.getByTestId('split-rpc-0')).toHaveTextContent('⇄ 7.2 RPC/s (72%) · 100% ok');
    await expect.element(screen.getByTestId('split-rpc-1')).toHaveTextContent('⇄ 2.8 RPC/s (28%) · 75% ok');
    expect(screen.getByTestId('split-rpc-1').element().className).toContain('split-row__rpc--failing');
    expect(screen.getByTestId('split-rpc-0').element().className).not.toContain('failing');
    expect(screen.container.querySelector('[data-testid^="split-live"]')).toBeNull();
    await screen.unmount();
    // Served, nothing reported yet: the line is there already, so a first report moves nothing.
    const idle = await render(
      <SplitEditor entries={entries} rpc={[undefined, undefined]} onWeights={() => {}} />,
    );
    await expect.element(idle.getByTestId('split-rpc-0')).toHaveTextContent(/^⇄ 0 RPC\/s$/);
    const before = idle.getByTestId('split-editor').element().getBoundingClientRect().height;
    await idle.rerender(
      <SplitEditor entries={entries} rpc={[cell(80, 0), cell(20, 0)]} onWeights={() => {}} />,
    );
    await expect.element(idle.getByTestId('split-rpc-1')).toHaveTextContent('⇄ 2 RPC/s (20%) · 100% ok');
    expect(idle.getByTestId('split-editor').element().getBoundingClientRect().height).toBe(before);
    await idle.unmount();
  });

  it('marks a share further from the weight than chance allows, and says why in the title', async () => {
    const cell = (issued: number) => clusterLoad('c', { issued });
    // Weights 70/30, the clients sent 40/60 of 100 calls: both off by 30 points (sd 4.6).
    const screen = await render(
      <SplitEditor entries={entries} rpc={[cell(40), cell(60)]} onWeights={() => {}} />,
    );
    const line = screen.getByTestId('split-rpc-0');
    await expect.element(line).toHaveTextContent('⇄ 4 RPC/s (40% ≠ 70%) · 100% ok');
    expect(line.element().className).toContain('split-row__rpc--off');
    expect(line.element().getAttribute('title')).toContain('40% of 100 calls against 70% set');
    await screen.unmount();
    // 68/32: chance.
    const near = await render(
      <SplitEditor entries={entries} rpc={[cell(68), cell(32)]} onWeights={() => {}} />,
    );
    await expect.element(near.getByTestId('split-rpc-0')).toHaveTextContent('⇄ 6.8 RPC/s (68%) · 100% ok');
    expect(near.getByTestId('split-rpc-0').element().className).not.toContain('off');
    await near.unmount();
  });

  it('gives no share when no session runs, and nothing without the overlay', async () => {
    const none = await render(<SplitEditor entries={entries} live={[0, 0]} onWeights={() => {}} />);
    await expect.element(none.getByTestId('split-live-0')).toHaveTextContent(/^⇄ 0 of the live sessions$/);
    await none.unmount();
    const off = await render(<SplitEditor entries={entries} onWeights={() => {}} />);
    await expect.element(off.getByTestId('split-slider-0')).toBeVisible();
    expect(off.container.querySelector('[data-testid^="split-live"]')).toBeNull();
    expect(off.container.querySelector('[data-testid^="split-rpc"]')).toBeNull();
  });
});
