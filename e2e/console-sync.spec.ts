/**
 * "What runs vs. Git" on the real server (scripts/e2e-server.sh: seed Example 1 on real l7mp proxies, the
 * local default GitOps repository): someone changes the transcoder's port on the repository's main
 * branch; the toolbar's chip, compared again, says what runs is out of sync, and the dialog names the
 * object and the field with both values; "Open Git's version as a draft" opens a new draft holding Git's
 * port. Sync now writes main's tip to the local mesh: a commit with a dangling reference is held with its
 * error and the gateway keeps its port; the fixed commit runs, and the apply history says it came from Git.
 * "Sync automatically" turned on in the panel syncs the commit waiting on main without Sync now (the
 * change starts a comparison), and turned off again leaves the next commit out of sync.
 * Other specs share this server and its repository, so everything here is relative to what they left, and
 * main and what runs are put back at the end (what runs by the console's own Apply).
 */
import { expect, test } from '@playwright/test';
import type { DraftDoc } from '../lib/console/draftDoc';
import {
  applyDraftNow,
  commitOnMain,
  gatewayPort,
  guardPage,
  openConsole,
  putDraft,
  SHOTS,
} from './consoleHelpers';

const TRANSCODER_VS = 'VirtualService/default/transcoder-vsvc';
const GATEWAY_VS = 'VirtualService/default/gateway-vsvc';

guardPage();
test.setTimeout(120_000);

test("the chip says what runs is no longer Git's, the dialog names the field, and Git's version opens as a draft", async ({
  page,
}) => {
  await openConsole(page, TRANSCODER_VS);
  const status = await page.evaluate(async () => (await fetch('/api/gitops/status')).json());
  const remoteGit = (status as { repository: { source: { path?: string } } }).repository.source.path;
  expect(remoteGit).toMatch(/remote\.git$/);
  // A comparison made now (the server otherwise answers one up to a minute old), then a reload so the
  // chip starts from it.
  const running = await page.evaluate(async () => (await fetch('/api/gitops/sync?refresh=1')).json());
  await page.reload();
  await expect(page.getByTestId('save-status')).toContainText('Saved');
  const counts = (running as { counts: { modified: number; missing: number; extra: number } }).counts;
  const before = counts.modified;
  const outBefore = counts.modified + counts.missing + counts.extra;
  // The chip shows only when something is out of sync (other specs may have moved main already).
  const chip = page.getByTestId('live-sync');
  await expect(chip).toHaveCount(outBefore > 0 ? 1 : 0);

  commitOnMain(remoteGit!, 'transcoder on 8899', (t) => {
    expect(t.match(/port: 8888/g)).toHaveLength(1);
    return t.replace('port: 8888', 'port: 8899');
  });
  try {
    // The Commit / PR panel says where what runs stands, and leads to the detail.
    await page.getByTestId('gitops-open').click();
    const line = page.getByTestId('gitops-live-sync');
    await expect(line).toContainText(/^What runs: (in sync with main|\d+ objects? out of sync with main)/);
    await line.getByRole('button', { name: 'What runs vs. Git' }).click();
    await expect(page.getByTestId('gitops-panel')).not.toBeVisible();
    const dialog = page.getByTestId('live-sync-dialog');
    await expect(dialog).toBeVisible();
    await dialog.getByTestId('live-sync-refresh').click();
    await expect(dialog.getByTestId('live-sync-counts')).toContainText(`${before + 1} differ`);
    const row = dialog
      .getByTestId('live-sync-row')
      .filter({ hasText: 'VirtualService default/transcoder-vsvc' });
    await expect(row).toContainText('differs from Git');
    await expect(row).toContainText('spec.websocket.port: 8899 (Git) → 8888 (running)');
    // Paths are relative to the repository's mesh directory (the dialog's head names it).
    await expect(row).toContainText(/Git: mesh.yaml:\d+ · running: mesh.yaml:\d+/);
    await expect(dialog).toContainText('directory examples/seed-example-1');
    // And what runs: the mesh directory the console's control plane serves.
    await expect(dialog.getByTestId('live-sync-running')).toContainText(/^the mesh directory \//);
    await page.screenshot({ path: `${SHOTS}/console-live-sync.png` });

    // The chip agrees once the dialog closes.
    await dialog.getByRole('button', { name: 'Close' }).click();
    await expect(chip).toHaveText(`Git: ${outBefore + 1} out of sync`);
    await expect(chip).toHaveClass(/sync-chip--drift/);
    await page.screenshot({ path: `${SHOTS}/console-live-sync-chip.png` });

    // Git's version, as a new draft: the transcoder on 8899 there, the running mesh untouched.
    await chip.click();
    await dialog.getByTestId('live-sync-open-git').click();
    await expect(page).toHaveURL(/[?&]draft=/);
    await expect(page.getByTestId(`node-${TRANSCODER_VS}`)).toContainText(':8899');
    const draftId = new URL(page.url()).searchParams.get('draft')!;
    const drafts = await page.evaluate(async () => (await fetch('/api/drafts')).json());
    expect(JSON.stringify(drafts)).toMatch(/"name":"Git main @ [0-9a-f]{7}"/);
    // Clean up: the draft, then main as it was.
    const deleted = await page.evaluate(async (id) => {
      const s = (await (await fetch('/api/session')).json()) as { csrfToken: string };
      const r = await fetch(`/api/drafts/${encodeURIComponent(id)}`, {
        method: 'DELETE',
        headers: { 'x-csrf-token': s.csrfToken },
      });
      return r.status;
    }, draftId);
    expect(deleted).toBe(200);
  } finally {
    commitOnMain(remoteGit!, 'transcoder back on 8888', (t) => t.replace('port: 8899', 'port: 8888'));
  }
});

test('Sync now: a commit with an error is held and nothing changes; the fixed one runs on the proxies and is in the history', async ({
  page,
}) => {
  await openConsole(page, GATEWAY_VS);
  const status = await page.evaluate(async () => (await fetch('/api/gitops/status')).json());
  const remoteGit = (status as { repository: { source: { path?: string } } }).repository.source.path!;
  // What runs now (openConsole reset the draft to it), put back at the end: other specs may have moved main.
  const running = (await page.evaluate(async () => (await fetch('/api/draft')).json())) as {
    draft: DraftDoc;
  };
  const portBefore = await gatewayPort(page);
  expect(portBefore).not.toBeNull();
  let mainBefore: string | undefined;
  commitOnMain(remoteGit, 'a typo', (t) => {
    mainBefore = t;
    expect(t.match(/destination: worker-svc/g)).toHaveLength(1);
    return t.replace('destination: worker-svc', 'destination: worker-svx');
  });
  try {
    await page.getByTestId('gitops-open').click();
    await page.getByTestId('gitops-live-sync').getByRole('button', { name: 'What runs vs. Git' }).click();
    const dialog = page.getByTestId('live-sync-dialog');
    const panel = dialog.getByTestId('git-sync');
    await expect(panel.getByTestId('git-sync-policy')).toContainText('Automated sync: off');
    await panel.getByTestId('git-sync-now').click();
    const last = panel.getByTestId('git-sync-last');
    await expect(last).toContainText(/Held [0-9a-f]{7} \(Sync now, /);
    await expect(last).toContainText('nothing was synced, what runs stays as it is');
    await expect(panel.getByTestId('git-sync-diagnostics')).toContainText(
      'VirtualService/default/gateway-vsvc spec.rules[0].action.route.destination (mesh.yaml:',
    );
    await expect(panel.getByTestId('git-sync-diagnostics')).toContainText('worker-svx');
    expect(await gatewayPort(page)).toBe(portBefore);
    // The toolbar says so too, while the dialog is open and after.
    await expect(page.getByTestId('live-sync')).toHaveText(/^Git: [0-9a-f]{7} held$/);
    await expect(page.getByTestId('live-sync')).toHaveClass(/sync-chip--error/);
    await page.screenshot({ path: `${SHOTS}/console-git-sync-held.png` });

    // The gateway's UDP port (the first `udp:` of Example 1) to 9005, whatever main had.
    commitOnMain(remoteGit, 'fix the typo, gateway on 9005', (t) =>
      t
        .replace('destination: worker-svx', 'destination: worker-svc')
        .replace(/(udp:\n\s+port: )\d+/, '$19005'),
    );
    await panel.getByTestId('git-sync-now').click();
    await expect(last).toContainText(
      /Synced [0-9a-f]{7} \(Sync now, [^)]*\): mesh\.yaml written · apply #\d+/,
    );
    await expect(dialog.getByTestId('live-sync-counts')).toContainText('What runs is what Git says.');
    await expect.poll(() => gatewayPort(page), { timeout: 20_000 }).toBe(9005);
    await page.screenshot({ path: `${SHOTS}/console-git-sync.png` });

    await dialog.getByRole('button', { name: 'Close' }).click();
    await page.keyboard.press('h');
    const history = page.getByTestId('history-dialog');
    await expect(history.getByTestId('history-list').locator('li').first()).toContainText(
      /from Git [0-9a-f]{7}/,
    );
    await history.getByTestId('history-list').locator('li').first().getByRole('button').click();
    await expect(history.getByTestId('history-git')).toContainText(
      /synced from Git [0-9a-f]{7} \(Sync now\)/,
    );
  } finally {
    if (mainBefore !== undefined) commitOnMain(remoteGit, 'main as it was', () => mainBefore!);
    // What runs as it was: the files applied back through the console's own Apply.
    expect(await putDraft(page, running.draft)).toBe(200);
    expect(await applyDraftNow(page)).toBe(200);
    await expect.poll(() => gatewayPort(page), { timeout: 20_000 }).toBe(portBefore);
  }
});

test('Sync automatically: turned on in the panel, the commit waiting on main runs; turned off, the next one waits', async ({
  page,
}) => {
  await openConsole(page, GATEWAY_VS);
  const status = await page.evaluate(async () => (await fetch('/api/gitops/status')).json());
  const remoteGit = (status as { repository: { source: { path?: string } } }).repository.source.path!;
  const running = (await page.evaluate(async () => (await fetch('/api/draft')).json())) as {
    draft: DraftDoc;
  };
  const portBefore = await gatewayPort(page);
  expect(portBefore).not.toBeNull();
  // Ports no other spec sets: console-gitops.spec.ts leaves main's gateway on 9006.
  expect(portBefore).not.toBe(9016);
  let mainBefore: string | undefined;
  commitOnMain(remoteGit, 'gateway on 9016', (t) => {
    mainBefore = t;
    return t.replace(/(udp:\n\s+port: )\d+/, '$19016');
  });
  const setPolicy = (autoSync: { prune: boolean; selfHeal: boolean } | null) =>
    page.evaluate(
      async (body) => {
        const s = (await (await fetch('/api/session')).json()) as { csrfToken: string };
        const r = await fetch('/api/gitops/sync/policy', {
          method: 'PUT',
          headers: { 'content-type': 'application/json', 'x-csrf-token': s.csrfToken },
          body: JSON.stringify(body),
        });
        return r.status;
      },
      { autoSync },
    );
  try {
    await page.getByTestId('gitops-open').click();
    await page.getByTestId('gitops-live-sync').getByRole('button', { name: 'What runs vs. Git' }).click();
    const dialog = page.getByTestId('live-sync-dialog');
    const panel = dialog.getByTestId('git-sync');
    const auto = panel.getByRole('checkbox', { name: 'Sync automatically' });
    await expect(panel.getByTestId('git-sync-policy')).toContainText('Automated sync: off');
    await expect(auto).not.toBeChecked();
    await expect(panel.getByTestId('git-sync-auto-prune')).toBeDisabled();
    await expect(panel.getByTestId('git-sync-auto-self-heal')).toBeDisabled();

    await auto.check();
    await expect(panel.getByTestId('git-sync-policy')).toContainText('Automated sync: on');
    await expect(panel.getByTestId('git-sync-auto-state')).toContainText('changed by local-admin');
    await expect(panel.getByTestId('git-sync-auto-prune')).toBeEnabled();
    await expect(panel.getByTestId('git-sync-auto-self-heal')).toBeEnabled();
    // No Sync now: the comparison the change started syncs main's tip.
    await expect.poll(() => gatewayPort(page), { timeout: 30_000 }).toBe(9016);
    await dialog.getByTestId('live-sync-refresh').click();
    await expect(panel.getByTestId('git-sync-last')).toContainText(
      /Synced [0-9a-f]{7} \(a new commit, meshdeck:gitops-sync, [^)]*\): mesh\.yaml written/,
    );
    await panel.getByTestId('git-sync-auto-self-heal').check();
    await expect(panel.getByTestId('git-sync-policy')).toContainText('Automated sync: on (self-heal)');
    await panel.screenshot({ path: `${SHOTS}/console-git-sync-policy.png` });
    await page.evaluate(() => document.documentElement.setAttribute('data-theme', 'light'));
    await panel.screenshot({ path: `${SHOTS}/console-git-sync-policy-light.png` });
    await page.evaluate(() => document.documentElement.setAttribute('data-theme', 'dark'));

    await auto.uncheck();
    await expect(panel.getByTestId('git-sync-policy')).toContainText('Automated sync: off');
    // Self-heal is kept for the next time, but not changeable while off.
    await expect(panel.getByTestId('git-sync-auto-self-heal')).toBeChecked();
    await expect(panel.getByTestId('git-sync-auto-self-heal')).toBeDisabled();
    commitOnMain(remoteGit, 'gateway on 9017', (t) => t.replace(/(udp:\n\s+port: )\d+/, '$19017'));
    await dialog.getByTestId('live-sync-refresh').click();
    await expect(dialog.getByTestId('live-sync-counts')).toContainText(/[1-9]\d* differ/);
    expect(await gatewayPort(page)).toBe(9016);
  } finally {
    expect(await setPolicy(null)).toBe(200);
    if (mainBefore !== undefined) commitOnMain(remoteGit, 'main as it was', () => mainBefore!);
    expect(await putDraft(page, running.draft)).toBe(200);
    expect(await applyDraftNow(page)).toBe(200);
    await expect.poll(() => gatewayPort(page), { timeout: 20_000 }).toBe(portBefore);
  }
});
