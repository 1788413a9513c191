'use client';
/**
 * Apply to a Kubernetes cluster (issue 7 §4): the draft is saved, the API server dry-runs it as the
 * signed-in user (per object: action, field diff, its own validation errors, conflicts with other field
 * managers), and only then may the user apply that same revision, or, when RBAC says no, open a pull
 * request instead. The panel never changes the draft: whatever fails, the user's edits stay.
 */
import { useCallback, useEffect, useId, useRef, useState } from 'react';
import {
  actionLabel,
  applyBlockers,
  type ApplyFailure,
  applyFailure,
  type ClusterApplyAnswer,
  type ClusterApplyOptions,
  type ClusterDryRun,
  deniedAccess,
  deniedText,
  formatValue,
  objectLabel,
  outcomeLabel,
  outcomeSummary,
  problemLines,
  sortRows,
  summaryLine,
} from '@/lib/console/clusterApplyView';
import type { MeshLiveState } from '@/server/controlPlane/liveState';
import type { FieldChange } from '@/lib/kube/objectDiff';
import { changesUndoneBy, clusterChangeConsequence, clusterChangeLabel } from '@/lib/console/clusterDrift';
import type { ObjectOutcome, ObjectPlan } from '@/server/kube/clusterApply';
import { ApiError, apiFetch, errorMessage } from './api';
import type { ApplyState } from './ApplyPanel';
import { withDraft } from './draftId';
import './clusterApplyPanel.css';

export interface ClusterApplyState {
  open: boolean;
  busy?: 'saving' | 'dry-run' | 'applying';
  /** The options the user chose (the next dry-run's). */
  options: ClusterApplyOptions;
  /** The last dry-run, with the options it was made with (the apply sends the same). */
  dryRun?: ClusterDryRun & { options: ClusterApplyOptions };
  /** Conflicts of the last dry-run without force, kept while Force is on (a forced dry-run reports none). */
  takenOver?: ObjectPlan[];
  /** The save or the dry-run failed. */
  error?: { message: string; status?: number };
  /** The apply's answer: 200 with `answer`, or a failure (with the gate's or the writes' rows when any). */
  applied?: { ok: boolean; answer?: ClusterApplyAnswer; failure?: ApplyFailure };
}

const CLOSED: ClusterApplyState = { open: false, options: { force: false, prune: false } };

/** The toolbar's view of a cluster apply (its Apply button shows "Applying…" and stays disabled meanwhile). */
export function clusterToolbarState(s: ClusterApplyState): ApplyState {
  if (s.busy === 'saving') return { phase: 'saving' };
  if (s.busy === 'applying' && s.dryRun) return { phase: 'applying', revision: s.dryRun.revision };
  return { phase: 'idle' };
}

/** Save, dry-run on the cluster, then apply the reviewed revision: the state behind ClusterApplyPanel. */
export function useClusterApply(flush: () => Promise<number | null>, draftId: string) {
  const [state, setState] = useState<ClusterApplyState>(CLOSED);
  const ref = useRef(state);
  // Every answer carries the number of the request it answers; an older one is dropped (latest wins).
  const seq = useRef(0);
  const update = useCallback((next: ClusterApplyState) => {
    ref.current = next;
    setState(next);
  }, []);

  const dryRun = useCallback(
    async (options: ClusterApplyOptions) => {
      const n = ++seq.current;
      // Overwrite answers one dry-run's list of changes in the cluster: a new dry-run asks again.
      update({
        ...ref.current,
        open: true,
        busy: 'dry-run',
        options: { ...options, overwrite: false },
        error: undefined,
        applied: undefined,
      });
      try {
        const answer = await apiFetch<ClusterDryRun>(withDraft('/api/cluster/dry-run', draftId), {
          method: 'POST',
          body: { force: options.force, prune: options.prune },
        });
        if (n !== seq.current) return;
        const conflicts = answer.objects.filter((o) => o.action === 'conflict');
        update({
          ...ref.current,
          busy: undefined,
          dryRun: { ...answer, options: { ...options, overwrite: false } },
          takenOver: options.force ? ref.current.takenOver : conflicts,
        });
      } catch (e) {
        if (n !== seq.current) return;
        update({
          ...ref.current,
          busy: undefined,
          error: { message: errorMessage(e), status: e instanceof ApiError ? e.status : undefined },
        });
      }
    },
    [draftId, update],
  );

  /** Saves the draft, then dry-runs it with the current options. */
  const review = useCallback(
    async (options: ClusterApplyOptions = ref.current.options) => {
      const n = ++seq.current;
      update({ ...ref.current, open: true, busy: 'saving', options, error: undefined, applied: undefined });
      const revision = await flush();
      if (n !== seq.current) return;
      if (revision === null) {
        update({
          ...ref.current,
          busy: undefined,
          error: { message: 'The draft could not be saved, so it was not checked (see the save status).' },
        });
        return;
      }
      await dryRun(options);
    },
    [flush, dryRun, update],
  );

  /** Opens the panel afresh: no Force, no Prune, a new dry-run. */
  const open = useCallback(() => {
    update({ ...CLOSED, open: true });
    return review({ force: false, prune: false });
  }, [review, update]);

  const apply = useCallback(async () => {
    const reviewed = ref.current.dryRun;
    if (!reviewed || ref.current.busy) return;
    const n = ++seq.current;
    update({ ...ref.current, busy: 'applying', applied: undefined });
    try {
      const answer = await apiFetch<ClusterApplyAnswer>(withDraft('/api/cluster/apply', draftId), {
        method: 'POST',
        body: {
          revision: reviewed.revision,
          force: reviewed.options.force,
          prune: reviewed.options.prune,
          ...(ref.current.options.overwrite ? { overwrite: true } : {}),
        },
      });
      if (n !== seq.current) return;
      update({ ...ref.current, busy: undefined, applied: { ok: true, answer } });
    } catch (e) {
      if (n !== seq.current) return;
      const status = e instanceof ApiError ? e.status : 0;
      const body = e instanceof ApiError ? e.body : undefined;
      const withRows = body && Array.isArray((body as ClusterApplyAnswer).objects);
      update({
        ...ref.current,
        busy: undefined,
        applied: {
          ok: false,
          answer: withRows ? (body as ClusterApplyAnswer) : undefined,
          failure: applyFailure(status, body, errorMessage(e)),
        },
      });
    }
  }, [draftId, update]);

  const close = useCallback(() => {
    // A running apply is the user's write to the cluster: its answer must be seen, so it cannot be closed.
    if (ref.current.busy === 'applying') return;
    seq.current++;
    update(CLOSED);
  }, [update]);

  return {
    state,
    open,
    review,
    apply,
    close,
    setForce: (force: boolean) => void dryRun({ ...ref.current.options, force }),
    setPrune: (prune: boolean) => void dryRun({ ...ref.current.options, prune }),
    /** Apply over the changes made in the cluster since the draft started (no new dry-run). */
    setOverwrite: (overwrite: boolean) =>
      update({ ...ref.current, options: { ...ref.current.options, overwrite } }),
  };
}

export type ClusterApplyController = ReturnType<typeof useClusterApply>;

/** The "Apply to cluster" dialog: target, acting user, per-object plan, Force/Prune, Apply or Open PR. */
export function ClusterApplyPanel({
  controller,
  cluster,
  onOpenPullRequest,
  onHistory,
  onReviewCluster,
}: {
  controller: ClusterApplyController;
  cluster: MeshLiveState['mesh']['cluster'];
  onOpenPullRequest(): void;
  /** Opens the apply history on one record (the apply just made). */
  onHistory?(id: number): void;
  /** Opens the review of the mesh objects changed in the cluster since the draft started (rebase). */
  onReviewCluster?(): void;
}) {
  const { state } = controller;
  const dialog = useRef<HTMLDialogElement>(null);
  const id = useId();
  useEffect(() => {
    const d = dialog.current;
    if (!d) return;
    if (state.open && !d.open) d.showModal();
    if (!state.open && d.open) d.close();
  }, [state.open]);

  const dry = state.dryRun;
  const applying = state.busy === 'applying';
  // After an apply that answered per object, the rows are its answer (what was written, or the gate's refusal).
  const rows: (ObjectPlan | ObjectOutcome)[] = sortRows(state.applied?.answer?.objects ?? dry?.objects ?? []);
  const outcomes = state.applied?.answer !== undefined;
  const skipped = rows.filter((r) => r.action === 'skipped');
  const hasConflicts = rows.some((r) => r.action === 'conflict');
  const blockers = dry
    ? applyBlockers(dry, { overwrite: state.options.overwrite, prune: dry.options.prune })
    : [];
  const undone = dry ? changesUndoneBy(dry.clusterChanges, dry.options.prune).length : 0;
  const canApply = dry !== undefined && blockers.length === 0 && !state.busy && !state.applied?.ok;
  const stale = ['stale', 'busy', 'behind'].includes(state.applied?.failure?.kind ?? '');

  return (
    <dialog
      ref={dialog}
      className="dialog cluster-apply"
      aria-labelledby={`${id}-title`}
      onCancel={(e) => {
        e.preventDefault();
        controller.close();
      }}
      data-testid="cluster-apply-panel"
    >
      <header className="dialog__head">
        <h2 id={`${id}-title`}>Apply to cluster</h2>
        <button type="button" onClick={controller.close} aria-label="Close" disabled={applying}>
          ×
        </button>
      </header>
      {state.open ? (
        <div className="cluster-apply__body" aria-busy={state.busy !== undefined}>
          <dl className="facts cluster-apply__target" data-testid="cluster-apply-target">
            <dt>Cluster</dt>
            <dd>
              <code>{cluster?.server ?? 'not connected'}</code>
            </dd>
            <dt>Namespace</dt>
            <dd>{cluster ? (cluster.namespace ?? 'all namespaces') : '–'}</dd>
            <dt>Acting as</dt>
            <dd data-testid="cluster-apply-user">
              {dry ? (
                <>
                  {dry.user.user}
                  {dry.user.groups.length ? (
                    <span className="cluster-apply__muted"> (groups: {dry.user.groups.join(', ')})</span>
                  ) : null}
                </>
              ) : (
                '…'
              )}
            </dd>
            {dry ? (
              <>
                <dt>Draft revision</dt>
                <dd data-testid="cluster-apply-revision">{dry.revision}</dd>
              </>
            ) : null}
          </dl>

          {state.busy ? (
            <p role="status" className="cluster-apply__muted" data-testid="cluster-apply-busy">
              {state.busy === 'saving'
                ? 'Saving the draft…'
                : state.busy === 'dry-run'
                  ? 'Asking the API server what the apply would do (dry-run)…'
                  : `Applying revision ${dry?.revision} to the cluster…`}
            </p>
          ) : null}

          {state.error ? (
            <div className="cluster-apply__error" role="alert" data-testid="cluster-apply-error">
              <p>
                {state.error.status === 503
                  ? 'No cluster is configured: nothing was checked.'
                  : 'The dry-run could not be made.'}
              </p>
              <p className="cluster-apply__muted">{state.error.message}</p>
              <p className="cluster-apply__muted">The draft is kept.</p>
              <div className="button-row">
                <button type="button" onClick={() => void controller.review()} disabled={!!state.busy}>
                  Review again
                </button>
              </div>
            </div>
          ) : null}

          {dry ? (
            <>
              <fieldset className="cluster-apply__options" disabled={applying}>
                <legend className="visually-hidden">Apply options</legend>
                <label>
                  <input
                    type="checkbox"
                    checked={state.options.prune}
                    onChange={(e) => controller.setPrune(e.target.checked)}
                    aria-describedby={`${id}-prune`}
                  />{' '}
                  Prune
                </label>
                <span id={`${id}-prune`} className="cluster-apply__muted">
                  delete objects Meshdeck applied that the draft removed
                </span>
                {hasConflicts || state.options.force ? (
                  <>
                    <label>
                      <input
                        type="checkbox"
                        checked={state.options.force}
                        onChange={(e) => controller.setForce(e.target.checked)}
                        aria-describedby={`${id}-force`}
                      />{' '}
                      Force (take over these fields)
                    </label>
                    <span id={`${id}-force`} className="cluster-apply__muted">
                      Meshdeck becomes the manager of the fields another manager owns
                    </span>
                  </>
                ) : null}
              </fieldset>
              {state.options.force && dry.options.force && state.takenOver?.length ? (
                <div className="cluster-apply__banner" data-testid="cluster-apply-taken-over">
                  <p>Force is on: applying takes these fields over.</p>
                  <ul>
                    {state.takenOver.map((p) => (
                      <li key={p.ref.key}>
                        {objectLabel(p.ref)}: <ConflictList plan={p} />
                      </li>
                    ))}
                  </ul>
                </div>
              ) : null}

              {dry.clusterChanges.length && !state.applied?.ok ? (
                <div className="cluster-apply__banner" data-testid="cluster-apply-behind">
                  <p>
                    Changed in the cluster since this draft started (kubectl, a GitOps tool, another console):
                  </p>
                  <ul>
                    {dry.clusterChanges.map((c) => (
                      <li key={c.key}>
                        {clusterChangeLabel(c)}:{' '}
                        <span className="cluster-apply__muted">{clusterChangeConsequence(c)}</span>
                      </li>
                    ))}
                  </ul>
                  <div className="button-row">
                    {onReviewCluster ? (
                      <button
                        type="button"
                        onClick={onReviewCluster}
                        disabled={applying}
                        data-testid="cluster-apply-review-cluster"
                      >
                        Review and rebase the draft
                      </button>
                    ) : null}
                    {undone ? (
                      <label>
                        <input
                          type="checkbox"
                          checked={state.options.overwrite ?? false}
                          onChange={(e) => controller.setOverwrite(e.target.checked)}
                          disabled={applying}
                          data-testid="cluster-apply-overwrite"
                        />{' '}
                        Overwrite (undo {undone === 1 ? 'that change' : `those ${undone} changes`})
                      </label>
                    ) : null}
                  </div>
                </div>
              ) : null}

              <h3 id={`${id}-objects`}>{outcomes ? 'Result per object' : 'Objects'}</h3>
              <p className="cluster-apply__summary" role="status" data-testid="cluster-apply-summary">
                {outcomes
                  ? outcomeSummary(rows as ObjectOutcome[])
                  : `Dry-run of revision ${dry.revision}: ${summaryLine(rows)}`}
              </p>
              <ul className="cluster-apply__rows" aria-labelledby={`${id}-objects`}>
                {rows
                  .filter((r) => r.action !== 'skipped')
                  .map((r) => (
                    <ObjectRow key={`${r.ref.key}:${r.action}`} row={r} outcome={outcomes} />
                  ))}
              </ul>
              {skipped.length ? (
                // A Kubernetes-mode draft mirrors the cluster's Services and Pods: listed, but out of the way.
                <details className="cluster-apply__skipped" data-testid="cluster-apply-skipped">
                  <summary>
                    {skipped.length} skipped: {skippedKinds(skipped)} objects are not applied from the console
                  </summary>
                  <ul className="cluster-apply__rows" aria-label="Skipped objects">
                    {skipped.map((r) => (
                      <ObjectRow key={r.ref.key} row={r} outcome={outcomes} />
                    ))}
                  </ul>
                </details>
              ) : null}

              {state.applied ? <ApplyAnswer applied={state.applied} onHistory={onHistory} /> : null}

              {dry.access.allowed ? (
                <div className="button-row">
                  {state.applied?.ok ? null : (
                    <button
                      type="button"
                      className="primary"
                      onClick={() => void controller.apply()}
                      disabled={!canApply}
                      aria-describedby={blockers.length ? `${id}-blockers` : undefined}
                    >
                      {applying ? 'Applying…' : 'Apply to cluster'}
                    </button>
                  )}
                  <button
                    type="button"
                    onClick={() => void controller.review()}
                    disabled={!!state.busy}
                    className={stale ? 'primary' : undefined}
                  >
                    Review again
                  </button>
                  {blockers.length && !state.applied ? (
                    <ul
                      id={`${id}-blockers`}
                      className="cluster-apply__blockers"
                      data-testid="cluster-apply-blockers"
                    >
                      {blockers.map((b) => (
                        <li key={b}>{b}</li>
                      ))}
                    </ul>
                  ) : null}
                </div>
              ) : (
                <section
                  className="cluster-apply__denied"
                  aria-labelledby={`${id}-access`}
                  data-testid="cluster-apply-denied"
                >
                  <h3 id={`${id}-access`}>You cannot apply to this cluster</h3>
                  <p>{deniedText(dry.access)}</p>
                  {deniedAccess(dry.access).length ? (
                    <table className="apply-panel__table">
                      <thead>
                        <tr>
                          <th scope="col">Resource</th>
                          <th scope="col">Namespace</th>
                          <th scope="col">Denied verbs</th>
                        </tr>
                      </thead>
                      <tbody>
                        {deniedAccess(dry.access).map((d) => (
                          <tr key={`${d.resource} ${d.namespace}`}>
                            <td>
                              <code>{d.resource}</code>
                            </td>
                            <td>{d.namespace}</td>
                            <td>
                              {d.verbs.join(', ')}
                              {d.reason ? <div className="cluster-apply__muted">{d.reason}</div> : null}
                            </td>
                          </tr>
                        ))}
                      </tbody>
                    </table>
                  ) : null}
                  <p className="cluster-apply__muted">
                    Propose the change instead: commit the draft and open a pull request for someone who may
                    apply it.
                  </p>
                  <div className="button-row">
                    <button type="button" className="primary" onClick={onOpenPullRequest}>
                      Open PR
                    </button>
                    <button type="button" onClick={() => void controller.review()} disabled={!!state.busy}>
                      Review again
                    </button>
                  </div>
                </section>
              )}
            </>
          ) : null}
        </div>
      ) : null}
    </dialog>
  );
}

/** "Pod and Service": the kinds of the skipped rows. */
function skippedKinds(rows: readonly ObjectPlan[]): string {
  const kinds = [...new Set(rows.map((r) => r.ref.kind || 'file'))].sort();
  return kinds.length <= 1 ? (kinds[0] ?? '') : `${kinds.slice(0, -1).join(', ')} and ${kinds.at(-1)}`;
}

/** The apply's answer: success as a status, anything else as an alert that says what was written. */
function ApplyAnswer({
  applied,
  onHistory,
}: {
  applied: NonNullable<ClusterApplyState['applied']>;
  onHistory?: (id: number) => void;
}) {
  const historyId = applied.answer?.historyId;
  const link =
    historyId !== undefined && onHistory ? (
      <button
        type="button"
        className="link-button"
        onClick={() => onHistory(historyId)}
        data-testid="apply-history-link"
      >
        Apply #{historyId} in the history
      </button>
    ) : null;
  if (applied.ok) {
    return (
      <div className="cluster-apply__result" role="status" data-testid="cluster-apply-result">
        <p>
          <strong>Applied to the cluster</strong> (revision {applied.answer?.revision}):{' '}
          {outcomeSummary(applied.answer?.objects ?? [])}.
        </p>
        {link}
      </div>
    );
  }
  const f = applied.failure!;
  return (
    <div className="cluster-apply__error" role="alert" data-testid="cluster-apply-failure" data-kind={f.kind}>
      <p>
        <strong>{f.title}</strong>
      </p>
      <p>{f.detail}</p>
      <p className="cluster-apply__muted">The draft is kept.</p>
      {link}
    </div>
  );
}

function ObjectRow({ row, outcome }: { row: ObjectPlan | ObjectOutcome; outcome: boolean }) {
  const label = outcome ? outcomeLabel(row as ObjectOutcome) : actionLabel(row);
  const name = objectLabel(row.ref);
  const tone =
    row.action === 'error' || row.action === 'conflict'
      ? 'bad'
      : row.action === 'delete'
        ? 'warn'
        : row.action === 'create' || row.action === 'update'
          ? 'change'
          : 'quiet';
  return (
    <li
      className={`cluster-apply__row cluster-apply__row--${tone}`}
      data-testid="cluster-object"
      data-key={row.ref.key}
      data-action={row.action}
    >
      <div className="cluster-apply__row-head">
        <span className="cluster-apply__action">{label}</span> <strong>{name}</strong>
        {row.ref.file ? (
          <span className="cluster-apply__muted">
            {' '}
            {row.ref.file}
            {row.ref.line ? `:${row.ref.line}` : ''}
          </span>
        ) : null}
      </div>
      {row.action === 'update' && row.diff.length ? (
        <Diff changes={row.diff} label={`Changes to ${name}`} />
      ) : null}
      {(row.action === 'create' || row.action === 'delete') && row.diff.length ? (
        <details>
          <summary>
            {row.diff.length} field{row.diff.length === 1 ? '' : 's'}
          </summary>
          <Diff changes={row.diff} label={`Fields of ${name}`} />
        </details>
      ) : null}
      {row.error ? (
        <ul className="field-errors" aria-label={`Errors of ${name}`}>
          {problemLines(row.error).map((l, i) => (
            <li key={i} className="field-error field-error--error">
              {l.field ? (
                <>
                  <code>{l.field}</code>:{' '}
                </>
              ) : null}
              {l.message}
            </li>
          ))}
        </ul>
      ) : null}
      {row.conflicts.length ? <ConflictList plan={row} /> : null}
      {row.warnings.length ? (
        <ul className="field-errors">
          {row.warnings.map((w, i) => (
            <li key={i} className="field-error field-error--warning">
              warning: {w}
            </li>
          ))}
        </ul>
      ) : null}
      {row.note ? <p className="cluster-apply__muted">{row.note}</p> : null}
    </li>
  );
}

/** Conflicts grouped by the other manager: who owns which fields. */
function ConflictList({ plan }: { plan: ObjectPlan }) {
  const byManager = new Map<string, string[]>();
  for (const c of plan.conflicts) byManager.set(c.manager, [...(byManager.get(c.manager) ?? []), c.field]);
  return (
    <ul className="field-errors" aria-label={`Conflicts of ${objectLabel(plan.ref)}`}>
      {[...byManager].map(([manager, fields]) => (
        <li key={manager} className="field-error field-error--error">
          <strong>{manager}</strong> owns{' '}
          {fields.map((f, i) => (
            <span key={f}>
              {i ? ', ' : ''}
              <code>{f}</code>
            </span>
          ))}
        </li>
      ))}
    </ul>
  );
}

const DIFF_SHOWN = 12;

function Diff({ changes, label }: { changes: FieldChange[]; label: string }) {
  const line = (c: FieldChange) => (
    <li key={c.path}>
      <code>{c.path}</code>:{' '}
      {c.before === undefined ? (
        <ins>{formatValue(c.after)}</ins>
      ) : c.after === undefined ? (
        <del>{formatValue(c.before)}</del>
      ) : (
        <>
          <del>{formatValue(c.before)}</del> → <ins>{formatValue(c.after)}</ins>
        </>
      )}
    </li>
  );
  return (
    <ul className="cluster-apply__diff" aria-label={label}>
      {changes.slice(0, DIFF_SHOWN).map(line)}
      {changes.length > DIFF_SHOWN ? (
        <li>
          <details>
            <summary>{changes.length - DIFF_SHOWN} more</summary>
            <ul className="cluster-apply__diff">{changes.slice(DIFF_SHOWN).map(line)}</ul>
          </details>
        </li>
      ) : null}
    </ul>
  );
}
