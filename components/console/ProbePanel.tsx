'use client';

import { useMutation } from '@tanstack/react-query';
import { useId, useState } from 'react';
import type { MeshLiveState } from '@/server/controlPlane/liveState';
import { parseProbeCount, parseProbeFrom, proxiesWithListener } from '@/lib/console/probeForm';
import { type ProbeResult, ProbeResultSchema } from '@/lib/console/probeResult';
import { ApiError, apiFetch, errorMessage } from './api';
import { ProbeCountField, sendProbesLabel, TrafficTestArea, useTrafficTest } from './TrafficTest';

/** The server's answer, checked: a body of another shape is an error to show, not a half-drawn result. */
function readProbeResult(body: unknown): ProbeResult {
  const parsed = ProbeResultSchema.safeParse(body);
  if (!parsed.success)
    throw new Error(
      `POST /api/probe answered an unexpected body: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
    );
  return parsed.data;
}

/**
 * Sends one message through a VirtualService's listener on the local mesh (POST /api/probe) and shows
 * the echo, the path it is expected to take and the latency, or what failed and where; with a count
 * above 1, a traffic test (TrafficTest.tsx).
 */
export function ProbePanel({
  listener,
  live,
  disabledReason,
}: {
  /** The VirtualService's l7mp listener name (`<name>.<ns>.virtualservice.cluster.local`). */
  listener: string;
  live: MeshLiveState | null | undefined;
  /** Why probing is not possible now (no session), if it is not. */
  disabledReason?: string;
}) {
  const id = useId();
  const proxies = proxiesWithListener(live, listener);
  const [proxy, setProxy] = useState<string | undefined>();
  const [payload, setPayload] = useState('hello');
  const [from, setFrom] = useState('');
  const [countText, setCountText] = useState('1');
  const chosen = proxy !== undefined && proxies.includes(proxy) ? proxy : proxies[0];
  const parsedFrom = parseProbeFrom(from);
  const count = parseProbeCount(countText);
  const probe = useMutation({
    mutationFn: (body: {
      listener: string;
      proxy?: string;
      payload: string;
      from?: { address: string; port?: number };
    }) => apiFetch<unknown>('/api/probe', { method: 'POST', body }).then(readProbeResult),
  });
  const traffic = useTrafficTest();

  // The probe sends real traffic, so it only targets a listener the mesh runs now, not a draft's.
  if (proxies.length === 0) return null;
  const fromError = typeof parsedFrom === 'string' ? parsedFrom : undefined;
  const n = typeof count === 'number' ? count : undefined;
  const sendFrom = parsedFrom && typeof parsedFrom !== 'string' ? parsedFrom : undefined;
  const answer = probe.data;
  const send = () => {
    const body = { listener, proxy: chosen, payload, ...(sendFrom ? { from: sendFrom } : {}) };
    // Only the answer of what was sent last shows.
    if (n === 1) {
      traffic.reset();
      probe.mutate(body);
    } else if (n !== undefined) {
      probe.reset();
      // Two sockets on one fixed source port would take each other's echoes.
      traffic.send({ ...body, count: n, ...(sendFrom?.port !== undefined ? { concurrency: 1 } : {}) });
    }
  };
  return (
    <section className="probe" aria-labelledby={`${id}-title`} data-testid="probe">
      <h3 id={`${id}-title`}>Probe</h3>
      <p className="hint">
        {live?.mesh.mode === 'kubernetes'
          ? // server/controlPlane/probe.ts sends from this process, to loopback addresses only.
            'Send messages through this listener from this Meshdeck process and wait for the echoes (loopback addresses only: a cluster on this host); more than one shows latency percentiles and how a split shares them.'
          : 'Send messages through this listener on the local mesh and wait for the echoes; more than one shows latency percentiles and how a split shares them.'}
      </p>
      {proxies.length > 1 ? (
        <label className="probe__row">
          <span>proxy</span>
          <select value={chosen} onChange={(e) => setProxy(e.target.value)} data-testid="probe-proxy">
            {proxies.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        </label>
      ) : (
        <p className="probe__row">
          <span>proxy</span> <code>{chosen}</code>
        </p>
      )}
      <label className="probe__row">
        <span>payload</span>
        <textarea
          rows={2}
          value={payload}
          spellCheck={false}
          onChange={(e) => setPayload(e.target.value)}
          data-testid="probe-payload"
        />
      </label>
      <label className="probe__row">
        <span>from</span>
        <input
          type="text"
          value={from}
          placeholder="address:port (default: the listener's peer, else 127.0.0.100)"
          spellCheck={false}
          aria-invalid={fromError !== undefined}
          onChange={(e) => setFrom(e.target.value)}
          data-testid="probe-from"
        />
      </label>
      {fromError ? (
        <p className="field-error field-error--error" role="alert" data-testid="probe-from-error">
          {fromError}
        </p>
      ) : null}
      <ProbeCountField text={countText} onChange={setCountText} />
      <div className="button-row">
        <button
          type="button"
          disabled={
            disabledReason !== undefined ||
            fromError !== undefined ||
            n === undefined ||
            probe.isPending ||
            traffic.pending
          }
          title={disabledReason}
          onClick={send}
          data-testid={n === 1 ? 'probe-send' : 'traffic-send'}
        >
          {n === 1 ? (probe.isPending ? 'Probing…' : 'Probe') : sendProbesLabel(n, traffic.pending)}
        </button>
        {disabledReason ? <span className="hint">{disabledReason}</span> : null}
      </div>
      {probe.error ? (
        <p className="field-error field-error--error" role="alert" data-testid="probe-error">
          {probe.error instanceof ApiError && probe.error.status === 404
            ? `Nothing to probe: ${errorMessage(probe.error)}`
            : errorMessage(probe.error)}
        </p>
      ) : null}
      {answer ? <ProbeResultView answer={answer} /> : null}
      {n !== 1 || !traffic.idle ? (
        <TrafficTestArea
          count={traffic.sending ?? n}
          pending={traffic.pending}
          error={traffic.error}
          result={traffic.result}
        />
      ) : null}
    </section>
  );
}

/** One probe's answer: what was sent where, the echo and latency or what failed, and the configured path. */
export function ProbeResultView({ answer }: { answer: ProbeResult }) {
  return (
    <div className="probe__result" data-testid="probe-result" data-ok={answer.ok}>
      <dl className="facts">
        <dt>sent</dt>
        <dd>
          {answer.protocol} {answer.from} → {answer.to} ({answer.proxy})
        </dd>
        {answer.ok ? (
          <>
            <dt>reply</dt>
            <dd>
              <code data-testid="probe-reply">{answer.reply}</code>
            </dd>
            <dt>latency</dt>
            <dd data-testid="probe-latency">{answer.latencyMs} ms</dd>
          </>
        ) : (
          <>
            <dt>failed</dt>
            <dd className="tone-bad" role="alert" data-testid="probe-failed">
              {answer.error}
            </dd>
          </>
        )}
      </dl>
      <h4>Path</h4>
      <ol className="probe__path" data-testid="probe-path">
        {answer.path.map((step, i) => (
          <li key={i}>{step}</li>
        ))}
      </ol>
    </div>
  );
}
