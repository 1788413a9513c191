import '@/app/globals.css';
import { useState } from 'react';
import { describe, expect, it } from 'vitest';
import { render } from 'vitest-browser-react';
import { sessionsSummary } from '@/lib/console/proxySessions';
import { toLiveSession } from '@/lib/l7mp/liveSession';
import type { ProxyLiveState } from '@/server/controlPlane/liveState';
import { SessionsList, SessionsToggle } from './ProxySessions';

const NOW = Date.parse('2026-11-26T03:58:10.000Z');
const TC = 'transcoder-vsvc.default.virtualservice.cluster.local';

// The transcoder's session after a probe of seed Example 1, as l7mp 0.5.7 dumped it (trimmed).
const dumped = {
  name: 'WS:::ffff:127.0.0.1:40504-::ffff:127.0.0.20:8888-0',
  metadata: { IP: { src_addr: '::ffff:127.0.0.1' }, TCP: { src_port: 40504, dst_port: 8888 } },
  source: { origin: TC, status: 'READY' },
  destination: {
    origin: `${TC}/rules/0/destination`,
    endpoint: { spec: { address: '/tmp/pods/default/transcoder-0/var/run/sock/uds-echo.sock' } },
    status: 'READY',
  },
  status: 'CONNECTED',
  events: [
    { event: 'INIT', timestamp: '2026-11-26T03:56:10.219Z' },
    { event: 'CONNECT', timestamp: '2026-11-26T03:56:10.224Z' },
  ],
};

function proxy(sessions: ProxyLiveState['sessions']): ProxyLiveState {
  return {
    id: 'default/transcoder-0',
    pod: 'transcoder-0',
    apiUrl: 'http://127.0.0.20:1235',
    role: 'sidecar',
    address: '127.0.0.20',
    reachable: true,
    inSync: true,
    phase: 'in-sync',
    attempts: 0,
    listeners: [TC],
    routes: [],
    clusters: [],
    sessions,
    counters: { pushes: 1, pushFailures: 0, operations: 4, restarts: 0, sessions: 1 },
  };
}

/** The proxies page's cell and detail row, as it wires them. */
function Harness({ p }: { p: ProxyLiveState }) {
  const [open, setOpen] = useState(false);
  return (
    <div>
      <SessionsToggle
        proxy={p}
        summary={sessionsSummary(p)}
        expanded={open}
        controls="list"
        onToggle={() => setOpen(!open)}
      />
      {open ? <SessionsList proxy={p} now={NOW} id="list" /> : null}
    </div>
  );
}

describe('sessions list of a proxy', () => {
  it('opens from the count and shows each session: client, listener, route, destination, age', async () => {
    const screen = await render(
      <Harness
        p={proxy({ available: true, items: [toLiveSession(dumped), { name: 'z', status: 'INIT' }] })}
      />,
    );
    const toggle = screen.getByTestId('sessions-toggle-default/transcoder-0');
    await expect.element(toggle).toHaveTextContent('2 ▸');
    await expect.element(toggle).toHaveAttribute('aria-expanded', 'false');
    expect(screen.getByTestId('session-row').query()).toBeNull();
    await toggle.click();
    await expect.element(toggle).toHaveAttribute('aria-expanded', 'true');
    const rows = screen.getByTestId('session-row');
    await expect.element(rows.first()).toBeVisible();
    expect(rows.elements()).toHaveLength(2);
    const cells = [...rows.elements()[0]!.querySelectorAll('th, td')].map((c) => c.textContent);
    expect(cells).toEqual([
      dumped.name,
      'CONNECTED',
      `127.0.0.1:40504 → ${TC}`,
      '–',
      `${TC}/rules/0/destination (/tmp/pods/default/transcoder-0/var/run/sock/uds-echo.sock)`,
      '2m',
      'CONNECT',
    ]);
    const last = [...rows.elements()[1]!.querySelectorAll('th, td')].map((c) => c.textContent);
    expect(last).toEqual(['z', 'INIT', '–', '–', '–', '–', '–']);
    await toggle.click();
    expect(screen.getByTestId('session-row').query()).toBeNull();
  });

  it('says why l7mp cannot list the sessions, and that it has none when it has none', async () => {
    const reason = 'l7mp 0.5.7 cannot list sessions while a session has an ingress or egress chain (422)';
    const gone = await render(<SessionsList proxy={proxy({ available: false, reason })} now={NOW} />);
    await expect
      .element(gone.getByTestId('sessions-unavailable'))
      .toHaveTextContent(`Sessions unavailable: ${reason}`);
    expect(gone.getByRole('table').query()).toBeNull();
    gone.unmount();
    const none = await render(<SessionsList proxy={proxy({ available: true, items: [] })} now={NOW} />);
    await expect.element(none.getByTestId('sessions-none')).toHaveTextContent('No sessions.');
  });
});
