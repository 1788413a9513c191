/**
 * Commit / PR against a real forge (issue 6 §4: "edit in the console, open a PR, see its link; reload
 * mid-edit and find the draft"). scripts/e2e-gitea-server.sh runs a real Gitea whose repository holds a
 * port-shifted copy of seed Example 1 in `mesh/` on `main`, and a second console (port 3101) on that
 * copy, configured with the repository's URL, a token and the gitea provider. The test edits in the
 * Inspector, reloads, edits again, commits with the proposed branch and message, and checks the pull
 * request through Gitea's API (the repository is public: read without a token).
 */
import { expect, test } from '@playwright/test';
import { GITEA_E2E_ORIGIN } from '../playwright.config';
import { guardPage, openConsole, setPort, SHOTS } from './consoleHelpers';

const GATEWAY_VS = 'VirtualService/default/gateway-vsvc';
const TRANSCODER_VS = 'VirtualService/default/transcoder-vsvc';

test.use({ baseURL: GITEA_E2E_ORIGIN });
guardPage(GITEA_E2E_ORIGIN);
test.setTimeout(120_000);

interface GiteaPull {
  number: number;
  state: string;
  title: string;
  body: string;
  html_url: string;
  merged: boolean;
  head: { ref: string; sha: string };
  base: { ref: string };
}

/** GET on Gitea's API (anonymous: the e2e repository is public). */
async function gitea<T>(baseUrl: string, apiPath: string): Promise<T> {
  const res = await fetch(`${baseUrl}/api/v1${apiPath}`, { headers: { accept: 'application/json' } });
  expect(res.status, `GET ${apiPath}`).toBe(200);
  return (await res.json()) as T;
}

test('an edit survives a reload and becomes a real pull request on Gitea, linked in the panel', async ({
  page,
}) => {
  await openConsole(page, GATEWAY_VS);
  await setPort(page, GATEWAY_VS, 'spec.udp.port', '9003');

  // Mid-edit reload: the draft is the server's, so the edit is still there.
  await page.reload();
  await expect(page.getByTestId('save-status')).toContainText('Saved');
  await expect(page.getByTestId(`node-${GATEWAY_VS}`)).toContainText('udp :9003');
  await page.getByTestId(`node-${GATEWAY_VS}`).click();
  await page.getByTestId('tab-inspector').click();
  await expect(page.locator('[data-field-path="spec.udp.port"] input')).toHaveValue('9003');
  // The edit continues on the reloaded draft.
  await setPort(page, TRANSCODER_VS, 'spec.websocket.port', '8990');

  await page.getByTestId('gitops-open').click();
  const panel = page.getByTestId('gitops-panel');
  await expect(panel).toBeVisible();
  await expect(panel.getByTestId('gitops-repo')).toContainText('pull requests on gitea');
  const changes = panel.getByTestId('gitops-changes');
  await expect(changes.locator('li')).toHaveCount(2);
  await expect(changes).toContainText('VirtualService default/gateway-vsvc');
  await expect(changes).toContainText('VirtualService default/transcoder-vsvc');
  const commit = panel.getByTestId('gitops-commit');
  await expect(commit).toHaveText('Commit & push, open PR');

  // Where the pull request goes, as the server tells the browser (no secret in it).
  const repository = await page.evaluate(async () => {
    const r = await fetch('/api/gitops/status');
    return ((await r.json()) as { repository: unknown }).repository;
  });
  expect(repository).toMatchObject({
    baseBranch: 'main',
    meshDir: 'mesh',
    credentials: { kind: 'token', tokenFrom: 'file' },
    provider: { kind: 'gitea' },
  });
  const { provider } = repository as { provider: { baseUrl: string; repo: string } };
  expect(JSON.stringify(repository)).not.toMatch(/[0-9a-f]{40}/);

  // The proposals, committed as they are.
  await expect(panel.getByTestId('gitops-branch')).toHaveValue(/^meshdeck\/\d{8}-\d{4}-/);
  const branch = await panel.getByTestId('gitops-branch').inputValue();
  const message = await panel.getByTestId('gitops-message').inputValue();
  expect(message).toContain('gateway-vsvc');
  await commit.click();

  const result = panel.getByTestId('gitops-result');
  await expect(result.getByTestId('gitops-pushed-branch')).toHaveText(branch, { timeout: 60_000 });
  await expect(result).not.toContainText('Last commit');
  await expect(result).toContainText('opened');
  await expect(panel.getByTestId('gitops-error')).toHaveCount(0);
  const link = result.getByRole('link', { name: /^#\d+$/ });
  await expect(link).toBeVisible();
  const href = await link.getAttribute('href');
  const number = Number((await link.innerText()).slice(1));
  expect(href).toBe(`${provider.baseUrl}/${provider.repo}/pulls/${number}`);
  await result.scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${SHOTS}/console-pullrequest-panel.png` });

  // The pull request on Gitea: open, from the proposed branch into main, the one file changed.
  const repoApi = `/repos/${provider.repo}`;
  const pull = await gitea<GiteaPull>(provider.baseUrl, `${repoApi}/pulls/${number}`);
  expect(pull).toMatchObject({
    number,
    state: 'open',
    merged: false,
    html_url: href,
    head: { ref: branch },
    base: { ref: 'main' },
  });
  expect(pull.body).toContain('gateway-vsvc');
  expect(pull.body).toContain('default/gateway-0');
  const files = await gitea<{ filename: string; status: string }[]>(
    provider.baseUrl,
    `${repoApi}/pulls/${number}/files`,
  );
  expect(files.map((f) => [f.filename, f.status])).toEqual([['mesh/mesh.yaml', 'changed']]);
  const commits = await gitea<{ sha: string; commit: { message: string } }[]>(
    provider.baseUrl,
    `${repoApi}/pulls/${number}/commits`,
  );
  expect(commits).toHaveLength(1);
  expect(commits[0]!.sha).toBe(pull.head.sha);
  expect(commits[0]!.commit.message.trim()).toBe(message.trim());
  const diff = await (await fetch(`${href}.diff`)).text();
  expect(diff).toContain('-    port: 9001');
  expect(diff).toContain('+    port: 9003');
  expect(diff).toContain('-    port: 8988');
  expect(diff).toContain('+    port: 8990');

  // After the commit the draft is kept, and the panel still shows its two changes.
  await expect(changes.locator('li')).toHaveCount(2);

  // After a reload the panel still links the pull request (the server keeps the draft's last commit).
  await page.reload();
  await expect(page.getByTestId('save-status')).toContainText('Saved');
  await page.getByTestId('gitops-open').click();
  await expect(result).toContainText('Last commit');
  await expect(result.getByRole('link', { name: `#${number}` })).toHaveAttribute('href', href!);
  await expect(result.getByTestId('gitops-pushed-branch')).toHaveText(branch);
  await result.scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${SHOTS}/console-pullrequest-after-reload.png` });
});
