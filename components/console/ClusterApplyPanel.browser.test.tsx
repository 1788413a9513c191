import '@/app/globals.css';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { page } from 'vitest/browser';
import { render } from 'vitest-browser-react';
import {
  applyAnswer,
  CONFLICT,
  CREATE,
  DELETE,
  DENIED,
  dryRun,
  FORBIDDEN,
  INVALID,
  ORPHAN,
  SKIPPED,
  UNCHANGED,
  UPDATE,
} from '@/lib/console/clusterApplyFixtures.testutil';
import { ClusterApplyPanel, useClusterApply } from './ClusterApplyPanel';

/**
 * FAKE cluster routes: window.fetch answers POST /api/cluster/dry-run and /api/cluster/apply from a
 * script, and records each request. The real routes are covered by server/kube/clusterApply.integration
 * tests and the end-to-end spec against a real kube-apiserver; this test is about what the panel shows.
 */
interface Call {
  url: string;
  body: unknown;
}
type Answer = { status: number; body: unknown };

function fakeClusterRoutes(script: { dryRun: (body: Record<string, unknown>) => Answer; apply?: Answer[] }) {
  const calls: Call[] = [];
  const applies = [...(script.apply ?? [])];
  const fake = vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = String(input);
    const body = init?.body ? (JSON.parse(String(init.body)) as Record<string, unknown>) : {};
    calls.push({ url, body });
    const answer: Answer = url.startsWith('/api/cluster/dry-run')
      ? script.dryRun(body)
      : url.startsWith('/api/cluster/apply')
        ? (applies.shift() ?? { status: 500, body: { error: 'the fake has no more apply answers' } })
        : { status: 404, body: { error: 'no such route in the fake' } };
    return new Response(JSON.stringify(answer.body), {
      status: answer.status,
      headers: { 'content-type': 'application/json' },
    });
  });
  vi.stubGlobal('fetch', fake);
  return {
    calls,
    dryRuns: () => calls.filter((c) => c.url.startsWith('/api/cluster/dry-run')).map((c) => c.body),
    applies: () => calls.filter((c) => c.url.startsWith('/api/cluster/apply')).map((c) => c.body),
  };
}

afterEach(() => {
  vi.unstubAllGlobals();
});

const CLUSTER = { server: 'https://127.0.0.1:6443', namespace: 'default', leading: true };

function Harness(p: {
  flush: () => Promise<number | null>;
  onOpenPullRequest?(): void;
  onReviewCluster?(): void;
}) {
  const controller = useClusterApply(p.flush, 'feature-x');
  return (
    <>
      {/* Stands in for the toolbar's Apply button. */}
      <button type="button" onClick={() => void controller.open()}>
        Apply
      </button>
      <ClusterApplyPanel
        controller={controller}
        cluster={CLUSTER}
        onOpenPullRequest={p.onOpenPullRequest ?? (() => {})}
        {...(p.onReviewCluster ? { onReviewCluster: p.onReviewCluster } : {})}
      />
    </>
  );
}

async function openPanel(p: Parameters<typeof Harness>[0]) {
  await page.viewport(1100, 900);
  const screen = await render(<Harness {...p} />);
  await screen.getByRole('button', { name: 'Apply', exact: true }).click();
  const dialog = screen.getByRole('dialog', { name: 'Apply to cluster' });
  await expect.element(dialog).toBeVisible();
  return { screen, dialog };
}

describe('ClusterApplyPanel', () => {
  it('saves, dry-runs, shows target, user, actions and diff, then applies the reviewed revision', async () => {
    const flush = vi.fn(async () => 7);
    const rows = [UNCHANGED, SKIPPED, UPDATE, CREATE];
    const fake = fakeClusterRoutes({
      dryRun: () => ({ status: 200, body: dryRun(rows) }),
      apply: [{ status: 200, body: applyAnswer(rows, (o) => o.action !== 'skipped') }],
    });
    const { dialog } = await openPanel({ flush });
    await expect.element(dialog.getByRole('heading', { name: 'Apply to cluster' })).toBeVisible();
    await expect
      .element(dialog.getByTestId('cluster-apply-summary'))
      .toHaveTextContent('Dry-run of revision 7: 1 to create, 1 to update, 1 unchanged, 1 skipped');
    expect(flush).toHaveBeenCalledTimes(1);
    expect(fake.calls.map((c) => c.url)).toEqual(['/api/cluster/dry-run?draft=feature-x']);
    expect(fake.dryRuns()).toEqual([{ force: false, prune: false }]);

    const target = dialog.getByTestId('cluster-apply-target');
    await expect.element(target).toHaveTextContent('https://127.0.0.1:6443');
    await expect.element(target).toHaveTextContent('Namespacedefault');
    await expect
      .element(dialog.getByTestId('cluster-apply-user'))
      .toHaveTextContent('alice@example.com (groups: mesh-editors, system:authenticated)');

    const actions = dialog.getByTestId('cluster-object').elements();
    expect(actions.map((e) => e.getAttribute('data-action'))).toEqual([
      'create',
      'update',
      'unchanged',
      'skipped',
    ]);
    expect(actions[0]!.textContent).toMatch(/^create\s*Route default\/user-route mesh.yaml:30/);
    await expect
      .element(dialog.getByRole('list', { name: 'Changes to VirtualService default/transcoder-vsvc' }))
      .toHaveTextContent('spec.listener.spec.websocket.port: 8888 → 8889');
    // Skipped objects (a Kubernetes-mode draft's Pods and Services) are folded away, one click to see.
    const note = dialog.getByText('Pod objects are not applied to the cluster from the console');
    await expect.element(note).not.toBeVisible();
    await dialog.getByText('1 skipped: Pod objects are not applied from the console').click();
    await expect.element(note).toBeVisible();
    await page.screenshot({ path: '../../test-results/cluster-apply-panel-review.png' });

    const apply = dialog.getByRole('button', { name: 'Apply to cluster' });
    await expect.element(apply).toBeEnabled();
    await apply.click();
    await expect
      .element(dialog.getByRole('status').filter({ hasText: 'Applied to the cluster' }))
      .toHaveTextContent(
        'Applied to the cluster (revision 7): 1 created, 1 updated, 1 unchanged, 1 skipped.',
      );
    expect(fake.applies()).toEqual([{ revision: 7, force: false, prune: false }]);
    expect(fake.calls[1]!.url).toBe('/api/cluster/apply?draft=feature-x');
    await expect
      .element(dialog.getByTestId('cluster-object').first())
      .toHaveTextContent('created Route default/user-route');
    // Applied: no second Apply of the same revision from this review.
    expect(dialog.getByRole('button', { name: 'Apply to cluster' }).query()).toBeNull();
    await page.screenshot({ path: '../../test-results/cluster-apply-panel-applied.png' });
  });

  it('a draft behind the cluster: names what changed there; Apply waits for Overwrite, which it then sends', async () => {
    const onReviewCluster = vi.fn();
    const rows = [UPDATE];
    const behind = {
      ...dryRun(rows),
      clusterChanges: [
        {
          key: 'Route/default/user-route',
          kind: 'Route',
          namespace: 'default',
          name: 'user-route',
          change: 'modified',
          fields: ['spec.retry.num_retries'],
          draftChanged: false,
        },
        {
          key: 'Target/default/new-target',
          kind: 'Target',
          namespace: 'default',
          name: 'new-target',
          change: 'added',
          fields: [],
          draftChanged: false,
        },
      ],
    };
    const fake = fakeClusterRoutes({
      dryRun: () => ({ status: 200, body: behind }),
      apply: [{ status: 200, body: applyAnswer(rows, () => true) }],
    });
    const { dialog } = await openPanel({ flush: async () => 7, onReviewCluster });
    const banner = dialog.getByTestId('cluster-apply-behind');
    await expect
      .element(banner)
      .toHaveTextContent(
        'Route default/user-route (modified in the cluster: spec.retry.num_retries): applying the draft reverts it',
      );
    await expect
      .element(banner)
      .toHaveTextContent(
        'Target default/new-target (added in the cluster): not in your draft: Prune deletes it if Meshdeck applied it',
      );
    const apply = dialog.getByRole('button', { name: 'Apply to cluster' });
    await expect.element(apply).toBeDisabled();
    await expect
      .element(dialog.getByTestId('cluster-apply-blockers'))
      .toHaveTextContent('1 object changed in the cluster since this draft started');
    await page.screenshot({ path: '../../test-results/cluster-apply-panel-behind.png' });
    await dialog.getByRole('button', { name: 'Review and rebase the draft' }).click();
    expect(onReviewCluster).toHaveBeenCalledTimes(1);

    await dialog.getByRole('checkbox', { name: 'Overwrite (undo that change)' }).click();
    await expect.element(apply).toBeEnabled();
    // Overwrite answers this dry-run's list: no new dry-run for it.
    expect(fake.dryRuns()).toHaveLength(1);
    await apply.click();
    await expect
      .element(dialog.getByRole('status').filter({ hasText: 'Applied to the cluster' }))
      .toBeVisible();
    expect(fake.applies()).toEqual([{ revision: 7, force: false, prune: false, overwrite: true }]);
  });

  it('shows a conflict with the other manager and its field; Force re-runs the dry-run and enables Apply', async () => {
    const forced = {
      ...CONFLICT,
      action: 'update' as const,
      conflicts: [],
      diff: [{ path: 'spec.listener.spec.websocket.port', before: 9999, after: 8888 }],
    };
    const fake = fakeClusterRoutes({
      dryRun: (b) => ({ status: 200, body: dryRun(b.force ? [CREATE, forced] : [CREATE, CONFLICT]) }),
      apply: [{ status: 200, body: applyAnswer([CREATE, forced], () => true) }],
    });
    const { dialog } = await openPanel({ flush: async () => 7 });
    await expect
      .element(dialog.getByTestId('cluster-apply-summary'))
      .toHaveTextContent('1 to create, 1 conflict');
    const conflicts = dialog.getByRole('list', { name: 'Conflicts of VirtualService default/gateway-vsvc' });
    await expect.element(conflicts).toHaveTextContent('kubectl owns spec.listener.spec.websocket.port');
    const apply = dialog.getByRole('button', { name: 'Apply to cluster' });
    await expect.element(apply).toBeDisabled();
    await expect
      .element(apply)
      .toHaveAccessibleDescription(/fields another manager owns: choose Force to take them over/);
    await page.screenshot({ path: '../../test-results/cluster-apply-panel-conflict.png' });

    const force = dialog.getByRole('checkbox', { name: 'Force (take over these fields)' });
    await expect.element(force).not.toBeChecked();
    await force.click();
    await expect
      .element(dialog.getByTestId('cluster-apply-summary'))
      .toHaveTextContent('1 to create, 1 to update');
    expect(fake.dryRuns()).toEqual([
      { force: false, prune: false },
      { force: true, prune: false },
    ]);
    await expect.element(force).toBeChecked();
    await expect
      .element(dialog.getByTestId('cluster-apply-taken-over'))
      .toHaveTextContent(
        'VirtualService default/gateway-vsvc: kubectl owns spec.listener.spec.websocket.port',
      );
    await expect.element(apply).toBeEnabled();
    await apply.click();
    await expect.element(dialog.getByTestId('cluster-apply-result')).toBeVisible();
    expect(fake.applies()).toEqual([{ revision: 7, force: true, prune: false }]);
  });

  it("shows the API server's validation error with the field path and the object; Apply stays disabled", async () => {
    fakeClusterRoutes({ dryRun: () => ({ status: 200, body: dryRun([CREATE, INVALID]) }) });
    const { dialog } = await openPanel({ flush: async () => 7 });
    const errors = dialog.getByRole('list', { name: 'Errors of Route default/bad-port' });
    await expect
      .element(errors)
      .toHaveTextContent(
        'spec.destination.tcp.port: Invalid value: 70000: spec.destination.tcp.port in body should be less than or equal to 65535',
      );
    await expect.element(errors.getByText('spec.destination.tcp.port', { exact: true })).toBeVisible();
    const row = dialog.getByTestId('cluster-object').first();
    await expect.element(row).toHaveAttribute('data-action', 'error');
    await expect.element(row).toHaveTextContent(/^invalid\s*Route default\/bad-port mesh.yaml:40/);
    await expect.element(dialog.getByRole('button', { name: 'Apply to cluster' })).toBeDisabled();
    await expect
      .element(dialog.getByTestId('cluster-apply-blockers'))
      .toHaveTextContent('1 object is invalid: fix it in the draft.');
    // No conflict: no Force to offer.
    expect(dialog.getByRole('checkbox', { name: /Force/ }).query()).toBeNull();
  });

  it('without RBAC access: no Apply, the denied verbs per resource, and Open PR', async () => {
    fakeClusterRoutes({ dryRun: () => ({ status: 200, body: dryRun([FORBIDDEN, CREATE], DENIED) }) });
    const onOpenPullRequest = vi.fn();
    const { dialog } = await openPanel({ flush: async () => 7, onOpenPullRequest });
    await expect
      .element(dialog.getByRole('heading', { name: 'You cannot apply to this cluster' }))
      .toBeVisible();
    expect(dialog.getByRole('button', { name: 'Apply to cluster' }).query()).toBeNull();
    const denied = dialog.getByTestId('cluster-apply-denied');
    await expect
      .element(denied)
      .toHaveTextContent(
        'Kubernetes RBAC does not let bob@example.com patch and create virtualservices.msm.l7mp.io in default; patch and create services in default.',
      );
    const cells = denied
      .getByRole('row')
      .elements()
      .map((r) => r.textContent);
    expect(cells).toEqual([
      'ResourceNamespaceDenied verbs',
      'virtualservices.msm.l7mp.iodefaultpatch, create',
      'servicesdefaultpatch, create',
    ]);
    await expect.element(dialog.getByTestId('cluster-apply-user')).toHaveTextContent('bob@example.com');
    await expect
      .element(dialog.getByTestId('cluster-object').first())
      .toHaveTextContent('User "bob@example.com" cannot patch resource "virtualservices"');
    await page.screenshot({ path: '../../test-results/cluster-apply-panel-denied.png' });
    await dialog.getByRole('button', { name: 'Open PR' }).click();
    expect(onOpenPullRequest).toHaveBeenCalledTimes(1);
  });

  it('Prune re-runs the dry-run with prune and lists the delete', async () => {
    const fake = fakeClusterRoutes({
      dryRun: (b) => ({ status: 200, body: dryRun(b.prune ? [UPDATE, DELETE] : [UPDATE, ORPHAN]) }),
    });
    const { dialog } = await openPanel({ flush: async () => 7 });
    await expect
      .element(dialog.getByTestId('cluster-apply-summary'))
      .toHaveTextContent('1 to update, 1 no longer in the draft');
    await expect
      .element(dialog.getByText('the draft no longer has it; applied with prune it is deleted'))
      .toBeVisible();
    const prune = dialog.getByRole('checkbox', { name: 'Prune' });
    await expect
      .element(prune)
      .toHaveAccessibleDescription('delete objects Meshdeck applied that the draft removed');
    await prune.click();
    await expect
      .element(dialog.getByTestId('cluster-apply-summary'))
      .toHaveTextContent('1 to update, 1 to delete');
    expect(fake.dryRuns()).toEqual([
      { force: false, prune: false },
      { force: false, prune: true },
    ]);
    const row = dialog.getByTestId('cluster-object').nth(1);
    await expect.element(row).toHaveTextContent(/^delete \(prune\)\s*Route default\/old-route/);
    await expect.element(prune).toBeChecked();
  });

  it('a stale revision says so and Review again saves and dry-runs anew; nothing else is touched', async () => {
    let revision = 7;
    const flush = vi.fn(async () => revision);
    const fake = fakeClusterRoutes({
      dryRun: () => ({ status: 200, body: dryRun([UPDATE], undefined, revision) }),
      apply: [
        {
          status: 409,
          body: {
            error: 'the draft is at revision 8, not 7: review the dry-run again, then apply',
            revision: 8,
          },
        },
      ],
    });
    const { dialog } = await openPanel({ flush });
    await expect.element(dialog.getByTestId('cluster-apply-revision')).toHaveTextContent('7');
    await dialog.getByRole('button', { name: 'Apply to cluster' }).click();
    const alert = dialog.getByRole('alert');
    await expect.element(alert).toHaveTextContent('The draft changed since the dry-run: review again');
    await expect.element(alert).toHaveTextContent('the draft is at revision 8, not 7');
    await expect.element(alert).toHaveTextContent('The draft is kept.');
    revision = 8;
    await dialog.getByRole('button', { name: 'Review again' }).click();
    await expect.element(dialog.getByTestId('cluster-apply-revision')).toHaveTextContent('8');
    expect(flush).toHaveBeenCalledTimes(2);
    expect(dialog.getByRole('alert').query()).toBeNull();
    await dialog.getByRole('button', { name: 'Apply to cluster' }).click();
    expect(fake.applies()[0]).toEqual({ revision: 7, force: false, prune: false });
  });

  it('a partial apply (502) says what was applied and what failed', async () => {
    const rows = [CREATE, UPDATE];
    const partial = applyAnswer(rows, (o) => o === CREATE);
    partial.objects[1] = { ...partial.objects[1]!, action: 'error', error: FORBIDDEN.error };
    fakeClusterRoutes({
      dryRun: () => ({ status: 200, body: dryRun(rows) }),
      apply: [{ status: 502, body: partial }],
    });
    const { dialog } = await openPanel({ flush: async () => 7 });
    await dialog.getByRole('button', { name: 'Apply to cluster' }).click();
    const alert = dialog.getByRole('alert');
    await expect
      .element(alert)
      .toHaveTextContent('Partly applied: some writes failed after the dry-run passed');
    await expect
      .element(alert)
      .toHaveTextContent(
        'Applied: Route default/user-route. Failed: VirtualService default/transcoder-vsvc.',
      );
    await expect.element(dialog.getByRole('heading', { name: 'Result per object' })).toBeVisible();
    await expect
      .element(dialog.getByTestId('cluster-object').first())
      .toHaveTextContent('not applied: forbidden VirtualService default/transcoder-vsvc');
  });

  it('a 409 conflict or 422 from the apply gate shows its rows, and Force is offered for the conflict', async () => {
    const fake = fakeClusterRoutes({
      dryRun: () => ({ status: 200, body: dryRun([CREATE, UPDATE]) }),
      apply: [
        {
          status: 409,
          body: applyAnswer(
            [CREATE, { ...UPDATE, action: 'conflict', diff: [], conflicts: CONFLICT.conflicts }],
            () => false,
          ),
        },
        { status: 422, body: applyAnswer([CREATE, INVALID], () => false) },
      ],
    });
    const { dialog } = await openPanel({ flush: async () => 7 });
    await dialog.getByRole('button', { name: 'Apply to cluster' }).click();
    await expect
      .element(dialog.getByRole('alert'))
      .toHaveTextContent('Conflicts with another field manager: nothing was applied');
    await expect
      .element(dialog.getByRole('list', { name: 'Conflicts of VirtualService default/transcoder-vsvc' }))
      .toHaveTextContent('kubectl owns spec.listener.spec.websocket.port');
    await expect
      .element(dialog.getByRole('checkbox', { name: 'Force (take over these fields)' }))
      .toBeVisible();

    await dialog.getByRole('button', { name: 'Apply to cluster' }).click();
    await expect
      .element(dialog.getByRole('alert'))
      .toHaveTextContent('The API server refused the draft: nothing was applied1 to create, 1 invalid');
    await expect
      .element(dialog.getByRole('list', { name: 'Errors of Route default/bad-port' }))
      .toHaveTextContent('spec.destination.tcp.port');
    expect(fake.applies()).toHaveLength(2);
  });

  it('a failed save or no cluster (503) is an alert; nothing is sent or lost', async () => {
    const fake = fakeClusterRoutes({
      dryRun: () => ({
        status: 503,
        body: {
          error:
            'no cluster is configured: start the console with `meshdeck serve --kubeconfig PATH` (start it with meshdeck serve)',
        },
      }),
    });
    let saved: number | null = null;
    const { dialog } = await openPanel({ flush: async () => saved });
    await expect.element(dialog.getByRole('alert')).toHaveTextContent('The draft could not be saved');
    expect(fake.calls).toHaveLength(0);
    saved = 3;
    await dialog.getByRole('button', { name: 'Review again' }).click();
    await expect
      .element(dialog.getByRole('alert'))
      .toHaveTextContent('No cluster is configured: nothing was checked.');
    await expect.element(dialog.getByRole('alert')).toHaveTextContent('meshdeck serve --kubeconfig PATH');
    expect(dialog.getByRole('button', { name: 'Apply to cluster' }).query()).toBeNull();
    await dialog.getByRole('button', { name: 'Close' }).click();
    await expect.element(page.getByTestId('cluster-apply-panel')).not.toBeVisible();
  });
});
