'use client';

import { useMutation } from '@tanstack/react-query';
import { Fragment, useId, useState } from 'react';
import { parseProbeCount } from '@/lib/console/probeForm';
import {
  type TrafficTestRequest,
  type TrafficTestResult,
  TrafficTestResultSchema,
} from '@/lib/console/trafficTest';
import { ApiError, apiFetch, errorMessage } from './api';
import './trafficTest.css';

/** The server's answer, checked: a body of another shape is an error to show, not a half-drawn table. */
function readTrafficTestResult(body: unknown): TrafficTestResult {
  const parsed = TrafficTestResultSchema.safeParse(body);
  if (!parsed.success)
    throw new Error(
      `POST /api/probe/burst answered an unexpected body: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
    );
  return parsed.data;
}

/**
 * A traffic test through one listener: POST /api/probe/burst (apiFetch: with the CSRF header), and what
 * TrafficTestArea shows of it.
 */
export function useTrafficTest() {
  // A new test starts from an empty mutation state; the last answer stays on screen meanwhile.
  const [previous, setPrevious] = useState<TrafficTestResult | undefined>();
  const mutation = useMutation({
    mutationFn: (body: TrafficTestRequest) =>
      apiFetch<unknown>('/api/probe/burst', { method: 'POST', body }).then(readTrafficTestResult),
    onSuccess: (result) => setPrevious(result),
    onError: () => setPrevious(undefined),
  });
  return {
    send: (body: TrafficTestRequest) => mutation.mutate(body),
    reset: () => {
      mutation.reset();
      setPrevious(undefined);
    },
    /** Nothing sent since the last reset. */
    idle: mutation.isIdle,
    pending: mutation.isPending,
    /** Probes in flight, while a test runs. */
    sending: mutation.isPending ? mutation.variables.count : undefined,
    error: mutation.error,
    result: mutation.isPending ? previous : mutation.data,
  };
}

/**
 * The probe form's "send N" field: 1 (the default) is one probe with its echo and path, more a traffic
 * test; a count that is not a whole number from 1 to 1000 is said under it.
 */
export function ProbeCountField({ text, onChange }: { text: string; onChange(text: string): void }) {
  const id = useId();
  const count = parseProbeCount(text);
  const error = typeof count === 'string' ? count : undefined;
  return (
    <>
      <label className="probe__row">
        <span>send</span>
        <input
          type="text"
          inputMode="numeric"
          className="probe__count"
          value={text}
          spellCheck={false}
          aria-label="Probes to send"
          aria-invalid={error !== undefined}
          aria-describedby={error ? id : undefined}
          onChange={(e) => onChange(e.target.value)}
          data-testid="probe-count"
        />
        <span className="hint">{count === 1 ? 'probe, with its echo and path' : 'probes, summed up'}</span>
      </label>
      {error ? (
        <p id={id} className="field-error field-error--error" role="alert" data-testid="probe-count-error">
          {error}
        </p>
      ) : null}
    </>
  );
}

/** The send button's words for a count other than 1 (undefined: the count is not valid yet). */
export function sendProbesLabel(count: number | undefined, pending: boolean): string {
  if (pending) return 'Sending…';
  return count === undefined ? 'Send probes' : `Send ${count} probes`;
}

/** A latency as people read it: whole milliseconds, one decimal below 10 ms (as a rollout's steps say it). */
function ms(x: number): number {
  return x < 10 ? Math.round(x * 10) / 10 : Math.round(x);
}

/** A share in percent with at most one decimal. */
function percent(x: number): string {
  return `${Math.round(x * 10) / 10}%`;
}

/** A bar's width: a share outside 0..100 (a rounding, a bad answer) never draws past its track. */
function barWidth(x: number): string {
  return `${Math.min(100, Math.max(0, x))}%`;
}

/**
 * Where a traffic test's outcome shows, as a polite live region with its room kept from the moment a
 * count above 1 is chosen: "Sending N probes…" while it runs (the last result stays, dimmed, below it),
 * then the summary, or the error.
 */
export function TrafficTestArea({
  count,
  pending,
  error,
  result,
}: {
  /** Probes being sent, or to be sent. */
  count: number | undefined;
  pending: boolean;
  error: unknown;
  result: TrafficTestResult | undefined;
}) {
  return (
    <div
      className="traffic-test"
      aria-live="polite"
      data-state={pending ? 'sending' : error ? 'failed' : result ? 'done' : 'idle'}
      data-testid="traffic-test"
    >
      {pending ? (
        <p className="traffic-test__status" data-testid="traffic-sending">
          Sending {count} probes…
        </p>
      ) : error ? (
        <TrafficTestError error={error} />
      ) : result ? null : (
        <p className="traffic-test__status hint" data-testid="traffic-idle">
          {count === undefined ? 'Many probes' : `${count} probes`} through this listener, several at a time:
          how many answer, how fast, and which backends and pods answer.
        </p>
      )}
      {result && !error ? <TrafficTestResultView result={result} stale={pending} /> : null}
    </div>
  );
}

function TrafficTestError({ error }: { error: unknown }) {
  const fields = error instanceof ApiError ? error.fields : [];
  return (
    <div className="field-error field-error--error" role="alert" data-testid="traffic-error">
      <p className="traffic-test__status">
        {error instanceof ApiError && error.status === 404
          ? `Nothing to probe: ${errorMessage(error)}`
          : errorMessage(error)}
      </p>
      {fields.length > 0 ? (
        <ul className="traffic-test__list">
          {fields.map((f) => (
            <li key={`${f.path}:${f.message}`}>
              <code>{f.path || '(body)'}</code>: {f.message}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

/**
 * A traffic test's summary: answered of sent, the latency percentiles, and the split's configured
 * against observed shares per backend (or the answers per pod when no one split is on the way), then
 * the failures with their counts.
 */
export function TrafficTestResultView({
  result,
  stale = false,
}: {
  result: TrafficTestResult;
  /** A newer test is running: this one shows dimmed until it is replaced. */
  stale?: boolean;
}) {
  const r = result;
  const pods = Object.entries(r.byPod).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const latency = r.latency
    ? `p50 ${ms(r.latency.p50Ms)} · p90 ${ms(r.latency.p90Ms)} · p99 ${ms(r.latency.p99Ms)} · max ${ms(r.latency.maxMs)} ms`
    : 'none answered';
  const summary = `${r.answered} of ${r.sent} answered (${percent(r.successPercent)}) in ${Math.round(r.durationMs)} ms`;
  return (
    <div className="traffic-test__result" data-stale={stale || undefined} data-testid="traffic-result">
      {stale ? null : (
        <p className="traffic-test__status" title={summary} data-testid="traffic-summary">
          <strong>
            {r.answered} of {r.sent} answered ({percent(r.successPercent)})
          </strong>{' '}
          in {Math.round(r.durationMs)} ms
        </p>
      )}
      <dl className="facts">
        <dt>sent</dt>
        {/* The proxy is the form's, above: named here it took a second line in a narrow Inspector. */}
        <dd title={`${r.protocol} ${r.from} → ${r.to} through ${r.proxy}`} data-testid="traffic-sent">
          {r.protocol} {r.from} → {r.to}
        </dd>
        <dt>latency</dt>
        <dd title={latency} data-testid="traffic-latency">
          {latency}
        </dd>
      </dl>
      {r.split ? (
        <>
          <table className="traffic-test__table traffic-test__split" data-testid="traffic-split">
            <caption>
              Split of {r.split.target.namespace}/{r.split.target.name}
              <span className="visually-hidden">: configured against observed</span>
            </caption>
            <colgroup>
              <col />
              <col className="traffic-test__w-configured" />
              <col className="traffic-test__w-observed" />
              <col className="traffic-test__w-answered" />
            </colgroup>
            <thead>
              <tr>
                <th scope="col">backend</th>
                <th scope="col" className="num">
                  <span
                    className="traffic-test__swatch traffic-test__swatch--configured"
                    aria-hidden="true"
                  />
                  configured
                </th>
                <th scope="col" className="num">
                  <span className="traffic-test__swatch traffic-test__swatch--observed" aria-hidden="true" />
                  observed
                </th>
                <th scope="col" className="num">
                  answered
                </th>
              </tr>
            </thead>
            <tbody>
              {r.split.backends.map((b) => (
                <Fragment key={b.name}>
                  <tr data-testid={`traffic-backend-${b.name}`}>
                    <th scope="row">{b.name}</th>
                    <td className="num" data-testid="traffic-configured">
                      {percent(b.configuredPercent)}
                    </td>
                    <td
                      className={b.off ? 'num tone-warn' : 'num'}
                      data-testid="traffic-observed"
                      data-off={b.off || undefined}
                      title={
                        b.off
                          ? `Further from the configured ${percent(b.configuredPercent)} than chance allows over ${r.answered} answers`
                          : undefined
                      }
                    >
                      {percent(b.observedPercent)}
                      {b.off ? ' ≠' : ''}
                    </td>
                    <td className="num" data-testid="traffic-answered">
                      {b.answered}
                    </td>
                  </tr>
                  {/* The row's width for the pair: the shares' difference is what the eye should catch. */}
                  <tr className="traffic-test__bars" aria-hidden="true">
                    <td colSpan={4}>
                      <span className="traffic-test__track">
                        <span
                          className="traffic-test__bar traffic-test__bar--configured"
                          style={{ width: barWidth(b.configuredPercent) }}
                          data-testid="traffic-bar-configured"
                        />
                      </span>
                      <span className="traffic-test__track">
                        <span
                          className="traffic-test__bar traffic-test__bar--observed"
                          style={{ width: barWidth(b.observedPercent) }}
                          data-testid="traffic-bar-observed"
                        />
                      </span>
                    </td>
                  </tr>
                </Fragment>
              ))}
            </tbody>
          </table>
          {r.split.backends.some((b) => b.off) ? (
            <p className="traffic-test__note tone-warn" data-testid="traffic-off">
              ≠: further from the weight than chance allows. The proxy may not run these weights yet, or
              something else steers the traffic.
            </p>
          ) : null}
          {r.split.other > 0 ? (
            <p className="traffic-test__note tone-warn" data-testid="traffic-other">
              {r.split.other} {r.split.other === 1 ? 'answer' : 'answers'} from pods of no backend of the
              split
            </p>
          ) : null}
        </>
      ) : pods.length > 0 ? (
        <table className="traffic-test__table" aria-label="Answers by pod" data-testid="traffic-pods">
          <thead>
            <tr>
              <th scope="col">pod</th>
              <th scope="col" className="num">
                answered
              </th>
            </tr>
          </thead>
          <tbody>
            {pods.map(([pod, n]) => (
              <tr key={pod}>
                <th scope="row">{pod}</th>
                <td className="num">{n}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {r.errors.length > 0 ? (
        <>
          <h4>Failures</h4>
          <ul className="traffic-test__list tone-bad" data-testid="traffic-errors">
            {r.errors.map((e) => (
              <li key={e.message}>
                <span className="traffic-test__count">{e.count} ×</span> {e.message}
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </div>
  );
}
