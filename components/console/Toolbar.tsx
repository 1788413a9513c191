'use client';

import Link from 'next/link';
import { useState } from 'react';
import type { ApplyState } from './ApplyPanel';
import { withDraft } from './draftId';
import { DraftSwitcher } from './DraftSwitcher';
import { GitOpsPanel } from './GitOpsPanel';
import { LiveSyncChip } from './LiveSyncDialog';
import { RolloutChip } from './RolloutChip';
import { SessionUser } from './SessionUser';
import type { SessionState } from './useSession';
import type { SaveStatus } from './useConsoleDraft';
import type { LiveConnection } from './useLiveEvents';
import type { Theme } from './useTheme';

export interface ToolbarProps {
  canUndo: boolean;
  canRedo: boolean;
  save: SaveStatus;
  session: SessionState;
  connection: LiveConnection | 'no-control-plane';
  apply: ApplyState;
  errors: number;
  theme: Theme;
  onUndo(): void;
  onRedo(): void;
  onImport(): void;
  onExport(): void;
  onApply(): void;
  /** Where Apply goes: the local mesh (default) or, in Kubernetes mode, the cluster (a dry-run first). */
  applyTarget?: 'mesh' | 'cluster';
  onTheme(t: Theme): void;
  onHelp(): void;
  /** Opens the apply history (local mesh and cluster applies); absent where there is none. */
  onHistory?(): void;
  /** Opens "What runs vs. Git"; its chip shows only when what runs is out of sync with Git. */
  onLiveSync?(): void;
  /** Opens a rollout's progress; its chip shows while one runs or is paused, or after one rolled back. */
  onRollout?(id: string): void;
  /**
   * The draft is behind: the mesh directory changed on disk since it started (the files), or in
   * Kubernetes mode mesh objects changed in the cluster (the objects); and opening the review.
   */
  diskDrift?: { where: 'disk' | 'cluster'; files: string[]; onOpen(): void };
  onResolveConflict(choice: 'mine' | 'theirs'): void;
  onSignOut(): void;
  /** The draft being edited, and switching to another. */
  draftId: string;
  onSwitchDraft(id: string): void;
  /** The server replaced the draft (a rebase from the Commit / PR panel): load it again. */
  onDraftReplaced(): void;
  /** The Commit / PR panel, when the console opens it too ("Open PR" of a cluster apply); else the toolbar's own. */
  gitopsOpen?: boolean;
  onGitopsOpen?(open: boolean): void;
}

function saveText(s: SaveStatus): string {
  switch (s.state) {
    case 'loading':
      return 'Loading the draft…';
    case 'saved':
      return `Saved (revision ${s.revision})`;
    case 'dirty':
      return 'Unsaved changes…';
    case 'saving':
      return 'Saving…';
    case 'error':
    case 'conflict':
    case 'local':
      return s.message;
  }
}

/** Undo/redo, import/export, apply, theme, help, and the save, session and live status. */
export function Toolbar(p: ToolbarProps) {
  const applying = p.apply.phase === 'saving' || p.apply.phase === 'applying';
  const canApply = p.session.status === 'signed-in' && p.save.state !== 'local' && p.save.state !== 'loading';
  const [ownGitops, setOwnGitops] = useState(false);
  const gitops = p.gitopsOpen ?? ownGitops;
  const setGitops = p.onGitopsOpen ?? setOwnGitops;
  return (
    <div className="toolbar" role="toolbar" aria-label="Console actions">
      <DraftSwitcher
        draftId={p.draftId}
        canWrite={p.session.status === 'signed-in' && p.save.state !== 'local'}
        onSwitch={p.onSwitchDraft}
      />
      <span className="toolbar__sep" />
      <button
        type="button"
        onClick={p.onUndo}
        disabled={!p.canUndo}
        aria-label="Undo"
        title="Undo (Ctrl+Z)"
        data-testid="undo"
      >
        ↶
      </button>
      <button
        type="button"
        onClick={p.onRedo}
        disabled={!p.canRedo}
        aria-label="Redo"
        title="Redo (Ctrl+Shift+Z)"
        data-testid="redo"
      >
        ↷
      </button>
      <span className="toolbar__sep" />
      <button type="button" onClick={p.onImport} data-testid="import">
        Import
      </button>
      <button type="button" onClick={p.onExport} data-testid="export">
        Export
      </button>
      <span className="toolbar__sep" />
      <button
        type="button"
        className="primary"
        onClick={p.onApply}
        disabled={!canApply || applying}
        title={
          canApply
            ? p.errors > 0
              ? `The draft has ${p.errors} error(s); the server will refuse it`
              : p.applyTarget === 'cluster'
                ? 'Save, then review a server-side dry-run against the cluster before applying'
                : 'Save and apply the draft to the mesh'
            : p.session.status === 'read-only'
              ? p.session.reason
              : 'Applying needs the server that keeps the draft'
        }
        data-testid="apply"
      >
        {applying ? 'Applying…' : 'Apply'}
      </button>
      <button
        type="button"
        onClick={() => setGitops(true)}
        disabled={p.save.state === 'local' || p.save.state === 'loading'}
        title="Commit the draft to the GitOps repository and open a pull request"
        data-testid="gitops-open"
      >
        Commit / PR
      </button>
      {p.onHistory ? (
        <button
          type="button"
          onClick={p.onHistory}
          title="Every apply to the mesh: who, when, what changed, and a way back"
          data-testid="history-open"
        >
          History
        </button>
      ) : null}
      <GitOpsPanel
        open={gitops}
        onClose={() => setGitops(false)}
        canWrite={p.session.status === 'signed-in'}
        draftRevision={p.save.state === 'saved' ? p.save.revision : undefined}
        onDraftReplaced={p.onDraftReplaced}
        {...(p.onLiveSync
          ? {
              onLiveSync: () => {
                setGitops(false);
                p.onLiveSync!();
              },
            }
          : {})}
      />
      <span
        className={`save-status save-status--${p.save.state}`}
        role="status"
        title={saveText(p.save)}
        data-testid="save-status"
      >
        {p.save.state === 'saved' ? (
          <>
            Saved<span className="save-status__detail"> (revision {p.save.revision})</span>
          </>
        ) : (
          saveText(p.save)
        )}
      </span>
      {p.diskDrift ? (
        <button
          type="button"
          className="drift-chip"
          onClick={p.diskDrift.onOpen}
          title={
            p.diskDrift.where === 'cluster'
              ? `Changed in the cluster since this draft started: ${p.diskDrift.files.join('; ')}. Applying the draft as it is would revert it. Review, rebase or start again.`
              : `Changed on disk since this draft started: ${p.diskDrift.files.join(', ') || 'the mesh directory'}. Review, rebase or start again.`
          }
          data-testid="disk-drift"
        >
          {p.diskDrift.where === 'cluster' ? 'Changed in the cluster' : 'Changed on disk'}
        </button>
      ) : null}
      {p.save.state === 'conflict' ? (
        <span className="button-row">
          <button type="button" onClick={() => p.onResolveConflict('theirs')}>
            Load theirs
          </button>
          <button type="button" onClick={() => p.onResolveConflict('mine')}>
            Keep mine
          </button>
        </span>
      ) : null}
      <span className="toolbar__spacer" />
      {p.onRollout ? <RolloutChip onOpen={p.onRollout} /> : null}
      {p.onLiveSync ? <LiveSyncChip onOpen={p.onLiveSync} /> : null}
      <span className={`live-dot live-dot--${p.connection}`} role="status" data-testid="live-status">
        {p.connection === 'open'
          ? 'live'
          : p.connection === 'no-control-plane'
            ? 'no control plane'
            : p.connection === 'connecting'
              ? 'connecting…'
              : 'live updates off'}
      </span>
      <span
        // The user's name (SessionUser) says "signed in" already: the words stay for screen readers.
        className={p.session.status === 'signed-in' && p.session.user ? 'session visually-hidden' : 'session'}
        title={p.session.status === 'read-only' ? p.session.reason : undefined}
        data-testid="session-status"
      >
        {p.session.status === 'signed-in'
          ? 'signed in'
          : p.session.status === 'checking'
            ? 'signing in…'
            : 'read-only'}
      </span>
      <SessionUser session={p.session} />
      {p.session.status === 'signed-in' ? (
        <button
          type="button"
          onClick={p.onSignOut}
          title={`End this browser's console session${p.session.user ? ` (signed in as ${p.session.user})` : ''}`}
          data-testid="sign-out"
        >
          Sign out
        </button>
      ) : null}
      <Link href={withDraft('/proxies', p.draftId)} className="toolbar__link" data-testid="proxies-link">
        Proxies
      </Link>
      <button
        type="button"
        onClick={() => p.onTheme(p.theme === 'dark' ? 'light' : 'dark')}
        aria-label={`Switch to the ${p.theme === 'dark' ? 'light' : 'dark'} theme`}
        data-testid="theme"
      >
        {p.theme === 'dark' ? '☀' : '☾'}
      </button>
      <button type="button" onClick={p.onHelp} aria-label="Keyboard shortcuts" title="Keyboard shortcuts (?)">
        ?
      </button>
    </div>
  );
}
