'use client';

import { useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { applyFilesText, applyOutcome, type ApplyRecord, type ApplySummary } from '@/lib/console/applyRecord';
import type { CommandResult, DraftCommand } from '@/lib/console/draftCommands';
import type { DraftDoc } from '@/lib/console/draftDoc';
import { filesDiff } from '@/lib/console/filesDiff';
import { formatAgo } from '@/lib/console/proxySessions';
import { rolloutRecordText } from '@/lib/rollout/rolloutView';
import { ApiError, errorMessage } from './api';
import { Dialog } from './Dialog';
import { FilesDiffView } from './FilesDiffView';
import { applyRecordQuery, appliesQuery } from './queries';
import './historyDialog.css';

export interface HistoryDialogProps {
  open: boolean;
  /** The apply shown first (a deep link's or the one just made); the newest without it. */
  selectedId?: number;
  onSelect(id: number): void;
  /** The draft being edited: what "against your draft" compares with. */
  draft: DraftDoc;
  /** Loading a version needs a signed-in session (the draft is saved on the server). */
  canLoad: boolean;
  run(cmd: DraftCommand): CommandResult;
  /** Said once a version was loaded into the draft. */
  onLoaded(message: string): void;
  onClose(): void;
  /** How often the open list is read again (ms). */
  refreshMs?: number;
}

/**
 * The apply history (GET /api/applies): every apply with who made it, when, the files it wrote and how
 * the proxies took it (local mesh) or what it did to each object (a cluster's server-side apply); one
 * apply's files as a diff against what it replaced or against the draft; and loading its files (or
 * those it replaced) into the draft: a rollback that is reviewed (Preview, or the cluster's dry-run) and
 * applied like any edit, and undone with Ctrl+Z.
 */
export function HistoryDialog(p: HistoryDialogProps) {
  // Read again while open: an apply from another tab or user shows up, and the "ago"s stay true.
  const list = useQuery({ ...appliesQuery, enabled: p.open, refetchInterval: p.refreshMs ?? 5000 });
  const applies = list.data;
  // Without a selection the newest is shown, and stays shown when a newer one arrives: a list that
  // refreshes must not swap the diff being read.
  const [firstShown, setFirstShown] = useState<number | undefined>();
  const newest = applies?.[0]?.id;
  // Set during render (React's "adjusting state when a prop changes"): reset whenever it closes.
  const keep = p.open ? (firstShown ?? newest) : undefined;
  if (keep !== firstShown) setFirstShown(keep);
  const shownId = p.selectedId ?? firstShown ?? newest;
  return (
    <Dialog open={p.open} title="Apply history" onClose={p.onClose} testId="history-dialog" wide>
      <div className="history">
        {list.isPending ? (
          <p className="history__muted">Loading the history…</p>
        ) : list.isError ? (
          <p className="history__error" role="alert" data-testid="history-error">
            {list.error instanceof ApiError && list.error.unavailable
              ? 'The apply history is kept by the server that applies (meshdeck serve); this one has none.'
              : `The history could not be read: ${errorMessage(list.error)}`}
          </p>
        ) : applies!.length === 0 ? (
          <p className="history__muted" data-testid="history-empty">
            Nothing applied yet. Each Apply is listed here: who applied it, when, the files it wrote and how
            the proxies (or the cluster) took it, with a diff and a way back.
          </p>
        ) : (
          <>
            <ol className="history__list" data-testid="history-list" aria-label="Applies, newest first">
              {applies!.map((a) => (
                <HistoryItem
                  key={a.id}
                  apply={a}
                  now={list.dataUpdatedAt}
                  selected={a.id === shownId}
                  onSelect={p.onSelect}
                />
              ))}
            </ol>
            {shownId !== undefined ? <HistoryDetail key={shownId} id={shownId} {...p} /> : null}
          </>
        )}
      </div>
    </Dialog>
  );
}

function HistoryItem({
  apply: a,
  now,
  selected,
  onSelect,
}: {
  apply: ApplySummary;
  /** When the list was read: the "ago" is as of then. */
  now: number;
  selected: boolean;
  onSelect(id: number): void;
}) {
  const outcome = applyOutcome(a);
  return (
    <li>
      <button
        type="button"
        className={`history__item${selected ? ' history__item--selected' : ''}`}
        aria-current={selected ? 'true' : undefined}
        onClick={() => onSelect(a.id)}
        data-testid={`history-item-${a.id}`}
      >
        <span className="history__item-head">
          <strong>#{a.id}</strong> <span title={new Date(a.at).toLocaleString()}>{formatAgo(a.at, now)}</span>{' '}
          · {a.user}
          {a.git ? ` · from Git ${a.git.commit.slice(0, 7)}` : ''}
          {a.rollout ? ` · ${rolloutRecordText(a.rollout)}` : ''}
        </span>
        <span className="history__item-line">
          {applyFilesText(a)} · <span className={`tone-${outcome.tone}`}>{outcome.text}</span>
        </span>
      </button>
    </li>
  );
}

type Compare = 'apply' | 'draft';

const GIT_TRIGGER: Record<NonNullable<ApplySummary['git']>['trigger'], string> = {
  'new-commit': 'automated: a new commit',
  drift: 'automated: self-heal',
  manual: 'Sync now',
};

function HistoryDetail(p: HistoryDialogProps & { id: number }) {
  const record = useQuery({ ...applyRecordQuery(p.id), enabled: p.open });
  const [compare, setCompare] = useState<Compare>('apply');
  if (record.isPending) return <p className="history__muted">Loading apply #{p.id}…</p>;
  if (record.isError)
    return (
      <p className="history__error" role="alert" data-testid="history-error">
        Apply #{p.id} could not be read: {errorMessage(record.error)}
      </p>
    );
  return <RecordView record={record.data} compare={compare} setCompare={setCompare} {...p} />;
}

function RecordView({
  record: r,
  compare,
  setCompare,
  draft,
  canLoad,
  run,
  onLoaded,
  onClose,
}: HistoryDialogProps & { record: ApplyRecord; compare: Compare; setCompare(c: Compare): void }) {
  const diff = useMemo(
    () => (compare === 'apply' ? filesDiff(r.before, r.after) : filesDiff(draft, r.after)),
    [compare, r, draft],
  );
  const load = (which: 'after' | 'before') => {
    const res = run({ type: 'replaceDraft', draft: which === 'after' ? r.after : r.before });
    if (!res.ok) return;
    onLoaded(
      which === 'after'
        ? `Loaded the files of apply #${r.id} into the draft: review them, then Apply (Ctrl+Z undoes).`
        : `Loaded the files as they were before apply #${r.id} into the draft: review them, then Apply (Ctrl+Z undoes).`,
    );
    onClose();
  };
  const noLoad = canLoad ? undefined : 'Sign in to change the draft';
  const notInSync = r.proxies?.notInSync ?? [];
  const onCluster = r.target === 'cluster';
  // What the apply meant to write and did not, then what it wrote: the objects a reader looks for.
  const objects = (r.objects ?? []).filter((o) => ['create', 'update', 'delete'].includes(o.action));
  return (
    <section className="history__detail" data-testid="history-detail" aria-label={`Apply #${r.id}`}>
      <header className="history__detail-head">
        <h3>
          Apply #{r.id}
          {onCluster ? ' to the cluster' : ''} by {r.user}
        </h3>
        <p className="history__muted">
          {new Date(r.at).toLocaleString()} ·{' '}
          {r.git ? (
            <span data-testid="history-git">
              synced from Git <code>{r.git.commit.slice(0, 7)}</code> ({GIT_TRIGGER[r.git.trigger]})
            </span>
          ) : r.rollout ? (
            <span data-testid="history-rollout" title={`Progressive rollout ${r.rollout.id}`}>
              {rolloutRecordText(r.rollout)}
            </span>
          ) : (
            `draft ${r.draft}, revision ${r.revision}`
          )}
          {r.force ? ' · force' : ''}
          {r.prune ? ' · prune' : ''}
          {r.overwrote?.length ? ` · overwrote changes made in the cluster to ${r.overwrote.join(', ')}` : ''}
        </p>
      </header>
      {r.error ? (
        <p className="history__error" data-testid="history-apply-error">
          {r.error}
        </p>
      ) : null}
      {objects.length ? (
        <ul className="history__proxies" data-testid="history-objects" aria-label="Objects applied">
          {objects.map((o) => (
            <li key={o.key} className={o.done ? 'tone-ok' : 'tone-bad'}>
              {o.action} {o.key}
              {o.done ? '' : `: ${o.error ?? 'not written'}`}
            </li>
          ))}
        </ul>
      ) : null}
      {notInSync.length ? (
        <ul className="history__proxies" data-testid="history-not-in-sync">
          {notInSync.map((x) => (
            <li key={x.id} className={x.error ? 'tone-bad' : 'tone-busy'}>
              {x.id}: {x.error ?? x.phase}
            </li>
          ))}
        </ul>
      ) : null}
      <div className="history__actions">
        <div className="segmented" role="group" aria-label="Compare">
          <button
            type="button"
            aria-pressed={compare === 'apply'}
            onClick={() => setCompare('apply')}
            data-testid="history-compare-apply"
          >
            What it changed
          </button>
          <button
            type="button"
            aria-pressed={compare === 'draft'}
            onClick={() => setCompare('draft')}
            data-testid="history-compare-draft"
          >
            Against your draft
          </button>
        </div>
        <span className="history__spacer" />
        <button
          type="button"
          onClick={() => load('before')}
          disabled={!canLoad}
          title={noLoad ?? 'Replace the draft with the files as they were before this apply (a rollback)'}
          data-testid="history-load-before"
        >
          Load the version before it
        </button>
        <button
          type="button"
          onClick={() => load('after')}
          disabled={!canLoad}
          title={noLoad ?? 'Replace the draft with the files this apply wrote'}
          data-testid="history-load-after"
        >
          Load this version
        </button>
      </div>
      <FilesDiffView
        diff={diff}
        before={compare === 'apply' ? 'before' : 'draft'}
        after={`apply #${r.id}`}
        badges={
          compare === 'apply'
            ? undefined
            : { added: 'not in your draft', deleted: 'only in your draft', modified: 'differs' }
        }
        none={
          compare === 'apply'
            ? 'This apply changed no file.'
            : 'Your draft has exactly the files of this apply.'
        }
        testId="history-files"
      />
    </section>
  );
}
