/**
 * The rollout dialog in Chromium, opened on a canary Target. FAKE routes: window.fetch answers
 * GET /api/rollouts and GET /api/draft/disk from data the test holds, and POST /api/rollouts with the
 * answer the test queues (a 201, the server's 422 with its fields, a 409), so what is tested is what the
 * dialog does with each answer. The real routes are covered by their own tests and
 * e2e/console-rollout.spec.ts.
 */
import '@/app/globals.css';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { render } from 'vitest-browser-react';
import type { DraftCompilation } from '@/lib/console/compileDraft';
import type { DiskState } from '@/lib/console/diskDrift';
import type { GraphEdge, GraphNode } from '@/lib/console/meshGraph';
import type { RolloutState } from '@/lib/rollout/rollout';
import { rolloutIn } from '@/lib/rollout/rolloutFixtures.testutil';
import { RolloutDialog } from './RolloutDialog';

const TARGET = { namespace: 'default', name: 'echo-canary' };

/** What runs: echo-v1 80, echo-v2 20. */
const RUNNING_YAML = `apiVersion: msm.l7mp.io/v1
kind: Target
metadata: { name: echo-canary, namespace: default }
spec:
  split:
    - { serviceName: echo-v1, weight: 80 }
    - { serviceName: echo-v2, weight: 20 }
`;

/** The draft: the sliders moved to 70/30, and the gateway's rule reaching the Target through echo-route. */
function compilationOf(split: { serviceName: string; weight: number }[]): DraftCompilation {
  const node = (id: string) => {
    const [kind, namespace, name] = id.split('/') as [GraphNode['kind'], string, string];
    return { id, kind, namespace, name } as GraphNode;
  };
  const edge = (source: string, target: string, kind: GraphEdge['kind']) =>
    ({ id: `${source}>${target}`, source, target, kind }) as GraphEdge;
  return {
    graph: {
      nodes: ['VirtualService/default/gateway', 'Route/default/echo-route', 'Target/default/echo-canary'].map(
        node,
      ),
      edges: [
        edge('VirtualService/default/gateway', 'Route/default/echo-route', 'rule'),
        edge('Route/default/echo-route', 'Target/default/echo-canary', 'destination'),
      ],
      listeners: {
        'gateway.default.virtualservice.cluster.local': {
          node: 'VirtualService/default/gateway',
          rules: [0],
        },
      },
      clusterNodes: {},
      unattached: [],
    },
    model: { byKey: new Map([['Target/default/echo-canary', [{ value: { spec: { split } } }]]]) },
    diagnostics: [],
  } as unknown as DraftCompilation;
}

let rollouts: RolloutState[] = [];
let answers: { status: number; body: unknown }[] = [];
const posted: unknown[] = [];

function fakeFetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
  const url = String(input);
  const json = (body: unknown, status = 200) =>
    Promise.resolve(
      new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } }),
    );
  if (url.endsWith('/api/rollouts') && init?.method === 'POST') {
    posted.push(JSON.parse(String(init.body)));
    const a = answers.shift() ?? { status: 500, body: { error: 'no answer queued' } };
    if (a.status === 201) rollouts = [(a.body as { rollout: RolloutState }).rollout, ...rollouts];
    return json(a.body, a.status);
  }
  if (url.endsWith('/api/rollouts')) return json({ available: true, rollouts });
  if (url.includes('/api/draft/disk')) {
    const disk: DiskState = {
      baseHash: 'base',
      diskHash: 'disk',
      disk: { files: { 'mesh.yaml': RUNNING_YAML }, layout: {} },
    };
    return json(disk);
  }
  return json({ error: 'not in this test' }, 404);
}

afterEach(() => {
  vi.unstubAllGlobals();
  rollouts = [];
  answers = [];
  posted.length = 0;
});

function show(
  draftSplit = [
    { serviceName: 'echo-v1', weight: 70 },
    { serviceName: 'echo-v2', weight: 30 },
  ],
  noProbes?: string,
) {
  vi.stubGlobal('fetch', fakeFetch);
  return render(
    <QueryClientProvider client={new QueryClient()}>
      <RolloutDialog
        open
        onClose={() => {}}
        target={TARGET}
        compilation={compilationOf(draftSplit)}
        draftId="main"
        diskHash="disk"
        where="the mesh directory /srv/mesh"
        noProbes={noProbes}
      />
    </QueryClientProvider>,
  );
}

describe('RolloutDialog', () => {
  it('opens on the form: what runs, the draft that differs, the canary with the smallest weight, the listener to the Target', async () => {
    const screen = await show();
    await expect.element(screen.getByTestId('rollout-running')).toHaveTextContent('echo-v1 80, echo-v2 20');
    await expect
      .element(screen.getByTestId('rollout-what-runs'))
      .toHaveTextContent('(the mesh directory /srv/mesh), not this draft');
    await expect
      .element(screen.getByTestId('rollout-draft-differs'))
      .toHaveTextContent('echo-v1 70, echo-v2 30');
    await expect.element(screen.getByTestId('rollout-canary')).toHaveValue('echo-v2');
    // Steps above echo-v2's 20% where it runs, not the draft's 30%.
    await expect.element(screen.getByTestId('rollout-steps-input')).toHaveValue('25, 50, 100');
    await expect.element(screen.getByTestId('rollout-listener')).toHaveValue('gateway');
    await screen.getByTestId('rollout-preset-quick').click();
    await expect.element(screen.getByTestId('rollout-steps-input')).toHaveValue('50, 100');
    await expect.element(screen.getByTestId('rollout-start')).toBeEnabled();
  });

  it('says nothing about the draft when its split is what runs', async () => {
    const screen = await show([
      { serviceName: 'echo-v1', weight: 80 },
      { serviceName: 'echo-v2', weight: 20 },
    ]);
    await expect.element(screen.getByTestId('rollout-running')).toBeVisible();
    expect(screen.getByTestId('rollout-draft-differs').query()).toBeNull();
  });

  it('a steps field that does not parse says why on the field, and Start waits for a fix', async () => {
    const screen = await show();
    const steps = screen.getByTestId('rollout-steps-input');
    await steps.fill('50, 25');
    await expect
      .element(screen.getByTestId('rollout-error-steps'))
      .toHaveTextContent('each step must be above the one before (25% after 50%)');
    await expect.element(steps).toHaveAttribute('aria-invalid', 'true');
    await expect
      .element(steps)
      .toHaveAccessibleDescription('each step must be above the one before (25% after 50%)');
    await expect.element(screen.getByTestId('rollout-start')).toBeDisabled();
    await steps.fill('25, 50, ten');
    await expect
      .element(screen.getByTestId('rollout-error-steps'))
      .toHaveTextContent('“ten” is not a whole percentage');
    await steps.fill('50, 100');
    expect(screen.getByTestId('rollout-error-steps').query()).toBeNull();
    await expect.element(screen.getByTestId('rollout-start')).toBeEnabled();
    expect(posted).toEqual([]);
  });

  it('puts the server’s 422 fields on their fields, until they change; a 409 shows its message', async () => {
    const screen = await show();
    answers = [
      {
        status: 422,
        body: {
          error: 'the rollout cannot start',
          fields: [
            { path: 'steps.0', message: "the first step (25%) must be above the canary's share now (30%)" },
            { path: 'analysis.probe.listener', message: 'no proxy runs the listener gateway' },
          ],
        },
      },
      { status: 409, body: { error: 'rollout 20261201T100000Z-prog of default/echo-canary is progressing' } },
    ];
    await screen.getByTestId('rollout-start').click();
    await expect
      .element(screen.getByTestId('rollout-error-steps'))
      .toHaveTextContent("the first step (25%) must be above the canary's share now (30%)");
    await expect
      .element(screen.getByTestId('rollout-error-listener'))
      .toHaveTextContent('no proxy runs the listener gateway');
    await expect.element(screen.getByTestId('rollout-listener')).toHaveAttribute('aria-invalid', 'true');
    expect(posted).toEqual([
      {
        target: TARGET,
        canary: 'echo-v2',
        steps: [25, 50, 100],
        pauseS: 30,
        analysis: { probe: { listener: 'gateway', count: 20, minSuccessPercent: 95 } },
        onFailure: 'rollback',
      },
    ]);
    // Editing the steps takes the server's word off them; the listener's stays.
    await screen.getByTestId('rollout-steps-input').fill('50, 100');
    expect(screen.getByTestId('rollout-error-steps').query()).toBeNull();
    await expect.element(screen.getByTestId('rollout-error-listener')).toBeVisible();

    await screen.getByTestId('rollout-start').click();
    await expect
      .element(screen.getByTestId('rollout-form-error'))
      .toHaveTextContent(/^rollout 20261201T100000Z-prog of default\/echo-canary is progressing$/);
  });

  it('once started, shows the rollout’s progress', async () => {
    const screen = await show();
    answers = [{ status: 201, body: { rollout: rolloutIn('progressing') } }];
    await screen.getByTestId('rollout-pause-s').fill('1');
    await screen.getByTestId('rollout-start').click();
    await expect.element(screen.getByTestId('rollout-progress')).toHaveAttribute('data-phase', 'progressing');
    expect(screen.getByTestId('rollout-form').query()).toBeNull();
    expect((posted[0] as { pauseS: number }).pauseS).toBe(1);
  });

  it('where no probes can be sent (a cluster), starts without them and says why', async () => {
    const why = 'probes are sent from this host only: on a cluster, judge each step by a webhook';
    const screen = await show(undefined, why);
    const probe = screen.getByTestId('rollout-probe');
    await expect.element(probe).not.toBeChecked();
    await expect.element(probe).toBeDisabled();
    await expect.element(screen.getByTestId('rollout-form')).toHaveTextContent(why);
    expect(screen.getByTestId('rollout-listener').query()).toBeNull();
    answers = [{ status: 201, body: { rollout: rolloutIn('progressing') } }];
    await screen.getByTestId('rollout-webhook').fill('https://ci.example/judge');
    await screen.getByTestId('rollout-start').click();
    await expect.element(screen.getByTestId('rollout-progress')).toBeVisible();
    expect((posted[0] as { analysis: unknown }).analysis).toEqual({
      webhook: { url: 'https://ci.example/judge' },
    });
  });

  it('judges by the gRPC clients’ load reports: its defaults, an inline error, the server’s 422 under it', async () => {
    const screen = await show();
    expect(screen.getByTestId('rollout-grpc-min-success').query()).toBeNull();
    const grpc = screen.getByTestId('rollout-grpc');
    await expect.element(grpc).not.toBeChecked();
    await grpc.click();
    await expect.element(screen.getByTestId('rollout-grpc-min-success')).toHaveValue('99');
    const minRequests = screen.getByTestId('rollout-grpc-min-requests');
    await expect.element(minRequests).toHaveValue('20');
    await minRequests.fill('0');
    await expect.element(screen.getByTestId('rollout-error-grpcMinRequests')).toHaveTextContent(/1/);
    await expect.element(minRequests).toHaveAttribute('aria-invalid', 'true');
    await expect.element(screen.getByTestId('rollout-start')).toBeDisabled();
    await minRequests.fill('40');
    await expect.element(screen.getByTestId('rollout-start')).toBeEnabled();
    const why =
      'no proxyless gRPC client (a pod labelled msm.l7mp.io/proxy: grpc) routes to Target default/echo-canary';
    answers = [
      { status: 422, body: { error: why, fields: [{ path: 'analysis.grpc', message: why }] } },
      { status: 201, body: { rollout: rolloutIn('progressing') } },
    ];
    await screen.getByTestId('rollout-start').click();
    await expect.element(screen.getByTestId('rollout-error-grpc')).toHaveTextContent(why);
    await expect.element(grpc).toHaveAccessibleDescription(why);
    expect((posted[0] as { analysis: unknown }).analysis).toEqual({
      probe: { listener: 'gateway', count: 20, minSuccessPercent: 95 },
      grpc: { minSuccessPercent: 99, minRequests: 40 },
    });
    // Unticked, the server's word goes with it, and the next start has no gRPC analysis.
    await grpc.click();
    expect(screen.getByTestId('rollout-error-grpc').query()).toBeNull();
    expect(screen.getByTestId('rollout-grpc-min-requests').query()).toBeNull();
    await screen.getByTestId('rollout-start').click();
    await expect.element(screen.getByTestId('rollout-progress')).toBeVisible();
    expect((posted[1] as { analysis: unknown }).analysis).toEqual({
      probe: { listener: 'gateway', count: 20, minSuccessPercent: 95 },
    });
  });
});
