'use client';

import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { SyncEntry, SyncState } from '@/lib/gitops/liveSync';
import type { LiveSyncStatus } from '@/server/gitops/GitOpsService';
import { ApiError, apiFetch, errorMessage } from './api';
import { Dialog } from './Dialog';
import { GitSyncPanel, type LiveSyncAnswer } from './GitSyncPanel';
import { draftsKey, liveSyncKey } from './queries';
import './liveSync.css';

/** How often the toolbar's chip compares again (each a fetch of the repository; Argo CD polls every 3 min). */
const REFRESH_MS = 120_000;

/** What runs against the GitOps base branch; null when this server has no GitOps repository. */
export function useLiveSync() {
  return useQuery({
    queryKey: liveSyncKey,
    queryFn: async ({ signal }): Promise<LiveSyncAnswer | null> => {
      try {
        return await apiFetch<LiveSyncAnswer>('/api/gitops/sync', { signal });
      } catch (e) {
        if (e instanceof ApiError && e.unavailable) return null;
        throw e;
      }
    },
    refetchInterval: REFRESH_MS,
    staleTime: 30_000,
    retry: false,
  });
}

const STATE_TEXT: Record<SyncState, string> = {
  modified: 'differs from Git',
  missing: 'in Git, not running',
  extra: 'running, not in Git',
  synced: 'in sync',
};

/** The number of objects out of sync (and unreadable files), 0 when what runs is what Git says. */
export function outOfSync(s: LiveSyncStatus): number {
  return s.counts.modified + s.counts.missing + s.counts.extra + s.unreadable.length;
}

/**
 * The toolbar's chip, shown only when what runs is not what Git's base branch says (or the comparison
 * fails), like "Changed on disk": the toolbar has no room to spare at 1280 px, and a calm toolbar says
 * "nothing to see". The Commit / PR panel says "in sync" and opens the dialog either way.
 */
export function LiveSyncChip(p: { onOpen(): void }) {
  const q = useLiveSync();
  const s = q.data;
  const n = s ? outOfSync(s) : 0;
  if (!q.isError && n === 0) return null;
  // The tip's sync held (errors) or failed: what runs stays behind Git until someone fixes the commit.
  const last = s?.sync?.last;
  const stuck = last && last.commit === s?.commit && last.result !== 'synced' ? last : undefined;
  const label = q.isError
    ? 'Git: not compared'
    : stuck
      ? `Git: ${stuck.commit.slice(0, 7)} ${stuck.result === 'held' ? 'held' : 'sync failed'}`
      : `Git: ${n} out of sync`;
  const title = q.isError
    ? `Could not compare what runs with Git: ${errorMessage(q.error)}`
    : `${stuck?.error ? `${stuck.error}. ` : ''}What runs against ${s!.baseBranch} @ ${s!.commit.slice(0, 7)}${s!.fetchError ? ' (the fetch failed: the last known tip)' : ''}: ` +
      `${s!.counts.synced} in sync, ${s!.counts.modified} differ, ${s!.counts.missing} not running, ${s!.counts.extra} not in Git`;
  return (
    <button
      type="button"
      className={`sync-chip sync-chip--${q.isError || stuck ? 'error' : 'drift'}`}
      onClick={p.onOpen}
      title={title}
      data-testid="live-sync"
    >
      {label}
    </button>
  );
}

/** What runs against Git's base branch, object by object, with the fields that differ. */
export function LiveSyncDialog(p: {
  open: boolean;
  onClose(): void;
  canWrite: boolean;
  /** Switches the console to a draft (the new one holding Git's version). */
  onOpenDraft(id: string): void;
  /** Selects an object of the current draft on the canvas. */
  onFocus?(key: string): void;
  /** What runs, for the head: the mesh directory the control plane serves, or the cluster. */
  running?: string;
}) {
  const q = useLiveSync();
  const queryClient = useQueryClient();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const s = q.data ?? undefined;
  const [comparing, setComparing] = useState(false);
  // The server answers its last comparison while fresh; this one fetches and compares now.
  const compareNow = async () => {
    setComparing(true);
    setError(undefined);
    try {
      queryClient.setQueryData(liveSyncKey, await apiFetch<LiveSyncAnswer>('/api/gitops/sync?refresh=1'));
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setComparing(false);
    }
  };
  const openGitDraft = async () => {
    if (!s) return;
    setBusy(true);
    setError(undefined);
    const base = `${s.baseBranch} @ ${s.commit.slice(0, 7)}`;
    try {
      let made: { id: string } | undefined;
      for (let i = 1; i <= 5 && !made; i++) {
        try {
          made = await apiFetch<{ id: string }>('/api/drafts', {
            method: 'POST',
            body: { name: i === 1 ? `Git ${base}` : `Git ${base} (${i})` },
          });
        } catch (e) {
          // A draft of that name exists: another name.
          if (!(e instanceof ApiError && e.status === 409 && /named/.test(e.message))) throw e;
        }
      }
      if (!made) throw new Error(`drafts named "Git ${base}" exist already: delete one first`);
      await queryClient.invalidateQueries({ queryKey: draftsKey });
      p.onClose();
      p.onOpenDraft(made.id);
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog open={p.open} title="What runs vs. Git" onClose={p.onClose} testId="live-sync-dialog" wide>
      <div className="live-sync">
        <div className="live-sync__head">
          {s ? (
            <p>
              Compared with <code>{s.baseBranch}</code> @ <code>{s.commit.slice(0, 7)}</code>, directory{' '}
              <code>{s.repository.meshDir}</code> of{' '}
              <code>
                {s.repository.source.kind === 'url' ? s.repository.source.url : s.repository.source.path}
              </code>
              {s.kinds ? ` (${s.kinds.join(', ')})` : ''} at {new Date(s.at).toLocaleTimeString()}
              {p.running ? (
                <>
                  ; what runs: <code data-testid="live-sync-running">{p.running}</code>
                </>
              ) : null}
              .
            </p>
          ) : q.isError ? (
            <p className="field-error" role="alert">
              Could not compare with Git: {errorMessage(q.error)}
            </p>
          ) : (
            <p>Comparing…</p>
          )}
          <span className="button-row">
            <button
              type="button"
              onClick={() => void compareNow()}
              disabled={q.isFetching || comparing}
              data-testid="live-sync-refresh"
            >
              {q.isFetching || comparing ? 'Comparing…' : 'Compare again'}
            </button>
            {s && outOfSync(s) > 0 ? (
              <button
                type="button"
                className="primary"
                onClick={() => void openGitDraft()}
                disabled={!p.canWrite || busy}
                title={
                  p.canWrite
                    ? "A new draft holding Git's version: review its preview, then Apply to run it"
                    : 'Opening a draft needs a signed-in session'
                }
                data-testid="live-sync-open-git"
              >
                Open Git&apos;s version as a draft
              </button>
            ) : null}
          </span>
        </div>
        {error ? (
          <p className="field-error" role="alert">
            {error}
          </p>
        ) : null}
        {s ? (
          <GitSyncPanel
            status={s}
            outOfSync={outOfSync(s)}
            canWrite={p.canWrite}
            onStatus={(next) => queryClient.setQueryData(liveSyncKey, next)}
          />
        ) : null}
        {s?.fetchError ? (
          <p className="field-error field-error--warning" role="status">
            The fetch failed ({'hint' in s.fetchError ? s.fetchError.hint : s.fetchError.message}): compared
            with the last tip this server knew.
          </p>
        ) : null}
        {s ? (
          <>
            <p className="live-sync__counts" data-testid="live-sync-counts">
              {outOfSync(s) === 0 ? (
                <strong className="live-sync__ok">What runs is what Git says.</strong>
              ) : null}{' '}
              {s.counts.synced} in sync · {s.counts.modified} differ · {s.counts.missing} in Git, not running
              · {s.counts.extra} running, not in Git
            </p>
            {s.unreadable.map((u) => (
              <p key={`${u.side}:${u.path}`} className="field-error" role="alert">
                {u.side === 'git' ? 'Git' : 'What runs'}: {u.path}:{u.line} cannot be read ({u.message}): its
                objects are not compared.
              </p>
            ))}
            <ul className="live-sync__list" data-testid="live-sync-list">
              {s.entries
                .filter((e) => e.state !== 'synced')
                .map((e) => (
                  <SyncRow key={e.key} entry={e} {...(p.onFocus ? { onFocus: p.onFocus } : {})} />
                ))}
            </ul>
          </>
        ) : null}
      </div>
    </Dialog>
  );
}

function SyncRow({ entry: e, onFocus }: { entry: SyncEntry; onFocus?: (key: string) => void }) {
  return (
    <li className={`live-sync__row live-sync__row--${e.state}`} data-testid="live-sync-row">
      <div className="live-sync__row-head">
        <span className={`live-sync__state live-sync__state--${e.state}`}>{STATE_TEXT[e.state]}</span>
        <strong>
          {e.kind} {e.namespace}/{e.name}
        </strong>
        <span className="live-sync__where">
          {e.git ? `Git: ${e.git.file}:${e.git.line}` : ''}
          {e.git && e.live ? ' · ' : ''}
          {e.live ? `running: ${e.live.file}:${e.live.line}` : ''}
        </span>
        {onFocus && e.live ? (
          <button type="button" className="link-button" onClick={() => onFocus(e.key)}>
            Show
          </button>
        ) : null}
      </div>
      {e.fields?.length ? (
        <ul className="live-sync__fields">
          {e.fields.map((f) => (
            <li key={f.path}>
              <code>{f.path}</code>: <span className="live-sync__before">{show(f.before)}</span> (Git) →{' '}
              <span className="live-sync__after">{show(f.after)}</span> (running)
            </li>
          ))}
          {e.moreFields ? <li>and {e.moreFields} more fields</li> : null}
        </ul>
      ) : null}
    </li>
  );
}

function show(v: unknown): string {
  if (v === undefined) return '(absent)';
  const text = JSON.stringify(v);
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}
