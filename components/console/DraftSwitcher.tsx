'use client';

import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, memo, useState } from 'react';
import { ApiError, apiFetch, errorMessage } from './api';
import { Dialog } from './Dialog';
import { MAIN_DRAFT_ID } from './draftId';
import { forgetPicture } from './pictureStore';
import { type DraftListEntry, draftsKey, draftsQuery } from './queries';

export interface DraftSwitcherProps {
  draftId: string;
  /** Mutations (new, rename, delete) need a signed-in session. */
  canWrite: boolean;
  /** Switches the console to another draft (the caller saves the current one first). */
  onSwitch(id: string): void;
}

type Mode =
  { kind: 'new' } | { kind: 'rename'; draft: DraftListEntry } | { kind: 'delete'; draft: DraftListEntry };

/** The message and field errors of a refused request, as one line. */
function refusal(e: unknown): string {
  if (e instanceof ApiError && e.fields.length > 0)
    return `${e.message} (${e.fields.map((f) => `${f.path}: ${f.message}`).join('; ')})`;
  return errorMessage(e);
}

/**
 * Several drafts (issue 6 §2): pick one, start a new one (from the base branch or as a copy), rename, delete.
 * Memoized: the toolbar renders on every keystroke, and this list has nothing to do with an edit.
 */
export const DraftSwitcher = memo(function DraftSwitcher(p: DraftSwitcherProps) {
  const queryClient = useQueryClient();
  const list = useQuery(draftsQuery);
  const [mode, setMode] = useState<Mode>();
  const [name, setName] = useState('');
  const [copy, setCopy] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const drafts = list.data ?? [];
  const current = drafts.find((d) => d.id === p.draftId);

  const open = (m: Mode) => {
    setMode(m);
    setError(undefined);
    setName(m.kind === 'rename' ? m.draft.name : '');
    setCopy(false);
  };
  const close = () => {
    if (!busy) setMode(undefined);
  };

  const submit = async (e?: FormEvent) => {
    e?.preventDefault();
    if (!mode) return;
    setError(undefined);
    // Said at once, before a round trip (the server checks it again).
    const taken =
      mode.kind !== 'delete' &&
      drafts.find(
        (d) =>
          d.name.trim().toLowerCase() === name.trim().toLowerCase() &&
          !(mode.kind === 'rename' && d.id === mode.draft.id),
      );
    if (taken) {
      setError(`a draft named "${taken.name}" exists already: choose another name`);
      return;
    }
    setBusy(true);
    try {
      if (mode.kind === 'new') {
        const made = await apiFetch<DraftListEntry & { note?: string }>('/api/drafts', {
          method: 'POST',
          body: { name, ...(copy ? { from: p.draftId } : {}) },
        });
        await queryClient.invalidateQueries({ queryKey: draftsKey });
        setMode(undefined);
        p.onSwitch(made.id);
      } else if (mode.kind === 'rename') {
        await apiFetch(`/api/drafts/${encodeURIComponent(mode.draft.id)}`, {
          method: 'PATCH',
          body: { name },
        });
        await queryClient.invalidateQueries({ queryKey: draftsKey });
        setMode(undefined);
      } else {
        await apiFetch(`/api/drafts/${encodeURIComponent(mode.draft.id)}`, { method: 'DELETE' });
        // A draft made later under the same id starts at revision 0 again: its kept picture must not match.
        forgetPicture(mode.draft.id);
        await queryClient.invalidateQueries({ queryKey: draftsKey });
        setMode(undefined);
        if (mode.draft.id === p.draftId) p.onSwitch(MAIN_DRAFT_ID);
      }
    } catch (err) {
      setError(refusal(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <span className="draft-switcher" data-testid="draft-switcher">
      <label className="draft-switcher__label">
        <span className="visually-hidden">Draft</span>
        <select
          value={p.draftId}
          onChange={(e) => p.onSwitch(e.target.value)}
          aria-label="Draft"
          title="The draft you are editing; each has its own changes against its base commit"
          data-testid="draft-select"
          disabled={list.isError}
        >
          {current ? null : (
            <option value={p.draftId}>{p.draftId === MAIN_DRAFT_ID ? 'Main draft' : p.draftId}</option>
          )}
          {drafts.map((d) => (
            <option key={d.id} value={d.id}>
              {d.name}
            </option>
          ))}
        </select>
      </label>
      <button
        type="button"
        onClick={() => open({ kind: 'new' })}
        disabled={!p.canWrite}
        title="Start another draft, from the base branch or as a copy of this one"
        data-testid="draft-new"
      >
        + Draft
      </button>
      {current && !current.main ? (
        <>
          <button
            type="button"
            onClick={() => open({ kind: 'rename', draft: current })}
            disabled={!p.canWrite}
            aria-label={`Rename the draft ${current.name}`}
            title="Rename this draft"
            data-testid="draft-rename"
          >
            ✎
          </button>
          <button
            type="button"
            onClick={() => open({ kind: 'delete', draft: current })}
            disabled={!p.canWrite}
            aria-label={`Delete the draft ${current.name}`}
            title="Delete this draft (kept aside on the server, not erased)"
            data-testid="draft-delete"
          >
            🗑
          </button>
        </>
      ) : null}
      <Dialog
        open={mode !== undefined}
        title={
          mode?.kind === 'new'
            ? 'New draft'
            : mode?.kind === 'rename'
              ? 'Rename the draft'
              : 'Delete the draft'
        }
        onClose={close}
        testId="draft-dialog"
      >
        <form className="draft-dialog" onSubmit={(e) => void submit(e)}>
          {mode?.kind === 'delete' ? (
            <p>
              Delete <strong>{mode.draft.name}</strong>? Its edits are kept aside in the server&apos;s state
              directory (not erased), but it leaves this list.
            </p>
          ) : (
            <label className="field">
              <span>Name</span>
              <input
                type="text"
                value={name}
                onChange={(e) => setName(e.target.value)}
                maxLength={80}
                required
                autoFocus
                data-testid="draft-name"
              />
            </label>
          )}
          {mode?.kind === 'new' ? (
            <fieldset className="draft-dialog__from">
              <legend>Start from</legend>
              <label>
                <input type="radio" name="from" checked={!copy} onChange={() => setCopy(false)} /> the base
                branch as it is now
              </label>
              <label>
                <input
                  type="radio"
                  name="from"
                  checked={copy}
                  onChange={() => setCopy(true)}
                  data-testid="draft-copy"
                />{' '}
                a copy of {current?.name ?? 'this draft'} (same base commit, same changes)
              </label>
            </fieldset>
          ) : null}
          {error ? (
            <p className="form-error" role="alert" data-testid="draft-error">
              {error}
            </p>
          ) : null}
          <div className="button-row">
            <button type="button" onClick={close} disabled={busy}>
              Cancel
            </button>
            <button
              type="submit"
              className={mode?.kind === 'delete' ? 'danger' : 'primary'}
              disabled={busy || (mode?.kind !== 'delete' && name.trim() === '')}
              data-testid="draft-submit"
            >
              {mode?.kind === 'new' ? 'Create' : mode?.kind === 'rename' ? 'Rename' : 'Delete'}
            </button>
          </div>
        </form>
      </Dialog>
    </span>
  );
});
