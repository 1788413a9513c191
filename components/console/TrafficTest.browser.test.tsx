/**
 * A traffic test's result in Chromium, drawn from TrafficTestResult values as POST /api/probe/burst
 * answers them (checked with the schema): the summary, the latency, the split's configured against
 * observed shares with bars as wide as the shares, the answers by pod, the failures, the region's room
 * while it runs, and the probe form's count field.
 */
import '@/app/globals.css';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { afterEach, describe, expect, it } from 'vitest';
import { render } from 'vitest-browser-react';
import { type TrafficTestResult, TrafficTestResultSchema } from '@/lib/console/trafficTest';
import type { MeshLiveState } from '@/server/controlPlane/liveState';
import { ApiError } from './api';
import { ProbePanel } from './ProbePanel';
import { TrafficTestArea, TrafficTestResultView } from './TrafficTest';

const LISTENER = 'gateway.default.virtualservice.cluster.local';

/** 100 probes through the canary's gateway, 80/20 configured, the canary ahead of its weight. */
const canary: TrafficTestResult = TrafficTestResultSchema.parse({
  proxy: 'default/gateway-0',
  listener: LISTENER,
  protocol: 'UDP',
  to: '127.0.0.10:9100',
  from: '127.0.0.100:*',
  path: ['listener gateway.default.virtualservice.cluster.local (UDP)', 'rule 0 (catch-all)'],
  sent: 100,
  answered: 98,
  successPercent: 98,
  latency: { p50Ms: 1.234, p90Ms: 3.5, p99Ms: 12.6, maxMs: 20.4 },
  byPod: { 'echo-v1-0': 64, 'echo-v2-0': 34 },
  split: {
    target: { namespace: 'default', name: 'echo-canary' },
    backends: [
      { name: 'echo-v1', configuredPercent: 80, answered: 64, observedPercent: 65.3, off: false },
      { name: 'echo-v2', configuredPercent: 20, answered: 34, observedPercent: 34.7, off: false },
    ],
    other: 0,
  },
  errors: [{ message: 'no echo within 1000 ms', count: 2 }],
  durationMs: 412.3,
});

/** The same listener with no split on the way: answers by pod, none answered fast enough for a latency. */
const noSplit: TrafficTestResult = TrafficTestResultSchema.parse({
  ...canary,
  sent: 10,
  answered: 0,
  successPercent: 0,
  latency: undefined,
  byPod: {},
  split: undefined,
  errors: [
    { message: 'no echo within 1000 ms', count: 7 },
    { message: 'ECONNREFUSED 127.0.0.10:9100', count: 3 },
  ],
  durationMs: 1003,
});

afterEach(() => {
  document.documentElement.removeAttribute('data-theme');
});

/** At the width of the Probe section's content in the Inspector at 1280 px (30vw less the paddings). */
const at = (node: React.ReactNode) => <div style={{ width: 340 }}>{node}</div>;

function show(node: React.ReactNode) {
  return render(at(node));
}

/** How much of its track a bar fills, in percent (rounded to one decimal). */
function filled(bar: Element): number {
  const track = bar.parentElement!.getBoundingClientRect().width;
  return Math.round((bar.getBoundingClientRect().width / track) * 1000) / 10;
}

describe('TrafficTestResultView', () => {
  it('says how many answered, how fast, and each backend of the split configured against observed', async () => {
    const screen = await show(<TrafficTestResultView result={canary} />);
    await expect
      .element(screen.getByTestId('traffic-summary'))
      .toHaveTextContent(/^98 of 100 answered \(98%\) in 412 ms$/);
    await expect
      .element(screen.getByTestId('traffic-latency'))
      .toHaveTextContent(/^p50 1\.2 · p90 3\.5 · p99 13 · max 20 ms$/);
    await expect
      .element(screen.getByTestId('traffic-sent'))
      .toHaveTextContent(/^UDP 127.0.0.100:\* → 127.0.0.10:9100$/);
    await expect
      .element(screen.getByTestId('traffic-sent'))
      .toHaveAttribute('title', 'UDP 127.0.0.100:* → 127.0.0.10:9100 through default/gateway-0');
    const table = screen.getByRole('table', {
      name: /^Split of default\/echo-canary\s*: configured against observed$/,
    });
    await expect.element(table).toBeVisible();
    // The bar rows are hidden from the accessibility tree: the numbers say it.
    const rows = table.getByRole('row').elements();
    expect(rows.map((r) => [...r.querySelectorAll('th, td')].map((c) => c.textContent))).toEqual([
      ['backend', 'configured', 'observed', 'answered'],
      ['echo-v1', '80%', '65.3%', '64'],
      ['echo-v2', '20%', '34.7%', '34'],
    ]);
    await expect
      .element(screen.getByTestId('traffic-errors'))
      .toHaveTextContent(/^2 × no echo within 1000 ms$/);
    // With a split, the backends say where the answers came from; no pod table, no "other".
    expect(screen.getByTestId('traffic-pods').query()).toBeNull();
    expect(screen.getByTestId('traffic-other').query()).toBeNull();
  });

  it('marks a backend further from its weight than chance allows, and says what it may mean', async () => {
    const screen = await show(
      <TrafficTestResultView
        result={{
          ...canary,
          byPod: { 'echo-v1-0': 49, 'echo-v2-0': 49 },
          split: {
            ...canary.split!,
            backends: [
              { name: 'echo-v1', configuredPercent: 80, answered: 49, observedPercent: 50, off: true },
              { name: 'echo-v2', configuredPercent: 20, answered: 49, observedPercent: 50, off: true },
            ],
          },
        }}
      />,
    );
    const observed = screen.getByTestId('traffic-observed').elements();
    expect(observed.map((c) => c.textContent)).toEqual(['50% ≠', '50% ≠']);
    expect(observed[0]!.getAttribute('title')).toBe(
      'Further from the configured 80% than chance allows over 98 answers',
    );
    expect(observed[0]!.className).toContain('tone-warn');
    await expect.element(screen.getByTestId('traffic-off')).toHaveTextContent(/^≠: further from the weight/);
    await screen.unmount();
    // Within chance: no mark, no note.
    const fine = await show(<TrafficTestResultView result={canary} />);
    await expect.element(fine.getByTestId('traffic-split')).toBeVisible();
    expect(fine.getByTestId('traffic-off').query()).toBeNull();
    expect(fine.getByTestId('traffic-observed').elements()[0]!.getAttribute('data-off')).toBeNull();
  });

  it('draws each bar as wide as its share of the track, configured above observed', async () => {
    const screen = await show(<TrafficTestResultView result={canary} />);
    await expect.element(screen.getByTestId('traffic-split')).toBeVisible();
    const widths = (testId: string) => screen.getByTestId(testId).elements().map(filled);
    // Half a pixel of a 340 px track is about 0.15%.
    const near = (want: number[]) => (got: number[]) =>
      got.length === want.length && got.every((g, i) => Math.abs(g - want[i]!) <= 0.5);
    expect(widths('traffic-bar-configured')).toSatisfy(near([80, 20]));
    expect(widths('traffic-bar-observed')).toSatisfy(near([65.3, 34.7]));
    // A share past 100 (a bad answer) stays inside its track.
    await screen.unmount();
    const over = await show(
      <TrafficTestResultView
        result={{
          ...canary,
          split: {
            ...canary.split!,
            backends: [
              { name: 'echo-v1', configuredPercent: 100, answered: 5, observedPercent: 250, off: false },
            ],
          },
        }}
      />,
    );
    expect(over.getByTestId('traffic-bar-observed').elements().map(filled)).toEqual([100]);
  });

  it('says how many answers came from pods of no backend', async () => {
    const screen = await show(
      <TrafficTestResultView result={{ ...canary, split: { ...canary.split!, other: 3 } }} />,
    );
    await expect
      .element(screen.getByTestId('traffic-other'))
      .toHaveTextContent('3 answers from pods of no backend of the split');
  });

  it('without a split: the answers by pod, most first; with none answered, no latency and every failure', async () => {
    const screen = await show(
      <TrafficTestResultView
        result={{ ...canary, split: undefined, byPod: { 'worker-1': 3, 'worker-0': 40, other: 1 } }}
      />,
    );
    const pods = screen.getByRole('table', { name: 'Answers by pod' });
    expect(
      pods
        .getByRole('row')
        .elements()
        .map((r) => r.textContent),
    ).toEqual(['podanswered', 'worker-040', 'worker-13', 'other1']);
    expect(screen.getByTestId('traffic-split').query()).toBeNull();

    await screen.unmount();
    const none = await show(<TrafficTestResultView result={noSplit} />);
    await expect
      .element(none.getByTestId('traffic-summary'))
      .toHaveTextContent(/^0 of 10 answered \(0%\) in 1003 ms$/);
    await expect.element(none.getByTestId('traffic-latency')).toHaveTextContent(/^none answered$/);
    expect(none.getByTestId('traffic-pods').query()).toBeNull();
    expect(
      none
        .getByTestId('traffic-errors')
        .getByRole('listitem')
        .elements()
        .map((e) => e.textContent),
    ).toEqual(['7 × no echo within 1000 ms', '3 × ECONNREFUSED 127.0.0.10:9100']);
  });

  it('keeps the bars visible against their tracks in both themes', async () => {
    const screen = await show(<TrafficTestResultView result={canary} />);
    await expect.element(screen.getByTestId('traffic-split')).toBeVisible();
    for (const theme of ['dark', 'light']) {
      document.documentElement.setAttribute('data-theme', theme);
      const bar = (id: string) => getComputedStyle(screen.getByTestId(id).elements()[0]!).backgroundColor;
      const track = getComputedStyle(
        screen.getByTestId('traffic-bar-observed').elements()[0]!.parentElement!,
      ).backgroundColor;
      const colours = [bar('traffic-bar-configured'), bar('traffic-bar-observed'), track];
      expect(new Set(colours).size, `${theme}: ${colours.join(', ')}`).toBe(3);
    }
  });
});

describe('TrafficTestArea', () => {
  it('a polite live region: what it will do, "Sending N probes…" while it runs, then the result, in the same room', async () => {
    const screen = await show(
      <TrafficTestArea count={100} pending={false} error={null} result={undefined} />,
    );
    const area = screen.getByTestId('traffic-test');
    await expect.element(area).toHaveAttribute('aria-live', 'polite');
    await expect.element(area).toHaveAttribute('data-state', 'idle');
    await expect.element(screen.getByTestId('traffic-idle')).toHaveTextContent(/^100 probes through/);
    const idle = area.element().getBoundingClientRect().height;

    await screen.rerender(at(<TrafficTestArea count={100} pending error={null} result={undefined} />));
    await expect.element(screen.getByTestId('traffic-sending')).toHaveTextContent(/^Sending 100 probes…$/);
    await expect.element(area).toHaveAttribute('data-state', 'sending');
    expect(area.element().getBoundingClientRect().height).toBe(idle);

    const answered = { ...canary, answered: 100, successPercent: 100, errors: [] };
    await screen.rerender(at(<TrafficTestArea count={100} pending={false} error={null} result={answered} />));
    await expect.element(screen.getByTestId('traffic-summary')).toBeVisible();
    expect(screen.getByTestId('traffic-sending').query()).toBeNull();
    // A two-backend split, all answered, fits the room kept for it: the Inspector below does not move.
    expect(area.element().getBoundingClientRect().height).toBe(idle);
    // So does a slow run's: its longer figures stay on one line (a loaded CI machine wrapped them).
    const slow = {
      ...answered,
      durationMs: 61234.5,
      latency: { p50Ms: 1234.5, p90Ms: 2345.6, p99Ms: 2987.6, maxMs: 2999.9 },
      from: '127.0.0.100:*',
      to: '127.0.0.10:19100',
    };
    await screen.rerender(at(<TrafficTestArea count={100} pending={false} error={null} result={slow} />));
    await expect
      .element(screen.getByTestId('traffic-latency'))
      .toHaveAttribute('title', 'p50 1235 · p90 2346 · p99 2988 · max 3000 ms');
    expect(area.element().getBoundingClientRect().height).toBe(idle);
    // Failures take more room.
    await screen.rerender(at(<TrafficTestArea count={100} pending={false} error={null} result={canary} />));
    await expect.element(screen.getByTestId('traffic-errors')).toBeVisible();
    expect(area.element().getBoundingClientRect().height).toBeGreaterThan(idle);

    // Again: the last result stays, dimmed, under "Sending…" (its summary line is the status's).
    await screen.rerender(at(<TrafficTestArea count={50} pending error={null} result={answered} />));
    await expect.element(screen.getByTestId('traffic-sending')).toHaveTextContent('Sending 50 probes…');
    await expect.element(screen.getByTestId('traffic-result')).toHaveAttribute('data-stale', 'true');
    expect(screen.getByTestId('traffic-summary').query()).toBeNull();
    expect(area.element().getBoundingClientRect().height).toBe(idle);
  });

  it("shows the server's refusal with its field errors, as an alert", async () => {
    const error = new ApiError(
      400,
      'POST /api/probe/burst answered 400: invalid request',
      '/api/probe/burst',
      {
        error: 'invalid request',
        fields: [{ path: 'count', message: 'Too big: expected number to be <=1000' }],
      },
    );
    const screen = await show(<TrafficTestArea count={100} pending={false} error={error} result={canary} />);
    await expect
      .element(screen.getByRole('alert'))
      .toHaveTextContent(
        'POST /api/probe/burst answered 400: invalid requestcount: Too big: expected number to be <=1000',
      );
    await expect.element(screen.getByTestId('traffic-test')).toHaveAttribute('data-state', 'failed');
    expect(screen.getByTestId('traffic-result').query()).toBeNull();
  });
});

function live(): MeshLiveState {
  return {
    version: 1,
    mesh: { source: 'mesh', mode: 'local', loadedAt: '2026-11-26T03:00:00Z' },
    proxies: {
      'default/gateway-0': {
        id: 'default/gateway-0',
        pod: 'gateway-0',
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
    },
    services: {},
    diagnostics: [],
  };
}

describe("the probe form's count", () => {
  it('1 is the single probe; more is a traffic test; anything but a whole number from 1 to 1000 is said inline', async () => {
    const screen = await render(
      <QueryClientProvider client={new QueryClient()}>
        <ProbePanel listener={LISTENER} live={live()} />
      </QueryClientProvider>,
    );
    const count = screen.getByLabelText('Probes to send');
    await expect.element(count).toHaveValue('1');
    await expect.element(screen.getByTestId('probe-send')).toHaveTextContent(/^Probe$/);
    expect(screen.getByTestId('traffic-test').query()).toBeNull();

    for (const [text, message] of [
      ['0', 'at least 1 probe'],
      ['1001', 'at most 1000 probes in one test'],
      ['2.5', '"2.5" is not a whole number of probes'],
      ['', 'how many probes: 1 to 1000'],
    ] as const) {
      await count.fill(text);
      await expect.element(screen.getByTestId('probe-count-error')).toHaveTextContent(message);
      await expect.element(count).toHaveAttribute('aria-invalid', 'true');
      await expect.element(count).toHaveAccessibleDescription(message);
      await expect.element(screen.getByTestId('traffic-send')).toBeDisabled();
      await expect.element(screen.getByTestId('traffic-send')).toHaveTextContent(/^Send probes$/);
    }

    await count.fill('100');
    expect(screen.getByTestId('probe-count-error').query()).toBeNull();
    await expect.element(count).toHaveAttribute('aria-invalid', 'false');
    await expect.element(screen.getByTestId('traffic-send')).toBeEnabled();
    await expect.element(screen.getByTestId('traffic-send')).toHaveTextContent(/^Send 100 probes$/);
    await expect.element(screen.getByTestId('traffic-idle')).toHaveTextContent(/^100 probes through/);

    await count.fill('1');
    await expect.element(screen.getByTestId('probe-send')).toHaveTextContent(/^Probe$/);
    expect(screen.getByTestId('traffic-test').query()).toBeNull();
  });
});
