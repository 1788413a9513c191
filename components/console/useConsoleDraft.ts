'use client';

import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback, useEffect, useRef, useState } from 'react';
import { applyCommand, type CommandResult, type DraftCommand } from '@/lib/console/draftCommands';
import { type DraftDoc, type DraftState, emptyDraft } from '@/lib/console/draftDoc';
import {
  createHistory,
  type DraftHistory,
  pushHistory,
  redoHistory,
  resetHistory,
  undoHistory,
} from '@/lib/console/draftHistory';
import { ApiError, apiFetch, errorMessage } from './api';
import { useDraftIdKnown, withDraft } from './draftId';
import { draftQuery } from './queries';

export type SaveStatus =
  | { state: 'loading' }
  | { state: 'saved'; revision: number }
  | { state: 'dirty' | 'saving'; revision: number }
  | { state: 'error'; revision: number; message: string }
  | { state: 'conflict'; revision: number; message: string; current: DraftState }
  | { state: 'local'; message: string };

export interface DraftController {
  history: DraftHistory;
  run(cmd: DraftCommand, opts?: { group?: string }): CommandResult;
  undo(): void;
  redo(): void;
  save: SaveStatus;
  /** Saves now (if needed) and returns the saved revision, or null when it cannot be saved. */
  flush(): Promise<number | null>;
  resolveConflict(choice: 'mine' | 'theirs'): void;
  /**
   * Loads the saved draft again after the server replaced it (a rebase): undoable, and refused
   * (false) while edits made here are not saved yet.
   */
  reload(): Promise<boolean>;
}

const AUTOSAVE_MS = 600;

/**
 * The draft being edited: commands with undo/redo, loaded from the server and saved back to it
 * (debounced PUT with the revision it is based on). A save that loses a race (409) keeps both
 * versions and asks; one the server refuses keeps the edit and says why.
 */
export function useConsoleDraft(draftId: string): DraftController {
  const queryClient = useQueryClient();
  // Not before the address is read: a page on a named draft would fetch the main one first.
  const loaded = useQuery({ ...draftQuery(draftId), enabled: useDraftIdKnown() });
  const [history, setHistoryState] = useState<DraftHistory>(() => createHistory(emptyDraft()));
  const historyRef = useRef(history);
  const [save, setSaveState] = useState<SaveStatus>({ state: 'loading' });
  const saveRef = useRef(save);
  const setSave = useCallback((s: SaveStatus | ((prev: SaveStatus) => SaveStatus)) => {
    saveRef.current = typeof s === 'function' ? s(saveRef.current) : s;
    setSaveState(saveRef.current);
  }, []);
  const saved = useRef<{ draft: DraftDoc; revision: number } | null>(null);
  const inFlight = useRef<Promise<number | null> | null>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const initialised = useRef(false);

  const setHistory = useCallback((h: DraftHistory) => {
    historyRef.current = h;
    setHistoryState(h);
  }, []);

  useEffect(() => {
    if (initialised.current) return;
    if (loaded.data) {
      initialised.current = true;
      saved.current = { draft: loaded.data.draft, revision: loaded.data.revision };
      setHistory(resetHistory(historyRef.current, loaded.data.draft));
      setSave({ state: 'saved', revision: loaded.data.revision });
    } else if (loaded.error) {
      initialised.current = true;
      const why =
        loaded.error instanceof ApiError && loaded.error.unavailable
          ? 'the server keeps no draft (start the console with `meshdeck serve`)'
          : errorMessage(loaded.error);
      setSave({ state: 'local', message: `Not saved: ${why}. Edits stay in this tab.` });
    }
  }, [loaded.data, loaded.error, setHistory, setSave]);

  const doSave = useCallback(async (): Promise<number | null> => {
    // One save at a time; a save asked for meanwhile runs after it, on the newest draft.
    while (inFlight.current) await inFlight.current;
    const base = saved.current;
    if (!base) return null;
    const draft = historyRef.current.present;
    if (draft === base.draft) return base.revision;
    setSave({ state: 'saving', revision: base.revision });
    const p = (async (): Promise<number | null> => {
      try {
        const r = await apiFetch<{ revision: number; updatedAt: string }>(withDraft('/api/draft', draftId), {
          method: 'PUT',
          body: { draft, baseRevision: base.revision },
        });
        saved.current = { draft, revision: r.revision };
        const clean = historyRef.current.present === draft;
        setSave(clean ? { state: 'saved', revision: r.revision } : { state: 'dirty', revision: r.revision });
        return r.revision;
      } catch (e) {
        const body = e instanceof ApiError ? (e.body as { current?: DraftState } | undefined) : undefined;
        if (e instanceof ApiError && e.status === 409 && body?.current) {
          setSave({ state: 'conflict', revision: base.revision, message: e.message, current: body.current });
        } else {
          const fields =
            e instanceof ApiError ? e.fields.map((f) => `${f.path}: ${f.message}`).join('; ') : '';
          setSave({
            state: 'error',
            revision: base.revision,
            message: `Not saved (your edits are kept here): ${errorMessage(e)}${fields ? ` (${fields})` : ''}`,
          });
        }
        return null;
      } finally {
        inFlight.current = null;
      }
    })();
    inFlight.current = p;
    return p;
  }, [setSave, draftId]);

  // Autosave shortly after the last edit.
  useEffect(() => {
    const base = saved.current;
    if (!base) return;
    if (history.present === base.draft) {
      // Back at what the server has (an undo, or the render before the loaded draft showed): nothing to save.
      setSave((s) => (s.state === 'dirty' ? { state: 'saved', revision: s.revision } : s));
      return;
    }
    setSave((s) => (s.state === 'saved' ? { state: 'dirty', revision: s.revision } : s));
    clearTimeout(timer.current);
    timer.current = setTimeout(() => {
      // A conflict waits for the user's choice.
      if (saveRef.current.state !== 'conflict') void doSave();
    }, AUTOSAVE_MS);
    return () => clearTimeout(timer.current);
  }, [history.present, doSave, setSave]);

  // Leaving with unsaved edits asks first.
  useEffect(() => {
    const onBeforeUnload = (e: BeforeUnloadEvent) => {
      if (saved.current && historyRef.current.present !== saved.current.draft) e.preventDefault();
    };
    window.addEventListener('beforeunload', onBeforeUnload);
    return () => window.removeEventListener('beforeunload', onBeforeUnload);
  }, []);

  const run = useCallback(
    (cmd: DraftCommand, opts: { group?: string } = {}): CommandResult => {
      const r = applyCommand(historyRef.current.present, cmd);
      if (r.ok) setHistory(pushHistory(historyRef.current, r.draft, { group: opts.group, at: Date.now() }));
      return r;
    },
    [setHistory],
  );

  const resolveConflict = useCallback(
    (choice: 'mine' | 'theirs') => {
      const s = saveRef.current;
      if (s.state !== 'conflict') return;
      saved.current = { draft: s.current.draft, revision: s.current.revision };
      if (choice === 'theirs') {
        // Undoable: the edits made here are one Ctrl+Z away.
        setHistory(pushHistory(historyRef.current, s.current.draft));
        setSave({ state: 'saved', revision: s.current.revision });
        return;
      }
      setSave({ state: 'dirty', revision: s.current.revision });
      void doSave();
    },
    [doSave, setHistory, setSave],
  );

  const reload = useCallback(async (): Promise<boolean> => {
    while (inFlight.current) await inFlight.current;
    if (saved.current && historyRef.current.present !== saved.current.draft) return false;
    let state: DraftState;
    try {
      state = await queryClient.fetchQuery({ ...draftQuery(draftId), staleTime: 0 });
    } catch (e) {
      setSave({
        state: 'error',
        revision: saved.current?.revision ?? 0,
        message: `Not reloaded: ${errorMessage(e)}`,
      });
      return false;
    }
    saved.current = { draft: state.draft, revision: state.revision };
    // Undoable like "Load theirs": the draft as it was is one Ctrl+Z away.
    setHistory(pushHistory(historyRef.current, state.draft));
    setSave({ state: 'saved', revision: state.revision });
    return true;
  }, [draftId, queryClient, setHistory, setSave]);

  return {
    history,
    run,
    reload,
    undo: useCallback(() => setHistory(undoHistory(historyRef.current)), [setHistory]),
    redo: useCallback(() => setHistory(redoHistory(historyRef.current)), [setHistory]),
    save,
    flush: doSave,
    resolveConflict,
  };
}
