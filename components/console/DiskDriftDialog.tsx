'use client';

import { useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import {
  type ClusterChange,
  clusterChangeConsequence,
  clusterChangeLabel,
  meshFilesOnly,
} from '@/lib/console/clusterDrift';
import type { DiskConflictChoice, DiskState } from '@/lib/console/diskDrift';
import type { DraftDoc } from '@/lib/console/draftDoc';
import { filesDiff } from '@/lib/console/filesDiff';
import type { RebaseConflict } from '@/lib/gitops/rebaseDraft';
import type { RebaseOnDiskAnswer } from '@/server/console/diskDrift';
import { ApiError, apiFetch, errorMessage } from './api';
import { Dialog } from './Dialog';
import { FilesDiffView } from './FilesDiffView';
import { withDraft } from './draftId';
import { diskStateQuery } from './queries';
import './historyDialog.css';

export interface DiskDriftDialogProps {
  open: boolean;
  draftId: string;
  /** The disk's content hash (DiskSummary): its files are read when the dialog opens. */
  diskHash: string;
  /** The draft being edited. */
  draft: DraftDoc;
  /**
   * Kubernetes mode (the mesh directory mirrors the cluster): the mesh objects changed in the cluster
   * since the draft started. The dialog then speaks of the cluster and leaves out its `cluster.yaml`
   * files (Services, Pods, EndpointSlices: never applied from the console).
   */
  clusterChanges?: ClusterChange[];
  canWrite: boolean;
  /** Saves the draft's edits; the revision saved, or null if it could not be saved. */
  flush(): Promise<number | null>;
  /** The server replaced the draft (rebased or started again): load it (undoable). */
  onReplaced(message: string): void;
  onClose(): void;
}

type Compare = 'disk' | 'draft';

/** The dialog's words for a mesh directory on disk, or for the cluster it mirrors (Kubernetes mode). */
const WORDS = {
  disk: {
    title: 'Files changed on disk',
    reading: 'Reading the mesh directory…',
    unreadable: 'The mesh directory could not be read',
    intro:
      'The mesh directory changed since this draft started. The proxies already run the files on disk; applying the draft as it is would overwrite those changes.',
    side: 'disk',
    whatChanged: 'What changed on disk',
    reset: 'Start again from the disk',
    resetTitle: 'Drop the draft’s edits and start again from the files on disk',
    rebase: 'Rebase my draft onto the disk',
    rebaseTitle: 'Carry the draft’s own changes over onto the files on disk, object by object',
    rebased: 'Rebased onto the files on disk',
    restarted: 'The draft starts again from the files on disk.',
    onlyThere: 'only on disk',
    same: 'Your draft has exactly the files on disk.',
    theirs: 'Take the disk’s',
  },
  cluster: {
    title: 'Changed in the cluster',
    reading: 'Reading the cluster’s objects…',
    unreadable: 'The cluster’s objects could not be read',
    intro:
      'These mesh objects changed in the cluster since this draft started (kubectl, a GitOps tool, another console), and the proxies already run them:',
    side: 'cluster',
    whatChanged: 'What changed in the cluster',
    reset: 'Start again from the cluster',
    resetTitle: 'Drop the draft’s edits and start again from the cluster’s objects',
    rebase: 'Rebase my draft onto the cluster',
    rebaseTitle: 'Carry the draft’s own changes over onto the cluster’s objects, object by object',
    rebased: 'Rebased onto the cluster’s objects',
    restarted: 'The draft starts again from the cluster’s objects.',
    onlyThere: 'only in the cluster',
    same: 'Your draft has exactly the cluster’s mesh objects.',
    theirs: 'Take the cluster’s',
  },
} as const;

type Words = (typeof WORDS)[keyof typeof WORDS];

/**
 * The mesh directory changed on disk since the draft started (a `git pull`, an editor, another
 * console): what changed there, what Apply would now overwrite, and the ways on: rebase the draft's
 * own changes onto the disk's files object by object (conflicts settled here), or start again from
 * the disk. Both replace the draft on the server and load it here, one Ctrl+Z from the draft as it was.
 */
export function DiskDriftDialog(p: DiskDriftDialogProps) {
  const disk = useQuery({ ...diskStateQuery(p.draftId, p.diskHash), enabled: p.open });
  const w = p.clusterChanges ? WORDS.cluster : WORDS.disk;
  return (
    <Dialog open={p.open} title={w.title} onClose={p.onClose} testId="disk-drift-dialog" wide>
      {disk.isPending ? (
        <p className="history__muted">{w.reading}</p>
      ) : disk.isError ? (
        <p className="history__error" role="alert" data-testid="drift-error">
          {w.unreadable}: {errorMessage(disk.error)}
        </p>
      ) : (
        <DriftReview {...p} w={w} disk={disk.data} />
      )}
    </Dialog>
  );
}

function DriftReview(p: DiskDriftDialogProps & { w: Words; disk: DiskState }) {
  const { w } = p;
  const [compare, setCompare] = useState<Compare>(p.disk.base ? 'disk' : 'draft');
  const [conflicts, setConflicts] = useState<RebaseConflict[]>([]);
  const [choices, setChoices] = useState<Record<string, DiskConflictChoice>>({});
  const [busy, setBusy] = useState<'rebase' | 'reset' | undefined>();
  const [error, setError] = useState<string>();
  const [confirmReset, setConfirmReset] = useState(false);
  const base = p.disk.base;
  const onCluster = p.clusterChanges !== undefined;
  const diff = useMemo(() => {
    const view = onCluster ? meshFilesOnly : (d: DraftDoc) => d;
    return compare === 'disk' && base
      ? filesDiff(view(base), view(p.disk.disk))
      : filesDiff(view(p.disk.disk), view(p.draft));
  }, [compare, base, p.disk.disk, p.draft, onCluster]);

  const rebase = async () => {
    setBusy('rebase');
    setError(undefined);
    try {
      const revision = await p.flush();
      if (revision === null) {
        setError('The draft could not be saved, so it was not rebased (see the save status).');
        return;
      }
      const r = await apiFetch<RebaseOnDiskAnswer>(withDraft('/api/draft/rebase', p.draftId), {
        method: 'POST',
        body: { revision, ...(Object.keys(choices).length ? { choices } : {}) },
      });
      const n = r.merged.length;
      p.onReplaced(
        `${w.rebased}; your change${n === 1 ? '' : 's'} to ${n} object${n === 1 ? '' : 's'} carried over${
          r.notes.length ? ` (${r.notes.join('; ')})` : ''
        }. Ctrl+Z shows the draft as it was.`,
      );
      p.onClose();
    } catch (e) {
      const body =
        e instanceof ApiError ? (e.body as { conflicts?: RebaseConflict[] } | undefined) : undefined;
      if (body?.conflicts?.length) {
        setConflicts(body.conflicts);
        // A choice for a conflict that is gone would be refused: keep only the current ones.
        setChoices((c) =>
          Object.fromEntries(Object.entries(c).filter(([k]) => body.conflicts!.some((x) => x.key === k))),
        );
      }
      setError(errorMessage(e));
    } finally {
      setBusy(undefined);
    }
  };

  const reset = async () => {
    if (!confirmReset) {
      setConfirmReset(true);
      return;
    }
    setBusy('reset');
    setError(undefined);
    try {
      await apiFetch(withDraft('/api/draft/reset', p.draftId), { method: 'POST' });
      p.onReplaced(`${w.restarted} Ctrl+Z shows the draft as it was.`);
      p.onClose();
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(undefined);
      setConfirmReset(false);
    }
  };

  const unresolved = conflicts.filter((c) => choices[c.key] === undefined).length;
  const noWrite = p.canWrite ? undefined : 'Sign in to change the draft';
  return (
    <div className="drift">
      <p className="history__muted">{w.intro}</p>
      {p.clusterChanges?.length ? (
        <ul className="drift__objects" data-testid="drift-cluster-changes">
          {p.clusterChanges.map((c) => (
            <li key={c.key}>
              {clusterChangeLabel(c)}: <span className="history__muted">{clusterChangeConsequence(c)}</span>
            </li>
          ))}
        </ul>
      ) : null}
      <div className="history__actions">
        <div className="segmented" role="group" aria-label="Compare">
          <button
            type="button"
            aria-pressed={compare === 'disk'}
            disabled={!base}
            title={base ? undefined : 'This draft does not know the files it started from'}
            onClick={() => setCompare('disk')}
            data-testid="drift-compare-disk"
          >
            {w.whatChanged}
          </button>
          <button
            type="button"
            aria-pressed={compare === 'draft'}
            onClick={() => setCompare('draft')}
            data-testid="drift-compare-draft"
          >
            What Apply would overwrite
          </button>
        </div>
        <span className="history__spacer" />
        <button
          type="button"
          onClick={() => void reset()}
          disabled={!p.canWrite || busy !== undefined}
          title={noWrite ?? w.resetTitle}
          data-testid="drift-reset"
        >
          {confirmReset ? 'Drop my edits? Click again' : w.reset}
        </button>
        <button
          type="button"
          className="primary"
          onClick={() => void rebase()}
          disabled={!p.canWrite || !base || busy !== undefined || unresolved > 0}
          title={
            noWrite ??
            (!base
              ? 'This draft does not know the files it started from, so it cannot be rebased'
              : unresolved > 0
                ? `Choose a version for ${unresolved} conflict(s) first`
                : w.rebaseTitle)
          }
          data-testid="drift-rebase"
        >
          {busy === 'rebase' ? 'Rebasing…' : conflicts.length ? 'Rebase with these choices' : w.rebase}
        </button>
      </div>
      {error ? (
        <p className="history__error" role="alert" data-testid="drift-error">
          {error}
        </p>
      ) : null}
      {conflicts.length ? (
        <section className="drift__conflicts" data-testid="drift-conflicts" aria-label="Conflicts">
          {conflicts.map((c) => (
            <ConflictChoiceView
              key={c.key}
              conflict={c}
              choice={choices[c.key]}
              theirsLabel={w.theirs}
              onChoose={(choice) => setChoices((cs) => ({ ...cs, [c.key]: choice }))}
            />
          ))}
        </section>
      ) : null}
      <FilesDiffView
        diff={diff}
        before={compare === 'disk' ? 'base' : w.side}
        after={compare === 'disk' ? w.side : 'draft'}
        badges={
          compare === 'disk'
            ? undefined
            : { added: 'only in your draft', deleted: w.onlyThere, modified: 'differs' }
        }
        none={compare === 'disk' ? 'No file differs from the draft’s base.' : w.same}
        testId="drift-files"
      />
    </div>
  );
}

function ConflictChoiceView({
  conflict: c,
  choice,
  theirsLabel,
  onChoose,
}: {
  conflict: RebaseConflict;
  choice: DiskConflictChoice | undefined;
  theirsLabel: string;
  onChoose(choice: DiskConflictChoice): void;
}) {
  return (
    <div className="drift__conflict" data-testid={`drift-conflict-${c.key}`}>
      <p>
        <code>{c.key}</code>: {c.reason}
      </p>
      <div className="drift__sides">
        <label className={choice === 'ours' ? 'drift__side drift__side--chosen' : 'drift__side'}>
          <input
            type="radio"
            name={`conflict-${c.key}`}
            checked={choice === 'ours'}
            onChange={() => onChoose('ours')}
            data-testid="drift-choose-ours"
          />{' '}
          Keep mine (the draft)
          <pre>{c.ours?.text ?? '(deleted)'}</pre>
        </label>
        <label className={choice === 'theirs' ? 'drift__side drift__side--chosen' : 'drift__side'}>
          <input
            type="radio"
            name={`conflict-${c.key}`}
            checked={choice === 'theirs'}
            onChange={() => onChoose('theirs')}
            data-testid="drift-choose-theirs"
          />{' '}
          {theirsLabel}
          <pre>{c.theirs?.text ?? '(deleted)'}</pre>
        </label>
      </div>
    </div>
  );
}
