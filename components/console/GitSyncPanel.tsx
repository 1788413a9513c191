'use client';

import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { SyncAttempt } from '@/lib/gitops/autoSync';
import type { SyncView } from '@/server/gitops/GitAutoSync';
import type { LiveSyncStatus } from '@/server/gitops/GitOpsService';
import { apiFetch, errorMessage } from './api';
import { appliesKey } from './queries';

/** GET /api/gitops/sync: the comparison, and the sync from Git where this server has one. */
export type LiveSyncAnswer = LiveSyncStatus & { sync?: SyncView };

const RESULT_TEXT: Record<SyncAttempt['result'], string> = {
  synced: 'Synced',
  held: 'Held',
  failed: 'Sync failed:',
};

const TRIGGER_TEXT: Record<SyncAttempt['trigger'], string> = {
  'new-commit': 'a new commit',
  drift: 'self-heal',
  manual: 'Sync now',
};

/**
 * Sync from Git in the "What runs vs. Git" dialog: the automated sync policy, the last sync (or the
 * commit held with its errors) and Sync now, which writes the base branch's tip to what runs after the
 * same checks as Apply.
 */
export function GitSyncPanel(p: {
  status: LiveSyncAnswer;
  outOfSync: number;
  canWrite: boolean;
  /** Takes the answer of Sync now as the dialog's latest comparison. */
  onStatus(s: LiveSyncAnswer): void;
}) {
  const sync = p.status.sync;
  const queryClient = useQueryClient();
  const [prune, setPrune] = useState<boolean>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  if (!sync) return null;
  const policy = sync.policy;
  const pruneNow = prune ?? policy?.prune ?? false;
  const syncNow = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const r = await apiFetch<{ attempt: SyncAttempt; status?: LiveSyncAnswer }>('/api/gitops/sync', {
        method: 'POST',
        body: { prune: pruneNow },
      });
      if (r.status) p.onStatus(r.status);
      await queryClient.invalidateQueries({ queryKey: appliesKey });
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  const last = sync.last;
  return (
    <section className="git-sync" aria-label="Sync from Git" data-testid="git-sync">
      <p className="git-sync__policy" data-testid="git-sync-policy">
        {policy ? (
          <>
            <strong>Automated sync: on</strong>
            {policy.prune || policy.selfHeal
              ? ` (${[policy.prune ? 'prune' : '', policy.selfHeal ? 'self-heal' : ''].filter(Boolean).join(', ')})`
              : ''}
            : each new commit of <code>{p.status.baseBranch}</code> is written to what runs once it passes the
            checks Apply makes.
          </>
        ) : (
          <>
            Automated sync: off. Set <code>autoSync</code> (
            <code>{'{"prune": false, "selfHeal": false}'}</code>) in the repository config to have what runs
            follow <code>{p.status.baseBranch}</code>.
          </>
        )}
      </p>
      <p className="git-sync__trigger" data-testid="git-sync-webhook">
        {sync.webhook ? (
          <>
            A push webhook is set up: a push to <code>{p.status.baseBranch}</code> is compared at once (
            <code>POST /api/gitops/webhook</code>).
          </>
        ) : (
          <>
            Compared with Git every few minutes. Set <code>webhook.secret</code> in the repository config and
            point the forge&apos;s push webhook at <code>/api/gitops/webhook</code> to compare on each push.
          </>
        )}
      </p>
      {sync.unavailable ? (
        <p className="field-error field-error--warning" role="status" data-testid="git-sync-unavailable">
          {sync.unavailable}
        </p>
      ) : null}
      {last ? <LastSync attempt={last} /> : null}
      {sync.waiting ? (
        <p className="git-sync__waiting" role="status" data-testid="git-sync-waiting">
          {sync.waiting}
        </p>
      ) : null}
      {error ? (
        <p className="field-error" role="alert">
          {error}
        </p>
      ) : null}
      <span className="button-row">
        <button
          type="button"
          className={p.outOfSync > 0 ? 'primary' : ''}
          onClick={() => void syncNow()}
          disabled={!p.canWrite || busy || sync.unavailable !== undefined}
          title={
            p.canWrite
              ? `Write ${p.status.baseBranch}'s tip to what runs now (the same checks as Apply; recorded in the apply history)`
              : 'Syncing needs a signed-in session'
          }
          data-testid="git-sync-now"
        >
          {busy ? 'Syncing…' : 'Sync now'}
        </button>
        <label className="git-sync__prune">
          <input
            type="checkbox"
            checked={pruneNow}
            onChange={(e) => setPrune(e.target.checked)}
            data-testid="git-sync-prune"
          />{' '}
          prune (remove files Git does not have)
        </label>
      </span>
    </section>
  );
}

function LastSync({ attempt: a }: { attempt: SyncAttempt }) {
  const c = a.commit.slice(0, 7);
  const when = new Date(a.at).toLocaleString();
  const changed = [
    a.applied.length ? `${a.applied.join(', ')} written` : '',
    a.deleted.length ? `${a.deleted.join(', ')} deleted` : '',
  ]
    .filter(Boolean)
    .join('; ');
  return (
    <div className={`git-sync__last git-sync__last--${a.result}`} data-testid="git-sync-last">
      <p>
        <span className="git-sync__badge">{RESULT_TEXT[a.result]}</span> <code>{c}</code> (
        {TRIGGER_TEXT[a.trigger]}, {a.user}, {when})
        {a.result === 'synced' ? `: ${changed || 'nothing needed writing'}` : ''}
        {a.historyId !== undefined ? ` · apply #${a.historyId} in the history (H)` : ''}
      </p>
      {a.error ? (
        <p className={a.result === 'held' ? 'field-error field-error--warning' : 'field-error'} role="alert">
          {a.error}
        </p>
      ) : null}
      {a.diagnostics?.length ? (
        <ul className="git-sync__diagnostics" data-testid="git-sync-diagnostics">
          {a.diagnostics.map((d) => (
            <li key={d}>
              <code>{d}</code>
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
