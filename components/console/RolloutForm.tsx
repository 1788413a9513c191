'use client';

import { useQueryClient } from '@tanstack/react-query';
import { type ReactNode, useId, useState } from 'react';
import type { ObjectRef, RolloutState } from '@/lib/rollout/rollout';
import {
  buildRolloutSpec,
  presetText,
  type RolloutFormErrors,
  type RolloutFormField,
  type RolloutFormValues,
  rolloutFormDefaults,
  shareOf,
  type SplitEntries,
  splitsDiffer,
  splitText,
  STEP_PRESETS,
  formErrorsOf,
} from '@/lib/rollout/rolloutForm';
import type { RolloutsAnswer } from '@/lib/rollout/rolloutView';
import { ApiError, apiFetch } from './api';
import { serverWords } from './RolloutProgress';
import { appliesKey, rolloutsKey } from './queries';
import './rollout.css';

export interface RolloutFormProps {
  target: ObjectRef;
  /** The Target's split in the draft (undefined: the draft has no such Target with a split). */
  draftSplit: SplitEntries | undefined;
  /** The split as it runs (the mesh directory): entries, why it cannot be read, or undefined while read. */
  running: SplitEntries | { error: string } | undefined;
  /** The VirtualServices whose traffic reaches the Target (the probe's default is the first). */
  listeners: string[];
  /** What runs, in words: `the mesh directory /srv/mesh`, `the cluster`. */
  where: string;
  /** Why a rollout cannot be started (no session, the server runs none), if it cannot. */
  disabledReason?: string;
  /** Another rollout that has not ended (one runs at a time). */
  other?: RolloutState;
  /** Why no probes can judge a step here (Kubernetes mode: they are sent on this host only), if so. */
  noProbes?: string;
  onStarted(rollout: RolloutState): void;
}

/**
 * The start of a progressive rollout: the canary, its steps (with presets), the pause, the analysis
 * (probes through a listener, the gRPC clients' load reports, a webhook) and what a failure does. It rolls out what runs, not the
 * draft, and says so (and when the draft's split is not what runs). Problems show on their fields as
 * they are typed, and the server's 400/422 land there too.
 */
export function RolloutForm(p: RolloutFormProps) {
  const queryClient = useQueryClient();
  const running = p.running && !('error' in p.running) ? p.running : undefined;
  const split = running ?? p.draftSplit ?? [];
  // The user's edits over the defaults, so defaults that arrive late (what runs is read) still apply.
  const [edits, setEdits] = useState<Partial<RolloutFormValues>>({});
  const [serverErrors, setServerErrors] = useState<RolloutFormErrors>({});
  const [busy, setBusy] = useState(false);
  const grpcErrorId = useId();
  const defaults = rolloutFormDefaults(split, p.listeners[0]);
  const canary = edits.canary ?? defaults.canary;
  const values: RolloutFormValues = {
    ...defaults,
    // The steps follow the canary picked until the user writes their own.
    steps: presetText(STEP_PRESETS[0]!.steps, shareOf(split, canary)),
    ...edits,
    ...(p.noProbes ? { probe: false } : {}),
  };
  const built = buildRolloutSpec(p.target, values, running);
  const own: RolloutFormErrors = 'errors' in built ? built.errors : {};
  const notRunning = p.running && 'error' in p.running ? p.running.error : undefined;
  const set = <K extends keyof RolloutFormValues>(key: K, value: RolloutFormValues[K]) => {
    setEdits((e) => ({ ...e, [key]: value }));
    // The server's word on a field holds until that field changes.
    const field = key === 'probe' ? 'listener' : key;
    setServerErrors((s) => Object.fromEntries(Object.entries(s).filter(([k]) => k !== field)));
  };
  const errorsOf = (f: RolloutFormField) => own[f] ?? serverErrors[f];
  const numberField = (
    field: NumberFieldName,
    label: string,
    mode: 'numeric' | 'decimal',
    testId: string,
    placeholder?: string,
  ) => (
    <NumberField
      label={label}
      field={field}
      mode={mode}
      value={values[field]}
      placeholder={placeholder}
      errors={errorsOf(field)}
      testId={testId}
      onChange={(v) => set(field, v)}
    />
  );

  const start = async () => {
    if (!('spec' in built)) return;
    setBusy(true);
    setServerErrors({});
    try {
      const { rollout } = await apiFetch<{ rollout: RolloutState }>('/api/rollouts', {
        method: 'POST',
        body: built.spec,
      });
      // Shown at once; the poll (every second while it progresses) takes over.
      queryClient.setQueryData<RolloutsAnswer>(rolloutsKey, (old) => ({
        available: true,
        rollouts: [rollout, ...(old?.rollouts ?? []).filter((r) => r.id !== rollout.id)],
      }));
      void queryClient.invalidateQueries({ queryKey: rolloutsKey });
      void queryClient.invalidateQueries({ queryKey: appliesKey });
      p.onStarted(rollout);
    } catch (e) {
      const fields = e instanceof ApiError && (e.status === 400 || e.status === 422) ? e.fields : [];
      const placed = formErrorsOf(fields);
      setServerErrors(fields.length ? placed : { form: [serverWords(e)] });
    } finally {
      setBusy(false);
    }
  };

  const blocked = p.disabledReason ?? notRunning;
  const formErrors = errorsOf('form') ?? [];
  return (
    <form
      className="rollout-form"
      aria-label="Start a progressive rollout"
      data-testid="rollout-form"
      onSubmit={(e) => {
        e.preventDefault();
        void start();
      }}
    >
      <p className="hint" data-testid="rollout-what-runs">
        A rollout moves the split of what runs ({p.where}), not this draft: each step is written there and
        applied like an Apply, and kept in the apply history.{' '}
        {running ? (
          <>
            Running now: <code data-testid="rollout-running">{splitText(running)}</code>.
          </>
        ) : null}
      </p>
      {notRunning ? (
        <p className="rollout-note field-error--warning" role="alert" data-testid="rollout-not-running">
          {notRunning}: apply the draft first, then roll out.
        </p>
      ) : running && p.draftSplit && splitsDiffer(p.draftSplit, running) ? (
        <p className="rollout-note" data-testid="rollout-draft-differs">
          The draft’s split (<code>{splitText(p.draftSplit)}</code>) is not what runs: the rollout starts from
          what runs. Apply the draft first to start from its weights.
        </p>
      ) : null}
      {p.other ? (
        <p className="rollout-note" data-testid="rollout-other">
          Rollout {p.other.id} of Target {p.other.spec.target.namespace}/{p.other.spec.target.name} is{' '}
          {p.other.phase}: one rollout runs at a time.
        </p>
      ) : null}
      <fieldset>
        <legend>Steps</legend>
        <Field label="canary" errors={errorsOf('canary')} field="canary">
          {(id, describedBy) => (
            <select
              id={id}
              value={values.canary}
              aria-invalid={errorsOf('canary') !== undefined}
              aria-describedby={describedBy}
              onChange={(e) => set('canary', e.target.value)}
              data-testid="rollout-canary"
            >
              {split.map((e) => (
                <option key={e.serviceName} value={e.serviceName}>
                  {e.serviceName} (weight {e.weight})
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field
          label="canary's share after each step, %"
          errors={errorsOf('steps')}
          field="steps"
          after={
            <span className="rollout-presets" aria-label="Presets">
              {STEP_PRESETS.map((preset) => {
                const text = presetText(preset.steps, shareOf(split, values.canary));
                return (
                  <button
                    key={preset.name}
                    type="button"
                    onClick={() => set('steps', text)}
                    title={`Steps ${text}`}
                    data-testid={`rollout-preset-${preset.name}`}
                  >
                    {preset.name}: {text}
                  </button>
                );
              })}
            </span>
          }
        >
          {(id, describedBy) => (
            <input
              id={id}
              type="text"
              value={values.steps}
              spellCheck={false}
              placeholder="10, 25, 50, 100"
              aria-invalid={errorsOf('steps') !== undefined}
              aria-describedby={describedBy}
              onChange={(e) => set('steps', e.target.value)}
              data-testid="rollout-steps-input"
            />
          )}
        </Field>
        {numberField('pauseS', 'pause per step, s', 'decimal', 'rollout-pause-s')}
      </fieldset>
      <fieldset>
        <legend>Analysis after each pause</legend>
        <label className="rollout-field">
          <span className="rollout-field__label">probes</span>
          <span className="rollout-field__control">
            <input
              type="checkbox"
              checked={values.probe}
              disabled={p.noProbes !== undefined}
              title={p.noProbes}
              onChange={(e) => set('probe', e.target.checked)}
              data-testid="rollout-probe"
            />{' '}
            send probes through a listener and judge their answers
          </span>
          {p.noProbes ? <span className="hint">{p.noProbes}</span> : null}
        </label>
        {values.probe ? (
          <>
            <Field label="through the listener" errors={errorsOf('listener')} field="listener">
              {(id, describedBy) => (
                <>
                  <input
                    id={id}
                    type="text"
                    list={`${id}-list`}
                    value={values.listener}
                    spellCheck={false}
                    placeholder="a VirtualService, e.g. gateway"
                    aria-invalid={errorsOf('listener') !== undefined}
                    aria-describedby={describedBy}
                    onChange={(e) => set('listener', e.target.value)}
                    data-testid="rollout-listener"
                  />
                  <datalist id={`${id}-list`}>
                    {p.listeners.map((l) => (
                      <option key={l} value={l} />
                    ))}
                  </datalist>
                </>
              )}
            </Field>
            {numberField('count', 'probes per step', 'numeric', 'rollout-count')}
            {numberField('minSuccess', 'answered at least, %', 'decimal', 'rollout-min-success')}
            {numberField('maxP99', 'p99 at most, ms', 'decimal', 'rollout-max-p99', 'not judged')}
          </>
        ) : null}
        <label className="rollout-field">
          <span className="rollout-field__label">gRPC clients</span>
          <span className="rollout-field__control">
            <input
              type="checkbox"
              checked={values.grpc}
              aria-invalid={errorsOf('grpc') !== undefined}
              aria-describedby={errorsOf('grpc') ? grpcErrorId : undefined}
              onChange={(e) => set('grpc', e.target.checked)}
              data-testid="rollout-grpc"
            />{' '}
            judge the RPCs proxyless gRPC clients report to the canary over each pause
          </span>
        </label>
        {errorsOf('grpc') ? (
          <p
            id={grpcErrorId}
            className="field-error field-error--error"
            role="alert"
            data-testid="rollout-error-grpc"
          >
            {errorsOf('grpc')!.join('; ')}
          </p>
        ) : null}
        {values.grpc ? (
          <>
            {numberField(
              'grpcMinSuccess',
              'RPCs succeeded at least, %',
              'decimal',
              'rollout-grpc-min-success',
            )}
            {numberField('grpcMinRequests', 'RPCs per step at least', 'numeric', 'rollout-grpc-min-requests')}
          </>
        ) : null}
        <Field label="webhook (optional)" errors={errorsOf('webhook')} field="webhook">
          {(id, describedBy) => (
            <input
              id={id}
              type="text"
              inputMode="url"
              value={values.webhook}
              spellCheck={false}
              placeholder="https://… answers 2xx to pass each step"
              aria-invalid={errorsOf('webhook') !== undefined}
              aria-describedby={describedBy}
              onChange={(e) => set('webhook', e.target.value)}
              data-testid="rollout-webhook"
            />
          )}
        </Field>
        {!values.probe && !values.grpc && !values.webhook.trim() ? (
          <p className="hint">Without an analysis each step passes once its pause is over.</p>
        ) : null}
      </fieldset>
      <fieldset>
        <legend>When a step fails its analysis</legend>
        <div className="rollout-field__control" role="radiogroup" aria-label="When a step fails">
          <label>
            <input
              type="radio"
              name="rollout-on-failure"
              checked={values.onFailure === 'rollback'}
              onChange={() => set('onFailure', 'rollback')}
              data-testid="rollout-on-failure-rollback"
            />{' '}
            roll the split back to its weights before the rollout
          </label>
          <label>
            <input
              type="radio"
              name="rollout-on-failure"
              checked={values.onFailure === 'pause'}
              onChange={() => set('onFailure', 'pause')}
              data-testid="rollout-on-failure-pause"
            />{' '}
            pause there
          </label>
        </div>
        {errorsOf('onFailure')?.map((m) => (
          <p key={m} className="field-error field-error--error" role="alert">
            {m}
          </p>
        ))}
      </fieldset>
      {formErrors.map((m) => (
        <p key={m} className="field-error field-error--error" role="alert" data-testid="rollout-form-error">
          {m}
        </p>
      ))}
      <div className="button-row">
        <button
          type="submit"
          className="primary"
          disabled={blocked !== undefined || busy || !('spec' in built)}
          title={
            blocked ?? ('spec' in built ? 'Start the rollout on what runs' : 'Fix the fields marked first')
          }
          data-testid="rollout-start"
        >
          {busy ? 'Starting…' : 'Start the rollout'}
        </button>
        {p.disabledReason ? <span className="hint">{p.disabledReason}</span> : null}
      </div>
    </form>
  );
}

type NumberFieldName = 'pauseS' | 'count' | 'minSuccess' | 'maxP99' | 'grpcMinSuccess' | 'grpcMinRequests';

/** A Field whose control is a short text input for a number (a pause, a count, a percentage, a latency). */
function NumberField(p: {
  label: string;
  field: NumberFieldName;
  mode: 'numeric' | 'decimal';
  value: string;
  placeholder?: string;
  errors: string[] | undefined;
  testId: string;
  onChange(value: string): void;
}) {
  return (
    <Field label={p.label} errors={p.errors} field={p.field}>
      {(id, describedBy) => (
        <input
          id={id}
          type="text"
          inputMode={p.mode}
          className="rollout-field__number"
          value={p.value}
          placeholder={p.placeholder}
          aria-invalid={p.errors !== undefined}
          aria-describedby={describedBy}
          onChange={(e) => p.onChange(e.target.value)}
          data-testid={p.testId}
        />
      )}
    </Field>
  );
}

/** A labelled row with its problems under it, linked to the control for screen readers. */
function Field(p: {
  label: string;
  field: RolloutFormField;
  errors: string[] | undefined;
  after?: ReactNode;
  children(id: string, describedBy: string | undefined): ReactNode;
}) {
  const id = useId();
  const errId = `${id}-errors`;
  return (
    <div className="rollout-field">
      <label htmlFor={id}>{p.label}</label>
      <span className="rollout-field__control">
        {p.children(id, p.errors ? errId : undefined)}
        {p.after}
      </span>
      {p.errors ? (
        <p
          id={errId}
          className="field-error field-error--error"
          role="alert"
          data-testid={`rollout-error-${p.field}`}
        >
          {p.errors.join('; ')}
        </p>
      ) : null}
    </div>
  );
}
