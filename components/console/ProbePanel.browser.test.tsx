import '@/app/globals.css';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { describe, expect, it } from 'vitest';
import { render } from 'vitest-browser-react';
import { ProbeResultSchema } from '@/lib/console/probeResult';
import type { MeshLiveState } from '@/server/controlPlane/liveState';
import { ProbePanel, ProbeResultView } from './ProbePanel';

const path = [
  'listener gateway-user-a-vsvc.default.virtualservice.cluster.local (UDP)',
  'rule 0 (catch-all)',
  'destination worker-target.default.target.cluster.local [UDP -> 127.0.0.4]',
];

describe('ProbeResultView', () => {
  it('shows the echo, the path and the latency of a probe that came back', async () => {
    const answer = ProbeResultSchema.parse({
      ok: true,
      proxy: 'default/gateway',
      listener: 'gateway-user-a-vsvc.default.virtualservice.cluster.local',
      protocol: 'UDP',
      to: '127.0.0.11:8001',
      from: '127.0.0.100:*',
      reply: 'worker-1(tc(hello))',
      latencyMs: 4.25,
      path,
    });
    const screen = await render(<ProbeResultView answer={answer} />);
    await expect.element(screen.getByTestId('probe-reply')).toHaveTextContent('worker-1(tc(hello))');
    await expect.element(screen.getByTestId('probe-latency')).toHaveTextContent('4.25 ms');
    await expect.element(screen.getByTestId('probe-result')).toHaveAttribute('data-ok', 'true');
    const steps = screen.getByTestId('probe-path').getByRole('listitem');
    expect(steps.elements().map((e) => e.textContent)).toEqual(path);
    await expect
      .element(screen.getByText('UDP 127.0.0.100:* → 127.0.0.11:8001 (default/gateway)'))
      .toBeVisible();
    expect(screen.getByTestId('probe-failed').query()).toBeNull();
  });

  it('shows what failed, as an alert, and no reply or latency', async () => {
    const answer = ProbeResultSchema.parse({
      ok: false,
      proxy: 'default/gateway',
      listener: 'gateway-user-a-vsvc.default.virtualservice.cluster.local',
      protocol: 'UDP',
      to: '127.0.0.11:8001',
      from: '10.0.0.1:*',
      path: path.slice(0, 2),
      error: '10.0.0.1 is not a loopback address: the probe only sends on this host',
    });
    const screen = await render(<ProbeResultView answer={answer} />);
    await expect.element(screen.getByRole('alert')).toHaveTextContent('10.0.0.1 is not a loopback address');
    await expect.element(screen.getByTestId('probe-result')).toHaveAttribute('data-ok', 'false');
    expect(screen.getByTestId('probe-reply').query()).toBeNull();
    expect(screen.getByTestId('probe-latency').query()).toBeNull();
    expect(screen.getByTestId('probe-path').getByRole('listitem').elements()).toHaveLength(2);
  });
});

const LISTENER = 'gateway-vsvc.default.virtualservice.cluster.local';

function liveWith(listenerOn: string[]): MeshLiveState {
  const proxies = Object.fromEntries(
    listenerOn.map((id) => [
      id,
      {
        id,
        pod: id.split('/')[1]!,
        apiUrl: 'http://127.0.0.10:1234',
        role: 'gateway',
        address: '127.0.0.10',
        reachable: true,
        inSync: true,
        phase: 'in-sync',
        attempts: 0,
        listeners: [LISTENER],
        routes: [],
        clusters: [],
        sessions: { available: true as const, items: [] },
        counters: { pushes: 1, pushFailures: 0, operations: 9, restarts: 0, sessions: 0 },
      },
    ]),
  );
  return {
    version: 1,
    mesh: { source: 'mesh', mode: 'local', loadedAt: '2026-11-26T03:00:00Z' },
    proxies,
    services: {},
    diagnostics: [],
  };
}

function renderPanel(live: MeshLiveState, disabledReason?: string) {
  return render(
    <QueryClientProvider client={new QueryClient()}>
      <ProbePanel listener={LISTENER} live={live} disabledReason={disabledReason} />
    </QueryClientProvider>,
  );
}

describe('ProbePanel', () => {
  it('refuses a malformed client address inline and disables Probe until it is fixed', async () => {
    const screen = await renderPanel(liveWith(['default/gateway-0']));
    await expect.element(screen.getByText('default/gateway-0')).toBeVisible();
    const from = screen.getByTestId('probe-from');
    await from.fill('127.0.0.100:99999');
    await expect
      .element(screen.getByTestId('probe-from-error'))
      .toHaveTextContent('port 99999 is beyond 65535');
    await expect.element(from).toHaveAttribute('aria-invalid', 'true');
    await expect.element(screen.getByTestId('probe-send')).toBeDisabled();
    await from.fill('127.0.0.100:9050');
    expect(screen.getByTestId('probe-from-error').query()).toBeNull();
    await expect.element(screen.getByTestId('probe-send')).toBeEnabled();
  });

  it('says why probing is off, and offers a choice of proxy when the listener runs on several', async () => {
    const screen = await renderPanel(
      liveWith(['default/gateway-0', 'default/gateway-1']),
      'probing needs a session (signed out)',
    );
    await expect.element(screen.getByTestId('probe-send')).toBeDisabled();
    await expect.element(screen.getByText('probing needs a session (signed out)')).toBeVisible();
    const options = screen.getByTestId('probe-proxy').getByRole('option');
    expect(options.elements().map((o) => o.textContent)).toEqual(['default/gateway-0', 'default/gateway-1']);
  });

  it('says where the probe is sent from: the local mesh, or this Meshdeck process in Kubernetes mode', async () => {
    const local = await renderPanel(liveWith(['default/gateway-0']));
    await expect.element(local.getByTestId('probe')).toHaveTextContent('on the local mesh');
    await local.unmount();
    const kube = liveWith(['default/gateway-0']);
    const screen = await renderPanel({ ...kube, mesh: { ...kube.mesh, mode: 'kubernetes' } });
    await expect
      .element(screen.getByTestId('probe'))
      .toHaveTextContent('from this Meshdeck process and wait for the echoes (loopback addresses only');
  });

  it('renders nothing for a listener no running proxy has (a draft-only VirtualService)', async () => {
    const screen = await renderPanel(liveWith([]));
    expect(screen.getByTestId('probe').query()).toBeNull();
  });
});
