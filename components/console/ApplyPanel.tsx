'use client';

import { useCallback, useState } from 'react';
import type { Diagnostic } from '@/lib/model/diagnostic';
import { formatObjectRef } from '@/lib/model/diagnostic';
import type { ApplyResult } from '@/server/console/applyDraft';
import type { MeshLiveState } from '@/server/controlPlane/liveState';
import { ApiError, apiFetch, errorMessage } from './api';
import { withDraft } from './draftId';
import { proxyTone } from './nodeLive';

export type ApplyState =
  | { phase: 'idle' }
  | { phase: 'saving' }
  | { phase: 'applying'; revision: number }
  | { phase: 'done'; result: ApplyResult }
  | { phase: 'failed'; message: string; diagnostics?: Diagnostic[]; canForce?: boolean; revision?: number };

/** Save, then POST /api/apply, keeping what the server said at each step. */
export function useApply(flush: () => Promise<number | null>, draftId: string) {
  const [state, setState] = useState<ApplyState>({ phase: 'idle' });
  const apply = useCallback(
    async (force = false) => {
      setState({ phase: 'saving' });
      const revision = await flush();
      if (revision === null) {
        setState({
          phase: 'failed',
          message: 'The draft could not be saved, so nothing was applied (see the save status).',
        });
        return;
      }
      setState({ phase: 'applying', revision });
      try {
        const result = await apiFetch<ApplyResult>(withDraft('/api/apply', draftId), {
          method: 'POST',
          body: { revision, ...(force ? { force } : {}) },
        });
        setState({ phase: 'done', result });
      } catch (e) {
        const body =
          e instanceof ApiError
            ? (e.body as { diagnostics?: Diagnostic[]; baseHash?: string } | undefined)
            : undefined;
        setState({
          phase: 'failed',
          message: errorMessage(e),
          diagnostics: body?.diagnostics,
          // The mesh directory changed on disk since the draft started: overwriting is the user's call.
          canForce: e instanceof ApiError && e.status === 409 && body?.baseHash !== undefined,
          revision,
        });
      }
    },
    [flush, draftId],
  );
  return { state, apply, close: () => setState({ phase: 'idle' }) };
}

/** Progress and result of an apply, per proxy (live while it runs). */
export function ApplyPanel({
  state,
  live,
  onForce,
  onClose,
  onHistory,
  onReviewDisk,
}: {
  state: ApplyState;
  live: MeshLiveState | null | undefined;
  onForce(): void;
  onClose(): void;
  /** Opens the apply history on an apply. */
  onHistory?(id: number): void;
  /** Opens the review of the files changed on disk (after a 409 for them). */
  onReviewDisk?(): void;
}) {
  if (state.phase === 'idle') return null;
  const liveRows = Object.values(live?.proxies ?? {}).sort((a, b) => (a.id < b.id ? -1 : 1));
  return (
    <section className="apply-panel" role="dialog" aria-label="Apply" data-testid="apply-panel">
      <header className="apply-panel__head">
        <strong>
          {state.phase === 'saving'
            ? 'Saving the draft…'
            : state.phase === 'applying'
              ? `Applying revision ${state.revision}…`
              : state.phase === 'done'
                ? state.result.timedOut
                  ? 'Applied; some proxies were still being configured'
                  : 'Applied'
                : 'Apply failed'}
        </strong>
        <button
          type="button"
          onClick={onClose}
          aria-label="Close the apply panel"
          disabled={state.phase === 'saving' || state.phase === 'applying'}
        >
          ×
        </button>
      </header>
      {state.phase === 'applying' ? (
        <ul className="apply-panel__proxies" data-testid="apply-progress">
          {liveRows.map((p) => (
            <li key={p.id} className={`tone-${proxyTone(p).tone}`}>
              {p.id}: {proxyTone(p).text}
            </li>
          ))}
        </ul>
      ) : null}
      {state.phase === 'done' ? (
        <>
          <p>
            {state.result.applied.length} file(s) written
            {state.result.applied.length ? `: ${state.result.applied.join(', ')}` : ''}
            {state.result.deleted.length ? `; deleted ${state.result.deleted.join(', ')}` : ''}.
          </p>
          <table className="apply-panel__table" data-testid="apply-result">
            <thead>
              <tr>
                <th scope="col">Proxy</th>
                <th scope="col">Result</th>
                <th scope="col">Operations</th>
                <th scope="col">Error</th>
              </tr>
            </thead>
            <tbody>
              {state.result.proxies.map((p) => (
                <tr key={p.id} className={p.inSync ? 'tone-ok' : 'tone-bad'}>
                  <td>{p.id}</td>
                  <td>{p.inSync ? 'in sync' : p.phase}</td>
                  <td>{p.operations ?? '–'}</td>
                  <td>{p.error ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {state.result.historyId !== undefined && onHistory ? (
            <button
              type="button"
              className="link-button"
              onClick={() => onHistory(state.result.historyId!)}
              data-testid="apply-history-link"
            >
              Apply #{state.result.historyId} in the history
            </button>
          ) : null}
        </>
      ) : null}
      {state.phase === 'failed' ? (
        <div role="alert">
          <p>{state.message}</p>
          {state.diagnostics?.length ? (
            <ul className="field-errors">
              {state.diagnostics.map((d, i) => (
                <li key={i} className={`field-error field-error--${d.severity}`}>
                  {formatObjectRef(d.object)} {d.path ? <code>{d.path}</code> : null}: {d.message}
                </li>
              ))}
            </ul>
          ) : null}
          {state.canForce ? (
            <div className="button-row">
              {onReviewDisk ? (
                <button
                  type="button"
                  className="primary"
                  onClick={onReviewDisk}
                  data-testid="apply-review-disk"
                >
                  Review the changes on disk
                </button>
              ) : null}
              <button type="button" onClick={onForce} data-testid="apply-force">
                Apply anyway (overwrite the mesh directory)
              </button>
            </div>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}
