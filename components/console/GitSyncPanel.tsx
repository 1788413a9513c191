'use client';

import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import {
  type AutoSyncPolicy,
  isAutoSyncOn,
  type SyncAttempt,
  type SyncPolicyChange,
} from '@/lib/gitops/autoSync';
import type { SyncView } from '@/server/gitops/GitAutoSync';
import type { LiveSyncStatus } from '@/server/gitops/GitOpsService';
import { apiFetch, errorMessage } from './api';
import { appliesKey, liveSyncKey } from './queries';

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
 * Sync from Git in the "What runs vs. Git" dialog: the automated sync policy with its toggles, the last
 * sync (or the commit held with its errors) and Sync now, which writes the base branch's tip to what runs
 * after the same checks as Apply.
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
        {isAutoSyncOn(policy) ? (
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
            Automated sync: off: what runs changes only by Apply and Sync now. Turn it on to have what runs
            follow <code>{p.status.baseBranch}</code>.
          </>
        )}
      </p>
      <SyncPolicyToggles sync={sync} canWrite={p.canWrite} />
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

/** What the toggles show: on or off, and prune and self-heal (kept while off). */
interface PolicyToggles {
  on: boolean;
  prune: boolean;
  selfHeal: boolean;
}

/** What a change of the toggles does, for its error: "turn automated sync on", "turn prune off". */
function changeText(from: PolicyToggles, to: PolicyToggles): string {
  if (from.on !== to.on) return `turn automated sync ${to.on ? 'on' : 'off'}`;
  if (from.prune !== to.prune) return `turn prune ${to.prune ? 'on' : 'off'}`;
  return `turn self-heal ${to.selfHeal ? 'on' : 'off'}`;
}

function togglesOf(policy: AutoSyncPolicy | undefined): PolicyToggles {
  return { on: isAutoSyncOn(policy), prune: policy?.prune ?? false, selfHeal: policy?.selfHeal ?? false };
}

/**
 * Argo CD's "Enable Auto-Sync", "Prune resources" and "Self heal": each change is saved at once (PUT
 * /api/gitops/sync/policy) and shown as asked while it is saved; prune and self-heal wait for the automated
 * sync. Read-only without a session, or where the server says the policy is configured elsewhere.
 */
function SyncPolicyToggles(p: { sync: SyncView; canWrite: boolean }) {
  const queryClient = useQueryClient();
  const noteId = useId();
  const saved = togglesOf(p.sync.policy);
  // What was asked, set in the change handler itself: the mutation's own pending state reaches React a
  // timer tick later, and until then a controlled checkbox would snap back to the saved value.
  const [asked, setAsked] = useState<PolicyToggles | null>(null);
  const mutation = useMutation({
    mutationFn: (next: PolicyToggles) =>
      apiFetch<{ changed: boolean; sync: SyncView }>('/api/gitops/sync/policy', {
        method: 'PUT',
        body: {
          autoSync: next.on ? { prune: next.prune, selfHeal: next.selfHeal } : null,
        } satisfies SyncPolicyChange,
      }),
    // The answer's view at once; the dialog's query read again for the rest (the comparison it started).
    onSuccess: (r) =>
      queryClient.setQueryData<LiveSyncAnswer | null>(liveSyncKey, (old) =>
        old ? { ...old, sync: r.sync } : old,
      ),
    onSettled: () => {
      setAsked(null);
      return queryClient.invalidateQueries({ queryKey: liveSyncKey });
    },
  });
  const shown = asked ?? saved;
  const why = p.canWrite ? p.sync.policyReadOnly : 'Changing the policy needs a signed-in session';
  const locked = why !== undefined || asked !== null;
  const set = (change: Partial<PolicyToggles>) => {
    const next = { ...shown, ...change };
    setAsked(next);
    mutation.mutate(next);
  };
  const changed = p.sync.policyChangedBy
    ? `changed by ${p.sync.policyChangedBy}${p.sync.policyChangedAt ? `, ${new Date(p.sync.policyChangedAt).toLocaleString()}` : ''}`
    : '';
  return (
    <>
      <fieldset
        className="git-sync__auto"
        aria-describedby={why ? noteId : undefined}
        aria-busy={asked !== null}
        data-testid="git-sync-auto"
      >
        <legend className="visually-hidden">Automated sync policy</legend>
        <label title="Write each new commit of the base branch to what runs once it passes the checks Apply makes">
          <input
            type="checkbox"
            checked={shown.on}
            disabled={locked}
            onChange={(e) => set({ on: e.target.checked })}
            data-testid="git-sync-auto-on"
          />
          Sync automatically
        </label>
        <label title="With the automated sync: also remove what runs but is not in Git">
          <input
            type="checkbox"
            checked={shown.prune}
            disabled={locked || !shown.on}
            onChange={(e) => set({ prune: e.target.checked })}
            data-testid="git-sync-auto-prune"
          />
          Prune
        </label>
        <label title="With the automated sync: also put back what was changed outside Git when Git did not move">
          <input
            type="checkbox"
            checked={shown.selfHeal}
            disabled={locked || !shown.on}
            onChange={(e) => set({ selfHeal: e.target.checked })}
            data-testid="git-sync-auto-self-heal"
          />
          Self-heal
        </label>
        <span className="git-sync__auto-state" role="status" data-testid="git-sync-auto-state">
          {asked ? 'Saving…' : changed}
        </span>
      </fieldset>
      {why ? (
        <p className="git-sync__note" id={noteId} data-testid="git-sync-auto-note">
          {why}
        </p>
      ) : null}
      {mutation.isError && mutation.variables ? (
        <p className="field-error" role="alert" data-testid="git-sync-auto-error">
          Could not {changeText(saved, mutation.variables)}: {errorMessage(mutation.error)}
        </p>
      ) : null}
    </>
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
