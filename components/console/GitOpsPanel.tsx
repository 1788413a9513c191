'use client';

import { useCallback, useEffect, useRef, useState } from 'react';
import type { RebaseConflict } from '@/lib/gitops';
import type {
  CommitRecord,
  GitOpsErrorBody,
  GitOpsStatus,
  RebaseAnswer,
} from '@/server/gitops/GitOpsService';
import { ApiError, apiFetch, errorMessage } from './api';
import { Dialog } from './Dialog';
import { useDraftId, withDraft } from './draftId';
import { outOfSync, useLiveSync } from './LiveSyncDialog';
import './gitopsPanel.css';

export interface GitOpsPanelProps {
  open: boolean;
  onClose(): void;
  /** Mutations need a signed-in session. */
  canWrite: boolean;
  /** The saved draft's revision (undefined while an edit is unsaved): the status follows it. */
  draftRevision: number | undefined;
  /** A rebase replaced the draft on the server: the console loads it again (no page reload). */
  onDraftReplaced?(): void;
  /** Opens "What runs vs. Git" (the panel says whether what runs is what the base branch says). */
  onLiveSync?(): void;
}

type Busy = 'status' | 'rebase' | 'resolve' | 'commit' | undefined;

/** The error a GitOps route answered: git's or the provider's own words, and the hint. */
function errorText(e: unknown): { message: string; detail?: string } {
  if (e instanceof ApiError) {
    const b = e.body as GitOpsErrorBody | undefined;
    if (b?.provider)
      return { message: `${b.provider.provider}: ${b.provider.message}`, detail: b.provider.hint };
    if (b?.git) return { message: b.error, detail: b.git.hint };
    return { message: e.message };
  }
  return { message: (e as Error).message };
}

/** Commit / PR: the draft's changes against its base commit, rebase with conflicts, commit and pull request. */
export function GitOpsPanel(p: GitOpsPanelProps) {
  const draftId = useDraftId();
  const [status, setStatus] = useState<GitOpsStatus>();
  const [busy, setBusy] = useState<Busy>();
  const [error, setError] = useState<{ message: string; detail?: string }>();
  const [branch, setBranch] = useState('');
  const [message, setMessage] = useState('');
  const [edited, setEditedState] = useState(false);
  const editedRef = useRef(false);
  const setEdited = (v: boolean) => {
    editedRef.current = v;
    setEditedState(v);
  };
  const [result, setResult] = useState<CommitRecord>();
  const [rebased, setRebased] = useState(false);

  const load = useCallback(async () => {
    setBusy('status');
    try {
      const s = await apiFetch<GitOpsStatus>(withDraft('/api/gitops/status', draftId));
      setStatus(s);
      setError(undefined);
      if (!editedRef.current) {
        setBranch(s.proposal.branch);
        setMessage(s.proposal.message);
      }
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(undefined);
    }
  }, [draftId]);

  useEffect(() => {
    if (!p.open || p.draftRevision === undefined) return;
    // The status follows saved revisions (a timer: the effect itself sets no state).
    const t = setTimeout(() => void load(), 0);
    return () => clearTimeout(t);
  }, [p.open, p.draftRevision, load]);

  const run = async <T,>(what: Busy, url: string, body?: unknown): Promise<T | undefined> => {
    setBusy(what);
    setError(undefined);
    try {
      return await apiFetch<T>(withDraft(url, draftId), {
        method: 'POST',
        ...(body !== undefined ? { body } : {}),
      });
    } catch (e) {
      setError(errorText(e));
      const b = e instanceof ApiError ? (e.body as GitOpsErrorBody | undefined) : undefined;
      if (b?.conflicts) await load();
      return undefined;
    } finally {
      setBusy(undefined);
    }
  };

  const afterRebase = async (r: RebaseAnswer | undefined) => {
    if (r?.state === 'rebased') {
      setRebased(true);
      p.onDraftReplaced?.();
    }
    await load();
  };

  const commit = async () => {
    const r = await run<CommitRecord>('commit', '/api/gitops/commit', { branch, message });
    if (r) setResult(r);
    await load();
  };

  // After a reload or a reopen the server's record of the last commit keeps its pull request in reach.
  const shown = result ?? status?.lastCommit;
  const changes = status?.changes;
  const count = (changes?.objects.length ?? 0) + (changes?.files.length ?? 0);
  const conflicts = status?.rebase?.conflicts ?? [];
  const disabled = !p.canWrite || busy !== undefined;

  return (
    <Dialog open={p.open} title="Commit / PR" onClose={p.onClose} testId="gitops-panel">
      <div className="gitops">
        {status ? (
          <p className="gitops__repo" data-testid="gitops-repo">
            {status.repository.source.kind === 'url'
              ? status.repository.source.url
              : status.repository.source.path}{' '}
            · <code>{status.baseBranch}</code> · <code>{status.repository.meshDir}</code> · base{' '}
            <code>{status.baseCommit.slice(0, 10)}</code>
            {status.forge ? ` · pull requests on ${status.repository.provider?.kind}` : ' · no forge (local)'}
          </p>
        ) : null}
        {p.onLiveSync ? <LiveSyncLine onOpen={p.onLiveSync} /> : null}
        {p.draftRevision === undefined ? <p className="gitops__muted">Saving the draft…</p> : null}
        {busy === 'status' && !status ? <p className="gitops__muted">Reading the repository…</p> : null}
        {status?.fetchError ? (
          <p className="gitops__warn">
            Could not fetch:{' '}
            {'hint' in status.fetchError ? status.fetchError.hint : status.fetchError.message}
          </p>
        ) : null}

        {status?.baseMoved && conflicts.length === 0 ? (
          <div className="gitops__banner" data-testid="gitops-base-moved">
            {status.baseBranch} changed while you edited (now <code>{status.baseTip?.slice(0, 10)}</code>).
            <button
              type="button"
              disabled={disabled}
              onClick={async () => afterRebase(await run<RebaseAnswer>('rebase', '/api/gitops/rebase'))}
              data-testid="gitops-rebase"
            >
              {busy === 'rebase' ? 'Rebasing…' : 'Base moved: rebase'}
            </button>
          </div>
        ) : null}
        {rebased ? (
          <div className="gitops__banner" data-testid="gitops-rebased">
            The draft was rebased on the server and loaded here again (Ctrl+Z shows it as it was).
          </div>
        ) : null}

        {conflicts.length > 0 ? (
          <section data-testid="gitops-conflicts">
            <h3>Conflicts ({conflicts.length})</h3>
            {conflicts.map((c) => (
              <ConflictView
                key={c.key}
                conflict={c}
                disabled={disabled}
                onResolve={async (choice) =>
                  afterRebase(
                    await run<RebaseAnswer>('resolve', '/api/gitops/resolve', { key: c.key, choice }),
                  )
                }
              />
            ))}
          </section>
        ) : null}

        {changes ? (
          <section>
            <h3>Changes ({count})</h3>
            {count === 0 ? <p className="gitops__muted">The draft is the same as its base commit.</p> : null}
            <ul className="gitops__changes" data-testid="gitops-changes">
              {changes.objects.map((c) => (
                <li key={c.key}>
                  <span className={`gitops__kind gitops__kind--${c.change}`}>{c.change}</span>{' '}
                  <code>
                    {c.kind} {c.namespace}/{c.name}
                  </code>{' '}
                  <span className="gitops__muted">
                    {c.file}:{c.line}
                  </span>
                </li>
              ))}
              {changes.files.map((f) => (
                <li key={f.path}>
                  <span className="gitops__kind">{f.change}</span> <code>{f.path}</code>{' '}
                  <span className="gitops__muted">({f.what})</span>
                </li>
              ))}
            </ul>
          </section>
        ) : null}

        {status && status.rendered.diagnostics.length > 0 ? (
          <section>
            <h3>Diagnostics</h3>
            <ul className="field-errors" data-testid="gitops-diagnostics">
              {status.rendered.diagnostics.map((d, i) => (
                <li key={i} className={`field-error field-error--${d.severity}`}>
                  {d.message}
                </li>
              ))}
            </ul>
          </section>
        ) : null}

        {status && status.rendered.proxies.length > 0 ? (
          <section>
            <h3>Per proxy</h3>
            <ul className="gitops__changes" data-testid="gitops-proxies">
              {status.rendered.proxies.map((r) => (
                <li key={r.proxy}>
                  <code>{r.proxy}</code> {r.status}: {r.l7mp.length} l7mp operation(s)
                  {(['listeners', 'routes', 'clusters', 'endpoints'] as const).map((t) => {
                    const n = r.xds[t].added.length + r.xds[t].changed.length + r.xds[t].removed.length;
                    return n > 0 ? `, ${n} ${t}` : '';
                  })}
                </li>
              ))}
            </ul>
          </section>
        ) : null}

        {status ? (
          <details className="gitops__body">
            <summary>Pull request description</summary>
            <pre data-testid="gitops-pr-body">{status.proposal.body}</pre>
          </details>
        ) : null}

        {status ? (
          <section className="gitops__form">
            <label>
              Branch
              <input
                value={branch}
                onChange={(e) => {
                  setEdited(true);
                  setBranch(e.target.value);
                }}
                data-testid="gitops-branch"
                spellCheck={false}
              />
            </label>
            <label>
              Commit message
              <textarea
                value={message}
                rows={5}
                onChange={(e) => {
                  setEdited(true);
                  setMessage(e.target.value);
                }}
                data-testid="gitops-message"
              />
            </label>
            <div className="button-row">
              <button
                type="button"
                className="primary"
                disabled={
                  disabled || count === 0 || conflicts.length > 0 || !branch.trim() || !message.trim()
                }
                title={p.canWrite ? undefined : 'Committing needs a signed-in session'}
                onClick={() => void commit()}
                data-testid="gitops-commit"
              >
                {busy === 'commit'
                  ? 'Committing…'
                  : status.forge
                    ? 'Commit & push, open PR'
                    : 'Commit & push'}
              </button>
              {edited ? (
                <button
                  type="button"
                  onClick={() => {
                    setEdited(false);
                    setBranch(status.proposal.branch);
                    setMessage(status.proposal.message);
                  }}
                >
                  Use the proposals
                </button>
              ) : null}
            </div>
          </section>
        ) : null}

        {error ? (
          <div className="gitops__error" role="alert" data-testid="gitops-error">
            <strong>{error.message}</strong>
            {error.detail ? <p>{error.detail}</p> : null}
            <p className="gitops__muted">The draft is kept.</p>
          </div>
        ) : null}

        {shown ? (
          <div className="gitops__result" role="status" data-testid="gitops-result">
            {result ? null : 'Last commit: '}
            {shown.pullRequest ? (
              <>
                Pull request{' '}
                <a
                  href={shown.pullRequest.url}
                  title={shown.pullRequest.url}
                  target="_blank"
                  rel="noreferrer"
                  data-testid="gitops-pr-link"
                >
                  #{shown.pullRequest.number}
                </a>{' '}
                {shown.pullRequest.created ? 'opened' : '(already open)'} from{' '}
                <code data-testid="gitops-pushed-branch">{shown.branch}</code> (
                <code>{shown.commit.slice(0, 10)}</code>).
              </>
            ) : (
              <>
                Pushed <code data-testid="gitops-pushed-branch">{shown.branch}</code> (
                <code>{shown.commit.slice(0, 10)}</code>). {shown.note}
              </>
            )}
          </div>
        ) : null}
      </div>
    </Dialog>
  );
}

/** One line: whether what runs is what the base branch says, and the way to the detail. */
function LiveSyncLine(p: { onOpen(): void }) {
  const q = useLiveSync();
  if (q.data === null) return null;
  const n = q.data ? outOfSync(q.data) : undefined;
  return (
    <p className="gitops__muted" data-testid="gitops-live-sync">
      What runs:{' '}
      {q.isError
        ? `not compared with Git (${errorMessage(q.error)})`
        : n === undefined
          ? 'comparing with Git…'
          : n === 0
            ? `in sync with ${q.data!.baseBranch}`
            : `${n} object${n === 1 ? '' : 's'} out of sync with ${q.data!.baseBranch}`}{' '}
      <button type="button" className="link-button" onClick={p.onOpen}>
        What runs vs. Git
      </button>
    </p>
  );
}

function ConflictView(p: {
  conflict: RebaseConflict;
  disabled: boolean;
  onResolve(choice: 'ours' | 'theirs' | { text: string }): Promise<void>;
}) {
  const c = p.conflict;
  const [text, setText] = useState<string>();
  return (
    <div className="gitops__conflict" data-testid="gitops-conflict">
      <p>
        <code>{c.key}</code> — {c.reason}
      </p>
      <div className="gitops__sides">
        <div>
          <h4>Ours (the draft)</h4>
          <pre>{c.ours?.text ?? '(deleted)'}</pre>
        </div>
        <div>
          <h4>Theirs ({'base branch'})</h4>
          <pre>{c.theirs?.text ?? '(deleted)'}</pre>
        </div>
      </div>
      {text !== undefined ? (
        <textarea className="gitops__edit" rows={10} value={text} onChange={(e) => setText(e.target.value)} />
      ) : null}
      <div className="button-row">
        <button type="button" disabled={p.disabled} onClick={() => void p.onResolve('ours')}>
          Keep ours
        </button>
        <button type="button" disabled={p.disabled} onClick={() => void p.onResolve('theirs')}>
          Keep theirs
        </button>
        {text === undefined ? (
          <button
            type="button"
            disabled={p.disabled}
            onClick={() => setText(c.ours?.text ?? c.theirs?.text ?? '')}
          >
            Edit
          </button>
        ) : (
          <button type="button" disabled={p.disabled} onClick={() => void p.onResolve({ text })}>
            Use my text
          </button>
        )}
      </div>
    </div>
  );
}
