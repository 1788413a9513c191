import '@/app/globals.css';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { render } from 'vitest-browser-react';
import type { ApplyRecord, ApplySummary } from '@/lib/console/applyRecord';
import { HistoryDialog } from './HistoryDialog';

/**
 * FAKE history routes: window.fetch answers GET /api/applies from a list the test changes, as another
 * tab's apply would, and /api/applies/<id> with that apply's record. The real routes and store are
 * covered by server/console/ApplyHistory and routes tests and e2e/console-history.spec.ts; this test is
 * about what the open dialog does when the list changes under it.
 */
const summary = (id: number): ApplySummary => ({
  id,
  at: new Date(Date.now() - 60_000).toISOString(),
  user: 'local-admin',
  draft: 'main',
  revision: id,
  applied: [`file-${id}.yaml`],
  deleted: [],
  proxies: { total: 2, inSync: 2, notInSync: [] },
});
const record = (id: number): ApplyRecord => ({
  ...(applies.find((a) => a.id === id) ?? summary(id)),
  before: { files: { [`file-${id}.yaml`]: 'a: 1\n' }, layout: {} },
  after: { files: { [`file-${id}.yaml`]: `a: ${id}\n` }, layout: {} },
});

let applies: ApplySummary[] = [];
const listReads: number[] = [];

function fakeFetch(input: RequestInfo | URL): Promise<Response> {
  const url = String(input);
  const json = (body: unknown) =>
    Promise.resolve(new Response(JSON.stringify(body), { headers: { 'content-type': 'application/json' } }));
  if (url.endsWith('/api/applies')) {
    listReads.push(Date.now());
    return json({ applies });
  }
  const m = /\/api\/applies\/(\d+)$/.exec(url);
  if (m) return json(record(Number(m[1])));
  return Promise.resolve(new Response('{}', { status: 404 }));
}

afterEach(() => {
  vi.unstubAllGlobals();
  document.body.innerHTML = '';
});

describe('HistoryDialog', () => {
  it('reads the list again while open, and keeps the apply it shows when a newer one arrives', async () => {
    vi.stubGlobal('fetch', fakeFetch);
    applies = [summary(1)];
    listReads.length = 0;
    const screen = await render(
      <QueryClientProvider client={new QueryClient()}>
        <HistoryDialog
          open
          refreshMs={100}
          onSelect={() => {}}
          draft={{ files: {}, layout: {} }}
          canLoad
          run={() => ({ ok: false, error: 'not in this test' })}
          onLoaded={() => {}}
          onClose={() => {}}
        />
      </QueryClientProvider>,
    );
    const item = (id: number) => screen.container.querySelector(`[data-testid="history-item-${id}"]`);
    await expect.poll(() => item(1)).not.toBeNull();
    expect(item(1)!.getAttribute('aria-current')).toBe('true');

    // Another tab applies: the open list shows it without a reload.
    applies = [summary(2), summary(1)];
    await expect.poll(() => item(2), { timeout: 3000 }).not.toBeNull();
    expect(listReads.length).toBeGreaterThanOrEqual(2);
    // Still showing #1, the one being read, not the newcomer.
    expect(item(1)!.getAttribute('aria-current')).toBe('true');
    expect(item(2)!.getAttribute('aria-current')).toBeNull();
  });

  it('names a rollout’s records: the step (counted from 1) with its share, and the rollback', async () => {
    vi.stubGlobal('fetch', fakeFetch);
    const rollout = { id: '20261201T100000Z-ab12', of: 4 };
    applies = [
      { ...summary(3), user: 'local-admin', rollout: { ...rollout, percent: 0, action: 'rollback' } },
      { ...summary(2), rollout: { ...rollout, step: 1, percent: 25, action: 'step' } },
      summary(1),
    ];
    const screen = await render(
      <QueryClientProvider client={new QueryClient()}>
        <HistoryDialog
          open
          onSelect={() => {}}
          selectedId={2}
          draft={{ files: {}, layout: {} }}
          canLoad
          run={() => ({ ok: false, error: 'not in this test' })}
          onLoaded={() => {}}
          onClose={() => {}}
        />
      </QueryClientProvider>,
    );
    await expect
      .element(screen.getByTestId('history-item-2'))
      .toHaveTextContent('· rollout step 2 of 4 (25%)');
    await expect.element(screen.getByTestId('history-item-3')).toHaveTextContent('· rollout rolled back');
    await expect.element(screen.getByTestId('history-item-1')).not.toHaveTextContent('rollout');
    await expect
      .element(screen.getByTestId('history-rollout'))
      .toHaveTextContent(/^rollout step 2 of 4 \(25%\)$/);
    await expect.element(screen.getByTestId('history-detail')).not.toHaveTextContent('draft main, revision');
    await expect
      .element(screen.getByTestId('history-rollout'))
      .toHaveAttribute('title', 'Progressive rollout 20261201T100000Z-ab12');
  });
});
